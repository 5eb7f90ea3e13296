import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer

/// Erasure (issue 17, doc/design.md "Erasure"): the values are gone from every
/// row and file, on every node, whatever the order changes arrive in, and
/// nothing brings them back.
@Suite struct ErasureTests {
    let layout = FieldLayout.registration
    func origin(_ actor: String, _ reason: String? = nil) -> WriteOrigin { WriteOrigin(actor: actor, reason: reason) }

    /// A phone and a name found nowhere else, so a byte scan finds only this entry's.
    static func person(_ tag: String) -> [String: String] {
        [
            "name": "Zyxwvuq\(tag)", "birthday": "1987-03-09", "country": "CN", "province": "440000", "city": "440100",
            "contact_method": "phone", "phone": "+861390017\(tag.suffix(4))",
        ]
    }

    /// `a` syncs with `b` both ways.
    @discardableResult
    func sync(_ a: EntryStore, _ b: EntryStore) throws -> PeerSyncResult {
        try PeerSync.run(
            local: a, peer: LocalPeer(store: b, via: "peer-\(a.nodeID.prefix(8))"), name: "peer-\(b.nodeID.prefix(8))",
            address: "test:", batch: 3, layout: { _ in .registration }, maxClockSkewMs: 300_000)
    }

    /// Occurrences of `values` in the database file, its WAL and ledger (and any other file) of `db`'s directory.
    func hits(_ values: [String], in db: TestDatabase) throws -> [String: Int] {
        var found: [String: Int] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: db.directory) {
            let n = ByteScan.count(Set(values.map { Array($0.utf8) }), in: db.directory + "/" + name)
            if n > 0 { found[name] = n }
        }
        return found
    }

    /// The change-log rows of `id` as stored: (op, fields, base, reason).
    func rawRows(_ db: TestDatabase, _ id: String) throws -> [(String, String, String, String?)] {
        let c = try SQLiteConnection(path: db.path, readOnly: true)
        var rows: [(String, String, String, String?)] = []
        try c.statement("SELECT op, fields, base, reason FROM changes WHERE entry = ? ORDER BY seq").query([.text(id)])
        {
            rows.append(($0.text(0), $0.text(1), $0.text(2), $0.isNull(3) ? nil : $0.text(3)))
        }
        return rows
    }

    @Test(
        "erase overwrites the values, history and conflict records in one transaction; Get, Update, Delete, Restore and Add with the id answer EntryErased; List leaves it out; no byte of it remains"
    )
    func eraseOverwrites() throws {
        let dbs = [TestDatabase(), TestDatabase()]
        let n = try dbs.map { try EntryStore(path: $0.path, readers: 2) }
        defer { n.forEach { $0.close() } }
        let fields = Self.person("0001")
        let e = try n[0].create(
            form: "registration", id: nil, fields: fields, layout: layout,
            origin: origin("a", "first call, Zyxwvuq0001")
        ).entry
        let other = try n[0].create(
            form: "registration", id: nil, fields: Self.person("0777"), layout: layout, origin: origin("a")
        ).entry
        try sync(n[1], n[0])
        // A conflict: both nodes rename it concurrently.
        _ = try n[0].update(id: e.id, ifVersion: nil, layout: layout, origin: origin("a")) {
            var f = $0.fields
            f["name"] = "Zyxwvuq0001A"
            return f
        }
        _ = try n[1].update(id: e.id, ifVersion: nil, layout: layout, origin: origin("b")) {
            var f = $0.fields
            f["name"] = "Zyxwvuq0001B"
            return f
        }
        try sync(n[0], n[1])
        #expect(try n[0].conflicts(entry: e.id, includeResolved: true).count == 1)
        let seqBefore = try n[0].counts().seq

        let outcome = try n[0].erase(id: e.id, origin: origin("admin", "PIPL art. 47 request 12"))
        #expect(outcome.walTruncated)
        #expect(
            outcome.record.entry == e.id && outcome.record.form == "registration" && outcome.record.actor == "admin"
                && outcome.record.reason == "PIPL art. 47 request 12" && outcome.record.node == n[0].nodeID)
        #expect(try n[0].get(e.id) == nil)
        #expect(try n[0].erasure(of: e.id) == outcome.record)
        #expect(try n[0].conflicts(entry: e.id, includeResolved: true).isEmpty)
        let history = try n[0].history(e.id)
        #expect(
            history.count == 1 && history[0].op == .erase && history[0].fields.isEmpty && history[0].base.isEmpty
                && history[0].reason == "PIPL art. 47 request 12")
        #expect(try n[0].counts() == (1, 0, seqBefore + 1), "one erase change; the other entry stays")
        // Every other row of the entry is emptied, its stamps kept.
        let rows = try rawRows(dbs[0], e.id)
        #expect(rows.count == 4)  // create, two concurrent renames, the erase
        for row in rows where row.0 != "erase" { #expect(row.1 == "{}" && row.2 == "{}" && row.3 == nil, "\(row)") }
        let at = outcome.record.at
        #expect(throws: EntryError.entryErased(id: e.id, at: at)) {
            _ = try n[0].update(id: e.id, ifVersion: nil, layout: layout, origin: origin("a")) { $0.fields }
        }
        #expect(throws: EntryError.entryErased(id: e.id, at: at)) {
            _ = try n[0].delete(id: e.id, ifVersion: nil, layout: layout, origin: origin("a"))
        }
        #expect(throws: EntryError.entryErased(id: e.id, at: at)) {
            _ = try n[0].restore(id: e.id, layout: layout, origin: origin("a"))
        }
        #expect(throws: EntryError.entryErased(id: e.id, at: at)) {
            _ = try n[0].create(form: "registration", id: e.id, fields: fields, layout: layout, origin: origin("a"))
        }
        #expect(throws: EntryError.entryErased(id: e.id, at: at)) {
            _ = try n[0].erase(id: e.id, origin: origin("a", "again"))
        }
        var query = ListQuery()
        query.includeDeleted = true
        let page = try n[0].list(query)
        #expect(page.entries.map(\.id) == [other.id] && page.total == 1)
        #expect(try n[0].replayChangeLog() == n[0].storedEntries())
        // Import of an old export: refused and counted.
        let imported = try n[0].importEntries(
            form: "registration", rows: [ImportRow(index: 0, id: e.id, fields: fields, deleted: false, problems: [])],
            layout: layout,
            atomic: false, origin: origin("a"))
        #expect(imported.added == 0 && imported.rejected.count == 1)
        #expect(try n[0].refusedErasedCount() == 1)
        #expect(try n[0].get(e.id) == nil)
        // Proof: no row holds a payload and no byte of the values is in any file of the node,
        // once the purge after the erasure (ErasurePurge) has ended.
        let secrets = [fields["name"]!, fields["phone"]!, "Zyxwvuq0001A", "Zyxwvuq0001B", "first call"]
        #expect(n[0].waitForPurge())
        let verified = try n[0].verifyErasure(id: e.id, values: secrets)
        #expect(verified.payloadRows == 0 && verified.erasure == outcome.record && verified.purge == nil)
        #expect(verified.files.allSatisfy { $0.hits == 0 }, "\(verified.files)")
        #expect(verified.files.first { $0.path.hasSuffix(".erasures") }?.exists == true)
        let left = try hits(secrets, in: dbs[0])
        #expect(left.isEmpty, "\(left)")
        // Nor any form the search keys derived from them (lower case, national number).
        let derived = secrets.flatMap(SearchKeys.derivedForms(of:))
        #expect(derived.contains("zyxwvuq0001") && derived.contains("13900170001"), "\(derived)")
        let leftDerived = try hits(derived, in: dbs[0])
        #expect(leftDerived.isEmpty, "\(leftDerived)")
        // The check can fail: node 1 has not synced yet and holds them.
        #expect(try !hits(secrets, in: dbs[1]).isEmpty)
        #expect(try !hits(derived, in: dbs[1]).isEmpty)
        #expect(try n[1].verifyErasure(id: e.id, values: secrets).payloadRows > 0)
    }

    @Test(
        "bad input changes nothing: an unknown id is EntryNotFound, a missing or blank reason is refused naming reason, a caller below admin is PermissionDenied"
    )
    func badInput() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 2)
        defer { store.close() }
        let e = try store.create(
            form: "registration", id: nil, fields: Self.person("0002"), layout: layout, origin: origin("a")
        ).entry
        let before = (try store.counts(), try store.storedEntries(), try store.history(e.id))
        #expect(throws: EntryError.entryNotFound("0190d5c6-7a0e-7000-8000-000000000000")) {
            _ = try store.erase(id: "0190d5c6-7a0e-7000-8000-000000000000", origin: origin("admin", "why"))
        }
        for reason in [nil, "", "  \n", "a\u{0}b", "line\nbreak", String(repeating: "r", count: 501)] as [String?] {
            #expect(throws: EntryError.invalidParameter("reason")) {
                _ = try store.erase(id: e.id, origin: origin("admin", reason))
            }
        }
        let service = EntryService(store: store, forms: .builtIn)
        /// The wire error name of the call, or `nil` when it succeeded.
        func call(_ role: Role, _ params: [(String, JSON)]) -> WireError? {
            let caller = Caller(pid: 1, uid: 1000, gid: 1000, userName: "clerk", role: role)
            let context = CallContext(
                caller: caller, call: VarlinkCall(method: "io.entryd.Entries.Erase", parameters: .object(params)),
                send: { _ in }, clientHungUp: { false })
            do { try service.handle(context) } catch { return WireError(mapping: error) }
            return nil
        }
        #expect(
            call(.write, [("id", .string(e.id)), ("reason", .string("asked"))])?.name
                == WireErrorName.permissionDenied.rawValue)
        #expect(
            call(.read, [("id", .string(e.id)), ("reason", .string("asked"))])?.name
                == WireErrorName.permissionDenied.rawValue)
        let missing = call(.admin, [("id", .string(e.id))])
        #expect(
            missing?.name == WireErrorName.invalidParameter.rawValue
                && missing?.parameters["parameter"]?.stringValue == "reason")
        #expect(
            call(.admin, [("id", .string("not-a-uuid")), ("reason", .string("x"))])?.name
                == WireErrorName.entryNotFound.rawValue)
        #expect(try store.counts() == before.0 && store.storedEntries() == before.1 && store.history(e.id) == before.2)
        #expect(try store.erasures().isEmpty && store.refusedErasedCount() == 0)
        #expect(!FileManager.default.fileExists(atPath: db.path + ".erasures"), "no ledger line for a refused erase")
        // And an admin's erase over the wire answers the erasure; Get then answers EntryErased(id, at).
        #expect(call(.admin, [("id", .string(e.id)), ("reason", .string("asked"))]) == nil)
        let caller = Caller(pid: 1, uid: 0, gid: 0, userName: "root", role: .read)
        let get = CallContext(
            caller: caller,
            call: VarlinkCall(method: "io.entryd.Entries.Get", parameters: .object([("id", .string(e.id))])),
            send: { _ in }, clientHungUp: { false })
        let error = #expect(throws: EntryError.self) { try service.handle(get) }
        #expect(error == .entryErased(id: e.id, at: try store.erasure(of: e.id)!.at))
        // An Add with the id is refused and counted.
        let add = CallContext(
            caller: Caller(pid: 1, uid: 0, gid: 0, userName: "root", role: .write),
            call: VarlinkCall(
                method: "io.entryd.Entries.Add",
                parameters: .object([
                    ("id", .string(e.id)), ("fields", JSON.stringMap(Self.person("0002"))),
                ])),
            send: { _ in }, clientHungUp: { false })
        #expect(throws: EntryError.entryErased(id: e.id, at: try store.erasure(of: e.id)!.at)) {
            try service.handle(add)
        }
        #expect(try store.refusedErasedCount() == 1 && store.get(e.id) == nil)
        // An Import row with the id (an old export) is rejected as erased, said in the caller's locale.
        for (locale, fragment) in [("zh", "已被抹除，不能再导入"), ("en", "was erased and cannot be imported again")] {
            var reply: JSON?
            let row = JSON.object([("id", .string(e.id)), ("fields", JSON.stringMap(Self.person("0002")))])
            let importCall = CallContext(
                caller: Caller(pid: 1, uid: 0, gid: 0, userName: "root", role: .write),
                call: VarlinkCall(
                    method: "io.entryd.Entries.Import",
                    parameters: .object([
                        ("entries", .array([row])), ("locale", .string(locale)),
                    ])),
                send: { reply = $0.parameters }, clientHungUp: { false })
            try service.handle(importCall)
            let rejected = reply?["rejected"]?.arrayValue?.first
            let problem = rejected?["problems"]?.arrayValue?.first
            #expect(
                reply?["added"]?.intValue == 0 && rejected?["id"]?.stringValue == e.id, "\(String(describing: reply))")
            #expect(problem?["code"]?.stringValue == "erased" && problem?["field"]?.stringValue == "id")
            #expect(problem?["message"]?.stringValue?.contains(fragment) == true, "\(String(describing: problem))")
        }
        #expect(try store.refusedErasedCount() == 3 && store.get(e.id) == nil)
    }

    @Test(
        "the erase wins in any order: arriving before the create, or before a later-stamped concurrent edit; later changes are refused, counted and never stored"
    )
    func eraseWinsInAnyOrder() throws {
        let dbs = (0..<3).map { _ in TestDatabase() }
        let n = try dbs.map { try EntryStore(path: $0.path, readers: 2) }
        defer { n.forEach { $0.close() } }
        let e = try n[0].create(
            form: "registration", id: nil, fields: Self.person("0003"), layout: layout, origin: origin("a")
        ).entry
        try sync(n[1], n[0])
        _ = try n[0].erase(id: e.id, origin: origin("admin", "request"))
        // Node 1 edits afterwards, with a higher HLC than the erase.
        usleep(5_000)
        let edited = try n[1].update(id: e.id, ifVersion: nil, layout: layout, origin: origin("b")) {
            var f = $0.fields
            f["name"] = "Zyxwvuq0003Later"
            return f
        }
        #expect(edited.version > (try n[0].erasure(of: e.id)!.hlc))
        let pulled = try sync(n[0], n[1])  // node 0 pulls the edit (refused), pushes the erase
        #expect(pulled.refusedErased == 1, "\(pulled)")
        #expect(try n[0].refusedErasedCount() == 1)
        #expect(try n[1].get(e.id) == nil && n[1].erasure(of: e.id) != nil)
        #expect(try n[0].history(e.id).map(\.op) == [.erase] && n[1].history(e.id).map(\.op) == [.erase])
        #expect(try n[1].verifyErasure(id: e.id, values: ["Zyxwvuq0003"]).payloadRows == 0)

        // Node 2 gets the erase first (alone), then the create and the edit.
        let all = try n[1].changes(since: 0, limit: 1000, excludeNode: nil, excludeSince: .zero).changes
        #expect(all.map(\.op) == [.erase], "of an erased entry only the erase is served")
        let creates = try [n[0].storedChangeRows(e.id), n[1].storedChangeRows(e.id)].joined().filter { $0.op != .erase }
        _ = try n[2].apply(all, via: "x", layout: { _ in .registration }, maxClockSkewMs: 300_000, pulled: nil)
        var old = ChangeRecord(
            seq: 0, node: n[0].nodeID, hlc: creates[0].hlc, entry: e.id, form: "registration", op: .create,
            fields: Self.person("0003"), base: [:], actor: "a", at: creates[0].at)
        old.reason = nil
        let late = try n[2].apply([old], via: "x", layout: { _ in .registration }, maxClockSkewMs: 300_000, pulled: nil)
        #expect(late.refusedErased == 1 && late.applied == 0)
        #expect(try n[2].get(e.id) == nil && n[2].history(e.id).map(\.op) == [.erase])
        #expect(
            try n[2].changes(since: 0, limit: 1000, excludeNode: nil, excludeSince: .zero).changes.map(\.op) == [.erase]
        )
        #expect(try hits(["Zyxwvuq0003"], in: dbs[2]).isEmpty)
        // The same erase again is skipped (idempotent); each node lists one erasure.
        let again = try n[2].apply(all, via: "x", layout: { _ in .registration }, maxClockSkewMs: 300_000, pulled: nil)
        #expect(again.skipped == 1 && again.applied == 0)
        for node in n { #expect(try node.erasures().map(\.entry) == [e.id]) }
    }

    @Test(
        "three nodes, one offline: the erase reaches the others; the offline one returns with the old entry and edits to it; after sync no node holds a value (byte scan of every database and WAL), the edits are refused and counted, every node lists the erasure"
    )
    func threeNodesOneOffline() throws {
        let dbs = (0..<3).map { _ in TestDatabase() }
        let n = try dbs.map { try EntryStore(path: $0.path, readers: 2) }
        defer { n.forEach { $0.close() } }
        let fields = Self.person("4242")
        let secrets = [fields["name"]!, fields["phone"]!, "Zyxwvuq4242Offline"]
        let e = try n[0].create(form: "registration", id: nil, fields: fields, layout: layout, origin: origin("a"))
            .entry
        let keep = try n[0].create(
            form: "registration", id: nil, fields: Self.person("5151"), layout: layout, origin: origin("a")
        ).entry
        try sync(n[1], n[0])
        try sync(n[2], n[0])
        // Node 2 goes offline and edits the entry twice.
        _ = try n[2].update(id: e.id, ifVersion: nil, layout: layout, origin: origin("c")) {
            var f = $0.fields
            f["name"] = "Zyxwvuq4242Offline"
            return f
        }
        _ = try n[2].delete(id: e.id, ifVersion: nil, layout: layout, origin: origin("c"))
        // Node 1 erases; nodes 0 and 1 sync.
        _ = try n[1].erase(id: e.id, origin: origin("admin", "GDPR art. 17"))
        try sync(n[0], n[1])
        for i in 0...1 {
            // The byte scan after the purge's end (the bound), as `entryctl erase --verify` waits for it.
            #expect(n[i].waitForPurge(), "node \(i): the purge after the erasure has ended")
            let left = try hits(secrets, in: dbs[i])
            #expect(left.isEmpty, "node \(i): \(left)")
        }
        #expect(try !hits(secrets, in: dbs[2]).isEmpty, "the offline node still holds them")
        // Node 2 comes back: node 0 syncs with it (pulls its edits first, refused), then node 2 with node 1.
        let back = try sync(n[0], n[2])
        #expect(back.refusedErased == 2, "\(back)")
        try sync(n[2], n[1])
        try sync(n[1], n[0])
        for (i, node) in n.enumerated() {
            #expect(node.waitForPurge(), "node \(i): the purge after the erasure has ended")
            #expect(try node.get(e.id) == nil, "node \(i)")
            #expect(try node.get(keep.id) != nil, "node \(i)")
            #expect(try node.erasures().map(\.entry) == [e.id], "node \(i)")
            let verified = try node.verifyErasure(id: e.id, values: secrets)
            #expect(verified.payloadRows == 0 && verified.walTruncated, "node \(i)")
            #expect(verified.files.allSatisfy { $0.hits == 0 }, "node \(i): \(verified.files)")
            let left = try hits(secrets, in: dbs[i])
            #expect(left.isEmpty, "node \(i): \(left)")
        }
        #expect(try n[0].refusedErasedCount() == 2)
        #expect(try n[0].storedEntries() == n[1].storedEntries() && n[1].storedEntries() == n[2].storedEntries())
        // Edits arriving again later (a re-sent batch) are refused again, never stored.
        let edits = try n[2].storedChangeRows(e.id).filter { $0.node == n[2].nodeID && $0.op != .erase }
        #expect(edits.count == 2)
        let resent = try n[1].apply(
            edits.map {
                var c = $0
                c.fields = ["name": "Zyxwvuq4242Offline"]
                return c
            }, via: "x",
            layout: { _ in .registration }, maxClockSkewMs: 300_000, pulled: nil)
        #expect(resent.refusedErased == 2 && resent.applied == 0 && resent.skipped == 0)
        #expect(try hits(secrets, in: dbs[1]).isEmpty)
    }

    @Test(
        "backup, erase, restore the backup: the store is erased again when it opens, before any call; the ledger holds no value"
    )
    func restoredBackupIsErasedAgain() throws {
        let db = TestDatabase()
        var store: EntryStore = try EntryStore(path: db.path, readers: 2)
        defer { store.close() }
        let fields = Self.person("6161")
        let e = try store.create(form: "registration", id: nil, fields: fields, layout: layout, origin: origin("a"))
            .entry
        let backup = try StoreKind.sqlite.backup(store, in: db, name: "backup.db")
        let erased = try store.erase(id: e.id, origin: origin("admin", "request 7")).record
        #expect(ByteScan.count([Array(fields["phone"]!.utf8)], in: backup) > 0, "the backup holds the values")
        store = try StoreKind.sqlite.restore(store, at: db, from: backup)
        #expect((store as! EntryStore).erasuresReapplied == 1)
        #expect(try store.get(e.id) == nil)
        #expect(try store.erasure(of: e.id)?.hlc == erased.hlc)
        #expect(try store.history(e.id).map(\.op) == [.erase])
        #expect(try store.verifyErasure(id: e.id, values: [fields["phone"]!, fields["name"]!]).payloadRows == 0)
        for file in [db.path, db.path + "-wal", db.path + ".erasures"] {
            #expect(
                ByteScan.count([Array(fields["phone"]!.utf8), Array(fields["name"]!.utf8)], in: file) == 0, "\(file)")
        }
        let ledger = try String(contentsOfFile: db.path + ".erasures", encoding: .utf8)
        #expect(ledger.contains(e.id) && ledger.contains("request 7") && !ledger.contains(fields["name"]!))
        // The file --restore kept aside is the database as it was: erased already.
        #expect(FileManager.default.fileExists(atPath: db.path + ".before-restore"))
        #expect(ByteScan.count([Array(fields["phone"]!.utf8)], in: db.path + ".before-restore") == 0)
    }

    @Test(
        "an erasure the database holds and its ledger lacks (a ledger lost or put back old) is written to the ledger when the store opens; other entries are not"
    )
    func ledgerIsCompletedAtOpen() throws {
        let db = TestDatabase()
        var store: EntryStore = try EntryStore(path: db.path, readers: 2)
        defer { store.close() }
        let kept = try store.create(
            form: "registration", id: nil, fields: Self.person("6162"), layout: layout, origin: origin("a")
        ).entry
        let e = try store.create(
            form: "registration", id: nil, fields: Self.person("6163"), layout: layout, origin: origin("a")
        ).entry
        _ = try store.erase(id: e.id, origin: origin("admin", "request 8"))
        store.close()
        try FileManager.default.removeItem(atPath: db.path + ".erasures")
        store = try EntryStore(path: db.path, readers: 2)
        #expect((store as! EntryStore).erasuresReapplied == 0)
        let ledger = try String(contentsOfFile: db.path + ".erasures", encoding: .utf8)
        #expect(ledger.contains(e.id) && ledger.contains("request 8"))
        #expect(!ledger.contains(kept.id))
        #expect(try store.get(kept.id) != nil)
    }

    @Test("DATABASE.before-restore, the database --restore kept aside, is erased too when the entry is erased later")
    func keptDatabaseIsErasedToo() throws {
        let db = TestDatabase()
        var store: EntryStore = try EntryStore(path: db.path, readers: 2)
        defer { store.close() }
        let fields = Self.person("7171")
        let e = try store.create(form: "registration", id: nil, fields: fields, layout: layout, origin: origin("a"))
            .entry
        let backup = try StoreKind.sqlite.backup(store, in: db, name: "backup.db")
        _ = try store.update(id: e.id, ifVersion: nil, layout: layout, origin: origin("a")) {
            var f = $0.fields
            f["name"] = "Zyxwvuq7171Kept"
            return f
        }
        store = try StoreKind.sqlite.restore(store, at: db, from: backup)
        let kept = db.path + ".before-restore"
        let needles = Set([fields["phone"]!, "Zyxwvuq7171Kept"].map { Array($0.utf8) })
        #expect(ByteScan.count(needles, in: kept) >= 2, "the kept database holds the values before the erasure")
        #expect(
            try store.verifyErasure(id: e.id, values: ["Zyxwvuq7171Kept"]).files.contains {
                $0.path == kept && $0.hits > 0
            })
        _ = try store.erase(id: e.id, origin: origin("admin", "request"))
        #expect(ByteScan.count(needles, in: kept) == 0)
        // (Its WAL, if any, is scanned too: in this process the old store's connections may
        // still hold the kept file, so its WAL is not always removed here as it is after entryd --restore.)
        let verified = try store.verifyErasure(id: e.id, values: [fields["phone"]!, "Zyxwvuq7171Kept"])
        #expect(verified.files.allSatisfy { $0.hits == 0 } && verified.payloadRows == 0, "\(verified.files)")
    }

    @Test(
        "FindSubject canonicalises phone and e-mail as Add does and finds every entry that held them, deleted ones and old values too, never an erased one"
    )
    func findSubject() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 2)
        defer { store.close() }
        let a = try store.create(
            form: "registration", id: nil, fields: Self.person("8001"), layout: layout, origin: origin("a")
        ).entry
        var emailed = Self.person("8002")
        emailed["contact_method"] = "email"
        emailed["phone"] = nil
        emailed["email"] = "zhang@example.cn"
        let b = try store.create(form: "registration", id: nil, fields: emailed, layout: layout, origin: origin("a"))
            .entry
        // c held a's phone once, then changed it, then was deleted.
        let c = try store.create(
            form: "registration", id: nil, fields: Self.person("8001").merging(["name": "Other"]) { $1 },
            layout: layout, origin: origin("a")
        ).entry
        _ = try store.update(id: c.id, ifVersion: nil, layout: layout, origin: origin("a")) {
            var f = $0.fields
            f["phone"] = "+8613900178999"
            return f
        }
        _ = try store.delete(id: c.id, ifVersion: nil, layout: layout, origin: origin("a"))
        let service = EntryService(store: store, forms: .builtIn)
        func find(_ params: [(String, JSON)]) throws -> [String] {
            var replies: [VarlinkReply] = []
            let caller = Caller(pid: 1, uid: 0, gid: 0, userName: "root", role: .admin)
            try service.handle(
                CallContext(
                    caller: caller,
                    call: VarlinkCall(method: "io.entryd.Entries.FindSubject", parameters: .object(params)),
                    send: { replies.append($0) }, clientHungUp: { false }))
            return (replies.last?.parameters["entries"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }.sorted()
        }
        // Lenient phone input: national form with spaces, the country's default region.
        #expect(try find([("phone", .string("139 0017 8001"))]) == [a.id, c.id].sorted())
        #expect(try find([("email", .string(" zhang@EXAMPLE.CN "))]) == [b.id])
        // The local part is stored as typed; a request may spell it in another case.
        #expect(try find([("email", .string("Zhang@example.cn"))]) == [b.id])
        // An empty value finds nobody: refused, not answered with no entry.
        #expect(throws: EntryError.invalidParameter("email")) { _ = try find([("email", .string(" "))]) }
        #expect(throws: EntryError.invalidParameter("phone")) { _ = try find([("phone", .string(""))]) }
        #expect(try find([("name", .string("zyxwvuq8001")), ("birthday", .string("1987-03-09"))]) == [a.id])
        #expect(try find([("name", .string("Zyxwvuq8001")), ("birthday", .string("1990-01-01"))]).isEmpty)
        #expect(throws: EntryError.self) { _ = try find([("phone", .string("12"))]) }
        #expect(throws: EntryError.invalidParameter("phone")) { _ = try find([]) }
        #expect(throws: EntryError.invalidParameter("birthday")) { _ = try find([("name", .string("x"))]) }
        // A name in the other script, or with a space typed in, is the same person.
        let huang = try store.create(
            form: "registration", id: nil, fields: Self.person("8003").merging(["name": "黃志明"]) { $1 },
            layout: layout, origin: origin("a")
        ).entry
        for name in ["黄志明", "黃 志明", "黃志明"] {
            #expect(try find([("name", .string(name)), ("birthday", .string("1987-03-09"))]) == [huang.id], "\(name)")
        }
        #expect(try find([("name", .string("黄志")), ("birthday", .string("1987-03-09"))]).isEmpty)
        _ = try store.erase(id: a.id, origin: origin("admin", "request"))
        #expect(try find([("phone", .string("+86 139 0017 8001"))]) == [c.id])
    }
}

