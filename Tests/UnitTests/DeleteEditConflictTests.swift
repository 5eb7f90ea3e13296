import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntrySync

/// Delete against edit (doc/design.md, issue 15): a delete and an edit it did
/// not see are a conflict on the `deleted` register on every node, resolvable
/// both ways; the merged state stays deleted with the edit's values.
@Suite struct DeleteEditConflictTests: TwoNodeSuite {
    func rename(_ store: EntryStore, _ id: String, _ field: String, _ value: String) throws {
        _ = try store.update(id: id, ifVersion: nil, layout: layout, origin: origin("u")) {
            var f = $0.fields
            f[field] = value
            return f
        }
    }

    /// The open conflicts of `id`, by id, without the local detection time.
    func open(_ store: EntryStore, _ id: String) throws -> [ConflictRecord] {
        try store.conflicts(entry: id, includeResolved: false).map {
            var c = $0
            c.detectedAt = ""
            return c
        }.sorted { $0.id < $1.id }
    }

    /// An entry on both nodes; A deletes it while B, offline, edits `fields`.
    func clash(_ kind: StoreKind, edits: [(String, String)]) throws -> ([EntryStore], [TestDatabase], String) {
        let (n, dbs) = try nodes(kind)
        let id = try n[0].create(
            form: "registration", id: nil, fields: ["name": "李雷", "email": "a@x.cn"], layout: layout,
            origin: origin("a")
        ).entry.id
        try sync(n[1], n[0])
        _ = try n[0].delete(id: id, ifVersion: nil, layoutOf: { _ in .registration }, origin: origin("a"))
        for (field, value) in edits { try rename(n[1], id, field, value) }
        return (n, dbs, id)
    }

