import EntryModel

extension EntryStore {
    /// Applies changes made on other nodes, in one transaction (doc/design.md "Sync").
    ///
    /// - Idempotent: a change whose (node, HLC) is already in the change log is skipped.
    /// - Merge: each field group is a last-writer-wins register ordered by
    ///   (HLC, node). A change whose `base` equals the register's current HLC
    ///   follows it; otherwise the writes were concurrent, the greater stamp wins
    ///   on every node, and a conflict record keeps the losing value. The deleted
    ///   flag is a register of its own. Every change is appended to the change
    ///   log with its origin node, HLC, actor and time, so History shows losers too.
    /// - Erasure (doc/design.md "Erasure"): an `erase` change is logged (with no
    ///   fields or base, whatever it carried) and carried out at once, whatever
    ///   its stamp: it wins over every change to its entry, older, concurrent or
    ///   newer. Any other change for an erased entry is refused, not stored, and
    ///   counted (`refusedErased`, and the node's total).
    /// - The local clock moves past every received stamp.
    ///
    /// - Parameters:
    ///   - via: the peer that delivered the batch (recorded on each change).
    ///   - layout: the field layout of a form, by form name.
    ///   - maxClockSkewMs: a change stamped further ahead of the local wall clock
    ///     refuses the whole batch.
    ///   - pulled: the peer's pull checkpoint, stored in the same transaction
    ///     after the batch (`peers.pulled_seq` of a saved peer; no row, no change).
    ///   - respell: re-spell stored values under this node's rules (``Canonicaliser``).
    /// - Throws: ``EntryError/clockSkew(node:aheadMs:)`` (nothing applied); ``SQLiteError``.
    package func apply(
        _ changes: [ChangeRecord], via: String?, layout: @escaping (String) -> FieldLayout,
        maxClockSkewMs: Int, pulled: PullCheckpoint?, respell: Bool
    ) throws -> ApplyResult {
        let ledger = self.ledger
        let (result, erasedIDs) = try writer.submit(lookingUp: changes) { ctx -> (ApplyResult, [String]) in
            // Claimed before anything is read (whether a change is logged, an entry erased):
            // two instances applying one batch at once would both find it new.
            // On a server, with the per-change checks of the whole batch, in one round trip.
            try ctx.claim(lookingUp: changes)
            defer { ctx.endLookups() }
            let wall = ctx.clock.wallClock()
            for change in changes where change.hlc.milliseconds > wall + UInt64(maxClockSkewMs) {
                throw EntryError.clockSkew(node: change.node, aheadMs: Int64(change.hlc.milliseconds - wall))
            }
            var result = ApplyResult()
            var created: [String] = []
            var recheck: [String: Set<String>?] = [:]  // entry → fields to re-spell under this node's rules (nil: all)
            var erased: [ErasureLedger.Line] = []
            for change in changes where change.op == .erase {
                if try !ctx.isLogged(change) { erased.append(ErasureLedger.Line(change)) }
            }
            // The ledger before the commit (ErasureLedger "Ordering").
            try ledger.append(erased)
            for change in changes {
                if change.op == .erase {
                    if try ctx.isLogged(change) {
                        result.skipped += 1
                        continue
                    }
                    ctx.clock.observe(change.hlc)
                    var logged = change
                    logged.via = via
                    logged.fields = [:]
                    logged.base = [:]
                    try ctx.append(&logged)
                    try ctx.scrub(logged)
                    result.applied += 1
                    continue
                }
                if try ctx.isErased(change.entry) {
                    // No resurrection: a change for an erased entry is never stored.
                    result.refusedErased += 1
                    continue
                }
                if try ctx.isLogged(change) {
                    result.skipped += 1
                    // Compaction elsewhere may have learnt that later writes superseded it.
                    if !change.superseded.isEmpty { try ctx.mergeSuperseded(change, layout: layout(change.form)) }
                    continue
                }
                ctx.clock.observe(change.hlc)
                var logged = change
                logged.via = via
                try ctx.append(&logged)  // first, so the merged entry records its seq
                created += try ctx.merge(change, layout: layout(change.form))
                result.applied += 1
                // A value from a node with older rules, or one a restore brings back,
                // is re-spelled here at once (doc/design.md "Stored values under changed
                // rules"); a re-spelling from elsewhere is taken as it comes, so two
                // nodes whose rules differ never rewrite each other's forever.
                guard respell else { continue }
                if change.op == .restore {
                    recheck[change.entry] = .some(nil)
                } else if change.op == .create || change.op == .update, change.actor != WriteOrigin.migrationActor {
                    switch recheck[change.entry] {
                    case .none: recheck[change.entry] = Set(change.fields.keys)
                    case .some(.some(let fields)): recheck[change.entry] = fields.union(change.fields.keys)
                    case .some(.none): break  // restored in this batch: every field is looked at
                    }
                }
            }
            for (id, fields) in recheck.sorted(by: { $0.key < $1.key }) {
                result.recanonicalised += try ctx.canonicalise(id, scope: fields, layout: layout)
            }
            if !erased.isEmpty { try ctx.markForRewrite() }
            try ctx.countRefusedErased(result.refusedErased)
            result.conflicts = try ctx.openCount(of: created)
            if let pulled {
                try ctx.db.statement("UPDATE peers SET pulled_seq = ?, mark = COALESCE(?, mark) WHERE name = ?")
                    .run([.int(pulled.pulledSeq), pulled.mark.map { .text($0) } ?? .null, .text(pulled.peer)])
            }
            try ctx.claim()  // this node's highest seq, also when every change was skipped
            result.seq = ctx.lastSeq
            return (result, erased.map(\.entry))
        }
        if !erasedIDs.isEmpty {
            eraseInKeptDatabase(erasedIDs)
            rewriteAfterErasure()
        }
        return result
    }
}

