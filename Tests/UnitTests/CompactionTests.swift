import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntrySync
@testable import EntryProtocol
@testable import EntryServer

/// Compaction with a peer horizon (issue 17 item 5, doc/design.md "Compaction"):
/// what it removes and keeps, the horizon, expired peers and their return.
@Suite struct CompactionTests {
    let layout = FieldLayout.registration
    let day: UInt64 = 86_400_000

    func nodes(_ n: Int) throws -> ([EntryStore], [TestDatabase]) {
        let dbs = (0..<n).map { _ in TestDatabase() }
        return (try dbs.map { try EntryStore(path: $0.path, readers: 2) }, dbs)
    }

    /// `a` syncs with `b` both ways, as a peer named after `b`'s node id.
    @discardableResult
    func sync(_ a: EntryStore, _ b: EntryStore) throws -> PeerSyncResult {
        try PeerSync.run(
            local: a, peer: LocalPeer(store: b, via: "peer-\(a.nodeID.prefix(8))"), name: "peer-\(b.nodeID.prefix(8))",
            address: "test:", layout: { _ in .registration }, maxClockSkewMs: 300_000)
    }

    func edit(_ s: EntryStore, _ id: String, _ field: String, _ value: String?) throws {
        _ = try s.update(id: id, ifVersion: nil, layout: layout, origin: WriteOrigin(actor: "u")) {
            var f = $0.fields
            f[field] = value
            return f
        }
    }

    func compact(_ s: EntryStore, expiry: UInt64 = 90 * 86_400_000) throws -> CompactionResult {
        try s.compact(peerExpiryMs: expiry, configured: [], layout: { _ in .registration })
    }

    func open(_ s: EntryStore) throws -> Set<String> {
        Set(try s.conflicts(entry: nil, includeResolved: false).map(\.id))
    }

    /// Two nodes with superseded edits, an open field conflict, a delete against an
    /// edit, and a re-spelling chain; everything synced both ways.
    func richHistory() throws -> ([EntryStore], [TestDatabase], [String: String]) {
        let (n, dbs) = try nodes(2)
        var ids: [String: String] = [:]
        let o = WriteOrigin(actor: "u")
        ids["edited"] = try n[0].create(
            form: "registration", id: nil,
            fields: ["name": "a0", "country": "CN", "province": "440000", "city": "440100"],
            layout: layout, origin: o
        ).entry.id
        for i in 1...5 { try edit(n[0], ids["edited"]!, "name", "a\(i)") }
        try edit(n[0], ids["edited"]!, "city", "440300")
        ids["clash"] = try n[0].create(form: "registration", id: nil, fields: ["name": "c0"], layout: layout, origin: o)
            .entry.id
        ids["deleted"] = try n[0].create(
            form: "registration", id: nil, fields: ["name": "d0"], layout: layout, origin: o
        ).entry.id
        ids["respelled"] = try n[0].create(
            form: "registration", id: nil, fields: ["name": "m1"], layout: layout, origin: o
        ).entry.id
        try edit(n[0], ids["respelled"]!, "name", "m2")
        try sync(n[1], n[0])
        // Concurrent: a field clash, and a delete against an edit.
        try edit(n[0], ids["clash"]!, "name", "c-left")
        try edit(n[1], ids["clash"]!, "name", "c-right")
        _ = try n[0].delete(id: ids["deleted"]!, ifVersion: nil, layout: layout, origin: o)
        try edit(n[1], ids["deleted"]!, "name", "d1")
        // A re-spelling over the standing value, then another over that one (a chain).
        for _ in 0..<2 {
            _ = try n[0].recanonicalise(
                ids: [ids["respelled"]!],
                rules: { _, fields in
                    guard let name = fields["name"], name.hasPrefix("m") || name.hasPrefix("M") else { return [] }
                    return [
                        ValueRewrite(
                            field: "name", value: name.hasPrefix("m") ? "M" + name.dropFirst() : name + "x",
                            reason: "test rules")
                    ]
                }, layoutOf: { _ in .registration })
        }
        try sync(n[0], n[1])
        try sync(n[1], n[0])
        return (n, dbs, ids)
    }

