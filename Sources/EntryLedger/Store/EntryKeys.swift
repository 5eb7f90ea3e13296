import Foundation
import EntryModel

/// The derived search keys of entries (``SearchKeys``) in the table
/// `entry_keys` (SQLite migration 8, PostgreSQL migration 5): one row per
/// (key, entry), kept by ``WriteContext/save(_:layout:keys:before:)`` in the transaction
/// of every write of the entry's row, removed by an erasure, and rebuilt
/// whole when the libraries or the key format that made them change
/// (``EntryStore/rebuildKeysIfStale(_:layoutOf:batch:)``).
extension EntryStore {
    /// The node-table key under which the versions that made the keys are kept (``SearchKeys/versions``).
    static let keysVersionKey = "search_keys"
    /// The node-table key of a rebuild under way: the versions it builds for, a
    /// tab, and the last entry id done, committed with each batch, so a start
    /// cut short (a crash, systemd's start timeout) resumes where it stopped.
    static let keysRebuildKey = "search_keys_rebuild"

    /// Makes the keys of `entry` exactly `keys`: removes the others, adds the missing ones.
    /// - Parameter stored: the keys `entry` holds now when the caller knows them
    ///   (`[]` for an entry new here); `nil`: read.
    static func writeKeys(_ db: any SQLDatabase, entry: String, keys: [String], stored known: Set<String>? = nil)
        throws
    {
        var stored = known ?? []
        if known == nil {
            try db.statement("SELECT key FROM entry_keys WHERE entry = ?").query([.text(entry)]) {
                stored.insert($0.text(0))
            }
        }
        let wanted = Set(keys)
        if stored == wanted { return }
        let remove = try db.statement("DELETE FROM entry_keys WHERE key = ? AND entry = ?")
        for key in stored.subtracting(wanted).sorted() { try remove.run([.text(key), .text(entry)]) }
        let add = try db.statement("INSERT INTO entry_keys (key, entry) VALUES (?, ?) ON CONFLICT DO NOTHING")
        for key in wanted.subtracting(stored).sorted() { try add.run([.text(key), .text(entry)]) }
    }

    /// The live entries that hold any of `keys` exactly (the duplicate check:
    /// ``SearchKeys/duplicateKeys(fields:layout:)``), but `id`, each with the
    /// keys of `keys` it holds (sorted); entries ordered by id. One index
    /// lookup per key (``keyHolders(_:keys:limit:)``).
    /// - Parameters:
    ///   - keys: exact keys (`b:`, `t:`, `m:`, or any other kind).
    ///   - id: an entry to leave out (the one being edited), or `nil`.
    /// - Throws: ``StorageError``.
    package func entries(withAnyKey keys: [String], excluding id: String?) throws -> [(id: String, keys: [String])] {
        guard !keys.isEmpty else { return [] }
        return try readers.read { db in
            var found: [String: Set<String>] = [:]
            for (key, holders) in try EntryStore.keyHolders(db, keys: Array(Set(keys)), limit: nil) {
                for holder in holders where holder.id != id { found[holder.id, default: []].insert(key) }
            }
            return found.keys.sorted().map { ($0, found[$0]!.sorted()) }
        }
    }

    /// The live entries holding each of `keys` exactly, at most `limit` per
    /// key (by entry id; all when `nil`): one index lookup per key.
    static func keyHolders(_ db: any SQLDatabase, keys: [String], limit: Int?) throws -> [String: [KeyHolder]] {
        var holders: [String: [KeyHolder]] = [:]
        let lookup = try db.statement(
            """
            SELECT e.id, e.form, e.name, e.updated_at FROM entry_keys k JOIN entries e ON e.id = k.entry
            WHERE k.key = ? AND e.deleted = 0\(limit.map { " LIMIT \($0)" } ?? "")
            """)
        for key in keys {
            try lookup.query([.text(key)]) { row in
                holders[key, default: []].append(
                    KeyHolder(id: row.text(0), form: row.text(1), name: row.text(2), updated: row.text(3)))
            }
        }
        return holders
    }