extension EntryStore {
    /// The `field` of a delete-against-edit conflict: the entry's deleted flag,
    /// a register of its own (doc/design.md "Delete against edit").
    package static let deletedRegister = "deleted"
    /// The `base` key of a delete or restore for the delete or restore it replaced
    /// (`@` keeps it apart from every field name).
    package static let deletedBaseKey = "@deleted"
}

extension StoredEntry {
    /// Sets `field` to `value` (empty: unset) with the clock `stamp`.
    mutating func set(_ field: String, _ value: String, at stamp: Stamp) {
        fields[field] = value.isEmpty ? nil : value
        clocks[field] = stamp
    }
}

extension WriteContext {
    /// True when the change log already holds (node, HLC) of `change`, or held it
    /// and compaction removed it as superseded (`folded`, doc/design.md
    /// "Compaction"): a removed change that comes back is skipped, not merged again.
    func isLogged(_ change: ChangeRecord) throws -> Bool {
        if let known = lookups?.isLogged(change.stamp) { return known }
        var found = false
        let key: [SQLValue] = [.text(change.node), .text(change.hlc.description)]
        try db.statement("SELECT 1 FROM changes WHERE node = ? AND hlc = ?").query(key) { _ in found = true }
        if !found {
            try db.statement("SELECT 1 FROM folded WHERE hlc = ?2 AND node = ?1").query(key) { _ in found = true }
        }
        return found
    }

    /// True when entry `id` is erased (``erasure(of:)``).
    func isErased(_ id: String) throws -> Bool {
        if let known = lookups?.isErased(id) { return known }
        return try erasure(of: id) != nil
    }

    /// Adds `change`'s ``ChangeRecord/superseded`` fields to its logged row (a row
    /// compaction removed here needs nothing) and, when that marks anything new,
    /// brings the entry's standing values and open conflicts of those groups to
    /// what the change log now says.
    func mergeSuperseded(_ change: ChangeRecord, layout: FieldLayout) throws {
        var current: [String] = []
        var fields: [String: String] = [:]
        var found = false
        try db.statement("SELECT superseded, fields FROM changes WHERE node = ? AND hlc = ?")
            .query([.text(change.node), .text(change.hlc.description)]) { row in
                current = row.text(0).split(separator: ",").map(String.init)
                fields = try EntryStore.stringMap(row.text(1))
                found = true
            }
        let union = Set(current).union(change.superseded.filter { fields[$0] != nil })
        guard found, union.count > current.count else { return }
        try db.statement("UPDATE changes SET superseded = ? WHERE node = ? AND hlc = ?")
            .run([.text(union.sorted().joined(separator: ",")), .text(change.node), .text(change.hlc.description)])
        guard var entry = try load(change.entry) else { return }
        var groups: [[String]] = []
        for name in union.sorted() where !groups.contains(where: { $0.contains(name) }) {
            groups.append(layout.group(of: name))
        }
        for group in groups {
            let writes = try groupWrites(entry: entry.id, group: group)
            if let standing = WriteContext.standing(of: writes) {
                for (field, value) in standing.fields
                where group.contains(field) && entry.clocks[field] != standing.stamp {
                    entry.set(field, value, at: standing.stamp)
                }
            }
            _ = try settleGroup(
                entry: entry.id, group: group, current: entry.fields, heads: WriteContext.heads(of: writes))
        }
        if entry.deleted { _ = try deleteAgainstEdit(entry: entry.id, layout: layout) }
        try save(entry, layout: layout)
    }

