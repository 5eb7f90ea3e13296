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
/// One thread at a time, like every connection of the store.
final class PGDatabase: SQLDatabase, @unchecked Sendable {
    // @unchecked: a libpq connection and its statement cache, used by one thread at a time.
    let connection: PGConnection
    /// Prepared statements by their SQLite-dialect text.
    private var prepared: [String: PGPrepared] = [:]
    /// Backs ``changes`` and ``totalChanges``.
    private(set) var changes = 0
    private(set) var totalChanges: Int64 = 0
    /// Between a `BEGIN` that ran and the `COMMIT` or `ROLLBACK` that ends it,
    /// whatever became of the connection meanwhile.
    private var open = false
    /// Statements prepared on this connection object so far: names are never reused.
    private var named = 0

    /// Wraps `connection`.
    init(_ connection: PGConnection) {
        self.connection = connection
    }

    var inTransaction: Bool { connection.inTransaction }

    var transactionFailed: Bool {
        guard let conn = connection.conn else { return false }
        return PQtransactionStatus(conn) == PQTRANS_INERROR
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
        let results = try ran(opens: false, closes: true) { () throws(PGError) in
            try connection.pipeline(statements + [PGStatement("COMMIT")])
        }
        counted(results.dropLast().reduce(0) { $0 + $1.affectedRows })
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
        guard let conn = connection.conn else {
            throw PGError(sqlState: "08003", message: "the connection is closed", sql: statement.sql)
        }
        let res = PQprepare(conn, statement.name, statement.sql, 0, nil)
        defer { PQclear(res) }
        guard let res else { throw connection.connectionError(statement.sql) }
        guard PQresultStatus(res) == PGRES_COMMAND_OK else { throw connection.error(of: res, sql: statement.sql) }
    }

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
        changes = rows
        totalChanges += Int64(rows)
    }
}

/// A statement prepared on a ``PGDatabase``'s connection.
final class PGPrepared: SQLStatement {
    let name: String
    /// The statement in PostgreSQL's dialect.
    let sql: String
    /// The statement as the store wrote it (the database's cache key).
    let key: String?
    /// Whether it opens a transaction (``PGDialect/opens(_:)``).
    let opens: Bool
    /// Whether it ends one (``PGDialect/closes(_:)``).
    let closes: Bool
    unowned let database: PGDatabase

    init(name: String, sql: String, key: String? = nil, database: PGDatabase) {
        self.name = name
        self.sql = sql
        self.key = key
        self.opens = PGDialect.opens(sql)
        self.closes = PGDialect.closes(sql)
        self.database = database
    }

    func run(_ values: [SQLValue]) throws {
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
        let copies: [UnsafeMutablePointer<CChar>?] = values.map {
            switch $0 {
            case .null: nil
            case .int(let n): strdup(String(n))
            case .text(let s): strdup(s)
            }
        }
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
