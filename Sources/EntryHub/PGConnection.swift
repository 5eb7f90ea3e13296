import CPostgres
import Dispatch
import Glibc

/// The rows of one statement's result, in text form.
struct PGResult: Sendable, Equatable {
    /// The column names, in order.
    let columns: [String]
    /// Each row's values in column order, as text; `nil` for SQL NULL.
    let rows: [[String?]]
    /// Rows inserted, updated or deleted (PQcmdTuples), 0 for other statements.
    let affectedRows: Int

    /// The value of `column` in row `row`; `nil` when NULL or when there is no such column.
    subscript(row row: Int, column column: String) -> String? {
        guard let c = columns.firstIndex(of: column) else { return nil }
        return rows[row][c]
    }
}

/// One statement of a pipeline batch (``PGConnection/pipeline(_:)``): SQL text with
/// `$1`, `$2`, … and their values as text (`nil` for NULL).
struct PGStatement: Sendable {
    /// The SQL text: one statement.
    let sql: String
    /// The values of `$1`, `$2`, …, as text; `nil` for NULL.
    let params: [String?]

    /// A statement with its text parameters.
    init(_ sql: String, _ params: [String?] = []) {
        self.sql = sql
        self.params = params
    }
}

/// A notification received on a channel this connection listens on (`LISTEN`).
struct PGNotification: Sendable, Equatable {
    /// The channel's name.
    let channel: String
    /// The payload given to `NOTIFY` (empty when none).
    let payload: String
    /// The server process that sent it.
    let processID: Int32
}

/// A transaction's isolation level (postgresql.org/docs/15/transaction-iso.html).
enum PGIsolation: String, Sendable {
    /// Each statement sees what was committed before it began (PostgreSQL's default).
    case readCommitted = "READ COMMITTED"
    /// The transaction sees one snapshot; a write conflicting with a concurrent
    /// commit fails with a serialization failure.
    case repeatableRead = "REPEATABLE READ"
    /// As if the transactions ran one after another; may fail with a serialization failure.
    case serializable = "SERIALIZABLE"
}

/// One libpq connection to a PostgreSQL server.
///
/// Not safe for concurrent use: one thread at a time (a store keeps a pool, one
/// connection per thread at work). Parameters travel as text (`$1`, `$2`, …),
/// never spliced into the SQL; results come back as text. Closed by ``close()``
/// or when released.
final class PGConnection: @unchecked Sendable {
    // @unchecked: `conn` is a libpq PGconn pointer, used by one thread at a time.
    /// libpq's connection; `nil` once closed. ``PGDatabase`` prepares and runs
    /// its statements on it directly.
    private(set) var conn: OpaquePointer?

    /// Why libpq would refuse the value of connection option `keyword`
    /// before reaching any server, or `nil`: integers where it takes them, the
    /// words it knows for the modes (PostgreSQL 15's libpq, "Parameter Key
    /// Words"). A URI like that is a configuration error (exit 78), not a
    /// server that cannot be reached yet (69, which systemd retries).
    static func badValue(_ keyword: String, _ value: String) -> String? {
        let words: [String: [String]] = [
            "sslmode": ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"],
            "gssencmode": ["disable", "prefer", "require"],
            "channel_binding": ["disable", "prefer", "require"],
            "target_session_attrs": ["any", "read-write", "read-only", "primary", "standby", "prefer-standby"],
        ]
        let integers: Set<String> = [
            "connect_timeout", "keepalives", "keepalives_idle", "keepalives_interval",
            "keepalives_count", "tcp_user_timeout",
        ]
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if keyword == "port" {
            // One port per host, comma-separated; an empty one takes the default.
            for port in trimmed.split(separator: ",", omittingEmptySubsequences: false) {
                let p = port.trimmingCharacters(in: .whitespaces)
                if !p.isEmpty, !(Int(p).map { (1...65535).contains($0) } ?? false) {
                    return "port: '\(p)' is not a port number (1-65535)"
                }
            }
        } else if integers.contains(keyword), !trimmed.isEmpty, Int(trimmed) == nil {
            return "\(keyword): '\(value)' is not a whole number"
        } else if let allowed = words[keyword], !allowed.contains(value) {
            return "\(keyword): '\(value)' is not one of \(allowed.joined(separator: ", "))"
        }
        return nil
    }

