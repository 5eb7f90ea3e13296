import Foundation
import EntryModel

/// What ``EntryStore/erase(id:origin:)`` did.
package struct ErasureOutcome: Sendable, Equatable {
    /// The erasure as stored.
    package var record: ErasureRecord
    /// Whether the WAL was checkpointed and truncated to zero bytes afterwards;
    /// false when readers held it through every retry (the old page images stay
    /// in the WAL file until the next truncating checkpoint: at close, or the
    /// next erasure or verify).
    package var walTruncated: Bool

    /// A value with every member given.
    package init(record: ErasureRecord, walTruncated: Bool) {
        self.record = record
        self.walTruncated = walTruncated
    }
}

extension EntryStore {
    /// The erasure ledger (``ErasureLedger``): beside this database file, or
    /// on a database server beside this instance's marker file.
    var ledger: ErasureLedger { server.map { ErasureLedger(marker: $0.markerPath) } ?? ErasureLedger(database: path) }

    /// Erases entry `id` on this node (doc/design.md "Erasure"), in one write
    /// transaction: an `erase` change is logged (no fields, no base), the
    /// entry's row and conflict records are removed, the fields, base and
    /// reason of all its other change-log rows are overwritten with nothing,
    /// and the indexes that held its name and birthday are rebuilt; the ledger
    /// line is `fsync`ed before the commit. `secure_delete` overwrites the freed
    /// bytes; a truncating WAL checkpoint follows the commit.
    /// - Parameter origin: the actor, and the reason (required, not blank).
    /// - Throws: ``EntryError`` `.invalidParameter("reason")` for a missing or
    ///   blank reason, `.entryNotFound`, `.entryErased` (erased before: nothing
    ///   changes); ``SQLiteError``, ``SystemError`` (the ledger) with nothing erased.
    package func erase(id: String, origin: WriteOrigin) throws -> ErasureOutcome {
        guard let reason = origin.reason, ErasureRecord.isValidReason(reason) else {
            throw EntryError.invalidParameter("reason")
        }
        let ledger = self.ledger
        let record = try writer.submit { ctx -> ErasureRecord in
            guard let current = try ctx.load(id) else {
                if let erased = try ctx.erasure(of: id) { throw EntryError.entryErased(id: id, at: erased.at) }
                throw EntryError.entryNotFound(id)
            }
            let hlc = try ctx.tick()
            var change = ChangeRecord(
                seq: 0, node: ctx.nodeID, hlc: hlc, entry: id, form: current.form, op: .erase, fields: [:], base: [:],
                actor: origin.actor, at: Timestamp.rfc3339(milliseconds: ctx.clock.wallClock()), reason: reason,
                via: nil)
            try ledger.append([ErasureLedger.Line(change)])
            try ctx.append(&change)
            try ctx.scrub(change)
            try ctx.markForRewrite()
            return try ctx.erasure(of: id)!
        }
        eraseInKeptDatabase([id])
        guard server == nil else { return ErasureOutcome(record: record, walTruncated: rewriteAfterErasure()) }
        // On SQLite the WAL truncated before the purge starts, lest their checkpoints meet.
        let truncated = truncateWAL()
        rewriteAfterErasure()
        return ErasureOutcome(record: record, walTruncated: truncated)
    }

    /// Erases `ids` in `DATABASE.before-restore`, the database `--restore` kept
    /// aside (``DatabaseBackup/restore(from:to:)``), when there is one: that
    /// file is an archive, so no change is logged in it; the entries' rows and
    /// conflict records are removed and their change-log payloads overwritten,
    /// with `secure_delete`, and its WAL merged and removed. Best effort: a
    /// file that cannot be opened or written is left as it is (`VerifyErasure`
    /// reports its hits).
    func eraseInKeptDatabase(_ ids: [String]) {
        let kept = path + ".before-restore"
        guard server == nil, !ids.isEmpty, FileManager.default.fileExists(atPath: kept),
            let db = try? SQLiteConnection(path: kept)
        else { return }
        do {
            try db.execute("BEGIN IMMEDIATE")
            for id in ids {
                try db.statement(
                    "UPDATE changes SET fields = '{}', base = '{}', reason = NULL WHERE entry = ? AND op <> 'erase'"
                ).run([.text(id)])
                try db.statement("DELETE FROM conflicts WHERE entry = ?").run([.text(id)])
                try db.statement("DELETE FROM entries WHERE id = ?").run([.text(id)])
                // A kept database from before migration 8 has no keys table.
                try? db.statement("DELETE FROM entry_keys WHERE entry = ?").run([.text(id)])
            }
            try db.execute("COMMIT")
            // Every page written anew: no stale copy in unused space (markForRewrite).
            try db.execute("VACUUM")
        } catch {
            try? db.execute("ROLLBACK")
        }
        db.checkpoint("TRUNCATE")
        try? db.execute("PRAGMA journal_mode=DELETE")
    }

