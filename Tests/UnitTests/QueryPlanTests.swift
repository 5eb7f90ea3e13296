import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// Query plans (EXPLAIN QUERY PLAN) of List and Changes on entryd's schema:
/// pages come from an index, never from a scan of the whole table, so a page
/// costs the same at 1,000 and at 1,000,000 entries (issue 6).
///
/// Unavoidable exceptions, documented in BENCHMARKS.md: the `text` filter
/// (a substring of the name) is checked row by row while an index walks the
/// sort order; and `total` counts every match, so a count without an indexed
/// filter reads the whole table.
@Suite struct QueryPlanTests {
    /// The plan lines (`detail` column) of `sql`.
    static func plan(_ db: SQLiteConnection, _ sql: String, _ values: [SQLValue]) throws -> [String] {
        var lines: [String] = []
        try db.statement("EXPLAIN QUERY PLAN " + sql).query(values) { lines.append($0.text(3)) }
        return lines
    }

    /// A store with some rows and fresh statistics (`ANALYZE`), as a daemon's would be after `PRAGMA optimize`.
    static func database() throws -> (TestDatabase, EntryStore) {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path)
        let origin = WriteOrigin(actor: "t")
        for i in 0..<200 {
            let fields = [
                "name": "n\(i)", "birthday": "19\(50 + i % 50)-01-01", "country": i % 3 == 0 ? "CN" : "US",
                "province": i % 3 == 0 ? "440000" : "", "city": i % 3 == 0 ? "440100" : "",
                "appointment": i % 2 == 0 ? "2027-01-\(10 + i % 20) \(10 + i % 8):30" : "",
            ]
            _ = try store.create(form: "registration", id: nil, fields: fields, layout: .registration, origin: origin)
        }
        return (db, store)
    }

    /// Every subset of the filters.
    static let filterSets: [[String]] = {
        let all = [
            "form", "country", "province", "city", "bornFrom", "bornTo", "text", "updatedSince", "appointment",
        ]
        return (0..<(1 << all.count)).map { mask in all.indices.filter { mask & (1 << $0) != 0 }.map { all[$0] } }
    }()

    static func query(
        _ filters: [String], order: ListOrder, descending: Bool, cursor: Bool,
        collation: NameCollation = .codePoint
    ) -> ListQuery {
        var q = ListQuery()
        for f in filters {
            switch f {
            case "form": q.form = "registration"
            case "country": q.country = "CN"
            case "province": q.province = "440000"
            case "city": q.city = "440100"
            case "bornFrom": q.bornFrom = "1960-01-01"
            case "bornTo": q.bornTo = "1990-01-01"
            case "text": q.text = "n1"
            case "appointment":
                q.appointmentFrom = "2027-01-12 00:00"
                q.appointmentTo = "2027-01-12 23:59"
            default: q.updatedSince = "2020-01-01T00:00:00.000Z"
            }
        }
        q.order = order
        q.nameCollation = collation
        q.descending = descending
        q.limit = 50
        if cursor { q.after = ("2026-01-01", "00000000-0000-7000-8000-000000000000") }
        return q
    }

    @Test("every List filter, order, direction and cursor combination reads its page through an index")
    func listPagesUseIndexes() throws {
        let (db, store) = try Self.database()
        defer {
            store.close()
            _ = db
        }
        let conn = try SQLiteConnection(path: db.path, readOnly: true)
        var combinations = 0
        for filters in Self.filterSets {
            for (order, collation) in ListOrder.allCases.map({ ($0, NameCollation.codePoint) }) + [(.name, .pinyin)] {
                for descending in [false, true] {
                    for cursor in [false, true] {
                        let sql = EntryStore.listSQL(
                            Self.query(
                                filters, order: order, descending: descending, cursor: cursor,
                                collation: collation))
                        let plan = try Self.plan(conn, sql.page, sql.pageValues)
                        combinations += 1
                        // A bare "SCAN entries" walks the whole table in key order.
                        #expect(
                            !plan.contains("SCAN entries"),
                            "\(filters) \(order) desc=\(descending) cursor=\(cursor): \(plan)")
                        #expect(
                            plan.contains { $0.contains("USING INDEX") || $0.contains("USING COVERING INDEX") },
                            "\(filters) \(order): \(plan)")
                        // With only equality filters on the region columns, ordered by
                        // created, the index delivers rows in page order: no sort of all matches.
                        if order == .created, Set(filters).isSubset(of: ["country", "province", "city"]) {
                            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(filters) \(order): \(plan)")
                        }
                    }
                }
            }
        }
        #expect(combinations == 512 * 6 * 2 * 2)
    }

    @Test("List by name in pinyin order (zh) walks the pinyin index in page order, with and without a cursor")
    func pinyinOrderUsesItsIndex() throws {
        let (db, store) = try Self.database()
        defer {
            store.close()
            _ = db
        }
        let conn = try SQLiteConnection(path: db.path, readOnly: true)
        for descending in [false, true] {
            for cursor in [false, true] {
                let sql = EntryStore.listSQL(
                    Self.query([], order: .name, descending: descending, cursor: cursor, collation: .pinyin))
                let plan = try Self.plan(conn, sql.page, sql.pageValues)
                #expect(plan.contains { $0.contains("INDEX entries_by_name_order") }, "\(plan)")
                #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
            }
        }
    }

    @Test("a day's appointments in time order: a range of the appointment index, in page order, no sort")
    func appointmentDayWalksItsIndex() throws {
        let (db, store) = try Self.database()
        defer {
            store.close()
            _ = db
        }
        let conn = try SQLiteConnection(path: db.path, readOnly: true)
        for descending in [false, true] {
            for cursor in [false, true] {
                for form in [false, true] {
                    let sql = EntryStore.listSQL(
                        Self.query(
                            form ? ["appointment", "form"] : ["appointment"], order: .appointment,
                            descending: descending, cursor: cursor))
                    let plan = try Self.plan(conn, sql.page, sql.pageValues)
                    #expect(
                        plan.contains {
                            $0.hasPrefix(
                                "SEARCH entries USING INDEX entries_by_appointment (appointment>? AND appointment<?)")
                        },
                        "desc=\(descending) cursor=\(cursor): \(plan)")
                    #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
                    let count = try Self.plan(conn, sql.count, sql.countValues)
                    #expect(count.contains { $0.contains("entries_by_appointment") }, "\(count)")
                }
            }
        }
    }

    @Test("a search reads its keys' range of entry_keys, then each entry by its key, in every order and for the total")
    func searchReadsKeyRanges() throws {
        let (db, store) = try Self.database()
        defer {
            store.close()
            _ = db
        }
        let conn = try SQLiteConnection(path: db.path, readOnly: true)
        for prefixes in [["s:n1"], ["t:13612345678", "t:013612345678"]] {
            for (order, collation) in ListOrder.allCases.map({ ($0, NameCollation.codePoint) }) + [(.name, .pinyin)] {
                for cursor in [false, true] {
                    for filters in [[], ["form", "country"], ["bornFrom"]] {
                        var q = Self.query(
                            filters, order: order, descending: true, cursor: cursor, collation: collation)
                        q.search = prefixes
                        let sql = EntryStore.listSQL(q)
                        let plan = try Self.plan(conn, sql.page, sql.pageValues)
                        #expect(
                            plan.contains { $0.hasPrefix("SEARCH entry_keys USING PRIMARY KEY (key>? AND key<?)") },
                            "\(prefixes) \(order) \(filters): \(plan)")
                        #expect(
                            plan.contains { $0.hasPrefix("SEARCH entries USING PRIMARY KEY (id=?)") }
                                && plan.firstIndex { $0.contains("entry_keys") }!
                                    < plan.firstIndex { $0.hasPrefix("SEARCH entries") }!,
                            "\(prefixes) \(order) \(filters): \(plan)")
                        #expect(!plan.contains { $0.hasPrefix("SCAN entries") }, "\(order) \(filters): \(plan)")
                        let count = try Self.plan(conn, sql.count, sql.countValues)
                        #expect(
                            count.contains { $0.hasPrefix("SEARCH entry_keys USING PRIMARY KEY (key>? AND key<?)") },
                            "\(count)")
                        #expect(!count.contains { $0.hasPrefix("SCAN entries") }, "\(count)")
                    }
                }
            }
        }
    }

    @Test("List totals use an index whenever a filter can; without one the count reads the table (documented)")
    func listCountsUseIndexesWhenTheyCan() throws {
        let (db, store) = try Self.database()
        defer {
            store.close()
            _ = db
        }
        let conn = try SQLiteConnection(path: db.path, readOnly: true)
        let indexed: Set<String> = [
            "country", "province", "city", "bornFrom", "bornTo", "updatedSince", "appointment",
        ]
        for filters in Self.filterSets {
            let sql = EntryStore.listSQL(Self.query(filters, order: .created, descending: true, cursor: false))
            let plan = try Self.plan(conn, sql.count, sql.countValues)
            if Set(filters).isSubset(of: ["form", "country", "province", "city"]) {
                // Region totals come from the kept counts, never from entries.
                #expect(plan.allSatisfy { $0.contains("entry_counts") }, "\(filters): \(plan)")
            } else if !indexed.isDisjoint(with: filters) {
                #expect(plan.contains { $0.hasPrefix("SEARCH entries USING") }, "\(filters): \(plan)")
            }
        }
    }

    @Test("Changes and History read the change log through its key and index")
    func changesUseIndexes() throws {
        let (db, store) = try Self.database()
        defer {
            store.close()
            _ = db
        }
        let conn = try SQLiteConnection(path: db.path, readOnly: true)
        let changes = try Self.plan(
            conn, "SELECT \(EntryStore.changeColumns) FROM changes WHERE seq > ? ORDER BY seq LIMIT ?",
            [.int(10), .int(100)])
        #expect(changes.count == 1 && changes[0].hasPrefix("SEARCH changes USING INTEGER PRIMARY KEY"), "\(changes)")
        let history = try Self.plan(
            conn, "SELECT \(EntryStore.changeColumns) FROM changes WHERE entry = ? ORDER BY seq",
            [.text("x")])
        #expect(history.count == 1 && history[0].hasPrefix("SEARCH changes USING INDEX changes_by_entry"), "\(history)")
        let get = try Self.plan(conn, WriteContext.selectEntry, [.text("x")])
        #expect(get.count == 1 && get[0].hasPrefix("SEARCH entries USING PRIMARY KEY"), "\(get)")
        // The clock's last local stamp at open: one seek in UNIQUE (node, hlc).
        let clock = try Self.plan(conn, "SELECT MAX(hlc) FROM changes WHERE node = ?", [.text("n")])
        #expect(clock.count == 1 && clock[0].hasPrefix("SEARCH changes USING COVERING INDEX"), "\(clock)")
    }
}
