import CPostgres
import Foundation
import EntryLedger
import EntryModel

/// The store's SQL on PostgreSQL: a ``PGConnection`` as an ``SQLDatabase``, so
/// `EntryStore` runs its one text of SQL here too.
///
/// Statements are translated once (``PGDialect``), prepared on first use
/// (`PQprepare`) and run with text parameters (`PQexecPrepared`).
///
/// When the server goes away (restart, failover) the call in flight fails with
/// a ``PGError`` of class 08, which the caller answers as `StorageFailed`. The
/// connection comes back by itself, but only between transactions: a
/// statement that opens one (`BEGIN …`), or runs while none is open, finds a
/// dead connection, connects again, prepares anew and runs once more (it never
/// reached the server; the store writes only inside transactions, so nothing
/// runs twice). Inside a transaction whose connection died every statement
/// fails until the owner ends it (`COMMIT`/`ROLLBACK`) or begins the next: a
/// transaction is never continued on a new connection.
///
/// Writes are pipelined (issue 34): inside a transaction a statement run
/// without reading its rows (``PGPrepared/run(_:)``: an `INSERT`, `UPDATE`,
/// `DELETE`, and the `BEGIN` itself) is not sent at once but kept, and sent
/// with the next statement whose answer is needed — a query, `COMMIT`, a
/// savepoint — all in one pipeline batch (one round trip). The order on the
/// server is the order of the calls, so a query sees every write before it.
/// A kept write that fails is reported by the statement it was sent with (its
/// ``PGError/sql`` names the write); the transaction is then failed, as it
/// would be had the write failed at once. ``changes`` sends what is kept (it
/// needs the count); ``totalChanges`` counts a kept write as one changed row
/// (a job that kept a write has written). A `ROLLBACK` drops what is kept.
/// One thread at a time, like every connection of the store.
final class PGDatabase: SQLDatabase, @unchecked Sendable {
    // @unchecked: a libpq connection and its statement cache, used by one thread at a time.
    let connection: PGConnection
    /// Prepared statements by their SQLite-dialect text.
    private var prepared: [String: PGPrepared] = [:]
    /// Backs ``changes``.
    private var lastChanges = 0
    /// Rows changed by completed statements, and one per write kept.
    private(set) var totalChanges: Int64 = 0
    /// Writes of the open transaction not sent yet (the type's "pipelined"), in order.
    private var kept: [PGPrepared.Call] = []
    /// True while the open transaction's `BEGIN` is among ``kept``: nothing of it reached the server.
    private var beginKept = false
    /// The failure of kept writes sent where nothing could throw (``changes``):
    /// the next statement throws it, until the transaction ends.
    private var keptFailure: PGError?
    /// Statements sent in the open pipeline whose results are not read yet, by
    /// their SQL, and whether the result is returned (a query's) or only checked.
    private var inFlight: [(sql: String, returned: Bool)] = []
    /// Kept writes past which they are sent ahead, while the transaction goes
    /// on (their results are read with the next answer needed): the server
    /// runs them while entryd works out the next ones.
    static let sendAhead = 256
    /// True while the open transaction was begun `READ ONLY` (a reader's).
    private var readOnly = false
    /// True while the `COMMIT` of a read-only transaction is sent, its result
    /// not read yet (``commitsAhead()``): the next use of the connection reads it.
    private var commitInFlight = false
    /// Between a `BEGIN` that ran and the `COMMIT` or `ROLLBACK` that ends it,
    /// whatever became of the connection meanwhile.
    private var open = false
    /// Statements prepared on this connection object so far: names are never reused.
    private var named = 0

    /// Wraps `connection`.
    init(_ connection: PGConnection) {
        self.connection = connection
    }

    var inTransaction: Bool { beginKept || (!commitInFlight && connection.inTransaction) }

    var transactionFailed: Bool {
        guard keptFailure == nil else { return true }
        guard !commitInFlight else { return false }
        guard let conn = connection.conn else { return false }
        return PQtransactionStatus(conn) == PQTRANS_INERROR
    }

    /// Rows changed by the last statement: kept writes are sent first.
    var changes: Int {
        if !kept.isEmpty {
            do { _ = try flush(then: nil) } catch { keptFailure = keptFailure ?? error }
        }
        return lastChanges
    }

