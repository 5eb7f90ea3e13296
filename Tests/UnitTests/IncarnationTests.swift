import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntrySync

/// Incarnations (doc/design.md "Incarnations", issue 15): a database that went
/// back in time begins a new one, a copy is refused unless the operator says
/// what it is, and peers re-read and re-send what a restored node lost.
@Suite(.serialized) struct IncarnationTests {
    let layout = FieldLayout.registration
    func origin(_ actor: String) -> WriteOrigin { WriteOrigin(actor: actor) }

    // MARK: - The start-up decision

    func check(
        incarnation: String? = "i1", home: String? = "m:/db", pending: String? = nil, lastSeq: Int64 = 10,
        file: (UInt64, UInt64) = (1, 2), marker: NodeMarker?? = nil, here: String = "m:/db",
        policy: CopiedDatabasePolicy = .refuse
    ) -> IncarnationCheck.Decision {
        let defaultMarker = NodeMarker(
            node: "n", incarnation: "i1", seq: 10, file: .init(device: 1, inode: 2), machine: "m")
        return IncarnationCheck(
            node: "n", incarnation: incarnation.map { Incarnation(id: $0, startSeq: 0) }, home: home,
            pendingReason: pending, lastSeq: lastSeq, file: .init(device: file.0, inode: file.1),
            marker: marker ?? defaultMarker, here: here, policy: policy
        ).decide()
    }