extension ErasureTests {
    @Test(
        "a database whose WAL an erasure left behind (a crash before its checkpoint) is checkpointed at open, before the first call"
    )
    func walTruncatedAtOpen() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 2)
        let e = try store.create(
            form: "registration", id: nil, fields: Self.person("7001"), layout: layout, origin: origin("a")
        ).entry
        _ = try store.erase(id: e.id, origin: origin("admin", "request"))
        // The purge after it truncates the WAL too: copying a file that shrinks meanwhile
        // never ends (Foundation's copy loops on sendfile).
        #expect(store.waitForPurge())
        // More writes after the erasure's checkpoint: the WAL holds frames again, as after a crash.
        _ = try store.create(
            form: "registration", id: nil, fields: Self.person("7002"), layout: layout, origin: origin("a"))
        let copy = TestDatabase()
        for suffix in ["", "-wal", ".erasures"] {
            try FileManager.default.copyItem(atPath: db.path + suffix, toPath: copy.path + suffix)
        }
        store.close()
        let walBefore = (try FileManager.default.attributesOfItem(atPath: copy.path + "-wal")[.size] as? Int) ?? 0
        #expect(walBefore > 0)
        let reopened = try EntryStore(path: copy.path, readers: 2, copies: .newNode)
        defer { reopened.close() }
        #expect((try FileManager.default.attributesOfItem(atPath: copy.path + "-wal")[.size] as? Int) == 0)
        #expect(try reopened.erasure(of: e.id) != nil)
    }
}

