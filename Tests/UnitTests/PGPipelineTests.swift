import EntryTestSupport
import Foundation
import Testing
@testable import EntryHub
@testable import EntryLedger
import EntryModel

/// `PGDatabase`'s pipelined writes (issue 34): writes inside a transaction are
/// kept and sent with the next statement that needs an answer, runs of one
/// INSERT or DELETE go as one statement, and what fails is still reported.
@Suite struct PGPipelineTests {
    /// A `PGDatabase` on a fresh database with the table `k (key, entry)`.
    static func database(_ t: TestPostgresDatabase) throws -> PGDatabase {
        let db = PGDatabase(try t.connect())
        try db.execute("CREATE TABLE k (key text, entry text, PRIMARY KEY (key, entry))")
        return db
    }

    static func count(_ db: PGDatabase, _ sql: String = "SELECT count(*) FROM k") throws -> Int {
        var n = 0
        try db.statement(sql).query { n = Int($0.int(0)) }
        return n
    }

    @Test("kept writes reach the server in order before the next query; runs of one INSERT or DELETE count each row")
    func keptInOrder() throws {
        let t = try TestPostgresDatabase()
        let db = try Self.database(t)
        try db.statement("BEGIN IMMEDIATE").run()
        #expect(db.inTransaction)
        let insert = try db.statement("INSERT INTO k (key, entry) VALUES (?, ?) ON CONFLICT DO NOTHING")
        let before = db.totalChanges
        // 2,500 runs (more than one statement of many rows takes), 500 of them repeats.
        for i in 0..<2500 { try insert.run([.text("k\(i % 2000)"), .text("e")]) }
        #expect(db.totalChanges - before == 2500, "a kept write counts as written")
        #expect(try Self.count(db) == 2000)
        let delete = try db.statement("DELETE FROM k WHERE key = ? AND entry = ?")
        for i in 0..<10 { try delete.run([.text("k\(i)"), .text("e")]) }
        try insert.run([.text("k0"), .text("e")])
        try delete.run([.text("k1"), .text("nobody")])
        #expect(db.changes == 0, "the last statement's rows, once sent")
        #expect(try Self.count(db) == 1991)
        try db.statement("UPDATE k SET entry = ? WHERE key = ?").run([.text("f"), .text("k0")])
        try db.statement("COMMIT").run()
        #expect(!db.inTransaction)
        #expect(try Self.count(db, "SELECT count(*) FROM k WHERE entry = 'f'") == 1)
        #expect(try Self.count(db) == 1991)
    }

    @Test(
        "a kept write that fails is reported by the statement sent with it, naming the write; ROLLBACK drops the rest")
    func keptFailure() throws {
        let t = try TestPostgresDatabase()
        let db = try Self.database(t)
        let insert = try db.statement("INSERT INTO k (key, entry) VALUES (?, ?)")
        try db.statement("BEGIN").run()
        try insert.run([.text("a"), .text("e")])
        try insert.run([.text("a"), .text("e")])  // a duplicate key: fails when sent
        try insert.run([.text("b"), .text("e")])
        do {
            _ = try Self.count(db)
            Issue.record("the query ran after a failed write")
        } catch let error as PGError {
            #expect(error.sqlState == "23505" && error.sql.hasPrefix("INSERT INTO k"), "\(error)")
        }
        #expect(db.transactionFailed && db.inTransaction)
        try insert.run([.text("c"), .text("e")])  // kept, then dropped by the ROLLBACK
        try db.execute("ROLLBACK")
        #expect(!db.inTransaction && !db.transactionFailed)
        #expect(try Self.count(db) == 0)

        // Found where nothing may throw (the row count): the next statement throws it.
        try db.statement("BEGIN").run()
        try insert.run([.text("a"), .text("e")])
        try insert.run([.text("a"), .text("e")])
        _ = db.changes
        #expect(db.transactionFailed)
        #expect(throws: PGError.self) { try db.statement("COMMIT").run() }
        try db.statement("ROLLBACK").run()
        #expect(!db.inTransaction)
        #expect(try Self.count(db) == 0)

        // Sent ahead (past PGDatabase.sendAhead kept writes): a failure among them is
        // reported all the same, and a statement prepared meanwhile reads them first.
        try db.statement("BEGIN").run()
        _ = try Self.count(db)
        for i in 0..<(PGDatabase.sendAhead + 10) { try insert.run([.text(i == 7 ? "k6" : "k\(i)"), .text("e")]) }
        #expect(throws: PGError.self) { _ = try db.statement("SELECT key FROM k WHERE entry = ?") }
        #expect(db.transactionFailed)
        try db.execute("ROLLBACK")
        #expect(try Self.count(db) == 0)
        try db.statement("BEGIN").run()
        _ = try Self.count(db)
        for i in 0..<(PGDatabase.sendAhead * 2 + 10) { try insert.run([.text("k\(i)"), .text("e")]) }
        try db.statement("ROLLBACK").run()
        #expect(!db.inTransaction && !db.connection.inTransaction)
        #expect(try Self.count(db) == 0)
    }