    /// Connects to the server at `uri`.
    /// - Parameters:
    ///   - uri: a libpq connection URI (`postgresql://[user[:password]@][host][:port]/database?param=value`;
    ///     a Unix socket by `host=/its/directory`) or a `key=value` string.
    ///   - database: when given, the database to use instead of the URI's.
    /// - Throws: ``PGError`` (SQLSTATE `08001`) whose message says what was
    ///   wrong with the URI, or why the server could not be reached and what to check;
    ///   or that libpq itself could not be loaded (cpostgres.h), naming the package.
    init(uri: String, database: String? = nil) throws(PGError) {
        if let failure = cpg_load() { throw PGError(sqlState: "08001", message: String(cString: failure)) }
        var parseError: UnsafeMutablePointer<CChar>?
        if let options = PQconninfoParse(uri, &parseError) {
            defer { PQconninfoFree(options) }
            var i = 0
            while let keyword = options[i].keyword {
                if let value = options[i].val, let why = Self.badValue(String(cString: keyword), String(cString: value))
                {
                    throw PGError(
                        sqlState: PGError.invalidURI,
                        message:
                            "the database URI is not valid (\(why)): fix it in --db or database = (a value libpq would refuse at every try)"
                    )
                }
                i += 1
            }
        } else {
            // libpq quotes the offending part, which may be a password: never repeated.
            let why =
                parseError.map { String(cString: $0).trimmingNewlines.replacing(/"[^"]*"?/, with: "\"…\"") }
                ?? "out of memory"
            if let parseError { PQfreemem(parseError) }
            throw PGError(
                sqlState: PGError.invalidURI,
                message:
                    "the database URI is not valid (\(why)): write it as postgresql://[user@][host][:port]/database, or for a Unix socket postgresql:///database?host=/socket/directory"
            )
        }
        // The URI first (expand_dbname), then the settings entryd needs; a later
        // keyword overrides the URI's.
        var pairs: [(String, String)] = [("dbname", uri), ("client_encoding", "UTF8"), ("application_name", "entryd")]
        if let database { pairs.append(("dbname", database)) }
        let keys = pairs.map { strdup($0.0) }
        let values = pairs.map { strdup($0.1) }
        defer { (keys + values).forEach { free($0) } }
        let k = keys.map { UnsafePointer($0) } + [nil]
        let v = values.map { UnsafePointer($0) } + [nil]
        conn = PQconnectdbParams(k, v, 1)
        guard let conn else { throw PGError(sqlState: "08001", message: "libpq could not allocate a connection") }
        if PQstatus(conn) != CONNECTION_OK {
            let why = String(cString: PQerrorMessage(conn)).trimmingNewlines
            PQfinish(conn)
            self.conn = nil
            throw PGError(
                sqlState: "08001",
                message:
                    "cannot connect to PostgreSQL: \(why) — check that the server runs and that the URI names its host (for a Unix socket, host= the socket's directory), port, user and database"
            )
        }
        // Notices (e.g. "relation … already exists, skipping") are not errors:
        // libpq would print them on stderr.
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
    }

    deinit { close() }

    /// Closes the connection; later calls fail with SQLSTATE `08003`.
    func close() {
        if let conn { PQfinish(conn) }
        conn = nil
    }

    /// Whether the connection is inside a transaction block (also a failed one).
    var inTransaction: Bool {
        guard let conn else { return false }
        let s = PQtransactionStatus(conn)
        return s == PQTRANS_INTRANS || s == PQTRANS_INERROR || s == PQTRANS_ACTIVE
    }

    /// The server process serving this connection (`pg_backend_pid()`).
    var serverProcessID: Int32 { conn.map { PQbackendPID($0) } ?? 0 }

    // MARK: - Statements

    /// Refuses text parameters libpq would pass cut short: a value is a C
    /// string, which ends at a U+0000 (NUL), so the rest would be dropped without
    /// a word. Called before anything of a statement or batch is sent.
    /// - Throws: ``PGError`` 22021 (character_not_in_repertoire, what the server
    ///   answers for a NUL in text) when a value holds U+0000.
    static func refuseNUL(_ params: [String?], sql: String) throws(PGError) {
        if params.contains(where: { $0?.utf8.contains(0) == true }) {
            throw PGError(sqlState: "22021", message: "a text parameter holds U+0000 (NUL)", sql: sql)
        }
    }

    /// `params` as C strings for libpq (`nil` for NULL; each to be freed);
    /// checked by ``refuseNUL(_:sql:)`` first.
    static func cStrings(_ params: [String?]) -> [UnsafeMutablePointer<CChar>?] {
        params.map { $0.map { strdup($0) } ?? nil }
    }

    /// Runs `sql` with text parameters and returns its rows.
    ///
    /// Without parameters the text may hold several statements separated by
    /// `;` (the simple protocol: they run in one implicit transaction unless
    /// the text has its own `BEGIN`/`COMMIT`), and the last one's result is returned.
    /// - Parameters:
    ///   - sql: the statement, with `$1`, `$2`, … for `params`.
    ///   - params: the values as text, `nil` for NULL.
    /// - Throws: ``PGError`` with the server's SQLSTATE and message.
    @discardableResult
    func execute(_ sql: String, _ params: [String?] = []) throws(PGError) -> PGResult {
        let conn = try open(sql)
        let res: OpaquePointer?
        if params.isEmpty {
            res = PQexec(conn, sql)
        } else {
            try Self.refuseNUL(params, sql: sql)
            let copies = Self.cStrings(params)
            defer { copies.forEach { free($0) } }
            let pointers = copies.map { $0.map { UnsafePointer($0) } }
            res = PQexecParams(conn, sql, Int32(params.count), nil, pointers, nil, nil, 0)
        }
        defer { PQclear(res) }
        return try check(res, sql: sql)
    }

    /// Runs `body` in one transaction: `BEGIN`, then `COMMIT` when `body`
    /// returns, `ROLLBACK` when it throws (and the error is passed on).
    ///
    /// A statement that failed inside `body` aborts the transaction even if
    /// `body` caught its error: then nothing is committed and a ``PGError``
    /// (`25P02`) says so. A serialization failure or deadlock (at any statement,
    /// or at `COMMIT`) comes out as a ``PGError`` whose
    /// ``PGError/isSerializationFailure`` is true: the transaction was rolled
    /// back and may be run again whole.
    /// - Returns: what `body` returned, once committed.
    /// - Throws: what `body` throws; ``PGError``.
    func transaction<T>(isolation: PGIsolation = .readCommitted, _ body: (PGConnection) throws -> T) throws -> T {
        try execute("BEGIN ISOLATION LEVEL \(isolation.rawValue)")
        let value: T
        do {
            value = try body(self)
        } catch {
            rollbackQuietly()
            throw error
        }
        if let conn, PQtransactionStatus(conn) == PQTRANS_INERROR {
            rollbackQuietly()
            throw PGError(
                sqlState: "25P02", message: "a statement of the transaction failed (its error was caught): rolled back")
        }
        do {
            try execute("COMMIT")
        } catch {
            rollbackQuietly()
            throw error
        }
        return value
    }

    /// Sends every statement, then one sync, in pipeline mode (one round trip),
    /// and reads their results.
    ///
    /// The statements up to the sync run as one implicit transaction (unless
    /// they hold their own `BEGIN`/`COMMIT`): when one fails, the ones after it
    /// are not run and the batch's writes are rolled back. Must not be called
    /// inside ``transaction(isolation:_:)`` unless the batch is meant to join it.
    /// A large batch cannot deadlock against the server's replies: libpq reads
    /// them into memory while it waits to send (pqSendSome), as
    /// `PGConnectionTests` checks with 1.5 MB sent against 6 MB of replies.
    /// - Returns: one result per statement, in order.
    /// - Throws: ``PGError`` of the first statement that failed (its `sql` says which).
    @discardableResult
    func pipeline(_ statements: [PGStatement]) throws(PGError) -> [PGResult] {
        let conn = try open("")
        guard !statements.isEmpty else { return [] }
        for statement in statements { try Self.refuseNUL(statement.params, sql: statement.sql) }
        guard PQenterPipelineMode(conn) == 1 else { throw connectionError("cannot enter pipeline mode") }
        defer { PQexitPipelineMode(conn) }
        for statement in statements {
            let copies = Self.cStrings(statement.params)
            let pointers = copies.map { $0.map { UnsafePointer($0) } }
            let sent = PQsendQueryParams(conn, statement.sql, Int32(statement.params.count), nil, pointers, nil, nil, 0)
            copies.forEach { free($0) }
            guard sent == 1 else { throw connectionError(statement.sql) }
        }
        // Sends what is buffered, then waits for the replies.
        guard PQpipelineSync(conn) == 1 else { throw connectionError("pipeline sync") }
        var results: [PGResult] = []
        var firstError: PGError?
        for statement in statements {
            guard let res = PQgetResult(conn) else { throw connectionError(statement.sql) }
            do {
                results.append(try check(res, sql: statement.sql))
            } catch {
                if firstError == nil { firstError = error }
                results.append(PGResult(columns: [], rows: [], affectedRows: 0))
            }
            PQclear(res)
            // Each statement's results end with a NULL.
            while let extra = PQgetResult(conn) { PQclear(extra) }
        }
        guard let sync = PQgetResult(conn) else { throw connectionError("pipeline sync") }
        let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
        PQclear(sync)
        if let firstError { throw firstError }
        guard synced else { throw connectionError("pipeline sync") }
        return results
    }

    // MARK: - LISTEN / NOTIFY

    /// Starts listening on `channel`: notifications sent to it after this call
    /// (and after this connection's transaction commits, if in one) are kept
    /// for ``waitForNotification(timeout:)``.
    /// - Throws: ``PGError``.
    func listen(_ channel: String) throws(PGError) {
        try execute("LISTEN \(try quoteIdentifier(channel))")
    }

    /// Sends `payload` on `channel` (`pg_notify`): delivered to listeners when
    /// this connection's transaction commits (at once outside a transaction),
    /// never when it rolls back.
    /// - Throws: ``PGError``.
    func notify(_ channel: String, payload: String) throws(PGError) {
        try execute("SELECT pg_notify($1, $2)", [channel, payload])
    }

    /// The next notification on a channel this connection listens on: one
    /// already received, else the first to arrive within `timeout` seconds.
    /// - Returns: the notification, or `nil` when none came in time.
    /// - Throws: ``PGError`` (class 08) when the connection is lost while waiting.
    func waitForNotification(timeout: Double) throws(PGError) -> PGNotification? {
        let conn = try open("")
        let deadline = DispatchTime.now().uptimeNanoseconds &+ UInt64(max(0, timeout) * 1e9)
        while true {
            if let n = PQnotifies(conn) {
                defer { PQfreemem(n) }
                return PGNotification(
                    channel: String(cString: n.pointee.relname),
                    payload: String(cString: n.pointee.extra),
                    processID: n.pointee.be_pid)
            }
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { return nil }
            var fd = pollfd(fd: PQsocket(conn), events: Int16(POLLIN), revents: 0)
            let ms = Int32(min(UInt64(Int32.max), (deadline - now + 999_999) / 1_000_000))
            let ready = poll(&fd, 1, ms)
            if ready < 0 && errno != EINTR { throw PGError(sqlState: "08006", message: "poll failed (errno \(errno))") }
            if ready > 0 && PQconsumeInput(conn) == 0 { throw connectionError("waiting for notifications") }
        }
    }

    // MARK: - Helpers

    /// `name` quoted as an SQL identifier (PQescapeIdentifier).
    /// - Throws: ``PGError`` when libpq refuses it (e.g. invalid UTF-8).
    func quoteIdentifier(_ name: String) throws(PGError) -> String {
        let conn = try open("")
        guard let quoted = PQescapeIdentifier(conn, name, name.utf8.count) else {
            throw PGError(sqlState: "22023", message: String(cString: PQerrorMessage(conn)).trimmingNewlines)
        }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }

    private func open(_ sql: String) throws(PGError) -> OpaquePointer {
        guard let conn else { throw PGError(sqlState: "08003", message: "the connection is closed", sql: sql) }
        return conn
    }

    private func rollbackQuietly() {
        guard let conn, PQstatus(conn) == CONNECTION_OK, PQtransactionStatus(conn) != PQTRANS_IDLE else { return }
        PQclear(PQexec(conn, "ROLLBACK"))
    }

    /// After the server went away (a restart, a failover): connects again with
    /// the same parameters, unless inside a transaction. Prepared statements
    /// are gone afterwards.
    /// - Returns: true when the connection was lost and is back.
    /// - Throws: ``PGError`` (`08006`) when it is lost and cannot be made again yet.
    func reconnectIfLost() throws(PGError) -> Bool {
        guard let conn, PQstatus(conn) == CONNECTION_BAD else { return false }
        try reconnect()
        return true
    }

    /// Connects again with the same parameters, whatever libpq thinks of the
    /// current connection (after a failure without a server's SQLSTATE, libpq
    /// may not have marked it bad yet). Prepared statements are gone afterwards.
    /// - Throws: ``PGError`` (`08006`) when the server cannot be reached yet.
    func reconnect() throws(PGError) {
        guard let conn else { throw PGError(sqlState: "08003", message: "the connection is closed") }
        PQreset(conn)
        guard PQstatus(conn) == CONNECTION_OK else { throw connectionError("reconnecting") }
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
        for sql in session { try execute(sql) }
    }

    /// Session settings run after every connect (``setSession(_:)``).
    private(set) var session: [String] = []

    /// Runs `statements` (`SET …`) now and again after every reconnect, so the
    /// session keeps them.
    /// - Throws: ``PGError``.
    func setSession(_ statements: [String]) throws(PGError) {
        session = statements
        for sql in statements { try execute(sql) }
    }

    func connectionError(_ sql: String) -> PGError {
        let why = conn.map { String(cString: PQerrorMessage($0)).trimmingNewlines } ?? "the connection is closed"
        return PGError(
            sqlState: "08006", message: why.isEmpty ? "the connection to the server was lost" : why, sql: sql)
    }

    private func check(_ res: OpaquePointer?, sql: String) throws(PGError) -> PGResult {
        guard let res else { throw connectionError(sql) }
        let status = PQresultStatus(res)
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY {
            return PGResult(res)
        }
        throw error(of: res, sql: sql)
    }

    /// The error a failed result `res` of `sql` reports.
    func error(of res: OpaquePointer, sql: String) -> PGError {
        let status = PQresultStatus(res)
        if status == PGRES_PIPELINE_ABORTED {
            return PGError(sqlState: "25P02", message: "not run: an earlier statement of the batch failed", sql: sql)
        }
        let state = PQresultErrorField(res, cpg_diag_sqlstate()).map { String(cString: $0) }
        let primary = PQresultErrorField(res, cpg_diag_message_primary()).map { String(cString: $0) }
        // No SQLSTATE: libpq's own failure (the server went away mid-reply, a broken
        // message), which only a new connection mends.
        return PGError(
            sqlState: state ?? "08006",
            message: primary ?? String(cString: PQresultErrorMessage(res)).trimmingNewlines, sql: sql)
    }
}

extension PGResult {
    /// The rows of a successful result `res`, as text.
    init(_ res: OpaquePointer) {
        let nColumns = PQnfields(res)
        let nRows = PQntuples(res)
        let columns = (0..<nColumns).map { String(cString: PQfname(res, $0)) }
        var rows: [[String?]] = []
        rows.reserveCapacity(Int(nRows))
        for r in 0..<nRows {
            rows.append(
                (0..<nColumns).map { c in
                    PQgetisnull(res, r, c) == 1 ? nil : String(cString: PQgetvalue(res, r, c))
                })
        }
        self.init(columns: columns, rows: rows, affectedRows: Int(String(cString: PQcmdTuples(res))) ?? 0)
    }
}

extension String {
    /// Without the trailing newlines libpq's messages end with.
    var trimmingNewlines: String {
        var s = Substring(self)
        while let last = s.last, last == "\n" || last == "\r" { s = s.dropLast() }
        return String(s)
    }
}
