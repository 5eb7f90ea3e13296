import EntryModel

/// One row for ``EntryStore/importEntries(form:rows:layout:atomic:origin:)``: validated
/// canonical fields, optional id, deleted flag; or the problems that made it invalid.
package struct ImportRow: Sendable {
    /// Position of the row in the Import call's `entries` array (0-based).
    package var index: Int
    /// Canonical lower-case UUID text, or `nil` to generate a UUIDv7.
    package var id: String?
    /// Validated canonical values by field name.
    package var fields: [String: String]
    /// Store the entry as deleted (a create followed by a delete change).
    package var deleted: Bool
    /// Non-empty: the row is rejected without touching the store.
    package var problems: [Problem]
    /// Non-empty values, as given (not validated), that this node's form cannot
    /// take: fields it does not define, or values that are no row of its lists
    /// (schema drift, doc/design.md) — what a re-import of an entry holding them
    /// gives. Such a row only confirms an entry `id` that holds the same values;
    /// it never creates or changes one (then it is rejected with ``unknownProblems``).
    package var unknown: [String: String]
    /// The problems of ``unknown`` (`unknown-field`, `not-in-list`): why the row
    /// is rejected when it would have to store them.
    package var unknownProblems: [Problem]
    /// The fields the form defines, when the stored entry's other fields
    /// (those this node's form does not know) need not be given: a row that
    /// leaves them out still matches, so a re-import never clears them. `nil`:
    /// the row must give every stored field.
    package var formFields: Set<String>?
    /// The search keys of ``fields`` when the caller derived them
    /// (``SearchKeys/derive(fields:layout:)``, off the writer thread): all of
    /// them for the row the writer adds, the duplicate keys for the
    /// possible-duplicates lookup after the commit; `nil`: derived where needed.
    package var keys: SearchKeys.Derived?

    /// A row with every member given; see the properties.
    package init(
        index: Int, id: String?, fields: [String: String], deleted: Bool, problems: [Problem],
        unknown: [String: String] = [:], unknownProblems: [Problem] = [], formFields: Set<String>? = nil,
        keys: SearchKeys.Derived? = nil
    ) {
        self.keys = keys
        self.index = index
        self.id = id
        self.fields = fields
        self.deleted = deleted
        self.problems = problems
        self.unknown = unknown
        self.unknownProblems = unknownProblems
        self.formFields = formFields
    }

    /// Whether `stored` (an entry under this row's id) holds what this row
    /// gives: the same form and deleted flag, ``unknown`` equal to the stored
    /// values, and its other fields equal to the stored ones, where stored
    /// fields that ``formFields`` does not list need not be given.
    func matches(_ stored: StoredEntry, form: String) -> Bool {
        guard stored.form == form, stored.deleted == deleted, unknownMatches(stored) else { return false }
        return stored.fields.filter { unknown[$0.key] == nil && (formFields?.contains($0.key) ?? true) } == fields
    }

    /// Whether every value of ``unknown`` is the value `stored` holds.
    func unknownMatches(_ stored: StoredEntry) -> Bool {
        unknown.allSatisfy { stored.fields[$0.key] == $0.value }
    }
}

/// What ``EntryStore/importEntries(form:rows:layout:atomic:origin:)`` did.
package struct ImportResult: Sendable {
    /// Rows stored as new entries (0 when an atomic import was refused).
    package var added = 0
    /// Rows whose id already held the same form, values and deleted flag
    /// (fields the form does not define need not be given: ``ImportRow/formFields``).
    package var unchanged = 0
    /// (row index, id, problems) of each row not stored.
    package var rejected: [(index: Int, id: String?, problems: [Problem])] = []
    /// (row index, id, canonical values, duplicate keys when the row carried
    /// them: ``ImportRow/keys``) of each row stored as a new live (not
    /// deleted) entry: where Import looks for possible duplicates.
    package var addedLive: [(index: Int, id: String, fields: [String: String], duplicateKeys: [String]?)] = []

    /// A result with the given counts and rejected rows (none by default).
    package init(added: Int = 0, unchanged: Int = 0, rejected: [(index: Int, id: String?, problems: [Problem])] = []) {
        self.added = added
        self.unchanged = unchanged
        self.rejected = rejected
    }
}

/// Why an atomic import stored nothing: at least one row was rejected. Thrown
/// inside the write (so that it rolls back) and out of the `wait()` of the
/// ticket ``EntryStore/beginImport(form:rows:layout:atomic:origin:)`` returns
/// (so by ``EntryStore/importEntries(form:rows:layout:atomic:origin:)`` too);
/// the service answers with its `result`.
package struct AtomicImportRefused: Error, Sendable {
    /// The refused import: `added` and `unchanged` are 0, `rejected` lists why.
    package let result: ImportResult

    /// The refusal of an import whose rows came out as `result`.
    package init(result: ImportResult) {
        self.result = result
    }
}