    func statement(_ sql: String) throws -> any SQLStatement {
        // The cache first: a statement is translated once per connection, not per call.
        if let statement = prepared[sql] {
            if !open || statement.opens, try connection.reconnectIfLost() {
                prepared.removeAll()
            } else {
                return statement
            }
        }
        let text = PGDialect.translate(sql)
        let mayReconnect = !open || PGDialect.opens(text)
        if mayReconnect, try connection.reconnectIfLost() { prepared.removeAll() }
        named += 1
        let statement = PGPrepared(name: "s\(named)", sql: text, key: sql, database: self)
        try again(if: mayReconnect) { () throws(PGError) in try prepare(statement) }
        prepared[sql] = statement
        return statement
    }

    func execute(_ sql: String) throws {
        let text = PGDialect.translate(sql)
        if text == "ROLLBACK" || text.hasPrefix("ROLLBACK TO") {
            // What is kept would be rolled back: it is dropped instead.
            if dropKept(rollingBackAll: text == "ROLLBACK") {
                counted(0)
                return
            }
        } else if hasKept {
            _ = try flush(then: nil)
        }
        let mayReconnect = !open || PGDialect.opens(text)
        if mayReconnect, try connection.reconnectIfLost() { prepared.removeAll() }
        let rows = try ran(opens: PGDialect.opens(text), closes: PGDialect.closes(text)) { () throws(PGError) in
            try again(if: mayReconnect) { () throws(PGError) in try connection.execute(text).affectedRows }
        }
        counted(rows)
    }

    /// Runs `statements` and then `COMMIT` in the open transaction as one
    /// pipeline batch (one round trip): a failed statement leaves the rest
    /// unrun and nothing committed.
    /// - Throws: ``PGError`` of the first statement that failed.
    func commit(after statements: [PGStatement]) throws {
        if hasKept {
            // The kept writes first, in the same batch.
            _ = try ran(opens: false, closes: true) { () throws(PGError) in
                try flush(then: nil, texts: statements + [PGStatement("COMMIT")])
            }
            return
        }
        let results = try ran(opens: false, closes: true) { () throws(PGError) in
            try connection.pipeline(statements + [PGStatement("COMMIT")])
        }
        counted(results.dropLast().reduce(0) { $0 + $1.affectedRows })
    }

    // MARK: - Pipelined writes

    /// True when writes (or the `BEGIN`) are kept, or a failure of kept writes is pending.
    fileprivate var hasKept: Bool {
        !kept.isEmpty || beginKept || keptFailure != nil || !inFlight.isEmpty || commitInFlight
    }

    /// Whether `statement`, run without reading its rows, is kept for later
    /// (the type's "pipelined"): a `BEGIN` outside a transaction, or a write
    /// inside one; never `COMMIT`, `ROLLBACK` or a savepoint's statements, which
    /// end or mark what was kept.
    fileprivate func keeps(_ statement: PGPrepared) -> Bool {
        if statement.opens { return !open }
        return open && !statement.closes && !statement.marksSavepoint
    }

    /// Keeps `call` (``keeps(_:)`` said so). A `BEGIN` on a connection found
    /// lost connects again first, as when it is sent at once.
    fileprivate func keep(_ call: PGPrepared.Call) throws(PGError) {
        if call.statement.opens {
            settle()
            if try connection.reconnectIfLost() { prepared.removeAll() }
            beginKept = true
            readOnly = call.statement.sql.contains("READ ONLY")
            open = true
        } else {
            totalChanges += 1  // "has written": a job that fails after this rolls back with its savepoint
        }
        kept.append(call)
        if kept.count >= Self.sendAhead && !beginKept && keptFailure == nil {
            let ahead = kept
            kept.removeAll()
            do throws(PGError) {
                try stream(ahead)
                if let conn = connection.conn, PQflush(conn) != 0 { throw connection.connectionError("flush") }
            } catch {
                abandon()
                keptFailure = error
                throw error
            }
        }
    }

    /// Drops what is kept, for a `ROLLBACK` (`rollingBackAll`) or a `ROLLBACK
    /// TO` a savepoint (kept writes always follow the last savepoint: its
    /// statement sent them).
    /// - Returns: true when the transaction never reached the server (its
    ///   `BEGIN` was kept): the `ROLLBACK` has nothing to send, and the
    ///   transaction is over.
    fileprivate func dropKept(rollingBackAll: Bool) -> Bool {
        let unsent = rollingBackAll && beginKept
        abandon()
        kept.removeAll()
        keptFailure = nil
        if rollingBackAll { beginKept = false }
        if unsent { open = false }
        return unsent
    }

