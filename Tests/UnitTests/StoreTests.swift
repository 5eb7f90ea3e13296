import CSQLite
import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// Any ``EntryStore`` (each test runs once per ``StoreKind``): the change log,
/// tombstones, idempotent create, replay, the HLC across restarts, concurrent
/// writers, List totals.
@Suite struct StoreTests {
    let origin = WriteOrigin(actor: "tester")
    let layout = FieldLayout.registration

    @Test("create, update, delete, restore each write one change-log row", arguments: StoreKind.allCases)
    func lifecycle(kind: StoreKind) throws {
        let db = TestDatabase()
        let store = try kind.open(db)
        defer { store.close() }
        let (e, created) = try store.create(
            form: "f", id: nil, fields: ["name": "李雷", "country": "CN"], layout: layout, origin: origin)
        #expect(created)
        #expect(UUIDv7.canonical(e.id) == e.id)
        let u = try store.update(id: e.id, ifVersion: e.version.description, layout: layout, origin: origin) { cur in
            var f = cur.fields
            f["name"] = "韩梅梅"
            return f
        }
        #expect(u.fields["name"] == "韩梅梅")
        #expect(u.version > e.version)
        #expect(throws: EntryError.versionMismatch(id: e.id, version: u.version.description)) {
            _ = try store.update(id: e.id, ifVersion: e.version.description, layout: layout, origin: origin) {
                $0.fields
            }
        }
        let d = try store.delete(id: e.id, ifVersion: nil, layout: layout, origin: origin)
        #expect(d.deleted && d.fields == u.fields)
        let r = try store.restore(id: e.id, layout: layout, origin: origin)
        #expect(!r.deleted)
        let history = try store.history(e.id)
        #expect(history.map(\.op) == [.create, .update, .delete, .restore])
        // The value it replaced, and (under @nodes) no write of another node named.
        #expect(history[1].base == ["name": e.version.description, EntryStore.nodesKey: ""])
        #expect(history[1].fields == ["name": "韩梅梅"])
        #expect(history.allSatisfy { $0.actor == "tester" && $0.node == store.nodeID })
    }

    @Test("create with an id is idempotent; other values under that id are refused", arguments: StoreKind.allCases)
    func idempotentCreate(kind: StoreKind) throws {
        let db = TestDatabase()
        let store = try kind.open(db)
        defer { store.close() }
        let id = UUIDv7.generate()
        let first = try store.create(form: "f", id: id, fields: ["name": "a"], layout: layout, origin: origin)
        let again = try store.create(form: "f", id: id, fields: ["name": "a"], layout: layout, origin: origin)
        #expect(first.created && !again.created && again.entry == first.entry)
        #expect(throws: EntryError.entryExists(id)) {
            _ = try store.create(form: "f", id: id, fields: ["name": "b"], layout: layout, origin: origin)
        }
        #expect(try store.history(id).count == 1)
    }

    @Test(
        "random adds, updates, deletes and restores: replaying the change log gives the stored entries",
        arguments: StoreKind.allCases)
    func replayEqualsTable(kind: StoreKind) throws {
        let db = TestDatabase()
        let store = try kind.open(db)
        var rng = SplitMix64(seed: 2026)
        var ids: [String] = []
        for _ in 0..<400 {
            let roll = rng.next() % 10
            if ids.isEmpty || roll < 3 {
                let fields = ["name": "n\(rng.next() % 1000)", "country": ["CN", "US", "DE"][Int(rng.next() % 3)]]
                ids.append(
                    try store.create(form: "f", id: nil, fields: fields, layout: layout, origin: origin).entry.id)
                continue
            }
            let id = ids[Int(rng.next() % UInt64(ids.count))]
            switch roll {
            case 3...6:
                let value = rng.next() % 4 == 0 ? "" : "v\(rng.next() % 100)"
                _ = try store.update(id: id, ifVersion: nil, layout: layout, origin: origin) { cur in
                    var f = cur.fields
                    f[["name", "city", "email"][Int(rng.next() % 3)]] = value.isEmpty ? nil : value
                    return f
                }
            case 7, 8: _ = try store.delete(id: id, ifVersion: nil, layout: layout, origin: origin)
            default: _ = try store.restore(id: id, layout: layout, origin: origin)
            }
        }
        let replayed = try store.replayChangeLog()
        let stored = try store.storedEntries()
        #expect(stored.count == ids.count)
        #expect(replayed == stored)
        store.close()
        // And after a restart, nothing changed.
        let reopened = try kind.open(db)
        defer { reopened.close() }
        #expect(try reopened.storedEntries() == stored)
        #expect(reopened.nodeID == store.nodeID)
    }

    @Test("the HLC never goes backwards when the wall clock does, across restarts", arguments: StoreKind.allCases)
    func clockMonotonic(kind: StoreKind) throws {
        let db = TestDatabase()
        let late: UInt64 = 1_800_000_000_000
        let store = try kind.open(db, wallClock: { late })
        let a = try store.create(form: "f", id: nil, fields: ["name": "a"], layout: layout, origin: origin).entry
        store.close()
        let early = try kind.open(db, wallClock: { late - 3_600_000 })
        defer { early.close() }
        let b = try early.create(form: "f", id: nil, fields: ["name": "b"], layout: layout, origin: origin).entry
        #expect(b.version > a.version)
    }

    @Test(
        "Status's HLC is the last committed stamp, local or observed, also when only local changes were made",
        arguments: StoreKind.allCases)
    func currentHLCReportsLocalStamps(kind: StoreKind) throws {
        let db = TestDatabase()
        let store = try kind.open(db)
        defer { store.close() }
        #expect(try store.currentHLC() == .zero)
        _ = try store.create(form: "f", id: nil, fields: ["name": "a"], layout: layout, origin: origin)
        let last = try store.create(form: "f", id: nil, fields: ["name": "b"], layout: layout, origin: origin).entry
        #expect(try store.currentHLC() == last.version)
    }

    @Test(
        "after a restart the HLC is past both its own last change and the last stamp it observed from a peer",
        arguments: StoreKind.allCases)
    func clockResumesPastObservedStamps(kind: StoreKind) throws {
        let db = TestDatabase()
        let now: UInt64 = 1_800_000_000_000
        let store = try kind.open(db, wallClock: { now })
        let own = try store.create(form: "f", id: nil, fields: ["name": "a"], layout: layout, origin: origin).entry
        // A peer's change stamped 30 s ahead (within the allowed skew) moves the clock past it.
        let ahead = HLC(milliseconds: now + 30_000, counter: 5)
        _ = try store.apply(
            [Self.remoteCreate(hlc: ahead, now: now)], via: "peer", layout: { _ in self.layout }, maxClockSkewMs: 60_000
        )
        store.close()
        let reopened = try kind.open(db, wallClock: { now })
        defer { reopened.close() }
        #expect(try reopened.currentHLC() == ahead)
        let next = try reopened.create(form: "f", id: nil, fields: ["name": "b"], layout: layout, origin: origin).entry
        #expect(next.version > ahead && next.version > own.version)
    }

    @Test(
        "concurrent writers: each write is stored once, and an invalid write fails alone", arguments: StoreKind.allCases
    )
    func concurrentWriters(kind: StoreKind) throws {
        let db = TestDatabase()
        let store = try kind.open(db)
        defer { store.close() }
        let writes = try Self.writeConcurrently(store, layout: layout, origin: origin)
        let stored = try store.storedEntries()
        #expect(stored.count == writes)
        #expect(try store.counts().seq == Int64(writes))
        #expect(store.commits.lastSeq == Int64(writes))
    }

    @Test(
        "List by name in pinyin order (zh) pages through every entry once, both ways; code-point order stays for en",
        arguments: StoreKind.allCases)
    func listByNameInPinyin(kind: StoreKind) throws {
        let db = TestDatabase()
        let store = try kind.open(db)
        defer { store.close() }
        let names = ["张三", "李四", "王五", "阿明", "赵六", "陈七", "长孙八", "Bob", "alice", "李四"]
        for name in names {
            _ = try store.create(form: "f", id: nil, fields: ["name": name], layout: layout, origin: origin)
        }
        func all(_ collation: NameCollation, descending: Bool, limit: Int) throws -> [String] {
            var query = ListQuery()
            query.order = .name
            query.nameCollation = collation
            query.descending = descending
            query.limit = limit
            var seen: [String] = []
            var ids = Set<String>()
            while true {
                let page = try store.list(query)
                for entry in page.entries { #expect(ids.insert(entry.id).inserted, "\(entry.id) twice") }
                seen += page.entries.map { $0.fields["name"] ?? "" }
                guard let next = page.next else { break }
                query.after = next
            }
            #expect(ids.count == names.count)
            return seen
        }
        // ICU zh (CLDR): Han by pinyin (a, chen, li, wang, zhang, zhang|sun, zhao), then Latin letters, case second.
        let pinyin = ["阿明", "陈七", "李四", "李四", "王五", "张三", "长孙八", "赵六", "alice", "Bob"]
        for limit in [1, 2, 3, 100] {
            #expect(try all(.pinyin, descending: false, limit: limit) == pinyin, "limit \(limit)")
            #expect(try all(.pinyin, descending: true, limit: limit) == pinyin.reversed(), "limit \(limit)")
        }
        #expect(
            try all(.codePoint, descending: false, limit: 3)
                == names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
    }

    @Test(
        "List totals equal a full count, through creates, moves between regions, deletes and restores",
        arguments: StoreKind.allCases)
    func listTotals(kind: StoreKind) throws {
        let db = TestDatabase()
        let store = try kind.open(db)
        defer { store.close() }
        let origin = WriteOrigin(actor: "t")
        var rng = SplitMix64(seed: 9)
        let regions = [
            ["country": "CN", "province": "440000", "city": "440100"],
            ["country": "CN", "province": "440000", "city": "440300"],
            ["country": "CN", "province": "330000", "city": "330100"], ["country": "US"],
        ]
        var ids: [String] = []
        for _ in 0..<300 {
            let region = regions[Int(rng.next() % 4)]
            switch rng.next() % 5 {
            case 0, 1:
                ids.append(
                    try store.create(
                        form: ["a", "b"][Int(rng.next() % 2)], id: nil, fields: region,
                        layout: .registration, origin: origin
                    ).entry.id)
            case 2 where !ids.isEmpty:
                _ = try store.update(
                    id: ids[Int(rng.next() % UInt64(ids.count))], ifVersion: nil, layout: .registration, origin: origin
                ) { cur in
                    var f = cur.fields
                    for k in ["country", "province", "city"] { f[k] = region[k] }
                    return f
                }
            case 3 where !ids.isEmpty:
                _ = try store.delete(
                    id: ids[Int(rng.next() % UInt64(ids.count))], ifVersion: nil, layout: .registration, origin: origin)
            case 4 where !ids.isEmpty:
                _ = try store.restore(
                    id: ids[Int(rng.next() % UInt64(ids.count))], layout: .registration, origin: origin)
            default: break
            }
        }
        let stored = try store.storedEntries()
        for form in [nil, "a"] as [String?] {
            for province in [nil, "440000", "330000"] as [String?] {
                for includeDeleted in [false, true] {
                    var q = ListQuery()
                    q.form = form
                    q.province = province
                    q.includeDeleted = includeDeleted
                    let expected = stored.filter { (_, e) in
                        (form == nil || e.form == form) && (province == nil || e.fields["province"] == province)
                            && (includeDeleted || !e.deleted)
                    }.count
                    #expect(
                        try store.list(q).total == expected,
                        "form \(form ?? "-") province \(province ?? "-") deleted \(includeDeleted)")
                }
            }
        }
    }

    /// A `create` change of a new entry made on node "peer" at `hlc`, its wall time `now`.
    static func remoteCreate(hlc: HLC, now: UInt64) -> ChangeRecord {
        ChangeRecord(
            seq: 0, node: "peer", hlc: hlc, entry: UUIDv7.generate(milliseconds: now), form: "f",
            op: .create, fields: ["name": "p"], base: ["name": ""], actor: "x",
            at: Timestamp.rfc3339(milliseconds: now), reason: nil, via: nil)
    }

    /// 16 threads write 25 times each at once: every fifth write an update of a
    /// missing entry, which must fail with `entryNotFound` and alone; the others
    /// creates, which must succeed.
    /// - Returns: the number of creates (320).
    static func writeConcurrently(_ store: EntryStore, layout: FieldLayout, origin: WriteOrigin) throws -> Int {
        // Real threads: concurrentPerform would run only as many as there are cores.
        let group = DispatchGroup()
        for client in 0..<16 {
            group.enter()
            Thread {
                defer { group.leave() }
                for i in 0..<25 {
                    if i % 5 == 4 {
                        #expect(throws: EntryError.entryNotFound("missing")) {
                            _ = try store.update(id: "missing", ifVersion: nil, layout: layout, origin: origin) {
                                $0.fields
                            }
                        }
                    } else {
                        #expect(throws: Never.self) {
                            _ = try store.create(
                                form: "f", id: nil, fields: ["name": "c\(client)-\(i)"], layout: layout, origin: origin)
                        }
                    }
                }
            }.start()
        }
        group.wait()
        return 16 * 25 * 4 / 5
    }
}

