import Foundation
import EntryModel

/// What one compaction did, or the last one did (doc/design.md "Compaction";
/// doc/protocol.md `Compact` and `Status.compaction`).
package struct CompactionResult: Sendable, Equatable {
    /// When it ran: RFC 3339 UTC, milliseconds.
    package var at: String
    /// Change-log rows removed.
    package var removed: Int
    /// The change log's size before minus after, in bytes: its table and indexes
    /// together with the `folded` stamps it now keeps, as SQLite's `dbstat`
    /// counts pages (the freed pages go to the file's free list; the file does
    /// not shrink); on PostgreSQL the change in the tables' size after
    /// `VACUUM`. Never negative: 0 when the change log did not get smaller.
    package var bytesFreed: Int64
    /// Rows with seq up to this were looked at (the oldest point every known,
    /// non-expired peer acknowledged; the whole log without peers).
    package var horizon: Int64
    /// The peer whose acknowledgement set the horizon; `nil` without peers.
    package var heldBackBy: String?
    /// The peers ignored because they were silent longer than `peer-expiry`, by name.
    package var expired: [String]

    /// A value with every member given.
    package init(at: String, removed: Int, bytesFreed: Int64, horizon: Int64, heldBackBy: String?, expired: [String]) {
        self.at = at
        self.removed = removed
        self.bytesFreed = bytesFreed
        self.horizon = horizon
        self.heldBackBy = heldBackBy
        self.expired = expired
    }
}

extension EntryStore {
    /// Entries looked at per write transaction, so other writes interleave.
    static let compactionBatch = 500

    /// Records that node `node` pulled this node's change log with `since`
    /// (a `Changes` call with `excludeNode` = `node`): it holds everything up to
    /// `since` (doc/design.md "Compaction": the horizon). The highest `since` is
    /// kept with the time. A peer row of that node marked expired is brought
    /// back: its checkpoints start over from 0 both ways, and its notice says so.
    ///
    /// Returns without waiting for the write (``PeerAcks``): it joins the next
    /// write round, together with the other acknowledgements made meanwhile; an
    /// acknowledgement that does not move forward is written once a minute at most.
    /// - Throws: ``EntryError`` `.storageFailed` once the store is closing.
    package func acknowledge(node: String, since: Int64) throws {
        guard acks.record(node: node, since: since) else { return }
        let taken = TakenAcks()
        let acks = self.acks
        do {
            _ = try writer.enqueue { ctx in
                for ack in taken.acknowledgements(from: acks) { try ctx.acknowledge(node: ack.node, since: ack.since) }
            }
        } catch {
            _ = acks.take()  // closing: nothing more is written; the next call finds no job queued
            throw error
        }
    }