    /// True when `change`'s entry has a logged change with the same HLC from a
    /// node greater than `change`'s (its stamp is the greater).
    func loggedWithGreaterNode(_ change: ChangeRecord) throws -> Bool {
        var found = false
        try db.statement("SELECT 1 FROM changes WHERE entry = ? AND hlc = ? AND node > ? LIMIT 1")
            .query([.text(change.entry), .text(change.hlc.description), .text(change.node)]) { _ in found = true }
        return found
    }

    /// How many of the conflicts `ids` are open.
    func openCount(of ids: [String]) throws -> Int {
        let statement = try db.statement("SELECT 1 FROM conflicts WHERE id = ? AND resolved = 0")
        var open = 0
        for id in ids { try statement.query([.text(id)]) { _ in open += 1 } }
        return open
    }

    /// Merges one received change into its entry.
    /// - Returns: the ids of the conflict records made (new ones only).
    func merge(_ change: ChangeRecord, layout: FieldLayout) throws -> [String] {
        let stamp = change.stamp
        let loaded = try load(change.entry)
        var entry =
            loaded
            ?? StoredEntry(
                id: change.entry, form: change.form, fields: [:], clocks: [:], version: .zero, deleted: false,
                deletedClock: nil, createdAt: change.at, updatedAt: change.at, createdBy: change.actor,
                updatedBy: change.actor)
        var conflicts: [String] = []
        // Group the change's fields by register.
        var groups: [[String]] = []
        var seen = Set<String>()
        for name in change.fields.keys.sorted() where !seen.contains(name) {
            let members = layout.group(of: name).filter { change.fields[$0] != nil }
            let group = members.isEmpty ? [name] : members
            group.forEach { seen.insert($0) }
            groups.append(group)
        }
        for group in groups {
            guard group.contains(where: { entry.clocks[$0] != nil }) else {
                // The first write of these fields here: it stands.
                for field in group { entry.set(field, change.fields[field] ?? "", at: stamp) }
                continue
            }
            // The standing write of the whole group holds it (FieldConflicts.swift): the
            // newest, unless it is a re-spelling of a value a person's edit replaced.
            let full = layout.group(of: group[0])
            let writes = try groupWrites(entry: entry.id, group: full)
            if let standing = WriteContext.standing(of: writes) {
                for (field, value) in standing.fields
                where full.contains(field) && entry.clocks[field] != standing.stamp {
                    entry.set(field, value, at: standing.stamp)
                }
            }
            conflicts += try settleGroup(
                entry: entry.id, group: full, current: entry.fields, heads: WriteContext.heads(of: writes))
        }
        if change.op == .delete || change.op == .restore, entry.deletedClock.map({ stamp > $0 }) ?? true {
            entry.deleted = change.op == .delete
            entry.deletedClock = stamp
        }
        if change.op == .delete || change.op == .restore || entry.deleted {
            conflicts += try deleteAgainstEdit(entry: entry.id, layout: layout)
        }
        // Two creates of one id (given by the callers) on two nodes: the earlier time,
        // then the smaller actor, is the creation on every node, whatever arrived first.
        if change.op == .create, (change.at, change.actor) < (entry.createdAt, entry.createdBy) {
            entry.createdAt = change.at
            entry.createdBy = change.actor
        }
        // The newest change sets version, updatedAt and updatedBy, by (HLC, node) as
        // every order here: of two with one HLC, the greater node's, on every node.
        if try change.hlc > entry.version || (change.hlc == entry.version && !loggedWithGreaterNode(change)) {
            entry.version = change.hlc
            entry.updatedAt = change.at
            entry.updatedBy = change.actor
        }
        entry.seq = lastSeq
        try save(entry, layout: layout, before: loaded.map { .fields($0.fields) } ?? .absent)
        return conflicts
    }