extension ErasureTests {
    @Test(
        "the purge after an erasure runs in the background: VerifyErasure says it is pending while a reader holds the WAL, writes commit meanwhile, and once it ends no byte of the values is in any file"
    )
    func purgePendingThenCleared() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 2)
        defer { store.close() }
        // Entries on either side of it, so b-tree balances move its cells from page to page.
        var target: StoredEntry?
        for i in 0..<400 {
            let e = try store.create(
                form: "registration", id: nil, fields: Self.person("\(5000 + i)"), layout: layout,
                origin: origin("a")
            ).entry
            if i == 150 { target = e }
        }
        let e = try #require(target)
        _ = try store.update(id: e.id, ifVersion: nil, layout: layout, origin: origin("a")) {
            var f = $0.fields
            f["name"] = "Zyxwvuq5150Renamed"
            return f
        }
        let secrets = ["Zyxwvuq5150", "+8613900175150", "Zyxwvuq5150Renamed"]
        let needles = secrets + secrets.flatMap(SearchKeys.derivedForms(of:))
        // A reader in a read transaction on the WAL: the pages whose latest image is in frames
        // it keeps from being copied into the file cannot be cleaned, so the purge cannot end.
        let reader = try SQLiteConnection(path: db.path, readOnly: true)
        try reader.execute("BEGIN")
        try reader.statement("SELECT COUNT(*) FROM changes").query { _ in }
        let outcome = try store.erase(id: e.id, origin: origin("admin", "request"))
        #expect(!outcome.walTruncated)
        let pending = try store.verifyErasure(id: e.id, values: secrets)
        #expect(pending.payloadRows == 0 && pending.purge != nil)
        // The old page images in the WAL still hold the values: what the purge is for.
        #expect(pending.files.contains { $0.hits > 0 }, "\(pending.files)")
        // The pending purge holds no writer: these commit while it waits.
        for i in 0..<20 {
            _ = try store.create(
                form: "registration", id: nil, fields: Self.person("\(6000 + i)"), layout: layout,
                origin: origin("a"))
        }
        #expect(store.purgeProgress != nil && !store.waitForPurge(timeout: .milliseconds(200)))
        try reader.execute("COMMIT")
        #expect(store.waitForPurge(timeout: .seconds(60)))
        let after = try store.verifyErasure(id: e.id, values: secrets)
        #expect(after.purge == nil && after.walTruncated && after.files.allSatisfy { $0.hits == 0 }, "\(after.files)")
        #expect(try hits(needles, in: db).isEmpty)
        #expect(try store.nodeValue("rewrite_pending") == nil, "the mark goes once the purge has ended")
        #expect(try store.counts().entries == 419)
    }

    @Test("the purge zeroes a b-tree page's unused bytes and freeblocks and leaves its cells and other pages alone")
    func pagePurgeCleansUnusedSpace() throws {
        var page = [UInt8](repeating: 0xAB, count: 512)
        func put(_ at: Int, _ value: Int) {
            page[at] = UInt8(value >> 8)
            page[at + 1] = UInt8(value & 0xFF)
        }
        // A table leaf (13): 2 cells at 400 and 450, a freeblock at 300 (size 20), content from 300.
        page[0] = 13
        put(1, 300)  // the first freeblock
        put(3, 2)  // cells
        put(5, 300)  // the cell content area
        page[7] = 0
        put(8, 400)
        put(10, 450)
        put(300, 0)  // the freeblock: no next one, 20 bytes
        put(302, 20)
        let changed = page.withUnsafeMutableBytes { PagePurge.clean($0, page: 2, usable: 512) }
        #expect(changed)
        #expect(page[12..<300].allSatisfy { $0 == 0 } && page[304..<320].allSatisfy { $0 == 0 })
        #expect(page[320..<512].allSatisfy { $0 == 0xAB }, "cells kept")
        #expect(!page.withUnsafeMutableBytes { PagePurge.clean($0, page: 2, usable: 512) }, "nothing left to change")
        // An overflow or freelist page (a page number first) and a header that does not add up are left alone.
        var overflow = [UInt8](repeating: 0xAB, count: 512)
        overflow[0] = 0
        #expect(!overflow.withUnsafeMutableBytes { PagePurge.clean($0, page: 3, usable: 512) })
        var broken = page
        broken[5] = 0xFF
        #expect(!broken.withUnsafeMutableBytes { PagePurge.clean($0, page: 2, usable: 512) })
    }

    @Test(
        "a purge step leaves the pages whose latest image is still in the WAL (a checkpoint would copy it over the cleaned one) and cleans them after a checkpoint"
    )
    func purgeStepLeavesPagesInWAL() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 2)
        defer { store.close() }
        for i in 0..<50 {
            _ = try store.create(
                form: "registration", id: nil, fields: Self.person("\(7000 + i)"), layout: layout, origin: origin("a"))
        }
        // Every page in the file, then one more commit: its pages are in the WAL only.
        #expect(store.truncateWAL())
        _ = try store.create(
            form: "registration", id: nil, fields: Self.person("7100"), layout: layout, origin: origin("a"))
        let inWAL = try store.writer.perform { db -> Set<Int>? in
            guard let db = db as? SQLiteConnection else { return nil }
            var pageSize = 0
            try db.statement("PRAGMA page_size").query { pageSize = Int($0.int(0)) }
            try db.execute("BEGIN IMMEDIATE")
            defer { try? db.execute("COMMIT") }
            return db.pagesInWAL(pageSize: pageSize)
        }
        let pages = try #require(inWAL)
        #expect(!pages.isEmpty)
        // Steps over the whole file (one, unless the step's time budget runs out first).
        var step = PurgeStep(next: 1, pages: Int.max)
        while step.next <= step.pages {
            let plan = PurgePlan(first: step.next, revisit: step.skipped, checkpointFirst: false)
            step = try #require(
                try store.writer.perform { db in try (db as? SQLiteConnection)?.purgeStep(plan, syncingAtEnd: true) })
        }
        #expect(Set(step.skipped) == pages, "exactly the pages in the WAL are left")
        let plan = PurgePlan(first: step.next, revisit: step.skipped, checkpointFirst: true)
        let last = try store.writer.perform { db -> PurgeStep? in
            try (db as? SQLiteConnection)?.purgeStep(plan, syncingAtEnd: true)
        }
        #expect(last.map { $0.skipped.isEmpty && $0.next > $0.pages } == true, "none left after the checkpoint")
    }
}