    /// Sends the kept writes, then `last` when given, as one pipeline batch (one
    /// round trip), and reads every result. When the batch begins the
    /// transaction (its `BEGIN` was kept) and the connection is found dead,
    /// connects again and sends it once more (nothing of it ran).
    /// - Returns: `last`'s result, which the caller clears; `nil` without `last`.
    /// - Throws: ``PGError`` of the first statement that failed (a kept one, or
    ///   `last`); a pending failure of kept writes.
    /// - Parameter texts: statements (with text parameters, not prepared) sent after `last`.
    fileprivate func flush(then last: PGPrepared.Call?, texts: [PGStatement] = []) throws(PGError) -> OpaquePointer? {
        try flush(then: last.map { [$0] } ?? [], texts: texts).first
    }

    /// Sends the kept writes, then `queries`, then `texts`, as one pipeline
    /// batch (``flush(then:texts:)``), after any sent ahead (``keep(_:)``).
    /// - Returns: the results of `queries`, in order, which the caller clears.
    fileprivate func flush(then queries: [PGPrepared.Call], texts: [PGStatement] = []) throws(PGError)
        -> [OpaquePointer]
    {
        if let keptFailure { throw keptFailure }
        settle()
        let calls = kept + queries
        let begins = beginKept
        kept.removeAll()
        beginKept = false
        do {
            try stream(calls, returning: queries.count)
            try stream(texts)
            return try finish()
        } catch {
            abandon()
            guard begins, error.isConnectionFailure else { throw error }
            prepared.removeAll()
            try connection.reconnect()
            try stream(calls, returning: queries.count)
            try stream(texts)
            return try finish()
        }
    }

    /// Sends `calls` in the open pipeline (entering pipeline mode when not in
    /// it), without waiting for their results (``finish()`` reads them); the
    /// results of the last `returning` are to be returned. Runs of one kept
    /// INSERT or DELETE go as one statement of many rows (``PGPrepared/MultiRow``).
    private func stream(_ calls: [PGPrepared.Call], returning: Int = 0) throws(PGError) {
        guard !calls.isEmpty else { return }
        guard let conn = connection.conn else { throw PGError(sqlState: "08003", message: "the connection is closed") }
        for call in calls { try PGConnection.refuseNUL(call.values, sql: call.statement.sql) }
        if inFlight.isEmpty {
            // After a reconnect, statements are prepared anew (not possible inside the pipeline).
            for call in calls where !holds(call.statement) { try adopt(call.statement) }
            guard PQenterPipelineMode(conn) == 1 else { throw connection.connectionError("cannot enter pipeline mode") }
        }
        let keptCount = calls.count - returning
        var i = 0
        while i < calls.count {
            let call = calls[i]
            var end = i + 1
            if i < keptCount, let rows = call.statement.multiRow {
                while end < keptCount && end - i < rows.maxRows && calls[end].statement === call.statement { end += 1 }
            }
            let sent: Int32
            if end - i > 1, let rows = call.statement.multiRow {
                let values = calls[i..<end].flatMap(\.values)
                let copies = PGConnection.cStrings(values)
                let pointers = copies.map { $0.map { UnsafePointer($0) } }
                sent = PQsendQueryParams(
                    conn, rows.sql(rows: end - i), Int32(copies.count), nil, pointers, nil, nil, 0)
                copies.forEach { free($0) }
            } else {
                let copies = PGConnection.cStrings(call.values)
                let pointers = copies.map { $0.map { UnsafePointer($0) } }
                sent = PQsendQueryPrepared(conn, call.statement.name, Int32(copies.count), pointers, nil, nil, 0)
                copies.forEach { free($0) }
            }
            inFlight.append((call.statement.sql, i >= keptCount))
            guard sent == 1 else { throw connection.connectionError(call.statement.sql) }
            i = end
        }
    }

    /// Sends `texts` (text parameters, not prepared) in the open pipeline (``stream(_:returning:)``).
    private func stream(_ texts: [PGStatement]) throws(PGError) {
        guard !texts.isEmpty else { return }
        guard let conn = connection.conn else { throw PGError(sqlState: "08003", message: "the connection is closed") }
        if inFlight.isEmpty {
            guard PQenterPipelineMode(conn) == 1 else { throw connection.connectionError("cannot enter pipeline mode") }
        }
        for text in texts { try PGConnection.refuseNUL(text.params, sql: text.sql) }
        for text in texts {
            let copies = PGConnection.cStrings(text.params)
            let pointers = copies.map { $0.map { UnsafePointer($0) } }
            let sent = PQsendQueryParams(conn, text.sql, Int32(copies.count), nil, pointers, nil, nil, 0)
            copies.forEach { free($0) }
            inFlight.append((text.sql, false))
            guard sent == 1 else { throw connection.connectionError(text.sql) }
        }
    }

