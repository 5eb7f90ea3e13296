import Foundation
import Synchronization
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryHub

/// The search keys in the store (issue 33 items 3 and 7): kept with every
/// write of an entry, searched by prefix, looked up exactly, removed by an
/// erasure, and rebuilt when the versions that made them change; on SQLite
/// and on PostgreSQL.
@Suite struct SearchStoreTests {
    let origin = WriteOrigin(actor: "t")

    /// Names of the entries `search` finds, sorted, and the page's total.
    func found(_ store: EntryStore, _ search: String, includeDeleted: Bool = false) throws -> ([String], Int) {
        var query = ListQuery()
        query.search = try SearchKeys.prefixes(forQuery: search)
        query.includeDeleted = includeDeleted
        let page = try store.list(query)
        return (page.entries.map { $0.fields["name"] ?? "" }.sorted(), page.total)
    }

    /// Creates the people the tests search for; returns their ids by name.
    func seed(_ store: EntryStore) throws -> [String: String] {
        let people: [[String: String]] = [
            ["name": "黃志明", "phone": "+8613612345678", "birthday": "1990-05-17", "email": "zm@example.com"],
            ["name": "黄小明", "phone": "+8613987654321"],
            ["name": "Anna Smith", "phone": "+447911123456", "email": "Anna.Smith@Example.org"],
            ["name": "John Smithers", "phone": "+12025550123"],
        ]
        var ids: [String: String] = [:]
        for fields in people {
            let entry = try store.create(
                form: "registration", id: nil, fields: fields, layout: .registration, origin: origin)
            ids[fields["name"]!] = entry.entry.id
        }
        return ids
    }

    @Test(
        "search by name (Traditional, Simplified, pinyin, initials, a word), phone, e-mail; totals",
        arguments: StoreKind.allCases)
    func search(kind: StoreKind) throws {
        let place = TestDatabase()
        let store = try kind.open(place)
        defer { store.close() }
        _ = try seed(store)
        #expect(try found(store, "黄志明") == (["黃志明"], 1))
        #expect(try found(store, "黃志明") == (["黃志明"], 1))
        #expect(try found(store, "志明") == (["黃志明"], 1))
        #expect(try found(store, "明") == (["黃志明", "黄小明"], 2))
        #expect(try found(store, "黄") == (["黃志明", "黄小明"], 2))
        #expect(try found(store, "huangzhiming") == (["黃志明"], 1))
        #expect(try found(store, "Huang Zhi") == (["黃志明"], 1))
        #expect(try found(store, "xiaoming") == (["黄小明"], 1))
        #expect(try found(store, "hzm") == (["黃志明"], 1))
        #expect(try found(store, "smith") == (["Anna Smith", "John Smithers"], 2))
        #expect(try found(store, "ＡＮＮＡ") == (["Anna Smith"], 1))
        #expect(try found(store, "+86 136 1234 5678") == (["黃志明"], 1))
        #expect(try found(store, "136-1234-5678") == (["黃志明"], 1))
        #expect(try found(store, "008613612345678") == (["黃志明"], 1))
        #expect(try found(store, "07911 123456") == (["Anna Smith"], 1))
        #expect(try found(store, "+44 7911 123456") == (["Anna Smith"], 1))
        #expect(try found(store, "(202) 555-0123") == (["John Smithers"], 1))
        #expect(try found(store, "anna.smith@") == (["Anna Smith"], 1))
        #expect(try found(store, "nobody") == ([], 0))
        #expect(try found(store, "999") == ([], 0))
    }

