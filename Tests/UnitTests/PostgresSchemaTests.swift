import Foundation
import Testing
@testable import EntryHub
import EntryModel

/// `PostgresSchema`: numbered migrations, once, from any number of instances.
@Suite struct PostgresSchemaTests {
    @Test(
        "migration 3: ANALYZE keeps no sample of a personal value in pg_statistic, and the samples taken before it are gone"
    )
    func noSampledValues() throws {
        let db = try TestPostgresDatabase()
        let c = try db.connect()
        try PostgresSchema.migrate(c, to: 2)
        try c.execute(
            """
            INSERT INTO entries (id, form, fields, clocks, version, created_at, updated_at, created_by, updated_by, name, birthday, country)
            SELECT 'e' || i, 'f', '{"name":"样本名字Qx"}', '{}', '1', 'x', 'x', 'u', 'u', '样本名字Qx', '1990-01-02', 'CN'
            FROM generate_series(1, 200) AS i
            """)
        try c.execute("ANALYZE entries")
        let sampled =
            "SELECT attname FROM pg_stats WHERE tablename = 'entries' AND attname IN ('fields', 'name', 'name_folded', 'birthday', 'country') ORDER BY attname"
        #expect(
            try c.execute(sampled).rows == [["birthday"], ["country"], ["fields"], ["name"], ["name_folded"]],
            "schema 2 samples them")
        #expect(
            try c.execute(
                "SELECT most_common_vals::text FROM pg_stats WHERE tablename = 'entries' AND attname = 'name'"
            ).rows
                == [["{样本名字Qx}"]])
        try PostgresSchema.migrate(c)
        #expect(try c.execute(sampled).rows == [["country"]], "the samples taken before are gone")
        try c.execute("ANALYZE")
        #expect(try c.execute(sampled).rows == [["country"]], "and ANALYZE takes none")
        #expect(
            try c.execute(
                "SELECT count(*) FROM pg_stats WHERE tablename IN ('changes', 'conflicts') AND attname IN ('fields', 'kept', 'lost', 'lost_group')"
            ).rows == [["0"]])
    }

    @Test("migrations apply once, are idempotent, and concurrent instances migrate once")
    func migrate() throws {
        let db = try TestPostgresDatabase()
        let c = try db.connect()
        #expect(try PostgresSchema.version(c) == 0)
        #expect(try PostgresSchema.migrate(c) == 0)
        #expect(try PostgresSchema.version(c) == PostgresSchema.all.count)
        #expect(try PostgresSchema.migrate(c) == PostgresSchema.all.count)
        for table in [
            "node", "entries", "entry_counts", "changes", "change_counter", "conflicts", "peers", "peer_acks",
            "erasures", "folded", "compacted", "schema_version",
        ] {
            #expect(try c.execute("SELECT to_regclass($1) IS NOT NULL", [table]).rows == [["t"]], "\(table)")
        }
        #expect(try c.execute("SELECT seq FROM change_counter").rows == [["0"]])
        // The counts trigger, as SQLite's.
        try c.execute(
            """
            INSERT INTO entries (id, form, fields, clocks, version, created_at, updated_at, created_by, updated_by, country)
            VALUES ('a', 'f', '{}', '{}', '1', 'x', 'x', 'u', 'u', 'CN'), ('b', 'f', '{}', '{}', '1', 'x', 'x', 'u', 'u', 'CN')
            """)
        try c.execute("UPDATE entries SET deleted = 1 WHERE id = 'a'")
        #expect(
            try c.execute("SELECT deleted, n FROM entry_counts WHERE n > 0 ORDER BY deleted").rows == [
                ["0", "1"], ["1", "1"],
            ])

        // Four instances starting at once on a new database.
        let fresh = try TestPostgresDatabase()
        let results = Locked<[String]>([])
        runThreads(4) { _ in
            do {
                let before = try PostgresSchema.migrate(try fresh.connect())
                results.with { $0.append("ok \(before)") }
            } catch { results.with { $0.append("\(error)") } }
        }
        let outcomes = results.value
        #expect(outcomes.allSatisfy { $0.hasPrefix("ok ") }, "\(outcomes)")
        #expect(outcomes.filter { $0 == "ok 0" }.count >= 1)
        #expect(try PostgresSchema.version(try fresh.connect()) == PostgresSchema.all.count)

        // A database from a newer entryd is refused.
        try c.execute("UPDATE schema_version SET version = 99")
        #expect { try PostgresSchema.migrate(c) } throws: { e in
            let e = e as? PGError
            return e?.sqlState == "55000" && e?.message.contains("newer than this entryd") == true
        }
    }
}