    /// Ends the open pipeline with a sync, reads every result of what was
    /// sent, and leaves pipeline mode.
    /// - Returns: the results of the calls sent to be returned, in order, which the caller clears.
    /// - Throws: ``PGError`` of the first statement that failed.
    private func finish() throws(PGError) -> [OpaquePointer] {
        guard !inFlight.isEmpty else { return [] }
        guard let conn = connection.conn else { throw PGError(sqlState: "08003", message: "the connection is closed") }
        let sent = inFlight
        inFlight.removeAll()
        defer { PQexitPipelineMode(conn) }
        guard PQpipelineSync(conn) == 1 else { throw connection.connectionError("pipeline sync") }
        var firstError: PGError?
        var results: [OpaquePointer] = []
        let clearAll = { results.forEach { PQclear($0) } }
        for (sql, returned) in sent {
            guard let res = PQgetResult(conn) else {
                clearAll()
                throw connection.connectionError(sql)
            }
            let status = PQresultStatus(res)
            if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK {
                counted(Int(String(cString: PQcmdTuples(res))) ?? 0)
                if returned { results.append(res) } else { PQclear(res) }
            } else {
                if firstError == nil { firstError = connection.error(of: res, sql: sql) }
                PQclear(res)
            }
            // Each statement's results end with a NULL.
            while let extra = PQgetResult(conn) { PQclear(extra) }
        }
        guard let sync = PQgetResult(conn) else {
            clearAll()
            throw connection.connectionError("pipeline sync")
        }
        let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
        PQclear(sync)
        if let firstError {
            clearAll()
            throw firstError
        }
        guard synced else {
            clearAll()
            throw connection.connectionError("pipeline sync")
        }
        return results
    }

    /// Sends the `COMMIT` of the open read-only transaction (a reader's, which
    /// wrote nothing and kept nothing) with its sync, without waiting for its
    /// answer: a read costs one round trip, its `BEGIN` and queries. The next
    /// use of the connection reads the answer first (``settle()``); a read-only
    /// transaction has nothing to lose if its `COMMIT` fails.
    /// - Returns: false when the transaction is not such a one (the caller sends the `COMMIT` as usual).
    fileprivate func commitsAhead(_ commit: PGPrepared) -> Bool {
        guard open, readOnly, kept.isEmpty, !beginKept, keptFailure == nil, inFlight.isEmpty, !commitInFlight,
            holds(commit), let conn = connection.conn, PQtransactionStatus(conn) == PQTRANS_INTRANS
        else { return false }
        guard PQenterPipelineMode(conn) == 1 else { return false }
        guard PQsendQueryPrepared(conn, commit.name, 0, nil, nil, nil, 0) == 1, PQpipelineSync(conn) == 1 else {
            commitInFlight = true
            settle()
            return false
        }
        _ = PQflush(conn)
        commitInFlight = true
        open = false
        readOnly = false
        counted(0)
        return true
    }

    /// Reads the answer to a `COMMIT` sent ahead (``commitsAhead(_:)``) and leaves pipeline mode.
    fileprivate func settle() {
        guard commitInFlight else { return }
        commitInFlight = false
        guard let conn = connection.conn else { return }
        // The COMMIT's result and its NULL, then the sync's; two NULLs running: nothing more comes.
        var nulls = 0
        while nulls < 2 {
            guard let res = PQgetResult(conn) else {
                nulls += 1
                continue
            }
            nulls = 0
            let synced = PQresultStatus(res) == PGRES_PIPELINE_SYNC
            PQclear(res)
            if synced { break }
        }
        PQexitPipelineMode(conn)
    }

    /// After a failure while sending or reading: what was in flight is given up
    /// (its results read and dropped when the connection still answers).
    private func abandon() {
        settle()
        guard !inFlight.isEmpty else { return }
        if connection.conn.map({ PQstatus($0) == CONNECTION_OK }) ?? false {
            _ = try? finish()
        }
        inFlight.removeAll()
        if let conn = connection.conn { PQexitPipelineMode(conn) }
    }

    /// Runs `body`; when it failed because the connection was found dead and
    /// `mayReconnect`, connects again and runs it once more.
    /// - Throws: ``PGError``.
    fileprivate func again<T>(if mayReconnect: Bool, _ body: () throws(PGError) -> T) throws(PGError) -> T {
        do {
            return try body()
        } catch {
            guard mayReconnect, error.isConnectionFailure else { throw error }
            prepared.removeAll()
            try connection.reconnect()
            return try body()
        }
    }

