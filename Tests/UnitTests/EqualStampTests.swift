import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntrySync

/// Ties that a fast machine makes common (issue 29): ids made in one
/// millisecond, and two nodes' writes with one HLC. Each test forces the tie
/// (a fixed millisecond, a frozen wall clock) instead of waiting for a machine
/// fast enough to make it.
@Suite struct EqualStampTests: TwoNodeSuite {
    func rename(_ store: EntryStore, _ id: String, _ name: String, by actor: String) throws -> StoredEntry {
        try store.update(id: id, ifVersion: nil, layout: layout, origin: origin(actor)) {
            var f = $0.fields
            f["name"] = name
            return f
        }
    }

    @Test("ids made one after another sort in the order they were made, also within one millisecond")
    func idsInOrder() {
        // The same millisecond every time: the tie, forced.
        let fixed = (0..<2_000).map { _ in UUIDv7.generate(milliseconds: 1_800_000_000_000) }
        #expect(fixed == fixed.sorted() && Set(fixed).count == fixed.count)
        #expect(fixed.allSatisfy { $0.hasPrefix("01a3185c-5000-7") }, "the millisecond and the version stay")
        #expect(
            fixed.allSatisfy {
                UUIDv7.canonical($0) == $0 && "89ab".contains($0[$0.index($0.startIndex, offsetBy: 19)])
            })
        // The clock's own milliseconds: thousands of ids share one.
        let ids = (0..<20_000).map { _ in UUIDv7.generate() }
        #expect(ids == ids.sorted() && Set(ids).count == ids.count)
        #expect(Set(ids.map { $0.prefix(13) }).count < ids.count, "some ids share a millisecond")
        // Ids for other milliseconds made in between (a caller's own time, a clock
        // ahead) leave the order of each millisecond's ids alone.
        var interleaved: [String] = []
        for i in 0..<3_000 {
            interleaved.append(UUIDv7.generate(milliseconds: 1_700_000_000_000))
            _ = UUIDv7.generate(milliseconds: 1_700_000_000_001 + UInt64(i % 10))
        }
        #expect(interleaved == interleaved.sorted() && interleaved.allSatisfy { $0.hasPrefix("018bcfe5-6800-7") })
    }

    @Test(
        "entries created in one millisecond list oldest first by created, and newest first by default",
        arguments: StoreKind.allCases)
    func createdOrderWithinOneMillisecond(kind: StoreKind) throws {
        let (n, dbs) = try nodes(kind, 1, frozen: true)
        defer {
            n.forEach { $0.close() }
            _ = dbs
        }
        var made: [String] = []
        for i in 0..<30 {
            made.append(
                try n[0].create(
                    form: "registration", id: nil, fields: ["name": "n\(i)"], layout: layout, origin: origin("a")
                ).entry.id)
        }
        var query = ListQuery()
        query.order = .created
        query.descending = false
        query.limit = 100
        let ascending = try n[0].list(query).entries
        #expect(Set(ascending.map(\.createdAt)).count == 1, "one millisecond for all")
        #expect(ascending.map(\.id) == made)
        query.descending = true
        #expect(try n[0].list(query).entries.map(\.id) == made.reversed())
    }

    @Test(
        "a write that saw one of two edits with the same HLC has not seen the other: a conflict on both nodes, never a silent loss",
        arguments: StoreKind.allCases)
    func equalHLCEdits(kind: StoreKind) throws {
        let (n, dbs) = try nodes(kind, frozen: true)
        defer {
            n.forEach { $0.close() }
            _ = dbs
        }
        let id = try n[0].create(
            form: "registration", id: nil, fields: ["name": "李雷"], layout: layout, origin: origin("a")
        ).entry.id
        try sync(n[1], n[0])
        let onB = try rename(n[1], id, "韩梅梅", by: "b")
        let onA = try rename(n[0], id, "李明", by: "a")
        #expect(onA.version == onB.version, "the tie: one HLC on two nodes")
        // A edits again, having seen only its own edit.
        _ = try rename(n[0], id, "李明明", by: "a")
        let result = try sync(n[0], n[1])
        #expect(result.conflicts == 1)
        for store in n {
            let open = try store.conflicts(entry: id, includeResolved: false)
            #expect(open.count == 1, "\(open)")
            #expect(open.first?.field == "name" && open.first?.kept == "李明明" && open.first?.lost == "韩梅梅")
            #expect(try store.get(id)?.fields["name"] == "李明明")
        }
        // Resolving with the lost value settles it on both nodes.
        let conflict = try #require(try n[1].conflicts(entry: id, includeResolved: false).first)
        _ = try n[1].resolveConflict(
            id: conflict.id, useLost: true, layout: { _ in .registration }, origin: origin("b"))
        try sync(n[0], n[1])
        for store in n {
            #expect(try store.conflicts(entry: id, includeResolved: false).isEmpty)
            #expect(try store.get(id)?.fields["name"] == "韩梅梅")
        }
    }

    @Test(
        "a delete that saw one of two edits with the same HLC: the other is a delete-against-edit conflict on both nodes",
        arguments: StoreKind.allCases)
    func equalHLCDeleteAgainstEdit(kind: StoreKind) throws {
        let (n, dbs) = try nodes(kind, frozen: true)
        defer {
            n.forEach { $0.close() }
            _ = dbs
        }
        let id = try n[0].create(
            form: "registration", id: nil, fields: ["name": "李雷", "email": "a@x.cn"], layout: layout,
            origin: origin("a")
        ).entry.id
        try sync(n[1], n[0])
        let onB = try n[1].update(id: id, ifVersion: nil, layout: layout, origin: origin("b")) {
            var f = $0.fields
            f["email"] = "b@x.cn"
            return f
        }
        let onA = try n[0].update(id: id, ifVersion: nil, layout: layout, origin: origin("a")) {
            var f = $0.fields
            f["name"] = "李明"
            return f
        }
        #expect(onA.version == onB.version, "the tie: one HLC on two nodes")
        _ = try n[0].delete(id: id, ifVersion: nil, layoutOf: { _ in .registration }, origin: origin("a"))
        try sync(n[0], n[1])
        for store in n {
            let open = try store.conflicts(entry: id, includeResolved: false)
            #expect(open.count == 1 && open.first?.field == "deleted" && open.first?.lost == "false", "\(open)")
            #expect(open.first?.lostGroup["email"] == "b@x.cn")
            #expect(try store.get(id)?.deleted == true && store.get(id)?.fields["email"] == "b@x.cn")
        }
    }

    @Test(
        "two edits with one HLC: every node holds the same version, updatedAt and updatedBy (the greater node's)",
        arguments: StoreKind.allCases)
    func equalHLCVersion(kind: StoreKind) throws {
        let (n, dbs) = try nodes(kind, frozen: true)
        defer {
            n.forEach { $0.close() }
            _ = dbs
        }
        let id = try n[0].create(
            form: "registration", id: nil, fields: ["name": "李雷"], layout: layout, origin: origin("a")
        ).entry.id
        try sync(n[1], n[0])
        let onB = try rename(n[1], id, "韩梅梅", by: "b")
        let onA = try n[0].update(id: id, ifVersion: nil, layout: layout, origin: origin("a")) {
            var f = $0.fields
            f["email"] = "a@x.cn"
            return f
        }
        #expect(onA.version == onB.version, "the tie: one HLC on two nodes")
        try sync(n[0], n[1])
        let a = try #require(try n[0].get(id))
        let b = try #require(try n[1].get(id))
        #expect(a.fields == b.fields && a.fields["name"] == "韩梅梅" && a.fields["email"] == "a@x.cn")
        #expect(
            a.version == b.version && a.updatedAt == b.updatedAt && a.updatedBy == b.updatedBy,
            "A: \(a.updatedBy), B: \(b.updatedBy)")
        #expect(a.updatedBy == (n[0].nodeID > n[1].nodeID ? "a" : "b"))
    }

    @Test("a local write names another node's write with its node under @nodes, and nothing for its own")
    func nodesOfNamedWrites() {
        let own = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
        let other = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c"
        let x = HLC(milliseconds: 1_800_000_000_000, counter: 2)
        let y = HLC(milliseconds: 1_800_000_000_000, counter: 3)
        #expect(SeenWrites.nodesValue(naming: [Stamp(hlc: x, node: own)], own: own) == "")
        let value = SeenWrites.nodesValue(
            naming: [Stamp(hlc: x, node: own), Stamp(hlc: x, node: other), Stamp(hlc: y, node: own)], own: own)
        #expect(value == "\(x):\(own),\(x):\(other)")
        #expect(EntryStore.isValidNodesValue(value) && EntryStore.isValidNodesValue(""))
        let base = ["name": x.description, "email": y.description, EntryStore.nodesKey: "\(x):\(other)"]
        let seen = SeenWrites(group: ["name", "email"], base: base, node: own)
        #expect(seen.contains(Stamp(hlc: x, node: other)) && !seen.contains(Stamp(hlc: x, node: own)))
        #expect(seen.contains(Stamp(hlc: y, node: own)) && !seen.contains(Stamp(hlc: y, node: other)))
        // Written by an entryd before @nodes: the HLC means any node's write.
        let legacy = SeenWrites(group: ["name"], base: ["name": x.description], node: own)
        #expect(legacy.contains(Stamp(hlc: x, node: other)) && legacy.contains(Stamp(hlc: x, node: own)))
    }
}