    /// Delete against edit and against restore (doc/design.md), from the
    /// change log, so every node holding the same changes holds the same
    /// records whatever the order they arrived in. When the newest delete or
    /// restore no other has seen is a delete, each head write of the entry's
    /// field groups (FieldConflicts.swift) that the delete did not see — newer
    /// than the value its `base` names for one of the write's fields — is an open
    /// conflict on the `deleted` register: kept `true` (the delete), lost `false`
    /// (the write, its values as the lost group). The merged state does not
    /// change: deleted, with the write's values. Records no longer open are
    /// resolved. A delete without a `base` (an older entryd) records nothing.
    /// - Returns: the ids of new conflict records.
    func deleteAgainstEdit(entry: String, layout: FieldLayout) throws -> [String] {
        let register = EntryStore.deletedRegister
        var made = try settleDeletedRegister(entry: entry)
        var open = Set<String>()
        if let winner = try deletedRegisterHeads(entry: entry).max(by: { $0.stamp < $1.stamp }), winner.op == .delete {
            let seen = try baseOf(winner.stamp)
            let named = SeenWrites(seen.filter { !$0.key.hasPrefix("@") }.values, base: seen, node: winner.stamp.node)
            // A head is unseen when it is newer than the value the delete saw for one of
            // its fields, or as old and another write than the one the delete names.
            let unseen = { (head: GroupWrite, field: String) in
                let saw = seen[field].flatMap(HLC.init) ?? .zero
                return head.stamp.hlc > saw || (head.stamp.hlc == saw && !named.contains(head.stamp))
            }
            if !seen.isEmpty {
                var names = Set<String>()
                try db.statement("SELECT fields FROM changes WHERE entry = ? AND op IN ('create', 'update')").query([
                    .text(entry)
                ]) { row in
                    names.formUnion(try EntryStore.stringMap(row.text(0)).keys)
                }
                var groups: [[String]] = []
                for name in names.sorted() where !groups.contains(where: { $0.contains(name) }) {
                    groups.append(layout.group(of: name))
                }
                var lost: [Stamp: [String: String]] = [:]
                for group in groups {
                    for head in try groupHeads(entry: entry, group: group)
                    where !head.seenDeletes.contains(winner.stamp)
                        && head.fields.keys.contains(where: { unseen(head, $0) })
                    {
                        lost[head.stamp] = head.fields
                    }
                }
                for (stamp, fields) in lost {
                    open.insert(ConflictID.make(entry: entry, field: register, kept: winner.stamp, lost: stamp))
                    if let id = try recordConflict(
                        entry: entry, field: register, kept: "true", keptStamp: winner.stamp, lost: "false",
                        lostStamp: stamp, lostGroup: fields)
                    {
                        made.append(id)
                    }
                }
            }
        }
        try resolveConflicts(entry: entry, fields: [register], except: open, lostGroup: .nonEmpty)
        return made
    }

    /// The deletes and restores of `entry` no other one has seen (its `@deleted`
    /// base lists the HLCs of the heads it saw; one without the key, from an older
    /// entryd, saw every earlier one).
    func deletedRegisterHeads(entry: String) throws -> [(stamp: Stamp, op: ChangeOp)] {
        var ops: [(stamp: Stamp, op: ChangeOp, seen: SeenWrites?)] = []
        try db.statement("SELECT node, hlc, op, base FROM changes WHERE entry = ? AND op IN ('delete', 'restore')")
            .query([.text(entry)]) { row in
                let base = (try? EntryStore.stringMap(row.text(3))) ?? [:]
                ops.append(
                    (
                        Stamp(hlc: HLC(row.text(1)) ?? .zero, node: row.text(0)),
                        ChangeOp(rawValue: row.text(2)) ?? .delete,
                        SeenWrites.deletes(base: base, node: row.text(0))
                    ))
            }
        return ops.filter { candidate in
            !ops.contains { other in
                other.stamp != candidate.stamp
                    && (other.seen?.contains(candidate.stamp) ?? (other.stamp > candidate.stamp))
            }
        }.map { ($0.stamp, $0.op) }
    }

