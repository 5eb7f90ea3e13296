import EntryModel

/// Why a stored entry looks like the same person (doc/protocol.md
/// `Duplicate.matched`), in the wire's order.
package enum DuplicateMatch: String, Sendable, CaseIterable, Equatable {
    /// The same folded name and the same birthday.
    case nameBirthday = "name-birthday"
    /// The same phone number (canonical E.164) in any field.
    case phone
    /// The same e-mail address, compared without case, in any field.
    case email
}

/// A live entry that may be the same person as the values looked for
/// (``EntryStore/possibleDuplicates(form:fields:excluding:)``): a warning, never a refusal.
package struct PossibleDuplicate: Sendable, Equatable {
    /// The stored entry's id.
    package var id: String
    /// Its form.
    package var form: String
    /// Its name (the value of its form's name field, as stored), "" when it has none.
    package var name: String
    /// What matched, in ``DuplicateMatch`` order; never empty.
    package var matched: [DuplicateMatch]

    /// A value with every member given.
    package init(id: String, form: String, name: String, matched: [DuplicateMatch]) {
        self.id = id
        self.form = form
        self.name = name
        self.matched = matched
    }
}

/// One set of values to look for duplicates of
/// (``EntryStore/possibleDuplicates(form:probes:)``).
package struct DuplicateProbe: Sendable {
    /// Canonical values of the form, as the validator makes them.
    package var fields: [String: String]
    /// The entry that is never its own duplicate (the one being edited, or
    /// the one just stored), or `nil`.
    package var excluding: String?
    /// The duplicate keys of ``fields`` when the caller derived them already
    /// (``SearchKeys/Derived/duplicates``); `nil`: derived from ``fields``.
    package var keys: [String]?

    /// A value with every member given.
    package init(fields: [String: String], excluding: String?, keys: [String]? = nil) {
        self.fields = fields
        self.excluding = excluding
        self.keys = keys
    }
}

extension EntryStore {
    /// The most possible duplicates one probe answers.
    package static let maxPossibleDuplicates = 20

    /// The live entries that may be the same person as `fields`
    /// (``possibleDuplicates(form:probes:)`` for one probe).
    /// - Throws: ``SQLiteError`` or the database's ``StorageError``.
    package func possibleDuplicates(form: FormDefinition, fields: [String: String], excluding id: String?) throws
        -> [PossibleDuplicate]
    {
        try possibleDuplicates(form: form, probes: [DuplicateProbe(fields: fields, excluding: id)])[0]
    }

    /// For each probe, the live (not deleted) entries, of any form, that may
    /// be the same person as its `fields` (canonical values of `form`): they
    /// hold one of its duplicate keys in `entry_keys`
    /// (``SearchKeys/duplicateKeys(form:fields:)``): the same folded name and
    /// the same birthday (the forms' name and birthday fields,
    /// ``FormDefinition/layout``), a phone number (E.164) in one of their
    /// phone fields, or an e-mail address, without regard to case, in one of
    /// their e-mail fields. The probe's `excluding` entry is never its own
    /// duplicate. At most one more than ``maxPossibleDuplicates`` holders are read per key
    /// (by entry id), so a value held by thousands (a clinic's own number
    /// typed for everyone) costs no more than one held by a few; the probe's
    /// answer is the most recently updated of those first (the newer id first
    /// when two were updated in the same millisecond), at most
    /// ``maxPossibleDuplicates``; empty for a probe with none of those
    /// values. One snapshot answers all probes, one index lookup per distinct key.
    /// - Throws: ``SQLiteError`` or the database's ``StorageError``.
    package func possibleDuplicates(form: FormDefinition, probes: [DuplicateProbe]) throws -> [[PossibleDuplicate]] {
        // The exact keys of entry_keys (SearchKeys.duplicateKeys): one index lookup per distinct key.
        let keys = probes.map { $0.keys ?? SearchKeys.duplicateKeys(form: form, fields: $0.fields) }
        let distinct = Set(keys.joined())
        guard !distinct.isEmpty else { return probes.map { _ in [] } }
        return try readers.read { db in
            let holders = try EntryStore.keyHolders(
                db, keys: distinct.sorted(), limit: EntryStore.maxPossibleDuplicates + 1)
            return zip(probes, keys).map { probe, keys in
                var found: [String: (holder: KeyHolder, matched: Set<DuplicateMatch>)] = [:]
                for key in keys {
                    let match = DuplicateMatch(key: key)
                    for holder in holders[key] ?? [] where holder.id != probe.excluding {
                        found[holder.id, default: (holder, [])].matched.insert(match)
                    }
                }
                return found.values.sorted { ($0.holder.updated, $0.holder.id) > ($1.holder.updated, $1.holder.id) }
                    .prefix(EntryStore.maxPossibleDuplicates).map {
                        PossibleDuplicate(
                            id: $0.holder.id, form: $0.holder.form, name: $0.holder.name,
                            matched: DuplicateMatch.allCases.filter($0.matched.contains))
                    }
            }
        }
    }
}

extension DuplicateMatch {
    /// What a duplicate key (``SearchKeys/duplicateKeys(form:fields:)``) says
    /// matched: `b:` name and birthday, `t:` a phone, `m:` an e-mail.
    init(key: String) {
        switch key.prefix(2) {
        case "b:": self = .nameBirthday
        case "t:": self = .phone
        default: self = .email
        }
    }
}
