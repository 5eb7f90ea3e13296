import CSQLite
import EntryModel

/// A failed SQLite call: the extended result code, SQLite's message and the
/// statement text (never its bound values: form data is personal).
package struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// Extended result code (sqlite.org/rescode.html), e.g. 1555 for SQLITE_CONSTRAINT_PRIMARYKEY.
    package let code: Int32
    /// SQLite's message (sqlite3_errmsg) or entryd's own words; never bound values.
    package let message: String
    /// The SQL text, without bound values; may be empty.
    package let sql: String

    /// An error from an extended result code, message and (optional) SQL text.
    package init(code: Int32, message: String, sql: String = "") {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// The primary result code (the low 8 bits), e.g. SQLITE_FULL = 13.
    var primaryCode: Int32 { code & 0xFF }

    /// `SQLite error CODE (sqlite3_errstr text): message`, plus ` in 'SQL'` when known.
    package var description: String {
        let text = String(cString: sqlite3_errstr(code))
        return sql.isEmpty
            ? "SQLite error \(code) (\(text)): \(message)" : "SQLite error \(code) (\(text)): \(message) in '\(sql)'"
    }
}

extension SQLiteError: StorageError {
    /// The domain error for a failed write, with a reason safe to show (no
    /// values), chosen by the primary result code (sqlite.org/rescode.html):
    /// full disk, read-only, busy or locked, I/O error, damaged file; any other
    /// code names itself.
    package var entryError: EntryError {
        switch primaryCode {
        case SQLITE_FULL: return .storageFailed("the disk is full: free space, then retry")
        case SQLITE_READONLY: return .storageFailed("the database is read-only")
        case SQLITE_BUSY, SQLITE_LOCKED: return .storageFailed("the database is busy: retry")
        case SQLITE_IOERR: return .storageFailed("an I/O error occurred writing the database")
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .storageFailed("the database file is damaged")
        default: return .storageFailed("the store refused the write (SQLite code \(code))")
        }
    }
}