extension EntryStore {
    /// Every change-log row of `id` as stored, erase or not (History shows the erase alone).
    func storedChangeRows(_ id: String) throws -> [ChangeRecord] {
        try readers.read { db in
            var rows: [ChangeRecord] = []
            try db.statement("SELECT \(EntryStore.changeColumns) FROM changes WHERE entry = ? ORDER BY seq")
                .query([.text(id)]) { rows.append(try EntryStore.change(from: $0)) }
            return rows
        }
    }
}

extension ErasureTests {
    @Test("an erasure whose ledger cannot be written is refused with a message naming the ledger; nothing is erased")
    func ledgerNotWritable() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 2)
        defer { store.close() }
        let e = try store.create(
            form: "registration", id: nil, fields: Self.person("6001"), layout: layout, origin: origin("a")
        ).entry
        try FileManager.default.createDirectory(atPath: db.path + ".erasures", withIntermediateDirectories: false)
        do {
            _ = try store.erase(id: e.id, origin: origin("admin", "request"))
            Issue.record("the erasure went through without its ledger")
        } catch let EntryError.storageFailed(reason) {
            #expect(reason.contains("erasure ledger") && reason.contains(".erasures"), "\(reason)")
        }
        #expect(try store.get(e.id)?.fields["name"] == Self.person("6001")["name"])
        #expect(try store.erasure(of: e.id) == nil)
    }
}