    @Test(
        "compaction removes superseded rows only: heads, standing writes, both sides of open conflicts and re-spelling chains stay; replay equals the stored entries; the open conflicts are the same; a new node pulling from 0 holds the same"
    )
    func keepsWhatMergeNeeds() throws {
        var (n, dbs, ids) = try richHistory()
        defer { n.forEach { $0.close() } }
        let before = try n[0].storedEntries()
        let conflictsBefore = try open(n[0])
        #expect(conflictsBefore.count == 2, "a field clash and a delete against an edit")
        let rowsBefore = try n[0].history(ids["edited"]!).count
        let result = try compact(n[0])
        #expect(result.removed > 0)
        #expect(result.horizon == (try n[0].counts().seq), "the peer acknowledged the whole log")
        #expect(result.heldBackBy == "peer-\(n[1].nodeID.prefix(8))")
        #expect(try n[0].history(ids["edited"]!).count < rowsBefore)
        #expect(try n[0].compactedThrough(entry: ids["edited"]!) == result.horizon)
        #expect(try n[0].storedEntries() == before)
        #expect(try n[0].replayChangeLog() == before)
        #expect(try open(n[0]) == conflictsBefore)
        // Both sides of each open conflict are still in the log.
        let stamps = Set(try n[0].changes(since: 0, limit: 100_000).changes.map { "\($0.hlc) \($0.node)" })
        for c in try n[0].conflicts(entry: nil, includeResolved: false) {
            #expect(stamps.contains("\(c.keptHlc) \(c.keptNode)") && stamps.contains("\(c.lostHlc) \(c.lostNode)"))
        }
        // The re-spelling chain: both re-spellings and the write they rest on.
        let respelled = try n[0].history(ids["respelled"]!)
        #expect(respelled.filter { $0.actor == WriteOrigin.migrationActor }.count == 2)
        #expect(try n[0].get(ids["respelled"]!)?.fields["name"] == "M2x")
        // The newest edit of the edited entry is its only name write left.
        #expect(
            try n[0].history(ids["edited"]!).filter { $0.fields["name"] != nil }.map { $0.fields["name"] } == ["a5"])
        // Compacting again removes nothing more.
        #expect(try compact(n[0]).removed == 0)
        // A new node pulling from 0 gets the same entries and the same open conflicts.
        let fresh = TestDatabase()
        let n2 = try EntryStore(path: fresh.path, readers: 2)
        n.append(n2)
        dbs.append(fresh)
        try sync(n2, n[0])
        #expect(try n2.storedEntries() == before)
        #expect(try n2.replayChangeLog() == before)
        #expect(try open(n2) == conflictsBefore)
        // The peer that was not compacted still agrees after syncing again.
        try sync(n[1], n[0])
        #expect(try n[1].storedEntries() == before)
        #expect(try open(n[1]) == conflictsBefore)
        _ = dbs
    }

    @Test("a removed change that arrives again is skipped, not merged again; HeldFrom still counts it")
    func removedChangeComesBack() throws {
        let (n, dbs, ids) = try richHistory()
        defer { n.forEach { $0.close() } }
        let all = try n[1].changes(since: 0, limit: 100_000).changes
        let before = try n[0].storedEntries()
        let conflicts = try open(n[0])
        #expect(try compact(n[0]).removed > 0)
        let again = try n[0].apply(all, via: "again", layout: { _ in .registration }, maxClockSkewMs: 300_000)
        #expect(again.applied == 0)
        #expect(try n[0].storedEntries() == before && open(n[0]) == conflicts)
        let created = all.first { $0.entry == ids["edited"]! && $0.op == .create }!
        #expect(try n[0].holds(node: created.node, hlc: created.hlc))
        _ = dbs
    }

    @Test("the horizon: rows a peer has not acknowledged stay; after it pulls, compaction frees them")
    func horizonHoldsBack() throws {
        let (n, dbs) = try nodes(2)
        defer { n.forEach { $0.close() } }
        let id = try n[0].create(
            form: "registration", id: nil, fields: ["name": "h0"], layout: layout, origin: WriteOrigin(actor: "u")
        ).entry.id
        try sync(n[1], n[0])  // node 1 pulls: node 0 knows it and what it acknowledged
        for i in 1...5 { try edit(n[0], id, "name", "h\(i)") }
        let rows = try n[0].history(id).count
        let held = try compact(n[0])
        #expect(held.heldBackBy == "node:\(n[1].nodeID)")
        #expect(held.horizon < (try n[0].counts().seq))
        #expect(
            try n[0].history(id).filter { $0.seq > held.horizon }.count == 5,
            "changes the peer has not pulled were removed")
        #expect(held.removed <= 1, "only the create, which the peer holds")
        try sync(n[1], n[0])
        let freed = try compact(n[0])
        #expect(freed.horizon == (try n[0].counts().seq))
        #expect(freed.removed >= 4)
        #expect(try n[0].history(id).count == rows - held.removed - freed.removed)
        #expect(try n[0].history(id).count == 1)
        #expect(try n[0].storedEntries() == n[1].storedEntries())
        #expect(try n[0].lastCompaction() == freed)
        _ = dbs
    }

    @Test(
        "a peer silent past peer-expiry no longer holds the horizon back; back, it resyncs from 0 both ways and ends converged"
    )
    func expiredPeerReturns() throws {
        let (n, dbs) = try nodes(2)
        defer { n.forEach { $0.close() } }
        let o = WriteOrigin(actor: "u")
        let quiet = try n[0].create(form: "registration", id: nil, fields: ["name": "q0"], layout: layout, origin: o)
            .entry.id
        let clash = try n[0].create(form: "registration", id: nil, fields: ["name": "x0"], layout: layout, origin: o)
            .entry.id
        try sync(n[0], n[1])
        // Node 1 goes quiet; node 0 goes on, and so does node 1, offline.
        for i in 1...4 { try edit(n[0], quiet, "name", "q\(i)") }
        try edit(n[0], clash, "name", "x-here")
        try edit(n[1], clash, "name", "x-there")
        let peer = "peer-\(n[1].nodeID.prefix(8))"
        // An entry made after node 1 went quiet: it never held any of it.
        let later = try n[0].create(form: "registration", id: nil, fields: ["name": "l0"], layout: layout, origin: o)
            .entry.id
        for i in 1...4 { try edit(n[0], later, "name", "l\(i)") }
        let held = try compact(n[0])
        #expect(held.heldBackBy == peer && held.expired.isEmpty)
        #expect(try n[0].history(later).count == 5, "changes the peer has not acknowledged were removed")
        // 91 days without contact.
        let old = Timestamp.rfc3339(milliseconds: HybridClock.systemMilliseconds() - 91 * day)
        try n[0].writer.submit { ctx in
            try ctx.db.statement("UPDATE peers SET last_sync = ?").run([.text(old)])
            try ctx.db.statement("UPDATE peer_acks SET at = ?").run([.text(old)])
        }
        let passed = try compact(n[0])
        #expect(passed.expired == [peer])
        #expect(passed.heldBackBy == nil)
        #expect(passed.horizon == (try n[0].counts().seq))
        #expect(passed.removed >= 4)
        #expect(try n[0].history(later).count == 1)
        #expect(try n[0].peerState(peer)?.expired != nil)
        // Back: a full resync, said so, and both hold the same.
        let back = try sync(n[0], n[1])
        #expect(back.notices.contains { $0.contains("expired") }, "\(back.notices)")
        #expect(try n[0].peerState(peer)?.expired == nil)
        try sync(n[1], n[0])
        #expect(try n[0].storedEntries() == n[1].storedEntries())
        #expect(try n[1].replayChangeLog() == n[1].storedEntries())
        #expect(try open(n[0]) == open(n[1]))
        #expect(try open(n[0]).count == 1, "the clash")
        // Its acknowledgement counts again.
        #expect(try compact(n[0]).heldBackBy == peer)
        _ = dbs
    }

    @Test(
        "Compact over the service: admin only (PermissionDenied changes nothing); the reply's figures; Status.compaction; History.compactedThrough"
    )
    func overTheService() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 2)
        defer { store.close() }
        let id = try store.create(
            form: "registration", id: nil, fields: ["name": "s0", "country": "CN"], layout: layout,
            origin: WriteOrigin(actor: "u")
        ).entry.id
        for i in 1...3 { try edit(store, id, "name", "s\(i)") }
        let service = EntryService(store: store, forms: .builtIn)
        /// The reply of `method` called with `role`, or its wire error.
        func call(_ method: String, _ role: Role, _ params: [(String, JSON)] = []) -> (JSON?, WireError?) {
            let caller = Caller(pid: 1, uid: 1000, gid: 1000, userName: "clerk", role: role)
            var reply: JSON?
            let context = CallContext(
                caller: caller, call: VarlinkCall(method: method, parameters: .object(params)),
                send: { reply = $0.parameters }, clientHungUp: { false })
            do { try service.handle(context) } catch { return (nil, WireError(mapping: error)) }
            return (reply, nil)
        }
        let rows = try store.history(id).count
        for role in [Role.read, .write] {
            #expect(call("io.entryd.Sync.Compact", role).1?.name == WireErrorName.permissionDenied.rawValue)
        }
        #expect(try store.history(id).count == rows && store.lastCompaction() == nil)
        #expect(call("io.entryd.Sync.Status", .read).0?["compaction"] == nil)
        #expect(call("io.entryd.Entries.History", .read, [("id", .string(id))]).0?["compactedThrough"] == nil)
        let (reply, error) = call("io.entryd.Sync.Compact", .admin)
        #expect(error == nil)
        #expect(reply?["removed"]?.intValue == 2, "two superseded name edits")
        #expect(reply?["horizon"]?.intValue == (try store.counts().seq))
        #expect(reply?["heldBackBy"] == nil && reply?["expired"]?.arrayValue?.isEmpty == true)
        #expect(reply?["bytesFreed"]?.intValue != nil)
        let status = call("io.entryd.Sync.Status", .read).0?["compaction"]
        #expect(status?["removed"]?.intValue == 2 && status?["at"]?.stringValue != nil)
        let history = call("io.entryd.Entries.History", .read, [("id", .string(id))]).0
        #expect(history?["compactedThrough"]?.intValue == reply?["horizon"]?.intValue)
        #expect(history?["changes"]?.arrayValue?.count == rows - 2)
    }

    @Test("a node that pulled with excludeNode but has no peer row holds the horizon at what it acknowledged")
    func pullerIsKnown() throws {
        let (n, dbs) = try nodes(2)
        defer { n.forEach { $0.close() } }
        _ = try n[0].create(
            form: "registration", id: nil, fields: ["name": "p"], layout: layout, origin: WriteOrigin(actor: "u"))
        _ = try LocalPeer(store: n[0], via: "x").changes(
            since: 0, limit: 1, excludeNode: n[1].nodeID, excludeSince: .zero)
        _ = try n[0].create(
            form: "registration", id: nil, fields: ["name": "p2"], layout: layout, origin: WriteOrigin(actor: "u"))
        let result = try compact(n[0])
        #expect(result.horizon == 0 && result.heldBackBy == "node:\(n[1].nodeID)")
        _ = dbs
    }
}
