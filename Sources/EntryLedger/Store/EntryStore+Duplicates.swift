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

    /// A value with every member given.
    package init(fields: [String: String], excluding: String?) {
        self.fields = fields
        self.excluding = excluding
    }
}

extension EntryStore {
    /// The most possible duplicates one probe answers.
    package static let maxPossibleDuplicates = 20

    /// Above this many probes, one pass over the live entries answers them
    /// all, instead of one query each.
    static let duplicateScanThreshold = 8

    /// The live entries that may be the same person as `fields`
    /// (``possibleDuplicates(form:probes:)`` for one probe).
    /// - Throws: ``SQLiteError`` or the database's ``StorageError``.
    package func possibleDuplicates(form: FormDefinition, fields: [String: String], excluding id: String?) throws
        -> [PossibleDuplicate]
    {
        try possibleDuplicates(form: form, probes: [DuplicateProbe(fields: fields, excluding: id)])[0]
    }

    /// For each probe, the live (not deleted) entries, of any form, that may
    /// be the same person as its `fields` (canonical values of `form`): the
    /// same folded name and the same birthday (`form`'s name and birthday
    /// fields, ``FormDefinition/layout``), or a phone number of one of
    /// `form`'s phone fields held by any field, or an e-mail address of one
    /// of its e-mail fields held by any field without regard to case. The
    /// probe's `excluding` entry is never its own duplicate. Most recently
    /// updated first, at most ``maxPossibleDuplicates`` each; empty for a
    /// probe with none of those values. One snapshot answers all probes.
    /// - Throws: ``SQLiteError`` or the database's ``StorageError``.
    package func possibleDuplicates(form: FormDefinition, probes: [DuplicateProbe]) throws -> [[PossibleDuplicate]] {
        // To be replaced by the entry_keys lookup (exact keys b:/t:/m:) once that table exists.
        let keys = probes.map { DuplicateKeys(form: form, fields: $0.fields) }
        guard keys.contains(where: { !$0.isEmpty }) else { return probes.map { _ in [] } }
        return try readers.read { db in
            var found: [[(updated: String, duplicate: PossibleDuplicate)]] = probes.map { _ in [] }
            /// Adds the row to every probe it matches (of `indices`).
            func consider(_ row: any SQLRow, _ indices: some Sequence<Int>) throws {
                let held = Array(try EntryStore.stringMap(row.text(5)).values)
                let lowered = Set(held.map { $0.lowercased() })
                for i in indices where row.text(0) != probes[i].excluding {
                    let k = keys[i]
                    var matched: [DuplicateMatch] = []
                    if !k.name.isEmpty, row.text(3) == k.name, row.text(4) == k.birthday {
                        matched.append(.nameBirthday)
                    }
                    if held.contains(where: k.phones.contains) { matched.append(.phone) }
                    if !k.emails.isDisjoint(with: lowered) { matched.append(.email) }
                    guard !matched.isEmpty else { continue }
                    found[i].append(
                        (
                            row.text(6),
                            PossibleDuplicate(id: row.text(0), form: row.text(1), name: row.text(2), matched: matched)
                        ))
                }
            }
            let columns = "id, form, name, name_folded, birthday, fields, updated_at"
            if probes.count <= EntryStore.duplicateScanThreshold {
                // No ORDER BY: SQLite would walk entries_by_updated and look up every row by its
                // key (twice the time of a plain scan); the few rows found are sorted below.
                for (i, k) in keys.enumerated() where !k.isEmpty {
                    let (conditions, values) = k.sql
                    try db.statement(
                        """
                        SELECT \(columns) FROM entries WHERE deleted = 0 AND (\(conditions))
                        """
                    ).query(values) { try consider($0, [i]) }
                }
            } else {
                // Many probes (an import): one pass over the live entries, each row's values looked up.
                var byName: [String: [Int]] = [:]
                var byValue: [String: [Int]] = [:]
                for (i, k) in keys.enumerated() {
                    if !k.name.isEmpty { byName[k.name + "\u{1F}" + k.birthday, default: []].append(i) }
                    for v in k.phones.union(k.emails) { byValue[v, default: []].append(i) }
                }
                try db.statement("SELECT \(columns) FROM entries WHERE deleted = 0").query { row in
                    var hits = Set(byName[row.text(3) + "\u{1F}" + row.text(4)] ?? [])
                    for v in try EntryStore.stringMap(row.text(5)).values {
                        hits.formUnion(byValue[v] ?? [])
                        hits.formUnion(byValue[v.lowercased()] ?? [])
                    }
                    if !hits.isEmpty { try consider(row, hits.sorted()) }
                }
            }
            return found.map { list in
                list.sorted { ($0.updated, $1.duplicate.id) > ($1.updated, $0.duplicate.id) }
                    .prefix(EntryStore.maxPossibleDuplicates).map(\.duplicate)
            }
        }
    }
}

/// What one probe looks for: a folded name with a birthday, phone numbers,
/// e-mail addresses (lower case).
private struct DuplicateKeys {
    var name = ""
    var birthday = ""
    var phones = Set<String>()
    var emails = Set<String>()
    /// The e-mail addresses as given, for the SQL prefilter.
    var emailsAsGiven = Set<String>()

    init(form: FormDefinition, fields: [String: String]) {
        let layout = form.layout
        let name = layout.name.flatMap { fields[$0] }.map(foldedName) ?? ""
        let birthday = layout.birthday.flatMap { fields[$0] } ?? ""
        if !name.isEmpty, !birthday.isEmpty { (self.name, self.birthday) = (name, birthday) }
        for field in form.fields {
            guard let value = fields[field.name], !value.isEmpty else { continue }
            switch field.type {
            case .phone: phones.insert(value)
            case .email:
                emails.insert(value.lowercased())
                emailsAsGiven.insert(value)
            default: break
            }
        }
    }

    var isEmpty: Bool { name.isEmpty && phones.isEmpty && emails.isEmpty }

    /// The condition on an `entries` row, ORed, with its values.
    var sql: (String, [SQLValue]) {
        var conditions: [String] = []
        var values: [SQLValue] = []
        if !name.isEmpty {
            conditions.append("(birthday = ? AND name_folded = ?)")
            values += [.text(birthday), .text(name)]
        }
        // A value as the stored JSON object spells it, quotes included: a whole value, never a part of one.
        for phone in phones.sorted() {
            conditions.append("instr(fields, ?) > 0")
            values.append(.text(JSON.string(phone).text))
        }
        // lower() folds ASCII letters alone on both engines: the needle is folded alike; Swift compares exactly.
        for email in emailsAsGiven.sorted() {
            conditions.append("instr(lower(fields), ?) > 0")
            values.append(.text(String(JSON.string(email).text.map { $0.isASCII ? Character($0.lowercased()) : $0 })))
        }
        return (conditions.joined(separator: " OR "), values)
    }
}
