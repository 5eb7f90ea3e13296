import EntryModel

/// Conflicts of field groups, computed from the change log, so that every node
/// holding the same changes holds the same open conflicts, whatever the order
/// they arrived in (doc/design.md "Sync": merge per field group).
///
/// A write of a group (a create or update setting any of its fields) has seen
/// the writes its `base` names for the group's fields, and those a local write
/// listed under ``EntryStore/headsKey`` (every head of the group its node held
/// when it was made, so an edit made with a conflict in view settles it). The
/// heads are the writes no other write has seen; the newest head is the merged
/// value, and each other head that set a field to another value is an open
/// conflict on that field, kept = the newest head, lost = that head (its group
/// values as the lost group). Records of heads that stopped being heads are
/// resolved.
///
/// A re-spelling (a write by ``WriteOrigin/migrationActor``: a stored value
/// rewritten under newer rules, doc/design.md "Stored values under changed
/// rules") is transparent: it is never a head and never opens a conflict, a
/// write that saw it saw what it saw, and it stands only over the value it
/// re-spelled (``standing(of:)``), so it never beats a person's edit.
extension WriteContext {
    /// One write of a field group as the change log holds it.
    struct GroupWrite {
        /// Its origin stamp.
        var stamp: Stamp
        /// The values it set.
        var fields: [String: String]
        /// The writes it had seen (its base for the group, and its heads list).
        var seen: SeenWrites
        /// The deletes and restores it had seen (an edit of a deleted entry).
        var seenDeletes = SeenWrites()
        /// True for a re-spelling of stored values under newer rules (``WriteOrigin/migrationActor``).
        var isMigration = false
        /// True when the change log knows a later write saw this one for the group
        /// (``ChangeRecord/superseded``, set by compaction): never a head, never
        /// standing, though what it saw still counts.
        var superseded = false
    }

    /// The write whose values a register holds, from all its writes, whatever
    /// order they arrived in: the newest write that is not a re-spelling (plain
    /// last-writer-wins by stamp), then the newest re-spelling that saw it, or
    /// saw a re-spelling that did, and so on. A re-spelling that saw an older
    /// value (made beside a person's edit it never saw) does not stand.
    static func standing(of writes: [GroupWrite]) -> GroupWrite? {
        guard var standing = writes.filter({ !$0.isMigration && !$0.superseded }).max(by: { $0.stamp < $1.stamp })
        else {
            return writes.max(by: { $0.stamp < $1.stamp })
        }
        var respelled = [standing.stamp]
        for write in writes.filter(\.isMigration).sorted(by: { $0.stamp < $1.stamp })
        where write.stamp > standing.stamp && respelled.contains(where: write.seen.contains) {
            respelled.append(write.stamp)
            standing = write
        }
        return standing
    }

    /// The writes ``standing(of:)`` rests on: the newest write that is not a
    /// re-spelling and every re-spelling that joined the chain over it (the last
    /// of them stands). Compaction keeps them all: a re-spelling stands only over
    /// the value it saw, so dropping a link would let the older value stand.
    static func standingChain(of writes: [GroupWrite]) -> [GroupWrite] {
        guard let base = writes.filter({ !$0.isMigration && !$0.superseded }).max(by: { $0.stamp < $1.stamp }) else {
            return writes.max(by: { $0.stamp < $1.stamp }).map { [$0] } ?? []
        }
        var chain = [base]
        for write in writes.filter(\.isMigration).sorted(by: { $0.stamp < $1.stamp })
        where write.stamp > base.stamp && chain.contains(where: { write.seen.contains($0.stamp) }) {
            chain.append(write)
        }
        return chain
    }

    /// The writes of `writes` that no other has seen, re-spellings left out: a
    /// write that saw a re-spelling saw what the re-spelling saw.
    static func heads(of writes: [GroupWrite]) -> [GroupWrite] {
        var seen = SeenWrites()
        for write in writes where !write.isMigration { seen.formUnion(write.seen) }
        // …and, through each re-spelling seen, what it saw, until nothing is added.
        var pending = writes.filter(\.isMigration)
        while let index = pending.firstIndex(where: { seen.contains($0.stamp) }) {
            seen.formUnion(pending.remove(at: index).seen)
        }
        return writes.filter { !$0.isMigration && !$0.superseded && !seen.contains($0.stamp) }
    }