/// Migrations: from an empty file, and from each earlier schema version.
/// SQLite-specific: the schema and `PRAGMA user_version` of ``EntryStore``.
@Suite struct MigrationTests {
    @Test("a version-1 database with entries migrates to the latest; the kept counts match a full count")
    func fromVersionOne() throws {
        let db = TestDatabase()
        do {
            let c = try SQLiteConnection(path: db.path)
            try c.execute("BEGIN; " + Migrations.all[0] + "; PRAGMA user_version = 1; COMMIT;")
            for (i, deleted) in [0, 0, 1].enumerated() {
                try c.statement(
                    """
                    INSERT INTO entries (id, form, fields, clocks, version, deleted, created_at, updated_at, created_by, updated_by)
                    VALUES (?, 'f', '{}', '{}', '0000000000000000', ?, '', '', '', '')
                    """
                ).run([.text("e\(i)"), .int(Int64(deleted))])
            }
        }
        let store = try EntryStore(path: db.path)
        defer { store.close() }
        #expect(try store.counts().entries == 2 && store.counts().deleted == 1)
        let origin = WriteOrigin(actor: "t")
        let e = try store.create(form: "f", id: nil, fields: ["name": "x"], layout: .registration, origin: origin).entry
        _ = try store.delete(id: e.id, ifVersion: nil, layout: .registration, origin: origin)
        _ = try store.delete(id: "e0", ifVersion: nil, layout: .registration, origin: origin)
        _ = try store.restore(id: "e2", layout: .registration, origin: origin)
        let stored = try store.storedEntries()
        #expect(try store.counts().entries == stored.values.filter { !$0.deleted }.count)
        #expect(try store.counts().deleted == stored.values.filter(\.deleted).count)
    }