    /// The figures of the last compaction, `nil` before the first.
    /// - Throws: ``SQLiteError``.
    package func lastCompaction() throws -> CompactionResult? {
        guard let text = try nodeValue("compaction"), let json = try? JSON.parse(text) else { return nil }
        return CompactionResult(
            at: json["at"]?.stringValue ?? "", removed: Int(json["removed"]?.intValue ?? 0),
            bytesFreed: json["bytesFreed"]?.intValue ?? 0, horizon: json["horizon"]?.intValue ?? 0,
            heldBackBy: json["heldBackBy"]?.stringValue,
            expired: json["expired"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }

    /// The horizon of the last compaction that removed rows of `entry`, `nil` if none did.
    /// - Throws: ``SQLiteError``.
    package func compactedThrough(entry: String) throws -> Int64? {
        try readers.read { db in
            var horizon: Int64?
            try db.statement("SELECT horizon FROM compacted WHERE entry = ?").query([.text(entry)]) {
                horizon = $0.int(0)
            }
            return horizon
        }
    }

    /// Removes superseded change-log rows up to the horizon (doc/design.md
    /// "Compaction"): a row goes only when nothing a merge needs rests on it
    /// (no head, no standing write or re-spelling chain, no side of an open
    /// conflict, no head of the deleted register, not the entry's newest), and
    /// only when, without it, the entry's rows still replay to the stored entry
    /// and give the same open conflicts (checked per entry; else the entry is
    /// left whole). Erase changes and the rows of erased entries stay. The
    /// stamps of removed rows are kept (`folded`), so a removed change that
    /// comes back is skipped.
    ///
    /// Horizon: per known peer (each row of `peers`, each name of `configured`
    /// without one, each node that pulled with `excludeNode` and has no row) the
    /// most it acknowledged of this log (its `pushed_seq`, or the `since` it last
    /// pulled with); the least of those over peers heard from within
    /// `peerExpiryMs`; without such peers the whole log. A peer silent longer is
    /// marked expired and ignored, but rows a returning one holds keep what they
    /// rest on. A configured peer never heard from holds the horizon at 0.
    ///
    /// - Parameters:
    ///   - peerExpiryMs: silence after which a peer is expired, in milliseconds.
    ///   - configured: the names of the configured peers.
    ///   - layout: the field layout of a form, by form name.
    ///   - progress: called after each batch of entries with (entries done, entries in all).
    /// - Throws: ``SQLiteError``; batches done so far stay done.
    package func compact(
        peerExpiryMs: UInt64, configured: [String], layout: @escaping (String) -> FieldLayout,
        progress: (Int, Int) -> Void = { _, _ in }
    ) throws -> CompactionResult {
        // Acknowledgements queued before it are written first (jobs run in queue order).
        let plan = try writer.submit { ctx in
            try ctx.compactionHorizon(peerExpiryMs: peerExpiryMs, configured: configured)
        }
        // A peer it expired is written again at its next pull, which brings it back.
        acks.forgetQueued()
        let sizeBefore = try changeLogBytes()
        var ids: [String] = []
        try readers.read { db in
            try db.statement("SELECT DISTINCT entry FROM changes WHERE seq <= ? ORDER BY entry").query([
                .int(plan.horizon)
            ]) { ids.append($0.text(0)) }
        }
        var removed = 0
        var done = 0
        while done < ids.count {
            let batch = Array(ids[done..<min(ids.count, done + EntryStore.compactionBatch)])
            removed += try writer.submit { ctx in
                var n = 0
                for id in batch {
                    n += try ctx.compactEntry(id, horizon: plan.horizon, expiredAcks: plan.expiredAcks, layout: layout)
                }
                return n
            }
            done += batch.count
            progress(done, ids.count)
        }
        let sizeAfter = try changeLogBytes()
        let result = CompactionResult(
            at: Timestamp.rfc3339(milliseconds: HybridClock.systemMilliseconds()), removed: removed,
            bytesFreed: max(0, sizeBefore - sizeAfter), horizon: plan.horizon, heldBackBy: plan.heldBackBy,
            expired: plan.expired)
        let json = JSON.object([
            ("at", .string(result.at)), ("removed", .int(Int64(removed))), ("bytesFreed", .int(result.bytesFreed)),
            ("horizon", .int(result.horizon)), ("heldBackBy", result.heldBackBy.map(JSON.string) ?? .null),
            ("expired", .array(result.expired.map(JSON.string))),
        ])
        try setNodeValue("compaction", json.text)
        // On a server the dead rows of the compaction (and of acknowledgements, expiries)
        // go at once: `VACUUM` of the store's tables, also when nothing was removed now.
        if let server {
            _ = try? writer.perform { db in try server.removeDeadRows(db, rewritingValues: false) }
        } else if removed > 0 {
            _ = truncateWAL()
        }
        return result
    }

    /// The bytes of the change log's pages: `changes`, its indexes and the
    /// `folded` stamps (SQLite `dbstat`); when this SQLite lacks `dbstat`, the
    /// negated bytes of the free list, so that a difference still counts freed pages.
    func changeLogBytes() throws -> Int64 {
        if let server { return try readers.read { db in try server.changeLogBytes(db) } }
        return try readers.read { db in
            var bytes: Int64 = 0
            do {
                try db.statement(
                    """
                    SELECT COALESCE(SUM(pgsize), 0) FROM dbstat
                    WHERE name IN ('changes', 'changes_by_entry', 'sqlite_autoindex_changes_1', 'folded')
                    """
                ).query { bytes = $0.int(0) }
            } catch {
                var pages: Int64 = 0
                var size: Int64 = 0
                try db.statement("PRAGMA freelist_count").query { pages = $0.int(0) }
                try db.statement("PRAGMA page_size").query { size = $0.int(0) }
                bytes = -pages * size
            }
            return bytes
        }
    }
}

/// The horizon of one compaction and what it passed over.
struct CompactionPlan {
    /// Rows with seq up to this may be removed.
    var horizon: Int64
    /// The peer that set it, `nil` without peers.
    var heldBackBy: String?
    /// Names of the expired peers.
    var expired: [String]
    /// What each expired peer acknowledged: it holds this log up to there.
    var expiredAcks: [Int64]
}

extension WriteContext {
    /// Writes one acknowledgement (``EntryStore/acknowledge(node:since:)``).
    func acknowledge(node: String, since: Int64) throws {
        let now = Timestamp.rfc3339(milliseconds: clock.wallClock())
        try db.statement(
            """
            INSERT INTO peer_acks (node, since, at) VALUES (?, ?, ?)
            ON CONFLICT (node) DO UPDATE SET since = CASE WHEN excluded.since > peer_acks.since THEN excluded.since ELSE peer_acks.since END, at = excluded.at
            """
        ).run([.text(node), .int(since), .text(now)])
        try db.statement(
            """
            UPDATE peers SET pulled_seq = 0, pushed_seq = 0, mark = NULL, expired = NULL,
              notice = ? || ': was expired (silent past peer-expiry) and pulled again: its next sync reads it from the start and sends everything'
            WHERE node = ? AND expired IS NOT NULL
            """
        ).run([.text(now), .text(node)])
    }

    /// The horizon over the known peers; marks peers silent past `peerExpiryMs` expired.
    func compactionHorizon(peerExpiryMs: UInt64, configured: [String]) throws -> CompactionPlan {
        try claim()  // without peers the horizon is the node's highest seq, other instances' too
        let now = clock.wallClock()
        var acks: [String: (since: Int64, at: UInt64?)] = [:]
        try db.statement("SELECT node, since, at FROM peer_acks").query { row in
            acks[row.text(0)] = (row.int(1), Timestamp.milliseconds(rfc3339: row.text(2)))
        }
        struct Known {
            var name: String
            var ack: Int64
            var contact: UInt64?
            var expired: Bool
            var isRow: Bool
        }
        var known: [Known] = []
        var mapped = Set<String>()
        try db.statement("SELECT name, node, pushed_seq, last_sync, expired FROM peers ORDER BY name").query { row in
            let node = row.isNull(1) ? nil : row.text(1)
            let ack = node.flatMap { acks[$0] }
            if let node { mapped.insert(node) }
            let synced = row.isNull(3) ? nil : Timestamp.milliseconds(rfc3339: row.text(3))
            let contact = [synced, ack?.at].compactMap { $0 }.max()
            known.append(
                Known(
                    name: row.text(0), ack: max(row.int(2), ack?.since ?? 0), contact: contact,
                    expired: !row.isNull(4), isRow: true))
        }
        for name in configured where !known.contains(where: { $0.name == name }) {
            known.append(Known(name: name, ack: 0, contact: nil, expired: false, isRow: false))
        }
        for (node, ack) in acks.sorted(by: { $0.key < $1.key }) where !mapped.contains(node) {
            known.append(Known(name: "node:\(node)", ack: ack.since, contact: ack.at, expired: false, isRow: false))
        }
        let mark = try db.statement("UPDATE peers SET expired = ? WHERE name = ? AND expired IS NULL")
        for i in known.indices where !known[i].expired {
            guard let contact = known[i].contact, now > contact, now - contact > peerExpiryMs else { continue }
            known[i].expired = true
            if known[i].isRow { try mark.run([.text(Timestamp.rfc3339(milliseconds: now)), .text(known[i].name)]) }
        }
        let live = known.filter { !$0.expired }
        let least = live.min { ($0.ack, $0.name) < ($1.ack, $1.name) }
        return CompactionPlan(
            horizon: least?.ack ?? lastSeq, heldBackBy: least?.name,
            expired: known.filter(\.expired).map(\.name), expiredAcks: known.filter(\.expired).map(\.ack))
    }

    /// Removes the superseded rows of `id` up to `horizon` (see
    /// ``EntryStore/compact(peerExpiryMs:configured:layout:progress:)``).
    /// - Returns: the rows removed.
    func compactEntry(_ id: String, horizon: Int64, expiredAcks: [Int64], layout: (String) -> FieldLayout) throws -> Int
    {
        if try erasure(of: id) != nil { return 0 }
        var rows: [ChangeRecord] = []
        try db.statement("SELECT \(EntryStore.changeColumns) FROM changes WHERE entry = ? ORDER BY seq")
            .query([.text(id)]) { rows.append(try EntryStore.change(from: $0)) }
        guard rows.contains(where: { $0.seq <= horizon && $0.op != .erase }), let stored = try load(id) else {
            return 0
        }
        let fieldLayout = layout(stored.form)
        func key(_ stamp: Stamp) -> String { "\(stamp.node) \(stamp.hlc)" }
        var keep = Set<String>()
        // The entry's newest change (its version) and every change above the horizon.
        if let newest = rows.max(by: { $0.stamp < $1.stamp }) { keep.insert(key(newest.stamp)) }
        for row in rows where row.seq > horizon || row.op == .erase { keep.insert(key(row.stamp)) }
        // Per field group: its heads and the chain its standing write rests on.
        var names = Set<String>()
        for row in rows where row.op == .create || row.op == .update { names.formUnion(row.fields.keys) }
        var groups: [[String]] = []
        for name in names.sorted() where !groups.contains(where: { $0.contains(name) }) {
            groups.append(fieldLayout.group(of: name))
        }
        var notSuperseded: [[String]: Set<String>] = [:]  // group → its heads and standing chain
        for group in groups {
            let writes = try groupWrites(entry: id, group: group)
            let needed = WriteContext.heads(of: writes) + WriteContext.standingChain(of: writes)
            for write in needed { keep.insert(key(write.stamp)) }
            notSuperseded[group] = Set(needed.map { key($0.stamp) })
        }
        // Per field, as replay reads it: a write may set some fields of its group only.
        var fieldChain: [String: Set<String>] = [:]
        for name in names {
            let writes = rows.filter { $0.fields[name] != nil }.map { change in
                GroupWrite(
                    stamp: change.stamp, fields: [name: change.fields[name]!],
                    seen: SeenWrites(group: [name], base: change.base, node: change.node),
                    isMigration: change.actor == WriteOrigin.migrationActor,
                    superseded: change.superseded.contains(name))
            }
            for write in WriteContext.standingChain(of: writes) { keep.insert(key(write.stamp)) }
            fieldChain[name] = Set(WriteContext.standingChain(of: writes).map { key($0.stamp) })
        }
        // The deleted register's heads (its newest among them), and both sides of every open conflict.
        for head in try deletedRegisterHeads(entry: id) { keep.insert(key(head.stamp)) }
        let open = try openConflictIDs(id)
        try db.statement(
            "SELECT kept_hlc, kept_node, lost_hlc, lost_node FROM conflicts WHERE entry = ? AND resolved = 0"
        )
        .query([.text(id)]) { row in
            keep.insert("\(row.text(1)) \(row.text(0))")
            keep.insert("\(row.text(3)) \(row.text(2))")
        }
        // An expired peer holds this log up to its acknowledgement, removed rows included:
        // a row above it that saw one of those stays, so that, back, the peer learns they
        // were seen (and so on through re-spellings, which are seen only through others).
        for ack in expiredAcks {
            var below = Set(rows.filter { $0.seq <= ack }.map(\.hlc.description))
            // …and those removed before, which rows here name by HLC.
            let present = Set(rows.map(\.hlc.description))
            let named = Set(rows.flatMap { $0.base.values.flatMap { $0.split(separator: ",").map(String.init) } })
                .subtracting(present)
            let folded = try db.statement("SELECT 1 FROM folded WHERE hlc = ? AND seq <= ?")
            for hlc in named where !hlc.isEmpty {
                try folded.query([.text(hlc), .int(ack)]) { _ in below.insert(hlc) }
            }
            var changed = true
            while changed {
                changed = false
                for row in rows where row.seq > ack && !keep.contains(key(row.stamp)) {
                    let saw = Set(row.base.values.flatMap { $0.split(separator: ",").map(String.init) })
                    guard !saw.isDisjoint(with: below) else { continue }
                    keep.insert(key(row.stamp))
                    below.insert(row.hlc.description)
                    changed = true
                }
            }
        }
        // A kept write that a later write saw for a group (no head, not standing) is
        // marked superseded for those fields, so it stays no head when the writes
        // between it and the newest are removed (ChangeRecord.superseded; synced).
        var marks: [Int64: Set<String>] = [:]  // seq → fields
        for row in rows
        where (row.op == .create || row.op == .update) && row.actor != WriteOrigin.migrationActor
            && keep.contains(key(row.stamp))
        {
            for group in groups where notSuperseded[group]?.contains(key(row.stamp)) == false {
                let fields = group.filter { row.fields[$0] != nil && fieldChain[$0]?.contains(key(row.stamp)) != true }
                if !fields.isEmpty { marks[row.seq, default: Set(row.superseded)].formUnion(fields) }
            }
        }
        marks = marks.filter { seq, fields in fields != Set(rows.first { $0.seq == seq }?.superseded ?? []) }
        // A kept delete or restore that another saw stays seen: one of its seers stays
        // too (the oldest), and so on, or it would become a head of its own.
        var closing = true
        while closing {
            closing = false
            for target in rows where keep.contains(key(target.stamp)) && (target.op == .delete || target.op == .restore)
            {
                // A row that names its writes' nodes (`@nodes`) saw the target only by (HLC, node);
                // an older one, by the HLC anywhere in its base.
                let seers = rows.filter { row in
                    row.base[EntryStore.nodesKey] != nil
                        ? SeenWrites(
                            row.base.values.flatMap { $0.split(separator: ",").map(String.init) }, base: row.base,
                            node: row.node
                        )
                        .contains(target.stamp)
                        : row.base.values.contains {
                            $0.split(separator: ",").contains(Substring(target.hlc.description))
                        }
                }
                if !seers.isEmpty, !seers.contains(where: { keep.contains(key($0.stamp)) }) {
                    keep.insert(key(seers.min { $0.seq < $1.seq }!.stamp))
                    closing = true
                }
            }
        }
        let candidates = rows.filter { $0.seq <= horizon && !keep.contains(key($0.stamp)) }
        guard !candidates.isEmpty else { return 0 }
        // Remove, then check the entry as the rest of its rows describe it: the same
        // open conflicts (settled again from the change log) and the same values.
        try db.execute("SAVEPOINT compact_entry")
        let remove = try db.statement("DELETE FROM changes WHERE seq = ?")
        let fold = try db.statement("INSERT OR IGNORE INTO folded (hlc, node, seq) VALUES (?, ?, ?)")
        for row in candidates {
            try remove.run([.int(row.seq)])
            try fold.run([.text(row.hlc.description), .text(row.node), .int(row.seq)])
        }
        let mark = try db.statement("UPDATE changes SET superseded = ? WHERE seq = ?")
        for (seq, fields) in marks { try mark.run([.text(fields.sorted().joined(separator: ",")), .int(seq)]) }
        for group in groups { _ = try settleGroup(entry: id, group: group, current: stored.fields) }
        if stored.deleted || rows.contains(where: { $0.op == .delete || $0.op == .restore }) {
            _ = try deleteAgainstEdit(entry: id, layout: fieldLayout)
        }
        let kept = rows.filter { row in !candidates.contains { $0.seq == row.seq } }.map { row in
            var row = row
            if let fields = marks[row.seq] { row.superseded = fields.sorted() }
            return row
        }
        let replayed = EntryStore.replay(kept)[id]
        let same =
            replayed
            == ReplayedEntry(form: stored.form, fields: stored.fields, deleted: stored.deleted, version: stored.version)
        guard same, try openConflictIDs(id) == open else {
            try db.execute("ROLLBACK TO compact_entry")
            try db.execute("RELEASE compact_entry")
            return 0
        }
        try db.execute("RELEASE compact_entry")
        try db.statement(
            """
            INSERT INTO compacted (entry, horizon, at) VALUES (?, ?, ?)
            ON CONFLICT (entry) DO UPDATE SET horizon = excluded.horizon, at = excluded.at
            """
        ).run([.text(id), .int(horizon), .text(Timestamp.rfc3339(milliseconds: clock.wallClock()))])
        return candidates.count
    }

    /// The ids of `entry`'s open conflicts.
    func openConflictIDs(_ entry: String) throws -> Set<String> {
        var ids = Set<String>()
        try db.statement("SELECT id FROM conflicts WHERE entry = ? AND resolved = 0").query([.text(entry)]) {
            ids.insert($0.text(0))
        }
        return ids
    }
}
