import EntryTestSupport
import Foundation
import Testing
@testable import EntryHub
import EntryModel

/// `PGConnection` against the real test server (``TestPostgres``).
@Suite struct PGConnectionTests {
    @Test(
        "a URI whose option values libpq would refuse is a bad URI (exit 78), found before any server is tried; good values pass"
    )
    func badOptionValues() throws {
        for (uri, fragment) in [
            ("postgresql:///e?host=/nowhere&port=abc", "port: 'abc'"), ("postgresql://h:99999/e", "port: '99999'"),
            ("postgresql:///e?sslmode=bogus", "sslmode: 'bogus' is not one of disable"),
            ("postgresql:///e?connect_timeout=zz", "connect_timeout: 'zz' is not a whole number"),
            ("postgresql:///e?target_session_attrs=primary-ish", "target_session_attrs"),
        ] {
            do {
                _ = try PGConnection(uri: uri)
                Issue.record("\(uri) was taken")
            } catch {
                #expect(
                    error.sqlState == PGError.invalidURI && error.message.contains(fragment), "\(uri): \(error.message)"
                )
            }
        }
        #expect(PGConnection.badValue("port", "5432,,5433") == nil && PGConnection.badValue("port", " 5432 ") == nil)
        #expect(
            PGConnection.badValue("sslmode", "verify-full") == nil
                && PGConnection.badValue("connect_timeout", "10") == nil)
        #expect(PGConnection.badValue("application_name", "anything") == nil)
        #expect(PGConnection.badValue("port", "0") != nil && PGConnection.badValue("keepalives", "yes") != nil)
    }

    @Test("text parameters carry NULL and unicode both ways")
    func parameters() throws {
        let db = try TestPostgresDatabase()
        let c = try db.connect()
        let text = "韩梅梅 🇨🇳 Zoë \u{301} ' \" \\ ;--"
        let r = try c.execute("SELECT $1::text AS a, $2::text AS b, length($1) AS n", [text, nil])
        #expect(r.columns == ["a", "b", "n"])
        #expect(r.rows == [[text, nil, String(text.unicodeScalars.count)]])
        #expect(r[row: 0, column: "a"] == text)
        try c.execute("CREATE TABLE t (id int PRIMARY KEY, v text)")
        let ins = try c.execute("INSERT INTO t VALUES ($1, $2), ($3, $4)", ["1", text, "2", nil])
        #expect(ins.affectedRows == 2)
        #expect(try c.execute("SELECT v FROM t ORDER BY id").rows == [[text], [nil]])
    }

    @Test("a failed statement rolls its transaction back and the connection stays usable")
    func rollback() throws {
        let db = try TestPostgresDatabase()
        let c = try db.connect()
        try c.execute("CREATE TABLE t (id int PRIMARY KEY)")
        #expect {
            try c.transaction { c in
                try c.execute("INSERT INTO t VALUES (1)")
                try c.execute("INSERT INTO t VALUES (1)")
            }
        } throws: { ($0 as? PGError)?.sqlState == "23505" }
        #expect(!c.inTransaction)
        // An error caught inside the body still aborts the transaction: nothing commits.
        #expect {
            try c.transaction { c in
                try c.execute("INSERT INTO t VALUES (2)")
                _ = try? c.execute("INSERT INTO t VALUES (2)")
            }
        } throws: { ($0 as? PGError)?.sqlState == "25P02" }
        #expect(try c.execute("SELECT count(*) FROM t").rows == [["0"]])
        let n = try c.transaction { c in try c.execute("INSERT INTO t VALUES (3)").affectedRows }
        #expect(n == 1)
        #expect(try c.execute("SELECT id FROM t").rows == [["3"]])
    }

    @Test("a serialization failure is reported as one, and is StorageFailed without the server's words")
    func serializationFailure() throws {
        let db = try TestPostgresDatabase()
        let a = try db.connect()
        let b = try db.connect()
        try a.execute("CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0)")
        var caught: PGError?
        do {
            try a.transaction(isolation: .repeatableRead) { a in
                try a.execute("SELECT v FROM t")
                try b.execute("UPDATE t SET v = 1")
                try a.execute("UPDATE t SET v = 2")
            }
        } catch let e as PGError { caught = e }
        #expect(caught?.isSerializationFailure == true)
        #expect(caught?.entryError == .storageFailed("the database was busy with a concurrent write: retry"))
        #expect(try a.execute("SELECT v FROM t").rows == [["1"]])
    }

    @Test("a pipeline batch runs in one round trip as one implicit transaction")
    func pipeline() throws {
        let db = try TestPostgresDatabase()
        let c = try db.connect()
        try c.execute("CREATE TABLE t (id int PRIMARY KEY, v text)")
        var batch = (1...500).map { PGStatement("INSERT INTO t VALUES ($1, $2)", [String($0), "值\($0)"]) }
        batch.append(PGStatement("SELECT count(*) FROM t"))
        let results = try c.pipeline(batch)
        #expect(results.count == 501)
        #expect(results[0].affectedRows == 1)
        #expect(results[500].rows == [["500"]])
        // A failing statement: its error, the rest not run, the batch rolled back.
        let bad = [
            PGStatement("INSERT INTO t VALUES (1000, 'x')"), PGStatement("INSERT INTO t VALUES (1, 'dup')"),
            PGStatement("INSERT INTO t VALUES (1001, 'y')"),
        ]
        #expect { try c.pipeline(bad) } throws: { e in
            let e = e as? PGError
            return e?.sqlState == "23505" && e?.sql == "INSERT INTO t VALUES (1, 'dup')"
        }
        #expect(try c.execute("SELECT count(*) FROM t").rows == [["500"]])
        #expect(!c.inTransaction)
    }

    @Test("LISTEN/NOTIFY wakes a waiter; the wait times out when nothing comes")
    func listenNotify() throws {
        let db = try TestPostgresDatabase()
        let listener = try db.connect()
        try listener.listen("entryd test")
        let start = Date()
        #expect(try listener.waitForNotification(timeout: 0.2) == nil)
        #expect(Date().timeIntervalSince(start) >= 0.19)
        let sender = try db.connect()
        let pid = sender.serverProcessID
        let thread = Thread {
            usleep(200_000)
            try? sender.notify("entryd test", payload: "提交 42")
        }
        thread.start()
        let woke = Date()
        let n = try listener.waitForNotification(timeout: 10)
        #expect(n == PGNotification(channel: "entryd test", payload: "提交 42", processID: pid))
        #expect(Date().timeIntervalSince(woke) < 5)
        // Not delivered for a rolled-back transaction.
        let other = try db.connect()
        #expect(throws: PGError.self) {
            try other.transaction { s in
                try s.notify("entryd test", payload: "never")
                throw PGError(sqlState: "P0001", message: "give up")
            }
        }
        #expect(try listener.waitForNotification(timeout: 0.3) == nil)
    }

    @Test("a bad URI, or no server behind it, gives an error that says what to do")
    func badURI() throws {
        var e: PGError?
        do { _ = try PGConnection(uri: "postgresql://[::1") } catch { e = error }
        #expect(e?.sqlState == PGError.invalidURI)
        #expect(e?.message.contains("the database URI is not valid") == true)
        #expect(e?.message.contains("postgresql:///database?host=") == true)
        // libpq quotes the part it could not read, which may be a password: never repeated.
        for uri in [
            "postgresql://u:se%zzcretPW@/db", "postgresql:///db?password=Wrong%zzPW", "postgresql://u:S3cretPW@[::1/db",
        ] {
            do { _ = try PGConnection(uri: uri) } catch { e = error }
            #expect(e?.sqlState == PGError.invalidURI && e?.message.contains("PW") == false, "\(e?.message ?? "")")
        }
        do { _ = try PGConnection(uri: "postgresql:///entryd?host=/nonexistent-entryd-socket-dir") } catch { e = error }
        #expect(e?.message.contains("cannot connect to PostgreSQL") == true)
        #expect(e?.message.contains("check that the server runs") == true)
        #expect(e?.isConnectionFailure == true)
        #expect(e?.entryError == .storageFailed("the database server is unreachable: retry"))
        let uri = try TestPostgres.server()
        do { _ = try PGConnection(uri: uri, database: "no_such_database_here") } catch { e = error }
        #expect(e?.message.contains("no_such_database_here") == true)
    }

    @Test("a pipeline whose replies outgrow the socket buffers does not deadlock")
    func bigPipeline() throws {
        let db = try TestPostgresDatabase()
        let c = try db.connect()
        // 3,000 requests of 500 bytes (1.5 MB, more than the socket buffers hold) whose
        // replies, 2 kB each, fill the other way while the requests are still being sent.
        let batch = (1...3000).map {
            PGStatement("SELECT repeat($1, 4) AS v", [String(repeating: String($0 % 10), count: 500)])
        }
        let results = try c.pipeline(batch)
        #expect(results.count == 3000)
        #expect(results[2999].rows == [[String(repeating: "0", count: 2000)]])
        #expect(try c.execute("SELECT 1").rows == [["1"]])
    }

    @Test("a connection the server ends is reported as a connection failure")
    func connectionLost() throws {
        let db = try TestPostgresDatabase()
        let c = try db.connect()
        let admin = try db.connect()
        try admin.execute("SELECT pg_terminate_backend($1)", [String(c.serverProcessID)])
        var e: PGError?
        do { try c.execute("SELECT 1") } catch { e = error }
        #expect(e?.isConnectionFailure == true, "\(String(describing: e))")
        #expect(e?.entryError == .storageFailed("the database server is unreachable: retry"))
        c.close()
        do { try c.execute("SELECT 1") } catch { e = error }
        #expect(e?.sqlState == "08003")
    }
}