    /// Checkpoints the WAL into the database and truncates it to zero bytes
    /// (`wal_checkpoint(TRUNCATE)`), retrying while readers hold it, for about a
    /// second. Returns whether it truncated. A passive checkpoint on a
    /// connection of its own copies the WAL first, outside the writer's turn,
    /// so the truncating one, which writers wait for, has little left to copy and sync.
    func truncateWAL() -> Bool {
        guard server == nil else { return true }  // The server's WAL is the operator's (doc/hub.md).
        _ = (try? SQLiteConnection(path: path, vfs: purge.vfs))?.checkpointPassive()
        for attempt in 0..<50 {
            // Each attempt waits at most 10 ms for readers: writers queue behind it.
            let done =
                (try? writer.perform { db -> Bool in
                    (db as? SQLiteConnection)?.checkpointTruncate(busyMs: ErasurePurge.checkpointBusyMs) ?? false
                }) ?? false
            if done { return true }
            if attempt < 49 { usleep(20_000) }
        }
        return false
    }

    /// Removes the stale copies of erased values an erasure leaves
    /// (``WriteContext/markForRewrite()``), and clears the mark. On SQLite it
    /// asks for the purge (``ErasurePurge``), which runs page by page in the
    /// background, and returns false at once (``purgeProgress`` tells how far it is).
    /// On a database server it rewrites the value-bearing tables
    /// (``StoreServer/removeDeadRows(_:rewritingValues:)``), outside any
    /// transaction; writes wait meanwhile.
    /// - Returns: true when the tables were rewritten; false leaves the mark
    ///   for the next erasure, verify or open.
    @discardableResult
    func rewriteAfterErasure() -> Bool {
        guard let server else {
            purge.request(self)
            return false
        }
        let rewritten =
            (try? writer.perform { db -> Void in
                // The mark as it was before the rewrite: one another instance sets meanwhile
                // (its erasure committed during this rewrite) stays for its own.
                var mark = ""
                try db.statement("SELECT value FROM node WHERE key = 'rewrite_pending'").query { mark = $0.text(0) }
                try server.removeDeadRows(db, rewritingValues: true)
                try db.statement("DELETE FROM node WHERE key = 'rewrite_pending' AND value = ?").run([.text(mark)])
            }) != nil
        return truncateWAL() && rewritten
    }

    /// True when an erasure's rewrite (``rewriteAfterErasure()``) is still to be done.
    static func isRewritePending(_ db: any SQLDatabase) throws -> Bool {
        var pending = false
        try db.statement("SELECT 1 FROM node WHERE key = 'rewrite_pending'").query { _ in pending = true }
        return pending
    }

    /// The erasure of entry `id`, or `nil` when it was not erased.
    /// - Throws: ``SQLiteError``.
    package func erasure(of id: String) throws -> ErasureRecord? {
        try readers.read { db in try EntryStore.erasure(db, id) }
    }

    /// Every erasure this node holds, oldest first (by HLC, then entry).
    /// - Throws: ``SQLiteError``.
    package func erasures() throws -> [ErasureRecord] {
        try readers.read { db in
            var list: [ErasureRecord] = []
            try db.statement("SELECT \(EntryStore.erasureColumns) FROM erasures ORDER BY hlc, entry").query {
                list.append(EntryStore.erasure(from: $0))
            }
            return list
        }
    }

    /// Changes refused because their entry was erased, since the store was made
    /// (doc/design.md "Erasure": no resurrection): from peers (Apply), Import
    /// rows, and re-sent backups.
    /// - Throws: ``SQLiteError``.
    package func refusedErasedCount() throws -> Int {
        Int(try nodeValue("refused_erased") ?? "") ?? 0
    }

    /// Adds `count` to the changes refused because their entry was erased (an Add
    /// with the id of an erased entry, refused in its own write job, which rolled back).
    /// - Throws: ``SQLiteError``.
    package func countRefusedErased(_ count: Int) throws {
        try writer.submit { ctx in try ctx.countRefusedErased(count) }
    }

    static let erasureColumns = "entry, form, hlc, node, actor, at, reason"

    /// The `erasures` row of `id` on `db`, or `nil`.
    static func erasure(_ db: any SQLDatabase, _ id: String) throws -> ErasureRecord? {
        var found: ErasureRecord?
        try db.statement("SELECT \(erasureColumns) FROM erasures WHERE entry = ?").query([.text(id)]) {
            found = erasure(from: $0)
        }
        return found
    }

    /// Decodes a row selected with ``erasureColumns``.
    static func erasure(from row: any SQLRow) -> ErasureRecord {
        ErasureRecord(
            entry: row.text(0), form: row.text(1), hlc: HLC(row.text(2)) ?? .zero, node: row.text(3),
            actor: row.text(4), at: row.text(5), reason: row.text(6))
    }