    @Test("a transaction that only began sends nothing at its end; one that wrote commits in one batch with its writes")
    func beginKept() throws {
        let t = try TestPostgresDatabase()
        let db = try Self.database(t)
        try db.statement("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").run()
        #expect(db.inTransaction && !db.connection.inTransaction, "the BEGIN is kept")
        try db.statement("COMMIT").run()
        #expect(!db.inTransaction && !db.connection.inTransaction)
        try db.statement("BEGIN").run()
        try db.statement("ROLLBACK").run()
        #expect(!db.inTransaction && !db.connection.inTransaction)
        // A read's COMMIT goes without waiting; the next use reads its answer first.
        for _ in 0..<3 {
            try db.statement("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").run()
            #expect(try Self.count(db) == 0)
            try db.statement("COMMIT").run()
            #expect(!db.inTransaction && !db.transactionFailed)
        }
        try db.execute("INSERT INTO k (key, entry) VALUES ('z', 'e')")
        try db.statement("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").run()
        #expect(try Self.count(db) == 1)
        try db.statement("COMMIT").run()
        try db.statement("DELETE FROM k WHERE key = ?").run([.text("z")])
        #expect(try Self.count(db) == 0 && !db.connection.inTransaction)
        // Savepoints send what is kept before them; ROLLBACK TO drops what follows.
        try db.statement("BEGIN").run()
        let insert = try db.statement("INSERT INTO k (key, entry) VALUES (?, ?)")
        try insert.run([.text("a"), .text("e")])
        try db.statement("SAVEPOINT job").run()
        try insert.run([.text("b"), .text("e")])
        try db.execute("ROLLBACK TO job")
        try db.statement("RELEASE job").run()
        try db.commit(after: [PGStatement("INSERT INTO k (key, entry) VALUES ($1, $2)", ["c", "e"])])
        #expect(!db.inTransaction)
        #expect(try Self.count(db) == 2)
        #expect(try Self.count(db, "SELECT count(*) FROM k WHERE key = 'b'") == 0)
    }

    @Test("runs of an INSERT … VALUES or a DELETE … WHERE a = ? AND b = ? are recognised; other statements are not")
    func multiRowShapes() throws {
        let insert = try #require(
            PGPrepared.MultiRow("INSERT INTO k (key, entry) VALUES ($1, $2) ON CONFLICT DO NOTHING"))
        #expect(insert.sql(rows: 2) == "INSERT INTO k (key, entry) VALUES ($1, $2), ($3, $4) ON CONFLICT DO NOTHING")
        let delete = try #require(PGPrepared.MultiRow("DELETE FROM k WHERE key = $1 AND entry = $2"))
        #expect(delete.sql(rows: 2) == "DELETE FROM k WHERE (key, entry) IN (($1, $2), ($3, $4))")
        #expect(delete.maxRows == 1000 && insert.columns == 2)
        for sql in [
            "INSERT INTO k (key, entry) VALUES ($1, $2) RETURNING key",
            "INSERT INTO k (key, entry) VALUES ($1, $2) ON CONFLICT (key, entry) DO UPDATE SET entry = excluded.entry",
            "INSERT INTO k (key, entry) VALUES ($2, $1)", "INSERT INTO k (key, entry) VALUES ('a', $1)",
            "DELETE FROM node WHERE key = 'x' AND value = $1", "DELETE FROM k WHERE key = $1 OR entry = $2",
            "DELETE FROM k", "UPDATE k SET key = $1 WHERE entry = $2",
        ] {
            #expect(PGPrepared.MultiRow(sql) == nil, "\(sql)")
        }
        #expect(PGDialect.array(["a", "b\"c", "d\\e", ""]) == #"{"a","b\"c","d\\e",""}"#)
    }
}