    @Test("keys follow every write: update, delete, restore, erase", arguments: StoreKind.allCases)
    func keysFollowWrites(kind: StoreKind) throws {
        let place = TestDatabase()
        let store = try kind.open(place)
        defer { store.close() }
        let ids = try seed(store)
        let id = ids["黃志明"]!
        _ = try store.update(id: id, ifVersion: nil, layout: .registration, origin: origin) {
            $0.fields.merging(["name": "王志明", "phone": "+8613700001111"]) { $1 }
        }
        #expect(try found(store, "黄志明").1 == 0)
        #expect(try found(store, "wangzhiming") == (["王志明"], 1))
        #expect(try found(store, "13612345678").1 == 0)
        #expect(try found(store, "137 0000 1111") == (["王志明"], 1))
        _ = try store.delete(id: id, ifVersion: nil, layout: .registration, origin: origin)
        #expect(try found(store, "王志明").1 == 0)
        #expect(try found(store, "王志明", includeDeleted: true).1 == 1)
        _ = try store.restore(id: id, layout: .registration, origin: origin)
        #expect(try found(store, "王志明").1 == 1)
        #expect(!(try store.storedKeys(of: id)).isEmpty)
        _ = try store.erase(id: id, origin: WriteOrigin(actor: "t", reason: "asked to be forgotten"))
        #expect(try store.storedKeys(of: id) == [])
        #expect(try found(store, "王志明", includeDeleted: true).1 == 0)
    }

    @Test("exact-key lookup for duplicates: live entries only, the given one left out", arguments: StoreKind.allCases)
    func exactLookup(kind: StoreKind) throws {
        let place = TestDatabase()
        let store = try kind.open(place)
        defer { store.close() }
        let ids = try seed(store)
        let candidate = ["name": "黄志明", "birthday": "1990-05-17", "phone": "+8613612345678", "email": "ZM@example.com"]
        let keys = SearchKeys.duplicateKeys(fields: candidate, layout: .registration)
        let hits = try store.entries(withAnyKey: keys, excluding: nil)
        #expect(hits.count == 1)
        #expect(hits.first?.id == ids["黃志明"])
        #expect(hits.first?.keys == keys)
        #expect(try store.entries(withAnyKey: keys, excluding: ids["黃志明"]).isEmpty)
        // A prefix is no exact key.
        #expect(try store.entries(withAnyKey: ["t:86136"], excluding: nil).isEmpty)
        _ = try store.delete(id: ids["黃志明"]!, ifVersion: nil, layout: .registration, origin: origin)
        #expect(try store.entries(withAnyKey: keys, excluding: nil).isEmpty)
    }

    @Test("other versions recorded: the keys are rebuilt at open, before serving", arguments: StoreKind.allCases)
    func rebuildOnVersionChange(kind: StoreKind) throws {
        let place = TestDatabase()
        var store = try kind.open(place)
        let ids = try seed(store)
        // A new database: nothing recorded, nothing to rebuild.
        #expect(store.keysRebuilt?.entries == 0)
        #expect(store.keysRebuilt?.reason == "none recorded, now \(SearchKeys.versions)")
        let id = ids["黃志明"]!
        let before = try store.storedKeys(of: id)
        // Older libraries made other keys: a stale key, a missing one, an orphan.
        try store.writer.perform { db in
            try db.statement("UPDATE node SET value = 'keys 0, icu 1.0, phonenumber 0.1' WHERE key = 'search_keys'")
                .run()
            try db.statement("DELETE FROM entry_keys WHERE key = 's:huangzhiming'").run()
            try db.statement("INSERT INTO entry_keys (key, entry) VALUES ('s:stale', ?), ('s:orphan', 'gone')")
                .run([.text(id)])
        }
        store.close()
        store = try kind.open(place)
        defer { store.close() }
        #expect(store.keysRebuilt?.entries == 4)
        #expect(store.keysRebuilt?.reason.hasPrefix("made by keys 0, icu 1.0, phonenumber 0.1") == true)
        #expect(try store.storedKeys(of: id) == before)
        #expect(try store.storedKeys(of: "gone") == [])
        #expect(try found(store, "huangzhiming").1 == 1)
        store.close()
        let again = try kind.open(place)
        defer { again.close() }
        #expect(again.keysRebuilt == nil)
        _ = ids
    }