    /// Runs `body`, a statement that `opens` or `closes` a transaction (or
    /// neither), and keeps ``open`` by it: a `BEGIN` that ran opens, a `COMMIT`
    /// or `ROLLBACK` (not `ROLLBACK TO`) closes, however it ended.
    fileprivate func ran<T>(opens: Bool, closes: Bool, _ body: () throws(PGError) -> T) throws(PGError) -> T {
        if closes || opens { open = false }
        defer { if closes { open = false } }
        let value = try body()
        if opens { open = true }
        return value
    }

    /// Prepares `statement` on the connection under its name (again after a reconnect).
    /// - Throws: ``PGError``.
    fileprivate func prepare(_ statement: PGPrepared) throws(PGError) {
        settle()
        if !inFlight.isEmpty {
            // Not inside a pipeline: what was sent ahead is read first.
            do { _ = try finish() } catch {
                abandon()
                keptFailure = keptFailure ?? error
                throw error
            }
        }
        guard let conn = connection.conn else {
            throw PGError(sqlState: "08003", message: "the connection is closed", sql: statement.sql)
        }
        let res = PQprepare(conn, statement.name, statement.sql, 0, nil)
        defer { PQclear(res) }
        guard let res else { throw connection.connectionError(statement.sql) }
        guard PQresultStatus(res) == PGRES_COMMAND_OK else { throw connection.error(of: res, sql: statement.sql) }
    }

    /// True when the open transaction is only a kept `BEGIN`: its `COMMIT` has nothing to send.
    fileprivate var commitsNothing: Bool { beginKept && kept.isEmpty && keptFailure == nil }

    /// Whether a transaction is open on this connection by its statements (``open``).
    fileprivate var isOpen: Bool { open }

    /// True while `statement` is prepared on the current connection.
    fileprivate func holds(_ statement: PGPrepared) -> Bool { prepared.values.contains { $0 === statement } }

    /// Prepares `statement` on the current connection (after a reconnect) and keeps it.
    fileprivate func adopt(_ statement: PGPrepared) throws(PGError) {
        try prepare(statement)
        if let key = statement.key { prepared[key] = statement }
    }

    /// Records the rows a completed statement changed.
    fileprivate func counted(_ rows: Int) {
        lastChanges = rows
        totalChanges += Int64(rows)
    }
}

/// A statement prepared on a ``PGDatabase``'s connection.
final class PGPrepared: SQLStatement {
    /// One run of a statement with its parameters as text (`nil` for NULL), kept for a pipeline batch.
    struct Call {
        let statement: PGPrepared
        let values: [String?]
    }

    let name: String
    /// The statement in PostgreSQL's dialect.
    let sql: String
    /// The statement as the store wrote it (the database's cache key).
    let key: String?
    /// Whether it opens a transaction (``PGDialect/opens(_:)``).
    let opens: Bool
    /// Whether it ends one (``PGDialect/closes(_:)``).
    let closes: Bool
    /// Whether it sets, releases or rolls back to a savepoint.
    let marksSavepoint: Bool
    /// For an `INSERT … VALUES ($1, …, $n)` (plain or `ON CONFLICT DO NOTHING`)
    /// or a `DELETE FROM t WHERE a = $1 AND b = $2 …`: how several runs of it
    /// are sent as one statement.
    let multiRow: MultiRow?

    /// Several runs of one `INSERT … VALUES ($1, …, $n)` as one statement of
    /// many rows (`VALUES ($1, …, $n), ($n+1, …), …`), or of one `DELETE FROM
    /// t WHERE a = $1 AND b = $2` as one `DELETE FROM t WHERE (a, b) IN (($1,
    /// $2), ($3, $4), …)`: what a pipeline batch sends for kept runs one after
    /// another (``PGDatabase``), one statement for the server to plan and run
    /// instead of one per row. The same rows; `ON CONFLICT DO NOTHING` skips a
    /// row that conflicts with an earlier one of the statement as it would the
    /// earlier statement's.
    struct MultiRow {
        /// The text up to the rows (`INSERT INTO t (a, b) VALUES `) and after them.
        let head: String
        let tail: String
        /// Parameters per row.
        let columns: Int

        /// The most rows one statement takes (PostgreSQL's 65,535 parameters, and a bound of 1,000).
        var maxRows: Int { max(1, min(1000, 65535 / columns)) }