    /// Re-applies the erasure ledger (at start-up before the first call, and on
    /// a server when the database went back under the running instance):
    /// every erase change in the ledger that the change log lacks is applied
    /// (a database restored from an older backup, or a failover that lost the
    /// erase's commit, is erased again), and every erasure the database holds
    /// that the ledger lacks is appended to it.
    /// - Returns: how many erase changes were re-applied, and how many lines
    ///   of the ledger could not be read (damaged).
    /// - Throws: the store's ``StorageError``, ``EntryError`` `.storageFailed` (the ledger).
    @discardableResult
    func reapplyErasureLedger() throws -> (reapplied: Int, malformed: Int) {
        let ledger = self.ledger
        let (lines, malformed) = ledger.read()
        let reapplied = try writer.submit { ctx -> Int in
            var count = 0
            for line in lines {
                var change = line.change
                if try ctx.isLogged(change) { continue }
                ctx.clock.observe(change.hlc)
                try ctx.append(&change)
                try ctx.scrub(change)
                count += 1
            }
            if count > 0 { try ctx.markForRewrite() }
            var known = Set(lines)
            var missing: [ErasureLedger.Line] = []
            // Every erase change in the log has its entry in `erasures` (scrub records it in the
            // same transaction): look them up by entry (changes_by_entry) instead of reading the
            // whole change log at every start.
            try ctx.db.statement(
                """
                SELECT \(EntryStore.changeColumns) FROM changes
                WHERE entry IN (SELECT entry FROM erasures) AND op = 'erase' ORDER BY seq
                """
            ).query { row in
                let line = ErasureLedger.Line(try EntryStore.change(from: row))
                if known.insert(line).inserted { missing.append(line) }
            }
            try ledger.append(missing)
            return count
        }
        if reapplied > 0 { rewriteAfterErasure() }
        eraseInKeptDatabase(Array(Set(lines.map(\.entry))))
        return (reapplied, malformed)
    }
}

extension WriteContext {
    /// The erasure of entry `id`, or `nil`.
    func erasure(of id: String) throws -> ErasureRecord? {
        try EntryStore.erasure(db, id)
    }

    /// Carries out the erase change `change` (already in the change log) on its
    /// entry: removes its row, its search keys and conflict records, overwrites the fields, base
    /// and reason of its other change-log rows, and records the erasure (the
    /// least (HLC, node) when several erase changes name one entry, so every
    /// node keeps the same). The caller rebuilds the value indexes once per job.
    func scrub(_ change: ChangeRecord) throws {
        try db.statement(
            "UPDATE changes SET fields = '{}', base = '{}', reason = NULL WHERE entry = ? AND op <> 'erase'"
        )
        .run([.text(change.entry)])
        try db.statement("DELETE FROM conflicts WHERE entry = ?").run([.text(change.entry)])
        try db.statement("DELETE FROM entries WHERE id = ?").run([.text(change.entry)])
        try db.statement("DELETE FROM entry_keys WHERE entry = ?").run([.text(change.entry)])
        try db.statement(
            """
            INSERT INTO erasures (entry, form, hlc, node, actor, at, reason) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (entry) DO UPDATE SET form = excluded.form, hlc = excluded.hlc, node = excluded.node,
              actor = excluded.actor, at = excluded.at, reason = excluded.reason
            WHERE (excluded.hlc, excluded.node) < (erasures.hlc, erasures.node)
            """
        ).run([
            .text(change.entry), .text(change.form), .text(change.hlc.description), .text(change.node),
            .text(change.actor), .text(change.at), .text(change.reason ?? ""),
        ])
        lookups?.scrubbed(change.entry)
    }

    /// Marks the database file for a rewrite (``EntryStore/rewriteAfterErasure()``),
    /// in the erasure's transaction. `secure_delete` zeroes the cells SQLite
    /// frees, but not every copy of a value: a deleted row's key can stay
    /// behind as a divider key in an interior index page, and a b-tree balance
    /// that moves a cell to another page leaves its old bytes in the unused
    /// space of the page it left (a test found an erased name there). Only
    /// writing every page anew removes them all. The mark outlives a crash
    /// before the rewrite: the next open does it.
    func markForRewrite() throws {
        // A token of its own: an instance that rewrote for an earlier erasure clears
        // only the mark it saw (EntryStore.rewriteAfterErasure()).
        try db.statement(
            "INSERT INTO node (key, value) VALUES ('rewrite_pending', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        )
        .run([.text(UUIDv7.generate())])
    }

    /// Adds `n` to the count of changes refused because their entry was erased.
    func countRefusedErased(_ n: Int) throws {
        guard n > 0 else { return }
        try db.statement(
            """
            INSERT INTO node (key, value) VALUES ('refused_erased', ?)
            ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(node.value AS INTEGER) + CAST(excluded.value AS INTEGER) AS TEXT)
            """
        ).run([.text(String(n))])
    }
}

extension ErasureRecord {
    /// The longest reason an erasure may carry, in characters: it is audit text
    /// kept in every node's ledger and synced everywhere.
    package static let maxReasonLength = 500

    /// True for a reason an erasure may carry: not blank, no control
    /// characters (a NUL would cut it short in SQLite, a line end break the
    /// ledger's lines), at most ``maxReasonLength`` characters.
    package static func isValidReason(_ reason: String) -> Bool {
        reason.contains { !$0.isWhitespace } && reason.count <= maxReasonLength
            && FreeText.isLineSafe(reason)
    }
}