    @Test(
        "derived data is personal data: an erasure removes the keys, and VerifyErasure looks for the derived forms",
        arguments: StoreKind.allCases)
    func erasureLeavesNoDerivedForm(kind: StoreKind) throws {
        let place = TestDatabase()
        let store = try kind.open(place)
        defer { store.close() }
        let ids = try seed(store)
        let id = ids["黃志明"]!
        // Only the keys hold these forms (the fields hold 黃志明 and +8613612345678):
        // VerifyErasure finds them before the erasure.
        for derived in ["huangzhiming", "黄志明"] {
            let before = try store.verifyErasure(id: id, values: [derived])
            #expect(before.files.contains { $0.hits > 0 }, "\(derived): \(before.files)")
        }
        #expect(SearchKeys.derivedForms(of: "黃志明") == ["huangzhiming", "黄志明"])
        #expect(SearchKeys.derivedForms(of: "+8613612345678") == ["13612345678", "8613612345678"])
        _ = try store.erase(id: id, origin: WriteOrigin(actor: "admin", reason: "PIPL art. 47"))
        #expect(store.waitForPurge())  // the purge after the erasure (SQLite) has ended
        let after = try store.verifyErasure(id: id, values: ["黃志明", "+8613612345678", "zm@example.com"])
        #expect(after.payloadRows == 0)
        #expect(after.files.allSatisfy { $0.hits == 0 }, "\(after.files)")
        if kind == .sqlite {
            // Every file of the node, byte by byte: no folded name, pinyin or national number.
            let needles = Set(["黄志明", "huangzhiming", "13612345678", "8613612345678"].map { Array($0.utf8) })
            for file in try FileManager.default.contentsOfDirectory(atPath: place.directory) {
                #expect(ByteScan.count(needles, in: place.directory + "/" + file) == 0, "\(file)")
            }
        }
        // The others keep theirs.
        #expect(try found(store, "黄小明") == (["黄小明"], 1))
    }

    @Test("a rebuild cut short resumes after the last batch it committed, and tells its progress")
    func rebuildResumes() throws {
        let place = TestDatabase()
        var store = try EntryStore(path: place.path)
        let ids = try seed(store).values.sorted()
        let (done, rest) = (ids[1], ids[2])
        let missing = try store.storedKeys(of: rest).first!
        try store.writer.perform { db in
            try db.statement("UPDATE node SET value = 'keys 0, icu 1.0, phonenumber 0.1' WHERE key = 'search_keys'")
                .run()
            try db.statement("INSERT INTO node (key, value) VALUES ('search_keys_rebuild', ?)").run([
                .text(SearchKeys.versions + "\t" + done)
            ])
            try db.statement("DELETE FROM entry_keys WHERE key = ? AND entry = ?").run([.text(missing), .text(rest)])
        }
        store.close()
        let told = Mutex<[Int]>([])
        store = try EntryStore(path: place.path, rebuilding: { n in told.withLock { $0.append(n) } })
        defer { store.close() }
        #expect(store.keysRebuilt?.entries == 2, "only the entries after \(done)")
        #expect(store.keysRebuilt?.reason.hasSuffix("resumed after entry \(done)") == true)
        #expect(told.withLock { $0 } == [2])
        #expect(try store.storedKeys(of: rest).contains(missing))
        let left = try store.readers.read { db in
            var n = 0
            try db.statement("SELECT COUNT(*) FROM node WHERE key = 'search_keys_rebuild'").query { n = Int($0.int(0)) }
            return n
        }
        #expect(left == 0)
    }

