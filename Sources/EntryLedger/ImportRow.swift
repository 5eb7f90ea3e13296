import EntryModel

/// One row for ``LedgerStore/importEntries(form:rows:layout:atomic:origin:)``: validated
/// canonical fields, optional id, deleted flag; or the problems that made it invalid.
public struct ImportRow: Sendable {
    /// Position of the row in the Import call's `entries` array (0-based).
    public var index: Int
    /// Canonical lower-case UUID text, or `nil` to generate a UUIDv7.
    public var id: String?
    /// Validated canonical values by field name.
    public var fields: [String: String]
    /// Store the entry as deleted (a create followed by a delete change).
    public var deleted: Bool
    /// Non-empty: the row is rejected without touching the store.
    public var problems: [Problem]

    /// A row with every member given; see the properties.
    public init(index: Int, id: String?, fields: [String: String], deleted: Bool, problems: [Problem]) {
        self.index = index
        self.id = id
        self.fields = fields
        self.deleted = deleted
        self.problems = problems
    }
}

/// What ``LedgerStore/importEntries(form:rows:layout:atomic:origin:)`` did.
public struct ImportResult: Sendable {
    /// Rows stored as new entries (0 when an atomic import was refused).
    public var added = 0
    /// Rows whose id already held the same form, values and deleted flag.
    public var unchanged = 0
    /// (row index, id, problems) of each row not stored.
    public var rejected: [(index: Int, id: String?, problems: [Problem])] = []

    /// A result with the given counts and rejected rows (none by default).
    public init(added: Int = 0, unchanged: Int = 0, rejected: [(index: Int, id: String?, problems: [Problem])] = []) {
        self.added = added
        self.unchanged = unchanged
        self.rejected = rejected
    }
}

/// Why an atomic import stored nothing: at least one row was rejected. Thrown by
/// ``LedgerStore/importEntries(form:rows:layout:atomic:origin:)`` (inside the
/// write, so that it rolls back); the service answers with its `result`.
public struct AtomicImportRefused: Error, @unchecked Sendable {
    /// The refused import: `added` and `unchanged` are 0, `rejected` lists why.
    public let result: ImportResult

    /// The refusal of an import whose rows came out as `result`.
    public init(result: ImportResult) {
        self.result = result
    }
}