        /// `sql`'s parts when it is such an `INSERT` or `DELETE`, else `nil`.
        init?(_ sql: String) {
            if sql.hasPrefix("DELETE FROM "), let whereClause = sql.range(of: " WHERE ") {
                var names: [String] = []
                for (i, condition) in sql[whereClause.upperBound...].components(separatedBy: " AND ").enumerated() {
                    let sides = condition.components(separatedBy: " = ")
                    guard sides.count == 2, sides[1] == "$\(i + 1)",
                        !sides[0].isEmpty, sides[0].allSatisfy({ $0.isLetter || $0 == "_" })
                    else { return nil }
                    names.append(sides[0])
                }
                guard !names.isEmpty, Set(names).count == names.count else { return nil }
                head = String(sql[..<whereClause.upperBound]) + "(" + names.joined(separator: ", ") + ") IN ("
                tail = ")"
                columns = names.count
                return
            }
            guard sql.hasPrefix("INSERT INTO "), !sql.contains("RETURNING"), !sql.contains("DO UPDATE"),
                let values = sql.range(of: "VALUES (", options: .backwards),
                let close = sql[values.upperBound...].firstIndex(of: ")")
            else { return nil }
            let tail = sql[sql.index(after: close)...]
            guard tail.isEmpty || tail == " ON CONFLICT DO NOTHING" else { return nil }
            let parameters = sql[values.upperBound..<close].split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            guard !parameters.isEmpty, parameters.enumerated().allSatisfy({ $1 == "$\($0 + 1)" }) else { return nil }
            head = String(sql[..<values.lowerBound]) + "VALUES "
            self.tail = String(tail)
            columns = parameters.count
        }

        /// The statement for `rows` rows.
        func sql(rows: Int) -> String {
            var out = head
            var n = 0
            for r in 0..<rows {
                out += r == 0 ? "(" : ", ("
                for c in 0..<columns {
                    n += 1
                    out += c == 0 ? "$\(n)" : ", $\(n)"
                }
                out += ")"
            }
            return out + tail
        }
    }
    unowned let database: PGDatabase

    init(name: String, sql: String, key: String? = nil, database: PGDatabase) {
        self.name = name
        self.sql = sql
        self.key = key
        self.opens = PGDialect.opens(sql)
        self.closes = PGDialect.closes(sql)
        self.marksSavepoint = sql.hasPrefix("SAVEPOINT") || sql.hasPrefix("RELEASE") || sql.hasPrefix("ROLLBACK")
        self.multiRow = MultiRow(sql)
        self.database = database
    }

    func run(_ values: [SQLValue]) throws {
        if sql == "ROLLBACK", database.dropKept(rollingBackAll: true) {
            database.counted(0)
            return
        }
        if sql == "COMMIT", database.commitsNothing {
            // A transaction that only began (a read that read nothing): nothing to send.
            _ = database.dropKept(rollingBackAll: true)
            database.counted(0)
            return
        }
        if sql == "COMMIT", database.commitsAhead(self) { return }
        if database.keeps(self) { return try database.keep(Call(statement: self, values: values.map(\.text))) }
        let res = try execute(values)
        database.counted(Int(String(cString: PQcmdTuples(res))) ?? 0)
        PQclear(res)
    }

    func query(_ values: [SQLValue], _ row: (any SQLRow) throws -> Void) throws {
        let res = try execute(values)
        defer { PQclear(res) }
        database.counted(Int(String(cString: PQcmdTuples(res))) ?? 0)
        let cursor = PGRow(res)
        for r in 0..<PQntuples(res) {
            cursor.row = r
            try row(cursor)
        }
    }

    /// Runs the statement with `values` (``PGDatabase``'s rules on a dead
    /// connection); the caller clears the result.
    private func execute(_ values: [SQLValue]) throws(PGError) -> OpaquePointer {
        // A read's COMMIT sent ahead is answered first: a statement after it is
        // no part of a batch, and may connect again when the server went away
        // meanwhile (a restart while idle).
        database.settle()
        if database.hasKept {
            // With the kept writes before it, in one batch.
            let call = Call(statement: self, values: values.map(\.text))
            return try database.ran(opens: opens, closes: closes) { () throws(PGError) in
                guard let res = try database.flush(then: call) else {
                    throw database.connection.connectionError(sql)
                }
                return res
            }
        }
        let mayReconnect = !database.isOpen || opens
        return try database.ran(opens: opens, closes: closes) { () throws(PGError) in
            try database.again(if: mayReconnect) { () throws(PGError) in
                // After a reconnect this statement is prepared anew, under its name.
                if !database.holds(self) { try database.adopt(self) }
                return try attempt(values)
            }
        }
    }