    /// The keys stored for entry `id`, sorted (for tests and checks).
    /// - Throws: ``StorageError``.
    package func storedKeys(of id: String) throws -> [String] {
        try readers.read { db in
            var keys: [String] = []
            try db.statement("SELECT key FROM entry_keys WHERE entry = ? ORDER BY key").query([.text(id)]) {
                keys.append($0.text(0))
            }
            return keys
        }
    }

    /// Rebuilds every entry's keys on `db` (the writer's connection, before
    /// the store serves) when the stored ``SearchKeys/versions`` differ from
    /// the running ones (none stored: the database predates the keys, or was
    /// made by migration 8 just now): `batch` entries per transaction, each
    /// transaction claiming the shared change log on a server (so no write of
    /// another instance interleaves), then keys of entries that are gone are
    /// removed and the versions stored.
    /// A rebuild cut short resumes after the last entry its last batch did
    /// (``keysRebuildKey``); `progress` is told the entries done so far after
    /// each batch (entryd extends systemd's start timeout with it).
    /// - Returns: `nil` when the keys were current, else why they were rebuilt and how many entries.
    /// - Throws: ``StorageError``; the versions stay unstored then, so the next open rebuilds again
    ///   (from the last batch committed).
    static func rebuildKeysIfStale(
        _ db: any SQLDatabase, server: (any SharedChangeLog)?, layoutOf: (String) -> FieldLayout, batch: Int = 2000,
        progress: (Int) -> Void = { _ in }
    ) throws -> (reason: String, entries: Int)? {
        var stored: String?
        var underWay: String?
        try db.statement("SELECT key, value FROM node WHERE key IN (?, ?)").query([
            .text(keysVersionKey), .text(keysRebuildKey),
        ]) {
            if $0.text(0) == keysVersionKey { stored = $0.text(1) } else { underWay = $0.text(1) }
        }
        let current = SearchKeys.versions
        if stored == current { return nil }
        var reason = stored.map { "made by \($0), now \(current)" } ?? "none recorded, now \(current)"
        var after = ""
        if let underWay, underWay.hasPrefix(current + "\t") {
            after = String(underWay.dropFirst(current.count + 1))
            reason += "; resumed after entry \(after)"
        }
        var count = 0
        while true {
            try db.statement(server == nil ? "BEGIN IMMEDIATE" : "BEGIN").run()
            do {
                if let server { _ = try server.claim(db) }
                var rows: [(id: String, form: String, fields: String)] = []
                try db.statement("SELECT id, form, fields FROM entries WHERE id > ? ORDER BY id LIMIT ?").query([
                    .text(after), .int(Int64(batch)),
                ]) { rows.append(($0.text(0), $0.text(1), $0.text(2))) }
                // The appointment column too: migration 7 filled it from fields named
                // `appointment` only; a form's date-time field of another name is copied here.
                let appointment = try db.statement(
                    "UPDATE entries SET appointment = ? WHERE id = ? AND appointment <> ?")
                for row in rows {
                    let fields = try stringMap(row.fields)
                    let layout = layoutOf(row.form)
                    try writeKeys(db, entry: row.id, keys: SearchKeys.keys(fields: fields, layout: layout))
                    let when = layout.appointment.flatMap { fields[$0] } ?? ""
                    try appointment.run([.text(when), .text(row.id), .text(when)])
                }
                let put = try db.statement(
                    "INSERT INTO node (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
                )
                if let last = rows.last {
                    try put.run([.text(keysRebuildKey), .text(current + "\t" + last.id)])
                } else {
                    try db.execute("DELETE FROM entry_keys WHERE entry NOT IN (SELECT id FROM entries)")
                    try put.run([.text(keysVersionKey), .text(current)])
                    try db.statement("DELETE FROM node WHERE key = ?").run([.text(keysRebuildKey)])
                }
                if let server { try server.commit(db, publishing: nil) } else { try db.execute("COMMIT") }
                count += rows.count
                guard let last = rows.last else { break }
                after = last.id
                progress(count)
            } catch {
                try? db.execute("ROLLBACK")
                throw error
            }
        }
        return (reason, count)
    }
}

/// A live entry found by one of its keys (``EntryStore/keyHolders(_:keys:limit:)``).
struct KeyHolder {
    /// The entry's id, form and name, and when it was last updated (RFC 3339 UTC ms).
    let id: String, form: String, name: String, updated: String
}
