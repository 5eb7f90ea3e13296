import CSQLite
import EntryModel
extension WriteContext {
    /// The columns of an `entries` row that ``EntryStore/entry(from:)`` reads, in order.
    static let entryColumns =
        "id, form, fields, clocks, version, deleted, deleted_clock, created_at, updated_at, created_by, updated_by, seq"
    static let selectEntry = "SELECT \(entryColumns) FROM entries WHERE id = ?"

    /// The upsert of an entries row on a database server (``save(_:layout:keys:before:)``).
    static let saveServer = saveSQL(nameOrder: false)
    /// The same on SQLite, with the name's pinyin sort key (`name_order`, migration 9) as a last parameter.
    static let saveSQLite = saveSQL(nameOrder: true)

    /// The upsert of an entries row, with `name_order` (made by ``PinyinCollation/keyFunction``
    /// from a last parameter, the name) or without it.
    private static func saveSQL(nameOrder: Bool) -> String {
        let column = nameOrder ? ", name_order" : ""
        let value = nameOrder ? ", \(PinyinCollation.keyFunction)(?)" : ""
        let update = nameOrder ? ", name_order = excluded.name_order" : ""
        return """
            INSERT INTO entries (id, form, fields, clocks, version, deleted, deleted_clock, created_at, updated_at,
              created_by, updated_by, name, name_folded, birthday, country, province, city, seq, appointment\(column))
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?\(value))
            ON CONFLICT (id) DO UPDATE SET form = excluded.form, fields = excluded.fields, clocks = excluded.clocks,
              version = excluded.version, deleted = excluded.deleted, deleted_clock = excluded.deleted_clock,
              updated_at = excluded.updated_at, updated_by = excluded.updated_by, name = excluded.name,
              name_folded = excluded.name_folded, birthday = excluded.birthday, country = excluded.country,
              province = excluded.province, city = excluded.city, seq = excluded.seq,
              appointment = excluded.appointment\(update)
            """
    }

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

    /// What ``save(_:layout:before:)`` knows of the entry's row before the write.
    enum RowBefore {
        /// Nothing: the stored search keys are read and compared.
        case unknown
        /// No row: the entry is new here, so it has no search keys yet.
        case absent
        /// A row with these fields: the search keys are rewritten only when a
        /// value they are made of changed (``SearchKeys/sources(of:)``).
        case fields([String: String])
    }