    @Test(
        "migration 5 (erase changes) keeps every change with its seq, and a seq given before, even one rolled back, is never given again"
    )
    func migrationFiveKeepsSeqs() throws {
        let db = TestDatabase()
        do {
            let c = try SQLiteConnection(path: db.path)
            try c.execute(
                "BEGIN; " + Migrations.all[0...3].joined(separator: ";\n") + "; PRAGMA user_version = 4; COMMIT;")
            for seq in [3, 7] {
                try c.statement(
                    """
                    INSERT INTO changes (seq, node, hlc, entry, form, op, fields, base, actor, at)
                    VALUES (?, 'n', ?, 'e', 'f', 'create', '{"name":"x"}', '{}', 'a', '2026-01-01T00:00:00.000Z')
                    """
                ).run([.int(Int64(seq)), .text(String(format: "%016x", seq))])
            }
            // A seq given and rolled back (or deleted): AUTOINCREMENT remembers it.
            try c.execute("UPDATE sqlite_sequence SET seq = 12 WHERE name = 'changes'")
        }
        let store = try EntryStore(path: db.path)
        defer { store.close() }
        #expect(store.schemaVersion >= 5)
        #expect(
            try store.changes(since: 0, limit: 10, excludeNode: nil, excludeSince: .zero).changes.map(\.seq) == [3, 7])
        let e = try store.create(
            form: "f", id: nil, fields: ["name": "y"], layout: .registration, origin: WriteOrigin(actor: "t"))
        #expect(e.entry.seq == 13)
        _ = try store.erase(id: e.entry.id, origin: WriteOrigin(actor: "t", reason: "r"))
        #expect(try store.history(e.entry.id).map(\.seq) == [14])
    }

    @Test(
        "migration 6 (compaction) keeps every peer with its checkpoints, none expired, and starts with nothing folded or acknowledged"
    )
    func migrationSixKeepsPeers() throws {
        let db = TestDatabase()
        do {
            let c = try SQLiteConnection(path: db.path)
            try c.execute(
                "BEGIN; " + Migrations.all[0...4].joined(separator: ";\n") + "; PRAGMA user_version = 5; COMMIT;")
            try c.statement(
                "INSERT INTO peers (name, address, node, pulled_seq, pushed_seq, last_sync) VALUES ('p', 'unix:/x', 'n', 4, 9, ?)"
            )
            .run([.text(Timestamp.rfc3339(milliseconds: HybridClock.systemMilliseconds()))])
        }
        let store = try EntryStore(path: db.path)
        defer { store.close() }
        #expect(store.schemaVersion == Migrations.all.count)
        let peer = try store.peerState("p")
        #expect(peer?.pulledSeq == 4 && peer?.pushedSeq == 9 && peer?.expired == nil && peer?.node == "n")
        #expect(try store.lastCompaction() == nil)
        let result = try store.compact(peerExpiryMs: 90 * 86_400_000, configured: [], layout: { _ in .registration })
        #expect(result.horizon == 9 && result.heldBackBy == "p" && result.removed == 0)
    }

    @Test("the pinyin order is plain SQLite: any sqlite3 checks and writes the file; keys rewritten for another ICU")
    func pinyinOrderIsPlainSQLite() throws {
        let db = TestDatabase()
        /// A connection without anything of entryd's: no collation, no function (as the sqlite3 shell).
        func plain(_ sql: String) throws -> [String] {
            var handle: OpaquePointer?
            guard sqlite3_open_v2(db.path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle else {
                throw SQLiteError(code: SQLITE_CANTOPEN, message: "open")
            }
            defer { sqlite3_close_v2(handle) }
            var rows: [String] = []
            var stmt: OpaquePointer?
            var rest = sql
            while !rest.isEmpty {
                var tail: UnsafePointer<CChar>?
                let rc = rest.withCString { sqlite3_prepare_v2(handle, $0, -1, &stmt, &tail) }
                guard rc == SQLITE_OK else {
                    throw SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)))
                }
                rest = rest.withCString { base in tail.map { String(cString: $0) } ?? "" }
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                guard let stmt else { continue }
                defer { sqlite3_finalize(stmt) }
                while sqlite3_step(stmt) == SQLITE_ROW { rows.append(String(cString: sqlite3_column_text(stmt, 0))) }
            }
            return rows
        }
        func names(_ store: EntryStore) throws -> [String?] {
            var query = ListQuery()
            query.order = .name
            query.nameCollation = .pinyin
            query.descending = false
            return try store.list(query).entries.map { $0.fields["name"] }
        }
        do {
            let store = try EntryStore(path: db.path)
            for name in ["赵六", "阿明", "陈伟"] {
                _ = try store.create(
                    form: "f", id: nil, fields: ["name": name], layout: .registration, origin: WriteOrigin(actor: "t"))
            }
            #expect(try names(store) == ["阿明", "陈伟", "赵六"])
            store.close()
        }
        // What failed with "no such collation sequence: pinyin" before migration 9.
        #expect(try plain("PRAGMA integrity_check") == ["ok"])
        #expect(try plain("SELECT COUNT(*) FROM entries") == ["3"])
        // Another tool writes a row and makes the recorded ICU version another one.
        _ = try plain(
            """
            UPDATE entries SET name = '白雪', fields = json_set(fields, '$.name', '白雪') WHERE name = '赵六';
            UPDATE node SET value = '1.0' WHERE key = 'pinyin_collation'
            """)
        #expect(try plain("PRAGMA integrity_check") == ["ok"])
        let store = try EntryStore(path: db.path)
        defer { store.close() }
        // At open every key is made again under the running ICU: 白 bai now sorts after 阿 a.
        #expect(try names(store) == ["阿明", "白雪", "陈伟"])
        #expect(try plain("SELECT value FROM node WHERE key = 'pinyin_collation'") == [PinyinCollation.version])
    }

    @Test("SQLite migration 9 gives each stored name its pinyin key and drops the index under the collation")
    func migrationNineKeys() throws {
        let db = TestDatabase()
        do {
            let c = try SQLiteConnection(path: db.path)
            // A database as migration 8 left it, with entries of its time.
            for version in 0..<8 { try c.execute(Migrations.all[version]) }
            try c.execute("PRAGMA user_version = 8")
            for (i, name) in ["赵六", "阿明", "陈伟"].enumerated() {
                try c.prepared(
                    """
                    INSERT INTO entries (id, form, fields, clocks, version, created_at, updated_at, created_by,
                      updated_by, name, name_folded)
                    VALUES (?, 'f', ?, '{}', '0000000000000001', '', '', 't', 't', ?, ?)
                    """
                ).run([
                    .text("00000000-0000-7000-8000-00000000000\(i)"), .text("{\"name\":\"\(name)\"}"), .text(name),
                    .text(name),
                ])
            }
        }
        let store = try EntryStore(path: db.path)
        defer { store.close() }
        var query = ListQuery()
        query.order = .name
        query.nameCollation = .pinyin
        query.descending = false
        #expect(try store.list(query).entries.map { $0.fields["name"] } == ["阿明", "陈伟", "赵六"])
        try store.readers.read { db in
            var index: [String] = []
            try db.statement("SELECT name FROM sqlite_schema WHERE name LIKE 'entries_by_name%' ORDER BY name")
                .query { index.append($0.text(0)) }
            #expect(index == ["entries_by_name", "entries_by_name_order"])
            var empty = -1
            try db.statement("SELECT COUNT(*) FROM entries WHERE name_order = x''").query { empty = Int($0.int(0)) }
            #expect(empty == 0)
        }
    }

    @Test("a database newer than this build is refused, and a failed migration leaves nothing behind")
    func refusals() throws {
        let db = TestDatabase()
        do {
            let c = try SQLiteConnection(path: db.path)
            try c.execute("PRAGMA user_version = 99")
        }
        #expect(throws: SQLiteError.self) { _ = try EntryStore(path: db.path) }
        let broken = TestDatabase()
        do {
            let c = try SQLiteConnection(path: broken.path)
            // A table in the way of migration 1: it fails, and user_version stays 0.
            try c.execute("CREATE TABLE entries (x)")
            #expect(throws: SQLiteError.self) { try Migrations.migrate(c) }
            #expect(try Migrations.userVersion(c) == 0)
            var tables = 0
            try c.statement("SELECT COUNT(*) FROM sqlite_master WHERE name = 'changes'").query {
                tables = Int($0.int(0))
            }
            #expect(tables == 0)
        }
    }
}