    @Test(
        "start-up continues the incarnation unless the database went back, was replaced, restored or comes from elsewhere"
    )
    func decisions() {
        #expect(check() == .same)
        #expect(check(lastSeq: 12) == .same, "a log that grew since the marker was written is the same life")
        #expect(
            check(incarnation: nil, home: nil, marker: .some(nil)) == .same,
            "a new database, or one from before incarnations")
        guard case .begin(let back) = check(lastSeq: 7) else {
            Issue.record("a log that went back must begin an incarnation")
            return
        }
        #expect(back.contains("went back from seq 10 to 7"))
        guard case .begin(let replaced) = check(file: (1, 3)) else {
            Issue.record("a replaced file must begin an incarnation")
            return
        }
        #expect(replaced.contains("replaced"))
        guard case .begin(let missing) = check(marker: .some(nil)) else {
            Issue.record("a missing marker must begin one")
            return
        }
        #expect(missing.contains("marker"))
        let other = NodeMarker(node: "n", incarnation: "i0", seq: 3, file: .init(device: 1, inode: 2), machine: "m")
        guard case .begin(let older) = check(marker: .some(other)) else {
            Issue.record("an older incarnation's file must begin one")
            return
        }
        #expect(older.contains("i0"))
        guard case .begin(let restored) = check(pending: "restored from the backup 'b.db'") else {
            Issue.record("restore")
            return
        }
        #expect(restored == "restored from the backup 'b.db'")
        guard case .refuse(let copied) = check(here: "m:/copy.db") else {
            Issue.record("a copy must be refused")
            return
        }
        #expect(copied.description.contains("--as-new-node") && copied.description.contains("--moved"))
        guard case .refuse = check(here: "other-machine:/db") else {
            Issue.record("another machine must be refused")
            return
        }
        guard case .newNode = check(here: "m:/copy.db", policy: .newNode) else {
            Issue.record("--as-new-node")
            return
        }
        guard case .begin(let moved) = check(here: "m:/copy.db", policy: .sameNode) else {
            Issue.record("--moved")
            return
        }
        #expect(moved.contains("moved from m:/db"))
    }

    // MARK: - The SQLite store

    /// Writes the database file's bytes into `target`'s own file (its inode kept),
    /// as a disk snapshot put back does.
    func copyInPlace(_ source: String, to target: String) throws {
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: target + suffix) }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        let handle = try #require(FileHandle(forWritingAtPath: target))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: bytes)
        try handle.close()
    }

    /// Copies the database file (closed, WAL checkpointed) to `target`, replacing it.
    func copyDatabase(_ source: String, to target: String) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: target + suffix) }
        try FileManager.default.copyItem(atPath: source, toPath: target)
    }

    @Test(
        "an older copy put back over the database begins a new incarnation at its end; a copy elsewhere is refused or taken on the operator's word"
    )
    func storeEvidence() throws {
        let db = TestDatabase()
        var store = try EntryStore(path: db.path)
        let node = store.nodeID
        let first = store.incarnation
        _ = try store.create(form: "registration", id: nil, fields: ["name": "甲"], layout: layout, origin: origin("a"))
        store.close()
        try copyDatabase(db.path, to: db.directory + "/backup.db")
        store = try EntryStore(path: db.path)
        #expect(store.incarnation == first && store.incarnationBegan == nil, "a plain restart continues")
        _ = try store.create(form: "registration", id: nil, fields: ["name": "乙"], layout: layout, origin: origin("a"))
        store.close()

        try copyDatabase(db.directory + "/backup.db", to: db.path)
        store = try EntryStore(path: db.path)
        #expect(store.nodeID == node)
        #expect(store.incarnation.id != first.id && store.incarnation.startSeq == 1)
        #expect(
            store.incarnationBegan?.contains("went back from seq 2 to 1") == true, "\(store.incarnationBegan ?? "nil")")
        let second = store.incarnation
        store.close()
        store = try EntryStore(path: db.path)
        #expect(store.incarnation == second, "the new incarnation is kept across restarts")
        store.close()

        // The same file at another path: a copy or a move, and the operator must say which.
        let copy = db.directory + "/copy.db"
        try copyDatabase(db.path, to: copy)
        #expect(throws: DatabaseMovedOrCopied.self) { _ = try EntryStore(path: copy) }
        let asNew = try EntryStore(path: copy, copies: .newNode)
        #expect(asNew.nodeID != node && asNew.incarnationBegan?.contains("new node") == true)
        #expect(
            try asNew.get(try #require(asNew.changes(since: 0, limit: 10).changes.first).entry) != nil,
            "its entries are kept")
        asNew.close()
        try copyDatabase(db.path, to: copy)
        let moved = try EntryStore(path: copy, copies: .sameNode)
        #expect(moved.nodeID == node && moved.incarnation.id != second.id)
        moved.close()
    }

    @Test("DatabaseBackup.restore leaves its reason for the next start, which begins a new incarnation")
    func restoreBeginsIncarnation() throws {
        let db = TestDatabase()
        var store = try EntryStore(path: db.path)
        let first = store.incarnation
        _ = try store.create(form: "registration", id: nil, fields: ["name": "甲"], layout: layout, origin: origin("a"))
        let backup = db.directory + "/backup.db"
        try FileManager.default.moveItem(atPath: try store.consistentCopy(), toPath: backup)
        store.close()
        _ = try DatabaseBackup.restore(from: backup, to: db.path)
        store = try EntryStore(path: db.path)
        defer { store.close() }
        #expect(store.incarnation.id != first.id)
        #expect(
            store.incarnation.reason?.hasPrefix("restored from the backup '\(backup)'") == true, "\(store.incarnation)")
    }

    // MARK: - Sync across a restore

    /// Every entry of `store` (by id: fields and deleted flag), from its change log.
    func contents(_ store: EntryStore) throws -> [String: String] {
        var out: [String: String] = [:]
        for change in try store.changes(since: 0, limit: 100_000).changes where out[change.entry] == nil {
            let e = try #require(try store.get(change.entry))
            out[e.id] =
                e.fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
                + (e.deleted ? " deleted" : "")
        }
        return out
    }

    /// `a` syncs with `b` both ways, as a peer named `name`.
    @discardableResult
    func sync(_ a: EntryStore, _ b: EntryStore, name: String) throws -> PeerSyncResult {
        try PeerSync.run(
            local: a, peer: LocalPeer(store: b, via: "peer"), name: name, address: "test:", batch: 2,
            layout: { _ in .registration }, maxClockSkewMs: 300_000)
    }

    /// Node A with a backup taken after 3 entries, then an entry (lost by the restore) and B's entry
    /// synced; A restored from the backup and given a new entry whose seq reuses a lost one's.
    /// - Returns: A (restored), B, and their places.
    func restoredNode(putMarkerBack: Bool = false) throws -> (
        a: EntryStore, b: EntryStore, dbs: [TestDatabase], lost: String
    ) {
        let dbs = [TestDatabase(), TestDatabase()]
        var a = try EntryStore(path: dbs[0].path)
        let b = try EntryStore(path: dbs[1].path)
        for name in ["一", "二", "三"] {
            _ = try a.create(form: "registration", id: nil, fields: ["name": name], layout: layout, origin: origin("a"))
        }
        try sync(b, a, name: "a")
        a.close()
        let backup = dbs[0].directory + "/backup.db"
        let marker = NodeMarker.path(for: dbs[0].path)
        try copyDatabase(dbs[0].path, to: backup)
        try? FileManager.default.removeItem(atPath: backup + ".marker")
        try FileManager.default.copyItem(atPath: marker, toPath: backup + ".marker")
        a = try EntryStore(path: dbs[0].path)
        let lost = try a.create(
            form: "registration", id: nil, fields: ["name": "四（恢复后丢失）"], layout: layout, origin: origin("a")
        ).entry.id
        _ = try b.create(form: "registration", id: nil, fields: ["name": "乙"], layout: layout, origin: origin("b"))
        try sync(b, a, name: "a")
        a.close()
        if putMarkerBack { try copyInPlace(backup, to: dbs[0].path) } else { try copyDatabase(backup, to: dbs[0].path) }
        if putMarkerBack {
            // A snapshot of the whole disk: the marker goes back with the database.
            try? FileManager.default.removeItem(atPath: marker)
            try FileManager.default.copyItem(atPath: backup + ".marker", toPath: marker)
        }
        a = try EntryStore(path: dbs[0].path)
        _ = try a.create(form: "registration", id: nil, fields: ["name": "五"], layout: layout, origin: origin("a"))
        _ = try a.create(form: "registration", id: nil, fields: ["name": "六"], layout: layout, origin: origin("a"))
        return (a, b, dbs, lost)
    }

    @Test(
        "a peer that finds a node restored re-reads it from its incarnation's start and sends back what it lost, its own changes too"
    )
    func peerReReadsRestoredNode() throws {
        let (a, b, dbs, lost) = try restoredNode()
        defer {
            a.close()
            b.close()
            _ = dbs
        }
        #expect(a.incarnationBegan != nil)
        #expect(try a.get(lost) == nil, "the restore lost A's fourth entry")
        let r = try sync(b, a, name: "a")
        #expect(r.notices.count == 1 && r.notices[0].contains("began a new incarnation"), "\(r.notices)")
        #expect(try a.get(lost) != nil, "B sent A back its own lost change")
        #expect(try contents(a) == contents(b))
        #expect(try contents(a).count == 7)
        #expect(try b.peerState("a")?.notice?.contains("began a new incarnation") == true)
        // The next sync is ordinary again.
        #expect(try sync(b, a, name: "a").notices.isEmpty)
    }

    @Test("a restored node's first sync with a peer pulls its own lost changes back")
    func restoredNodePullsItsOwnBack() throws {
        let (a, b, dbs, lost) = try restoredNodeAfterInitiating()
        defer {
            a.close()
            b.close()
            _ = dbs
        }
        #expect(try a.get(lost) == nil)
        let r = try sync(a, b, name: "b")
        #expect(r.notices.contains { $0.contains("this node began a new incarnation") }, "\(r.notices)")
        #expect(try a.get(lost) != nil, "A pulled its own lost change back from B")
        #expect(try contents(a) == contents(b))
        #expect(try contents(a).count == 3)
    }

    /// As ``restoredNode(putMarkerBack:)``, but A syncs as the initiator (peer "b") before the backup.
    func restoredNodeAfterInitiating() throws -> (a: EntryStore, b: EntryStore, dbs: [TestDatabase], lost: String) {
        let dbs = [TestDatabase(), TestDatabase()]
        var a = try EntryStore(path: dbs[0].path)
        let b = try EntryStore(path: dbs[1].path)
        _ = try a.create(form: "registration", id: nil, fields: ["name": "一"], layout: layout, origin: origin("a"))
        try sync(a, b, name: "b")
        a.close()
        let backup = dbs[0].directory + "/backup.db"
        try copyDatabase(dbs[0].path, to: backup)
        a = try EntryStore(path: dbs[0].path)
        let lost = try a.create(
            form: "registration", id: nil, fields: ["name": "二（丢失）"], layout: layout, origin: origin("a")
        ).entry.id
        try sync(a, b, name: "b")
        a.close()
        try copyDatabase(backup, to: dbs[0].path)
        a = try EntryStore(path: dbs[0].path)
        _ = try a.create(form: "registration", id: nil, fields: ["name": "三"], layout: layout, origin: origin("a"))
        return (a, b, dbs, lost)
    }

    @Test(
        "a node put back with its marker (a disk snapshot) keeps its incarnation, yet the peer sees the change at its mark differ and re-reads"
    )
    func snapshotFoundByFingerprint() throws {
        let (a, b, dbs, lost) = try restoredNode(putMarkerBack: true)
        defer {
            a.close()
            b.close()
            _ = dbs
        }
        #expect(a.incarnationBegan == nil, "with the marker put back too, A cannot tell by itself")
        let r = try sync(b, a, name: "a")
        #expect(r.notices.count == 1 && r.notices[0].contains("holds another change at seq"), "\(r.notices)")
        #expect(try a.get(lost) != nil)
        #expect(try contents(a) == contents(b))
        #expect(try contents(a).count == 7)
    }

    @Test(
        "a node put back whole that only syncs outward finds, by its peer's HeldFrom, a change of its own it lost, and pulls its own changes back"
    )
    func snapshotFoundByItsOwnSync() throws {
        let (a, b, dbs, lost) = try restoredNode(putMarkerBack: true)
        defer {
            a.close()
            b.close()
            _ = dbs
        }
        #expect(a.incarnationBegan == nil)
        let r = try sync(a, b, name: "b")
        #expect(r.notices.contains { $0.contains("holds a change made here") }, "\(r.notices)")
        #expect(try a.get(lost) != nil, "A pulled its own lost change back from B")
        #expect(try contents(a) == contents(b))
        #expect(try sync(a, b, name: "b").notices.isEmpty, "once back, the next sync is ordinary")
    }

    @Test(
        "a sync with a peer that has this node's own id (itself, or a copy of its database) is refused, naming the way out"
    )
    func selfSyncRefused() throws {
        let db = TestDatabase()
        let a = try EntryStore(path: db.path)
        defer { a.close() }
        #expect {
            _ = try sync(a, a, name: "me")
        } throws: { error in
            "\(error)".contains("--as-new-node")
        }
    }
}