    /// Inserts or replaces the row of `entry`, with its filter keys and its
    /// search keys (``SearchKeys``, the `entry_keys` rows): every write of an
    /// entries row goes through here, so the keys are always the row's.
    /// - Parameters:
    ///   - keys: the entry's keys when the caller derived them from these same
    ///     fields (``SearchKeys/derive(fields:layout:)``: an Add does, on its
    ///     session's thread, before the write); `nil` derives them here.
    ///   - before: the row as the caller read it before the write, if it did
    ///     (spares the keys' lookup, and their derivation when their values stand).
    func save(_ entry: StoredEntry, layout: FieldLayout, keys: [String]? = nil, before: RowBefore = .unknown) throws {
        /// The value of the field mapped to a filter column, "" when unmapped or unset.
        func key(_ name: String?) -> SQLValue { .text(name.flatMap { entry.fields[$0] } ?? "") }
        let name = layout.name.flatMap { entry.fields[$0] } ?? ""
        // On SQLite the row also gets its name's pinyin sort key (migration 9,
        // PinyinCollation); PostgreSQL orders by its own ICU collation instead.
        let onSQLite = shared == nil
        var values: [SQLValue] = [
            .text(entry.id), .text(entry.form), .text(JSON.stringMap(entry.fields).text),
            .text(JSON.stringMap(entry.clocks.mapValues(\.stored)).text), .text(entry.version.description),
            .int(entry.deleted ? 1 : 0), .text(entry.deletedClock?.stored ?? ""), .text(entry.createdAt),
            .text(entry.updatedAt), .text(entry.createdBy), .text(entry.updatedBy),
            .text(name), .text(foldedName(name)), key(layout.birthday), key(layout.country), key(layout.province),
            key(layout.city),
            .int(entry.seq), key(layout.appointment),
        ]
        if onSQLite { values.append(.text(name)) }
        try db.statement(onSQLite ? WriteContext.saveSQLite : WriteContext.saveServer).run(values)
        if case .fields(let old) = before, SearchKeys.sources(of: layout).allSatisfy({ old[$0] == entry.fields[$0] }) {
            lookups?.saved(entry, keys: nil)
            return  // the keys are made of these values alone: they stand
        }
        let derived = keys ?? SearchKeys.keys(fields: entry.fields, layout: layout)
        let stored: Set<String>?
        if case .absent = before { stored = [] } else { stored = lookups?.keys(of: entry.id) }
        try EntryStore.writeKeys(db, entry: entry.id, keys: derived, stored: stored)
        lookups?.saved(entry, keys: derived)
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
        if let map = flatStringMap(text) { return map }
        guard let members = (try? JSON.parse(text))?.objectValue else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "a stored JSON object is unreadable")
        }
        var map: [String: String] = [:]
        for (k, v) in members { if let s = v.stringValue { map[k] = s } }
        return map
    }

    /// A JSON object whose members are all strings without escapes, as
    /// ``JSON/stringMap(_:)`` writes the stored `fields`, `base` and `clocks`,
    /// read straight from its bytes (no JSON tree): `nil` for anything else
    /// (an escape, another kind of value, a repeated key, text after it), which
    /// the JSON parser then reads.
    static func flatStringMap(_ text: String) -> [String: String]? {
        var text = text
        return text.withUTF8 { b -> [String: String]? in
            var map: [String: String] = [:]
            let plain = scanPlainStringMap(b) { key, value in
                let string = { (r: Range<Int>) in String(decoding: UnsafeBufferPointer(rebasing: b[r]), as: UTF8.self) }
                return map.updateValue(string(value), forKey: string(key)) == nil
            }
            return plain ? map : nil
        }
    }

    /// Reads `b` as a JSON object whose keys and values are strings without
    /// escapes or control characters, white space allowed between tokens and
    /// nothing after it, calling `member` with each member's key and value
    /// (byte ranges of `b`, quotes excluded), in order.
    /// - Returns: false, at once, when `b` is anything else or `member` answers false.
    static func scanPlainStringMap(
        _ b: UnsafeBufferPointer<UInt8>, _ member: (_ key: Range<Int>, _ value: Range<Int>) -> Bool
    ) -> Bool {
        let quote = UInt8(ascii: "\"")
        let n = b.count
        var i = 0
        func skipSpace() { while i < n, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 } }
        /// The range of a string without escapes or control characters at `i`, moving past it.
        func string() -> Range<Int>? {
            guard i < n, b[i] == quote else { return nil }
            let start = i + 1
            var j = start
            while j < n, b[j] != quote {
                if b[j] == UInt8(ascii: "\\") || b[j] < 0x20 { return nil }
                j += 1
            }
            guard j < n else { return nil }
            i = j + 1
            return start..<j
        }
        skipSpace()
        guard i < n, b[i] == UInt8(ascii: "{") else { return false }
        i += 1
        skipSpace()
        if i < n, b[i] == UInt8(ascii: "}") {
            i += 1
        } else {
            while true {
                guard let key = string() else { return false }
                skipSpace()
                guard i < n, b[i] == UInt8(ascii: ":") else { return false }
                i += 1
                skipSpace()
                guard let value = string(), member(key, value) else { return false }
                skipSpace()
                guard i < n else { return false }
                if b[i] == UInt8(ascii: "}") {
                    i += 1
                    break
                }
                guard b[i] == UInt8(ascii: ",") else { return false }
                i += 1
                skipSpace()
            }
        }
        skipSpace()
        return i == n
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