/// Who runs a round: the caller of a lone write, or the writer thread.
/// SQLite-specific: writer-queue internals of ``EntryStore`` (`store.writer`).
@Suite struct WriterThreadTests {
    @Test("a lone write runs on its caller's thread; one queued behind another runs on the writer thread")
    func loneWriteRunsInline() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path)
        defer { store.close() }
        let caller = pthread_self()
        let lone = try store.writer.enqueue { _ in pthread_self() }
        #expect(pthread_equal(try lone.wait(), caller) != 0)
        // Hold the queue busy from another thread, then queue behind it: the writer thread runs it.
        let running = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let helper = Thread {
            _ = try? store.writer.submit { _ in
                running.signal()
                release.wait()
            }
        }
        helper.start()
        running.wait()
        let ran = DispatchSemaphore(value: 0)
        let queued = try store.writer.enqueue { _ -> pthread_t in
            ran.signal()
            return pthread_self()
        }
        release.signal()
        ran.wait()  // not in wait(): this thread cannot be the one that runs it
        #expect(pthread_equal(try queued.wait(), caller) == 0)
    }

    @Test("a lone write whose caller has not waited yet is committed with the next write")
    func loneWriteTakenWithTheNext() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path)
        defer { store.close() }
        let origin = WriteOrigin(actor: "t")
        let first = try store.writer.enqueue { ctx in
            try ctx.create(form: "f", id: nil, fields: ["name": "a"], layout: .registration, origin: origin)
        }
        // Another thread's write wakes the writer thread, which takes both.
        let done = DispatchSemaphore(value: 0)
        Thread {
            _ = try? store.create(form: "f", id: nil, fields: ["name": "b"], layout: .registration, origin: origin)
            done.signal()
        }.start()
        done.wait()
        #expect(try store.counts().entries == 2)
        #expect(try first.wait().created)
    }

    @Test("stop while a caller runs a round: the writer thread still wakes, drains and stops")
    func stopDuringCallerRound() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path)
        let running = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let stopped = DispatchSemaphore(value: 0)
        let lone = try store.writer.enqueue(
            { _ in
                running.signal()
                release.wait()
            }, callerWaitsNext: true)
        Thread {
            running.wait()
            // Let the round end once stop() waits beside the writer thread.
            Thread {
                usleep(100_000)
                release.signal()
            }.start()
            store.writer.stop()
            stopped.signal()
        }.start()
        try lone.wait()  // this thread runs the round (RoundRunner.caller)
        let result = stopped.wait(timeout: .now() + 5)
        #expect(result == .success, "stop() still waiting 5 s after the caller's round ended")
        if result == .success { store.close() }  // a hung stop() would hang close() too
    }
}