extension ErasureTests {
    @Test(
        "a damaged line of the erasure ledger (bytes that are not UTF-8) spoils only itself: the other erasures are re-applied after a restore, and the damage is counted"
    )
    func damagedLedgerLine() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 2)
        let a = try store.create(
            form: "registration", id: nil, fields: Self.person("5001"), layout: layout, origin: origin("a")
        ).entry
        let b = try store.create(
            form: "registration", id: nil, fields: Self.person("5002"), layout: layout, origin: origin("a")
        ).entry
        let backup = try StoreKind.sqlite.backup(store, in: db, name: "before.db")
        _ = try store.erase(id: a.id, origin: origin("admin", "request"))
        _ = try store.erase(id: b.id, origin: origin("admin", "request"))
        store.close()
        // A damaged line between the two erasures.
        var lines = try #require(FileManager.default.contents(atPath: db.path + ".erasures")).split(
            separator: UInt8(ascii: "\n"))
        lines.insert(Data([0xFF, 0xFE, 0x09, 0x41]), at: lines.count - 1)
        try Data(lines.joined(separator: [UInt8(ascii: "\n")]) + [UInt8(ascii: "\n")]).write(
            to: URL(fileURLWithPath: db.path + ".erasures"))
        try DatabaseBackup.restore(from: backup, to: db.path)
        let restored = try EntryStore(path: db.path, readers: 2)
        defer { restored.close() }
        #expect(restored.erasuresReapplied == 2)
        #expect(restored.erasureLedgerMalformed == 1)
        #expect(try restored.get(a.id) == nil && restored.get(b.id) == nil)
        #expect(try restored.erasure(of: a.id) != nil && restored.erasure(of: b.id) != nil)
    }
}