    @Test("on PostgreSQL a search collects the matching ids first and reads each entry by its primary key")
    func postgresPlan() throws {
        let place = TestDatabase()
        let store = try StoreKind.postgres.open(place)
        defer { store.close() }
        _ = try seed(store)
        var query = ListQuery()
        query.search = try SearchKeys.prefixes(forQuery: "136-1234-5678")
        let sql = EntryStore.listSQL(query, onServer: true)
        #expect(sql.page.contains("id = ANY(ARRAY(SELECT DISTINCT entry FROM entry_keys WHERE"))
        for (text, values) in [(sql.page, sql.pageValues), (sql.count, sql.countValues)] {
            let plan = try store.readers.read { db -> [String] in
                // A table of four rows is read whole whatever the query; the planner
                // must still be able to drive by the keys and the primary key.
                try db.execute("SET LOCAL enable_seqscan = off")
                var lines: [String] = []
                try db.statement("EXPLAIN " + text).query(values) { lines.append($0.text(0)) }
                return lines
            }
            let joined = plan.joined(separator: "\n")
            #expect(
                joined.contains("Index Scan on entries_pkey") || joined.contains("Index Scan using entries_pkey"),
                "\(joined)")
            #expect(joined.contains("(id = ANY ($0))"), "\(joined)")
            #expect(joined.contains("entry_keys_pkey"), "\(joined)")
            #expect(!joined.contains("Hash Join"), "\(joined)")
        }
        #expect(try store.list(query).total == 1)
    }

    @Test("SQLite migration 8 adds the keys table and the open fills it for the stored entries")
    func migrationFillsKeys() throws {
        let db = TestDatabase()
        do {
            // Entries stored by this build, then taken back to schema 7 (no keys).
            let store = try EntryStore(path: db.path)
            _ = try seed(store)
            store.close()
            let c = try SQLiteConnection(path: db.path)
            try c.execute(
                """
                BEGIN; DROP INDEX entries_by_name_order; ALTER TABLE entries DROP COLUMN name_order;
                CREATE INDEX entries_by_name_pinyin ON entries (name COLLATE pinyin, id);
                DROP TABLE entry_keys; DELETE FROM node WHERE key = 'search_keys';
                PRAGMA user_version = 7; COMMIT;
                """)
        }
        let store = try EntryStore(path: db.path)
        defer { store.close() }
        #expect(store.schemaVersion == 9)
        #expect(store.keysRebuilt?.entries == 4)
        #expect(try found(store, "黃志明") == (["黃志明"], 1))
        #expect(try found(store, "+1 202 555 0123") == (["John Smithers"], 1))
    }

    @Test(
        "applied changes keep the keys: a new entry gets them, an edit of other fields keeps them, a new name replaces them",
        arguments: StoreKind.allCases)
    func appliedChangesKeepKeys(kind: StoreKind) throws {
        let place = TestDatabase()
        let store = try kind.open(place)
        defer { store.close() }
        let node = UUIDv7.generate()
        let entry = UUIDv7.generate()
        var clock = HybridClock()
        func change(_ op: ChangeOp, _ fields: [String: String], base: [String: String]) -> ChangeRecord {
            let hlc = clock.tick()
            return ChangeRecord(
                seq: 0, node: node, hlc: hlc, entry: entry, form: "registration", op: op, fields: fields, base: base,
                actor: "peer", at: Timestamp.rfc3339(milliseconds: hlc.milliseconds), reason: nil, via: nil)
        }
        let create = change(.create, ["name": "黃志明", "phone": "+8613612345678", "city": "x"], base: [:])
        _ = try store.apply([create], via: "p", layout: { _ in .registration }, maxClockSkewMs: 60_000)
        let made = try store.storedKeys(of: entry)
        #expect(made == SearchKeys.keys(fields: create.fields, layout: .registration))
        #expect(made.contains("s:huangzhiming"))
        // Another field: the keys stand as they are.
        _ = try store.apply(
            [change(.update, ["city": "y"], base: ["city": create.hlc.description])], via: "p",
            layout: { _ in .registration }, maxClockSkewMs: 60_000)
        #expect(try store.storedKeys(of: entry) == made)
        // A new name (in the same change as another field): the name's keys follow it.
        _ = try store.apply(
            [change(.update, ["name": "Anna", "city": "z"], base: ["name": create.hlc.description])], via: "p",
            layout: { _ in .registration }, maxClockSkewMs: 60_000)
        let renamed = try store.storedKeys(of: entry)
        #expect(renamed == SearchKeys.keys(fields: ["name": "Anna", "phone": "+8613612345678"], layout: .registration))
        #expect(try found(store, "anna") == (["Anna"], 1) && found(store, "huangzhiming").1 == 0)
    }
}