    /// One run of the statement with `values`.
    private func attempt(_ values: [SQLValue]) throws(PGError) -> OpaquePointer {
        guard let conn = database.connection.conn else {
            throw PGError(sqlState: "08003", message: "the connection is closed", sql: sql)
        }
        let texts: [String?] = values.map {
            switch $0 {
            case .null: nil
            case .int(let n): String(n)
            case .text(let s): s
            }
        }
        try PGConnection.refuseNUL(texts, sql: sql)
        let copies = PGConnection.cStrings(texts)
        defer { copies.forEach { free($0) } }
        let pointers = copies.map { $0.map { UnsafePointer($0) } }
        guard let res = PQexecPrepared(conn, name, Int32(values.count), pointers, nil, nil, 0) else {
            throw database.connection.connectionError(sql)
        }
        let status = PQresultStatus(res)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let error = database.connection.error(of: res, sql: sql)
            PQclear(res)
            throw error
        }
        return res
    }
}

extension SQLValue {
    /// The value as a text parameter, `nil` for NULL.
    fileprivate var text: String? {
        switch self {
        case .null: nil
        case .int(let n): String(n)
        case .text(let s): s
        }
    }
}

/// The current row of a result, read in place.
final class PGRow: SQLRow {
    let res: OpaquePointer
    var row: Int32 = 0

    init(_ res: OpaquePointer) { self.res = res }

    func int(_ i: Int32) -> Int64 {
        guard PQgetisnull(res, row, i) == 0, let p = PQgetvalue(res, row, i) else { return 0 }
        switch p.pointee {
        case 0x74: return 1  // 't': a boolean
        case 0x66: return 0  // 'f'
        default:
            let text = String(cString: p)
            return Int64(text) ?? Double(text).map { Int64($0) } ?? 0
        }
    }

    func text(_ i: Int32) -> String {
        guard PQgetisnull(res, row, i) == 0, let p = PQgetvalue(res, row, i) else { return "" }
        return String(cString: p)
    }

    func isNull(_ i: Int32) -> Bool { PQgetisnull(res, row, i) == 1 }
}

/// SQLite's dialect, as the store writes it, in PostgreSQL's: the store's SQL
/// keeps to what both take except for these.
enum PGDialect {
    /// `sql` for PostgreSQL:
    /// - `?` becomes `$1`, `$2`, … in order, and `?N` becomes `$N` (outside quotes);
    /// - `BEGIN IMMEDIATE` (SQLite's write lock at once) becomes `BEGIN`: the
    ///   shared change log's row lock orders writers (``SharedChangeLog``);
    /// - `INSERT OR IGNORE …` becomes `INSERT … ON CONFLICT DO NOTHING`;
    /// - `instr(a, b)` becomes `strpos(a, b)`.
    /// True for a statement that opens a transaction (`BEGIN …`).
    static func opens(_ sql: String) -> Bool { sql.hasPrefix("BEGIN") }

    /// True for a statement that ends the open transaction: `COMMIT`, `ROLLBACK`
    /// (not `ROLLBACK TO` a savepoint).
    static func closes(_ sql: String) -> Bool { sql == "COMMIT" || sql == "ROLLBACK" }

    /// `values` as the text of a PostgreSQL array (`{"a","b"}`), each element quoted.
    static func array(_ values: [String]) -> String {
        var out = "{"
        for (i, value) in values.enumerated() {
            if i > 0 { out += "," }
            out += "\""
            for c in value.unicodeScalars {
                if c == "\"" || c == "\\" { out += "\\" }
                out.unicodeScalars.append(c)
            }
            out += "\""
        }
        return out + "}"
    }

    static func translate(_ sql: String) -> String {
        if sql == "BEGIN IMMEDIATE" { return "BEGIN" }
        var out = ""
        out.reserveCapacity(sql.utf8.count + 16)
        var next = 1
        var quoted = false
        var scalars = sql.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = scalars.next()
        while let c = pending {
            pending = scalars.next()
            if c == "'" { quoted.toggle() }
            guard c == "?", !quoted else {
                out.unicodeScalars.append(c)
                continue
            }
            var digits = ""
            while let d = pending, ("0"..."9").contains(d) {
                digits.unicodeScalars.append(d)
                pending = scalars.next()
            }
            if digits.isEmpty {
                out += "$\(next)"
                next += 1
            } else {
                out += "$" + digits
            }
        }
        if out.hasPrefix("INSERT OR IGNORE INTO") {
            out = "INSERT INTO" + out.dropFirst("INSERT OR IGNORE INTO".count) + " ON CONFLICT DO NOTHING"
        }
        return out.replacingOccurrences(of: "instr(", with: "strpos(")
    }
}