    /// The writes of `group` in `entry`'s change log that no other write has
    /// seen (``heads(of:)``).
    func groupHeads(entry: String, group: [String]) throws -> [GroupWrite] {
        WriteContext.heads(of: try groupWrites(entry: entry, group: group))
    }

    /// Every write of `group` in `entry`'s change log.
    func groupWrites(entry: String, group: [String]) throws -> [GroupWrite] {
        var writes: [GroupWrite] = []
        try db.statement(
            "SELECT node, hlc, fields, base, actor, superseded FROM changes WHERE entry = ? AND op IN ('create', 'update')"
        )
        .query([.text(entry)]) { row in
            let fields = try EntryStore.stringMap(row.text(2))
            guard group.contains(where: { fields[$0] != nil }) else { return }
            let base = try EntryStore.stringMap(row.text(3))
            let node = row.text(0)
            let superseded = row.text(5).split(separator: ",").map(String.init)
            writes.append(
                GroupWrite(
                    stamp: Stamp(hlc: HLC(row.text(1)) ?? .zero, node: node), fields: fields,
                    seen: SeenWrites(group: group, base: base, node: node),
                    seenDeletes: SeenWrites.deletes(base: base, node: node) ?? SeenWrites(),
                    isMigration: row.text(4) == WriteOrigin.migrationActor,
                    superseded: group.contains { superseded.contains($0) }))
        }
        return writes
    }

    /// Brings the open conflicts of `group` in `entry` to what its heads say
    /// (see the type's rule); `current` holds the entry's merged values.
    /// - Parameter heads: the group's heads when the caller has them (else read).
    /// - Returns: the ids of new records.
    func settleGroup(entry: String, group: [String], current: [String: String], heads known: [GroupWrite]? = nil) throws
        -> [String]
    {
        let heads = try known ?? groupHeads(entry: entry, group: group)
        var made: [String] = []
        var open = Set<String>()
        if let winner = heads.max(by: { $0.stamp < $1.stamp }) {
            for head in heads where head.stamp != winner.stamp {
                let lostGroup = Dictionary(uniqueKeysWithValues: group.map { ($0, head.fields[$0] ?? "") })
                for field in group {
                    guard let lost = head.fields[field], lost != (current[field] ?? "") else { continue }
                    open.insert(ConflictID.make(entry: entry, field: field, kept: winner.stamp, lost: head.stamp))
                    if let id = try recordConflict(
                        entry: entry, field: field, kept: current[field] ?? "", keptStamp: winner.stamp,
                        lost: lost, lostStamp: head.stamp, lostGroup: lostGroup)
                    {
                        made.append(id)
                    }
                }
            }
        }
        try resolveConflicts(entry: entry, fields: group, except: open)
        return made
    }
}

extension WriteContext {
    /// Which records of a field ``resolveConflicts(entry:fields:except:lostGroup:)`` looks at.
    enum LostGroupFilter: String {
        /// All of them.
        case any = ""
        /// Those without a lost group: delete against restore.
        case empty = " AND lost_group = '{}'"
        /// Those with one: field conflicts, delete against edit.
        case nonEmpty = " AND lost_group != '{}'"
    }

    /// Marks resolved the open conflicts of `entry` on `fields` (of the kind
    /// `lostGroup` selects) that are not in `open`: the records the change log no
    /// longer calls open.
    func resolveConflicts(entry: String, fields: [String], except open: Set<String>, lostGroup: LostGroupFilter = .any)
        throws
    {
        var stale: [String] = []
        let statement = try db.statement(
            "SELECT id FROM conflicts WHERE entry = ? AND field = ? AND resolved = 0" + lostGroup.rawValue)
        for field in fields {
            try statement.query([.text(entry), .text(field)]) { row in
                if !open.contains(row.text(0)) { stale.append(row.text(0)) }
            }
        }
        let resolve = try db.statement("UPDATE conflicts SET resolved = 1 WHERE id = ?")
        for id in stale { try resolve.run([.text(id)]) }
    }
}

extension EntryStore {
    /// The `base` key of a local write listing the other heads of its groups it
    /// had in view (comma-separated HLCs; `@` keeps it apart from field names).
    package static let headsKey = "@heads"
}