    /// Delete against restore, from the whole set of deletes and restores of
    /// `entry`, so every node holding the same changes holds the same records:
    /// the newest head stands (the merged state), and each head of the other kind
    /// is an open conflict on the deleted register (kept and lost `true` for a
    /// delete, `false` for a restore); records of heads no longer open are resolved.
    /// - Returns: the ids of new records.
    func settleDeletedRegister(entry: String) throws -> [String] {
        let heads = try deletedRegisterHeads(entry: entry)
        guard let winner = heads.max(by: { $0.stamp < $1.stamp }) else { return [] }
        var made: [String] = []
        var open = Set<String>()
        for head in heads where head.op != winner.op {
            let id = ConflictID.make(
                entry: entry, field: EntryStore.deletedRegister, kept: winner.stamp, lost: head.stamp)
            open.insert(id)
            if let new = try recordConflict(
                entry: entry, field: EntryStore.deletedRegister, kept: String(winner.op == .delete),
                keptStamp: winner.stamp, lost: String(head.op == .delete), lostStamp: head.stamp,
                lostGroup: [:])
            {
                made.append(new)
            }
        }
        // Delete-against-restore records (their lost group is empty) that are no longer open.
        try resolveConflicts(entry: entry, fields: [EntryStore.deletedRegister], except: open, lostGroup: .empty)
        return made
    }

    /// The `base` of the logged change with `stamp` (empty when not logged).
    func baseOf(_ stamp: Stamp) throws -> [String: String] {
        var base: [String: String] = [:]
        try db.statement("SELECT base FROM changes WHERE node = ? AND hlc = ?")
            .query([.text(stamp.node), .text(stamp.hlc.description)]) { row in
                for (key, value) in (try? JSON.parse(row.text(0)))?.objectValue ?? [] { base[key] = value.stringValue }
            }
        return base
    }

    /// Records that `lostStamp`'s value of `field` lost to `keptStamp`'s. The id is
    /// derived from the entry, field and both stamps, so every node that merges
    /// the same two writes records the same conflict under the same id, once.
    /// - Returns: the id when the record is new, `nil` when it was already kept.
    func recordConflict(
        entry: String, field: String, kept: String, keptStamp: Stamp, lost: String, lostStamp: Stamp,
        lostGroup: [String: String]
    ) throws -> String? {
        let id = ConflictID.make(entry: entry, field: field, kept: keptStamp, lost: lostStamp)
        try db.statement(
            """
            INSERT OR IGNORE INTO conflicts (id, entry, field, kept, kept_hlc, kept_node, lost, lost_hlc, lost_node, lost_group, detected_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """
        ).run([
            .text(id), .text(entry), .text(field),
            .text(kept), .text(keptStamp.hlc.description), .text(keptStamp.node),
            .text(lost), .text(lostStamp.hlc.description), .text(lostStamp.node),
            .text(JSON.stringMap(lostGroup).text), .text(Timestamp.rfc3339(milliseconds: clock.wallClock())),
        ])
        return db.changes == 1 ? id : nil
    }
}

extension EntryStore {
    /// How many conflicts are open (for `Status`), counted without reading them.
    /// - Throws: ``SQLiteError``.
    package func openConflictCount() throws -> Int {
        try readers.read { db in
            var n = 0
            try db.statement("SELECT COUNT(*) FROM conflicts WHERE resolved = 0").query { n = Int($0.int(0)) }
            return n
        }
    }

    /// Conflicts, oldest first; of one entry when `entry` is given.
    /// - Throws: ``SQLiteError``.
    package func conflicts(entry: String?, includeResolved: Bool) throws -> [ConflictRecord] {
        try readers.read { db in
            var out: [ConflictRecord] = []
            let sql = """
                SELECT id, entry, field, kept, kept_hlc, kept_node, lost, lost_hlc, lost_node, lost_group, detected_at, resolved
                FROM conflicts WHERE (CAST(?1 AS TEXT) IS NULL OR entry = ?1) AND (?2 OR resolved = 0) ORDER BY detected_at, id
                """
            try db.statement(sql).query([entry.map { .text($0) } ?? .null, .int(includeResolved ? 1 : 0)]) {
                out.append(try EntryStore.conflict(from: $0))
            }
            return out
        }
    }

    /// Decodes a `conflicts` row selected as `id, entry, field, kept, kept_hlc,
    /// kept_node, lost, lost_hlc, lost_node, lost_group, detected_at, resolved`.
    /// - Throws: ``SQLiteError`` (SQLITE_CORRUPT) when `lost_group` is not a JSON object.
    static func conflict(from row: any SQLRow) throws -> ConflictRecord {
        ConflictRecord(
            id: row.text(0), entry: row.text(1), field: row.text(2), kept: row.text(3), keptHlc: row.text(4),
            keptNode: row.text(5), lost: row.text(6), lostHlc: row.text(7), lostNode: row.text(8),
            lostGroup: try stringMap(row.text(9)), detectedAt: row.text(10), resolved: row.int(11) != 0)
    }
}