extension PGDatabase: BatchLookupDatabase {
    /// The per-change checks of an Apply's batch (``BatchLookupDatabase``): four
    /// queries on arrays of the batch's stamps and entries, sent with the kept
    /// writes (and the `BEGIN`) in one pipeline batch, one round trip whatever
    /// the batch's size; with `claiming`, ``ChangeFeed/claim(_:)``'s statement first.
    func lookUp(_ lookups: BatchLookups, claiming: Bool) throws -> (seq: Int64, hlc: HLC)? {
        let nodes = PGDialect.array(lookups.stamps.map(\.node))
        let hlcs = PGDialect.array(lookups.stamps.map(\.hlc.description))
        let ids = PGDialect.array(lookups.entries)
        let stampEntries = PGDialect.array(lookups.stampEntries)
        // The entries of the changes not logged: a skipped change's entry is not read. Each
        // lookup by index: `NOT (EXISTS … OR EXISTS …)` stays a subplan per stamp, where
        // `NOT EXISTS … AND NOT EXISTS …` became anti-joins the planner could run as scans of
        // the whole change log (0.3–0.5 ms a one-change batch in the hub bench, against
        // 0.02 for the first query), and `= ANY(ARRAY(…))` keeps the entries' lookup by index.
        let fresh = """
            SELECT k.entry FROM unnest($1::text[], $2::text[], $3::text[]) AS k(node, hlc, entry)
            WHERE NOT (EXISTS (SELECT 1 FROM changes c WHERE c.node = k.node AND c.hlc = k.hlc)
                    OR EXISTS (SELECT 1 FROM folded f WHERE f.hlc = k.hlc AND f.node = k.node))
            """
        let statements = try [
            """
            SELECT k.node, k.hlc FROM unnest($1::text[], $2::text[]) AS k(node, hlc)
            WHERE EXISTS (SELECT 1 FROM changes c WHERE c.node = k.node AND c.hlc = k.hlc)
               OR EXISTS (SELECT 1 FROM folded f WHERE f.hlc = k.hlc AND f.node = k.node)
            """,
            "SELECT entry FROM erasures WHERE entry = ANY($1::text[])",
            "SELECT \(BatchLookups.entryColumns) FROM entries WHERE id = ANY(ARRAY(\(fresh)))",
            "SELECT entry, key FROM entry_keys WHERE entry = ANY(ARRAY(\(fresh)))",
        ].map { try statement($0) as! PGPrepared }
        var calls = [
            PGPrepared.Call(statement: statements[0], values: [nodes, hlcs]),
            PGPrepared.Call(statement: statements[1], values: [ids]),
            PGPrepared.Call(statement: statements[2], values: [nodes, hlcs, stampEntries]),
            PGPrepared.Call(statement: statements[3], values: [nodes, hlcs, stampEntries]),
        ]
        if claiming {
            calls.insert(
                PGPrepared.Call(statement: try statement(ChangeFeed.claimSQL) as! PGPrepared, values: []), at: 0)
        }
        var results = try ran(opens: false, closes: false) { () throws(PGError) in try flush(then: calls) }
        defer { results.forEach { PQclear($0) } }
        guard results.count == calls.count else { throw connection.connectionError(statements[0].sql) }
        var claimed: (seq: Int64, hlc: HLC)?
        if claiming {
            let row = PGRow(results.removeFirst())
            defer { PQclear(row.res) }
            // As ChangeFeed.claim reads it (the counter's one row).
            claimed = PQntuples(row.res) == 0 ? (0, .zero) : (row.int(0), HLC(rawValue: UInt64(bitPattern: row.int(1))))
        }
        let rows = results.map { PGRow($0) }
        for r in 0..<PQntuples(results[0]) {
            rows[0].row = r
            lookups.addLogged(node: rows[0].text(0), hlc: rows[0].text(1))
        }
        for r in 0..<PQntuples(results[1]) {
            rows[1].row = r
            lookups.addErased(rows[1].text(0))
        }
        for r in 0..<PQntuples(results[2]) {
            rows[2].row = r
            try lookups.addEntry(rows[2])
        }
        for r in 0..<PQntuples(results[3]) {
            rows[3].row = r
            lookups.addKey(entry: rows[3].text(0), key: rows[3].text(1))
        }
        return claimed
    }
}