/// Group commit on SQLite: concurrent writes share rounds, a job that fails in
/// a round fails alone, and what a round commits (seq, the observed clock)
/// survives. SQLite-specific: ``EntryStore``'s writer queue (`store.writer`),
/// its commit counter and its node table.
@Suite struct WriteRoundTests {
    @Test("concurrent writers share transactions (group commit)")
    func concurrentWritersShareTransactions() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path)
        defer { store.close() }
        let before = store.transactionsCommitted
        let writes = try StoreTests.writeConcurrently(
            store, layout: .registration, origin: WriteOrigin(actor: "tester"))
        #expect(try store.counts().seq == Int64(writes))
        #expect(store.transactionsCommitted - before < writes)
    }

    @Test("an Add's write ticket fits the inline buffer of `any PendingWrite`: no allocation per pipelined Add")
    func ticketFitsInline() {
        typealias Ticket = WriteTicket<(entry: StoredEntry, created: Bool)>
        // An existential keeps a value of at most three words inline (the Swift ABI's fixed-size buffer).
        #expect(MemoryLayout<Ticket>.size <= 3 * MemoryLayout<Int>.size)
        #expect(MemoryLayout<Ticket>.alignment <= MemoryLayout<Int>.alignment)
    }

    @Test("a stamp observed from a peer is kept in the node table; the stamps of local changes only in the change log")
    func observedStampInNodeTable() throws {
        let db = TestDatabase()
        let now: UInt64 = 1_800_000_000_000
        let layout = FieldLayout.registration
        let origin = WriteOrigin(actor: "tester")
        let store = try EntryStore(path: db.path, wallClock: { now })
        defer { store.close() }
        let ahead = HLC(milliseconds: now + 30_000, counter: 5)
        _ = try store.apply(
            [StoreTests.remoteCreate(hlc: ahead, now: now)], via: "peer", layout: { _ in layout },
            maxClockSkewMs: 60_000)
        let next = try store.create(form: "f", id: nil, fields: ["name": "b"], layout: layout, origin: origin).entry
        let stored = try store.readers.read { db -> HLC? in
            var value: HLC?
            try db.statement("SELECT value FROM node WHERE key = 'hlc'").query { value = HLC($0.text(0)) }
            return value
        }
        #expect(stored.map { $0 >= ahead && $0 < next.version } == true, "\(String(describing: stored))")
    }

    @Test("a peer's stamp observed in a round whose later job is undone is kept across a restart")
    func observedStampSurvivesUndoneNeighbour() throws {
        let db = TestDatabase()
        let now: UInt64 = 1_800_000_000_000
        let layout = FieldLayout.registration
        let origin = WriteOrigin(actor: "t")
        let store = try EntryStore(path: db.path, wallClock: { now })
        let ahead = HLC(milliseconds: now + 200_000, counter: 0)
        let remote = StoreTests.remoteCreate(hlc: ahead, now: now)
        // One round: the Apply, then a job that ticks the clock, writes and is undone.
        let running = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let blocker = try store.writer.enqueue { _ in
            running.signal()
            release.wait()
        }
        running.wait()
        let applied = DispatchSemaphore(value: 0)
        Thread {
            _ = try? store.apply([remote], via: "peer", layout: { _ in layout }, maxClockSkewMs: 300_000)
            applied.signal()
        }.start()
        while store.writer.queuedJobs < 1 { usleep(1_000) }
        let undone = try store.writer.enqueue { ctx -> Void in
            _ = try ctx.create(form: "f", id: nil, fields: ["name": "u"], layout: layout, origin: origin)
            throw EntryError.validationFailed([])
        }
        release.signal()
        try blocker.wait()
        applied.wait()
        #expect(throws: EntryError.validationFailed([])) { try undone.wait() }
        store.close()
        let reopened = try EntryStore(path: db.path, wallClock: { now })
        defer { reopened.close() }
        let next = try reopened.create(form: "f", id: nil, fields: ["name": "n"], layout: layout, origin: origin).entry
        #expect(next.version > ahead, "\(next.version) after observing \(ahead)")
    }

    @Test("a job rolled back beside a committed one leaves no phantom seq for Changes streams to chase")
    func rolledBackJobLeavesNoPhantomSeq() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path)
        defer { store.close() }
        let origin = WriteOrigin(actor: "t")
        // Hold the writer busy so that the next two jobs share one group transaction.
        let blocker = try store.writer.enqueue { _ in usleep(200_000) }
        let good = try store.writer.enqueue { ctx in
            try ctx.create(form: "f", id: nil, fields: ["name": "a"], layout: .registration, origin: origin)
        }
        let bad = try store.writer.enqueue { ctx -> Void in
            _ = try ctx.create(form: "f", id: nil, fields: ["name": "b"], layout: .registration, origin: origin)
            throw EntryError.validationFailed([])
        }
        _ = try blocker.wait()
        _ = try good.wait()
        #expect(throws: EntryError.validationFailed([])) { try bad.wait() }
        #expect(store.commits.lastSeq == (try store.counts().seq))
        #expect(try store.counts().seq == 1)
        // The bad job wrote before it threw: its round was run again with a savepoint per job.
        #expect(store.writer.savepointRounds == 1)
        #expect(try store.storedEntries().values.map { $0.fields["name"] } == ["a"])
    }

    @Test(
        "a job that fails before writing is dropped from its round; its neighbours commit in one transaction without savepoints"
    )
    func failureBeforeWriteFailsAlone() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path)
        defer { store.close() }
        let origin = WriteOrigin(actor: "t")
        let existing = try store.create(
            form: "f", id: nil, fields: ["name": "x"], layout: .registration, origin: origin
        ).entry
        let commitsBefore = store.transactionsCommitted
        // Hold the writer busy (in a round of its own) so that the next three jobs share one round.
        let running = DispatchSemaphore(value: 0)
        let blocker = try store.writer.enqueue { _ in
            running.signal()
            usleep(200_000)
        }
        running.wait()
        let first = try store.writer.enqueue { ctx in
            try ctx.create(form: "f", id: nil, fields: ["name": "a"], layout: .registration, origin: origin)
        }
        // Another entry's id with other values: EntryExists, found before anything is written.
        let clash = try store.writer.enqueue { ctx in
            try ctx.create(form: "f", id: existing.id, fields: ["name": "other"], layout: .registration, origin: origin)
        }
        let second = try store.writer.enqueue { ctx in
            try ctx.create(form: "f", id: nil, fields: ["name": "b"], layout: .registration, origin: origin)
        }
        try blocker.wait()
        #expect(try first.wait().created)
        #expect(throws: EntryError.entryExists(existing.id)) { try clash.wait() }
        #expect(try second.wait().created)
        #expect(store.writer.savepointRounds == 0)
        #expect(store.transactionsCommitted - commitsBefore == 2)  // the blocker's round and theirs
        #expect(try store.counts().seq == 3)
        let names = try store.storedEntries().values.compactMap { $0.fields["name"] }.sorted()
        #expect(names == ["a", "b", "x"])
    }
}
