import CSQLite
import EntryModel
extension WriteContext {
    /// The columns of an `entries` row that ``EntryStore/entry(from:)`` reads, in order.
    static let entryColumns =
        "id, form, fields, clocks, version, deleted, deleted_clock, created_at, updated_at, created_by, updated_by, seq"
    static let selectEntry = "SELECT \(entryColumns) FROM entries WHERE id = ?"

    /// The stored entry `id`, or `nil`, as the write about to be made from it
    /// must see it: on a shared change log the round claims it first
    /// (``claim()``, which waits for another instance's open round), so what is
    /// read is what that round committed, and no other instance writes the
    /// entry until this round ends. Read before the claim, it could be a copy
    /// another instance is changing: an `ifVersion` passed twice, a create made
    /// twice, a field group written back stale.
    func load(_ id: String) throws -> StoredEntry? {
        try claim()
        if let read = lookups?.entry(id) { return read }
        return try EntryStore.loadEntry(db, id)
    }

    /// Inserts or replaces the row of `entry`, with its filter keys and its
    /// search keys (``SearchKeys``, the `entry_keys` rows): every write of an
    /// entries row goes through here, so the keys are always the row's.
    func save(_ entry: StoredEntry, layout: FieldLayout) throws {
        /// The value of the field mapped to a filter column, "" when unmapped or unset.
        func key(_ name: String?) -> SQLValue { .text(name.flatMap { entry.fields[$0] } ?? "") }
        let name = layout.name.flatMap { entry.fields[$0] } ?? ""
        try db.statement(
            """
            INSERT INTO entries (id, form, fields, clocks, version, deleted, deleted_clock, created_at, updated_at,
              created_by, updated_by, name, name_folded, birthday, country, province, city, seq, appointment)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET form = excluded.form, fields = excluded.fields, clocks = excluded.clocks,
              version = excluded.version, deleted = excluded.deleted, deleted_clock = excluded.deleted_clock,
              updated_at = excluded.updated_at, updated_by = excluded.updated_by, name = excluded.name,
              name_folded = excluded.name_folded, birthday = excluded.birthday, country = excluded.country,
              province = excluded.province, city = excluded.city, seq = excluded.seq,
              appointment = excluded.appointment
            """
        ).run([
            .text(entry.id), .text(entry.form), .text(JSON.stringMap(entry.fields).text),
            .text(JSON.stringMap(entry.clocks.mapValues(\.stored)).text), .text(entry.version.description),
            .int(entry.deleted ? 1 : 0), .text(entry.deletedClock?.stored ?? ""), .text(entry.createdAt),
            .text(entry.updatedAt), .text(entry.createdBy), .text(entry.updatedBy),
            .text(name), .text(foldedName(name)), key(layout.birthday), key(layout.country), key(layout.province),
            key(layout.city),
            .int(entry.seq), key(layout.appointment),
        ])
        let keys = SearchKeys.keys(fields: entry.fields, layout: layout)
        try EntryStore.writeKeys(db, entry: entry.id, keys: keys, stored: lookups?.keys(of: entry.id))
        lookups?.saved(entry, keys: keys)
    }

    /// Appends `change` to the change log and sets its `seq`.
    /// - Throws: ``SQLiteError`` (a UNIQUE (node, hlc) violation means it is already logged).
    func append(_ change: inout ChangeRecord) throws {
        // SQLite numbers the row (AUTOINCREMENT: never a seq used before); a shared
        // change log was claimed by the round (began()), so lastSeq + 1 is this node's next.
        try claim()
        let insert = """
            INSERT INTO changes (seq, node, hlc, entry, form, op, fields, base, actor, at, reason, via, superseded)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        let values: [SQLValue] = [
            shared == nil ? .null : .int(lastSeq + 1),
            .text(change.node), .text(change.hlc.description), .text(change.entry), .text(change.form),
            .text(change.op.rawValue), .text(JSON.stringMap(change.fields).text),
            .text(JSON.stringMap(change.base).text),
            .text(change.actor), .text(change.at), change.reason.map { .text($0) } ?? .null,
            change.via.map { .text($0) } ?? .null, .text(change.superseded.sorted().joined(separator: ",")),
        ]
        var seq: Int64 = 0
        if shared != nil {
            // The seq is this round's own: nothing to read back, so a server may send the row
            // with the next statement that needs an answer (PGDatabase's pipelined writes).
            try db.statement(insert).run(values)
            seq = lastSeq + 1
        } else {
            try db.statement(insert + " RETURNING seq").query(values) { seq = $0.int(0) }
        }
        lookups?.logged(change.stamp)
        change.seq = seq
        lastSeq = seq
    }
}

extension EntryStore {
    /// The `entries` row of `id` (deleted ones too), or `nil`.
    /// - Throws: ``SQLiteError``, SQLITE_CORRUPT for unreadable stored JSON.
    static func loadEntry(_ db: any SQLDatabase, _ id: String) throws -> StoredEntry? {
        var found: StoredEntry?
        try db.statement(WriteContext.selectEntry).query([.text(id)]) { found = try entry(from: $0) }
        return found
    }

    /// Decodes a row selected with the columns of `WriteContext.selectEntry`.
    static func entry(from row: any SQLRow) throws -> StoredEntry {
        let clocks = try stringMap(row.text(3)).compactMapValues(Stamp.init(stored:))
        return StoredEntry(
            id: row.text(0), form: row.text(1), fields: try stringMap(row.text(2)), clocks: clocks,
            version: HLC(row.text(4)) ?? .zero, deleted: row.int(5) != 0, deletedClock: Stamp(stored: row.text(6)),
            createdAt: row.text(7), updatedAt: row.text(8), createdBy: row.text(9), updatedBy: row.text(10),
            seq: row.int(11))
    }

    /// Decodes a stored JSON object of strings.
    /// - Throws: ``SQLiteError`` (SQLITE_CORRUPT) when the stored text is not one.
    static func stringMap(_ text: String) throws -> [String: String] {
        guard let members = (try? JSON.parse(text))?.objectValue else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "a stored JSON object is unreadable")
        }
        var map: [String: String] = [:]
        for (k, v) in members { if let s = v.stringValue { map[k] = s } }
        return map
    }

    /// Decodes a row selected with ``changeColumns``, in that order. An unreadable
    /// HLC reads as `.zero` and an unknown op as `update`.
    /// - Throws: ``SQLiteError`` (SQLITE_CORRUPT) when `fields` or `base` is not a JSON object.
    static func change(from row: any SQLRow) throws -> ChangeRecord {
        ChangeRecord(
            seq: row.int(0), node: row.text(1), hlc: HLC(row.text(2)) ?? .zero, entry: row.text(3), form: row.text(4),
            op: ChangeOp(rawValue: row.text(5)) ?? .update, fields: try stringMap(row.text(6)),
            base: try stringMap(row.text(7)),
            actor: row.text(8), at: row.text(9), reason: row.isNull(10) ? nil : row.text(10),
            via: row.isNull(11) ? nil : row.text(11),
            superseded: row.text(12).split(separator: ",").map(String.init))
    }

    static let changeColumns = "seq, node, hlc, entry, form, op, fields, base, actor, at, reason, via, superseded"
}