    @Test(
        "a delete and an offline edit: one conflict on deleted, the same on both nodes in either order; the entry stays deleted with the edit",
        arguments: StoreKind.allCases)
    func oneConflictBothNodes(kind: StoreKind) throws {
        for order in [true, false] {
            let (n, dbs, id) = try clash(kind, edits: [("name", "韩梅梅")])
            defer {
                n.forEach { $0.close() }
                _ = dbs
            }
            // Either node first: the deleting node pulls the edit, or the editing node pulls the delete.
            _ = try order ? sync(n[0], n[1]) : sync(n[1], n[0])
            let a = try open(n[0], id)
            let b = try open(n[1], id)
            #expect(a.count == 1 && a == b, "A: \(a), B: \(b)")
            let c = try #require(a.first)
            #expect(c.field == "deleted" && c.kept == "true" && c.lost == "false")
            #expect(c.keptNode == n[0].nodeID && c.lostNode == n[1].nodeID && c.lostGroup == ["name": "韩梅梅"])
            for store in n {
                let e = try #require(try store.get(id))
                #expect(
                    e.deleted && e.fields["name"] == "韩梅梅", "the merged state is what it was: deleted, with the edit")
            }
        }
    }

    @Test(
        "edits of two fields are two conflicts; an edit replacing an earlier one leaves one open",
        arguments: StoreKind.allCases)
    func severalEdits(kind: StoreKind) throws {
        let (n, dbs, id) = try clash(kind, edits: [("name", "甲"), ("email", "b@x.cn")])
        defer {
            n.forEach { $0.close() }
            _ = dbs
        }
        try sync(n[0], n[1])
        #expect(try open(n[0], id).count == 2 && open(n[0], id) == open(n[1], id))
        let (m, dbs2, id2) = try clash(kind, edits: [("name", "甲"), ("name", "乙")])
        defer {
            m.forEach { $0.close() }
            _ = dbs2
        }
        try sync(m[0], m[1])
        let a = try open(m[0], id2)
        let b = try open(m[1], id2)
        #expect(a.count == 1 && a == b && a.first?.lostGroup["name"] == "乙", "\(a)")
    }

    @Test(
        "no conflict when the edit came after the delete was seen and the entry restored", arguments: StoreKind.allCases
    )
    func sequentialIsNoConflict(kind: StoreKind) throws {
        let (n, dbs) = try nodes(kind)
        defer {
            n.forEach { $0.close() }
            _ = dbs
        }
        let id = try n[0].create(
            form: "registration", id: nil, fields: ["name": "李雷"], layout: layout, origin: origin("a")
        ).entry.id
        try sync(n[1], n[0])
        _ = try n[0].delete(id: id, ifVersion: nil, layoutOf: { _ in .registration }, origin: origin("a"))
        try sync(n[1], n[0])
        _ = try n[1].restore(id: id, layoutOf: { _ in .registration }, origin: origin("b"))
        try rename(n[1], id, "name", "韩梅梅")
        try sync(n[0], n[1])
        #expect(try open(n[0], id).isEmpty && open(n[1], id).isEmpty)
        #expect(try n[0].get(id)?.deleted == false && n[0].get(id)?.fields["name"] == "韩梅梅")
    }

    @Test(
        "resolving with the edit restores the entry everywhere; keeping the delete deletes again; either settles it on both nodes",
        arguments: StoreKind.allCases)
    func resolveBothWays(kind: StoreKind) throws {
        for useLost in [true, false] {
            let (n, dbs, id) = try clash(kind, edits: [("name", "韩梅梅")])
            defer {
                n.forEach { $0.close() }
                _ = dbs
            }
            try sync(n[0], n[1])
            let conflict = try #require(try open(n[1], id).first)
            let resolved = try n[1].resolveConflict(
                id: conflict.id, useLost: useLost, layout: { _ in .registration }, origin: origin("b"))
            #expect(resolved.resolved)
            try sync(n[0], n[1])
            for store in n {
                #expect(try open(store, id).isEmpty, "settled on every node")
                let e = try #require(try store.get(id))
                #expect(e.deleted == !useLost && e.fields["name"] == "韩梅梅")
            }
        }
    }

    @Test(
        "a delete and a concurrent restore: the later stands, the other is a conflict on deleted on both nodes; resolving it settles it everywhere",
        arguments: StoreKind.allCases, [false, true])
    func deleteAgainstRestore(kind: StoreKind, frozen: Bool) throws {
        let (n, dbs) = try nodes(kind, frozen: frozen)
        defer {
            n.forEach { $0.close() }
            _ = dbs
        }
        let id = try n[0].create(
            form: "registration", id: nil, fields: ["name": "李雷"], layout: layout, origin: origin("a")
        ).entry.id
        _ = try n[0].delete(id: id, ifVersion: nil, layoutOf: { _ in .registration }, origin: origin("a"))
        try sync(n[1], n[0])
        // Both hold the deleted entry; one restores it while the other deletes it again… then a fresh delete vs restore.
        let restoredB = try n[1].restore(id: id, layoutOf: { _ in .registration }, origin: origin("b"))
        let restoredA = try n[0].restore(id: id, layoutOf: { _ in .registration }, origin: origin("a"))
        // With one frozen wall clock the two restores share an HLC (a sync aligned the
        // clocks): the delete that saw A's restore has not seen B's.
        if frozen { #expect(restoredA.version == restoredB.version) }
        _ = try n[0].delete(id: id, ifVersion: nil, layoutOf: { _ in .registration }, origin: origin("a"))
        try sync(n[0], n[1])
        let a = try open(n[0], id)
        let b = try open(n[1], id)
        #expect(a.count == 1 && a == b, "A: \(a), B: \(b)")
        let c = try #require(a.first)
        #expect(c.field == "deleted" && Set([c.kept, c.lost]) == ["true", "false"])
        let deleted = try #require(try n[0].get(id)).deleted
        #expect(try n[1].get(id)?.deleted == deleted, "both nodes hold the same state")
        #expect(deleted == (c.kept == "true"), "the kept side is the state")
        _ = try n[1].resolveConflict(id: c.id, useLost: true, layout: { _ in .registration }, origin: origin("b"))
        try sync(n[0], n[1])
        for store in n {
            #expect(try open(store, id).isEmpty)
            #expect(try store.get(id)?.deleted == (c.lost == "true"), "the lost side was chosen")
        }
    }
}
