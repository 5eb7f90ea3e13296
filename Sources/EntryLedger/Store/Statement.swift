import CSQLite
import Foundation

/// A prepared statement owned by its connection's cache.
///
/// Bind with 1-based indexes, step through rows, read columns by 0-based index.
package final class Statement: SQLStatement, SQLRow {
    let stmt: OpaquePointer
    unowned let connection: SQLiteConnection
    /// The statement text (safe to log: values are bound, not in the text).
    package let sql: String

    /// Wraps a prepared statement of `connection`; finalized when released.
    init(_ stmt: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.stmt = stmt
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(stmt) }

    /// Makes the statement ready to run again: resets it and unbinds every
    /// parameter (they read as NULL until bound).
    func reset() {
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
    }

    /// Binds `values` to parameters 1…n. Text is bound by its length in bytes,
    /// never as a C string: a U+0000 (NUL) in it is kept, not taken as its end
    /// (which once stored `before\0after` as `before` and looked `x\0y` up as `x`).
    /// The service refuses a NUL in the free text it stores (doc/protocol.md
    /// "Free text"); PostgreSQL, whose text cannot hold one, refuses it
    /// (`PGConnection.refuseNUL`).
    /// - Throws: ``SQLiteError`` (SQLITE_RANGE for too many values).
    @discardableResult
    package func bind(_ values: [SQLValue]) throws(SQLiteError) -> Statement {
        for (i, v) in values.enumerated() {
            let idx = Int32(i + 1)
            let rc: Int32
            switch v {
            case .null: rc = sqlite3_bind_null(stmt, idx)
            case .int(let n): rc = sqlite3_bind_int64(stmt, idx, n)
            case .text(var s):
                rc = s.withUTF8 { bytes in
                    guard let base = bytes.baseAddress, !bytes.isEmpty else {
                        return sqlite3_bind_text(stmt, idx, "", 0, csqlite_transient())
                    }
                    return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                        sqlite3_bind_text(stmt, idx, $0, Int32(bytes.count), csqlite_transient())
                    }
                }
            }
            if rc != SQLITE_OK { throw connection.error(rc, sql: sql) }
        }
        return self
    }

    /// Binds `values` and runs the statement to completion (no rows expected).
    /// - Throws: ``SQLiteError`` (constraint violations, I/O, full disk …).
    package func run(_ values: [SQLValue] = []) throws(SQLiteError) {
        try bind(values)
        defer { sqlite3_reset(stmt) }
        var rc = sqlite3_step(stmt)
        while rc == SQLITE_ROW { rc = sqlite3_step(stmt) }
        if rc != SQLITE_DONE { throw connection.error(rc, sql: sql) }
    }

    /// Binds `values` and calls `row` for each result row (the statement is
    /// reset afterwards). `row` reads columns with ``int(_:)`` and ``text(_:)``.
    /// - Throws: ``SQLiteError``, or whatever `row` throws.
    package func query(_ values: [SQLValue] = [], _ row: (any SQLRow) throws -> Void) throws {
        try bind(values)
        defer { sqlite3_reset(stmt) }
        while true {
            let rc = sqlite3_step(stmt)
            if rc == SQLITE_DONE { return }
            if rc != SQLITE_ROW { throw connection.error(rc, sql: sql) }
            try row(self)
        }
    }

    /// The integer value of column `i` (0-based); 0 for NULL.
    package func int(_ i: Int32) -> Int64 { sqlite3_column_int64(stmt, i) }

    /// The text value of column `i` (0-based), all of its bytes (a NUL in it
    /// included); `""` for NULL.
    package func text(_ i: Int32) -> String {
        guard let p = sqlite3_column_text(stmt, i) else { return "" }
        let count = Int(sqlite3_column_bytes(stmt, i))
        return String(decoding: UnsafeBufferPointer(start: p, count: count), as: UTF8.self)
    }

    /// True when column `i` is NULL.
    package func isNull(_ i: Int32) -> Bool { sqlite3_column_type(stmt, i) == SQLITE_NULL }
}