extension EntryStore {
    /// Resolves conflict `id`: writes its field group as a new local change
    /// (with `useLost`, the losing values; else the kept values as they stand),
    /// which marks it resolved here and, once synced, on the other nodes too.
    /// Without `useLost`, a conflict already resolved or whose kept value was
    /// overwritten is only marked resolved; with it, the lost values are written
    /// back whenever the entry does not hold them (an already resolved conflict
    /// too), so the call never answers "resolved" without doing what it asked.
    /// A conflict on the deleted register (a delete against an edit, or against
    /// a restore): the chosen side — the lost one with `useLost`, else the kept
    /// one — is written as a restore or a delete that has seen both, which
    /// settles it on every node it reaches.
    /// - Throws: ``EntryError/conflictNotFound(_:)``; `.entryNotFound` when the
    ///   entry is gone; ``SQLiteError``.
    package func resolveConflict(
        id: String, useLost: Bool, layout: @escaping (String) -> FieldLayout,
        origin: WriteOrigin
    ) throws -> ConflictRecord {
        try writer.submit { ctx in
            try ctx.claim()  // before the conflict is read: another instance may be resolving it
            var found: ConflictRecord?
            try ctx.db.statement(
                """
                SELECT id, entry, field, kept, kept_hlc, kept_node, lost, lost_hlc, lost_node, lost_group, detected_at, resolved
                FROM conflicts WHERE id = ?
                """
            ).query([.text(id)]) { found = try EntryStore.conflict(from: $0) }
            guard var conflict = found else {
                throw EntryError.conflictNotFound(id)
            }
            let current = try ctx.existing(conflict.entry, ifVersion: nil)
            let keptStamp = Stamp(hlc: HLC(conflict.keptHlc) ?? .zero, node: conflict.keptNode)
            if conflict.field == EntryStore.deletedRegister {
                // Delete against edit: the lost side is the edit, whose values the entry
                // already holds; choosing it restores the entry, keeping the delete
                // deletes again having seen the edit. Either change settles the
                // conflict on every node it reaches.
                let fieldLayout = layout(current.form)
                // The side chosen ("true": deleted) is written as a delete or a restore that has seen both.
                let wantDeleted = (useLost ? conflict.lost : conflict.kept) == "true"
                if wantDeleted != current.deleted
                    || (!useLost && !conflict.resolved && current.deletedClock == keptStamp)
                {
                    _ = try ctx.record(
                        wantDeleted ? .delete : .restore, on: current, fields: [:], layout: fieldLayout, origin: origin)
                    if !wantDeleted { try ctx.canonicalise(current.id, scope: nil, layout: layout) }
                }
                try ctx.db.statement("UPDATE conflicts SET resolved = 1 WHERE id = ?").run([.text(id)])
                conflict.resolved = true
                return conflict
            }
            let fieldLayout = layout(current.form)
            var fields: [String: String] = [:]
            for member in fieldLayout.group(of: conflict.field) {
                fields[member] =
                    useLost
                    ? (conflict.lostGroup[member] ?? current.fields[member] ?? "") : (current.fields[member] ?? "")
            }
            let holdsChoice = fields.allSatisfy { (current.fields[$0.key] ?? "") == $0.value }
            // Write the chosen group as a new change: over the kept write of an open
            // conflict (the lost group, or the kept one as it stands: it supersedes the
            // conflict here and, once synced, on every other node); and whenever the
            // caller asks for the lost values the entry does not hold, also when the
            // conflict was already resolved or its kept value overwritten (elsewhere,
            // or by a later edit): asking for them is asking to write them back.
            if (!conflict.resolved && current.clocks[conflict.field] == keptStamp) || (useLost && !holdsChoice) {
                _ = try ctx.record(.update, on: current, fields: fields, layout: fieldLayout, origin: origin)
                // A lost value from a node with older rules is re-spelled as it comes back.
                if useLost { try ctx.canonicalise(current.id, scope: Set(fields.keys), layout: layout) }
            }
            try ctx.db.statement("UPDATE conflicts SET resolved = 1 WHERE id = ?").run([.text(id)])
            conflict.resolved = true
            return conflict
        }
    }
}
