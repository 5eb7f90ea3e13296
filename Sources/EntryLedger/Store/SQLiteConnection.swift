import CSQLite
import EntryModel

/// One SQLite connection and its prepared statement cache.
///
/// Not thread-safe and not `Sendable` in spirit: each connection is used by one
/// thread at a time (the writer, one round at a time, or a reader checked out of the pool).
/// Statements are prepared once per connection and reused, always with bound
/// parameters, never with SQL built from values.
package final class SQLiteConnection: SQLDatabase, @unchecked Sendable {
    // @unchecked: `handle` is an sqlite3 pointer, used by one thread at a time, as are the cached statements.
    /// The WAL is truncated to this size after each reset (`journal_size_limit`): 16 MiB.
    static let walSizeLimitBytes = 16 << 20
    let handle: OpaquePointer
    /// How long a locked database is retried, in milliseconds (as opened).
    let busyTimeoutMs: Int32

    /// Process-wide SQLite settings, applied once before the first connection
    /// opens (they must precede `sqlite3_initialize`): no memory statistics, so
    /// no global mutex around each of SQLite's allocations. If something else
    /// initialised SQLite first, the setting is refused and the default stays.
    private static let configureLibrary: Void = { _ = csqlite_config_memstatus(0) }()
    private var cache: [String: Statement] = [:]

    /// Opens (and creates, unless `readOnly`) the database at `path`.
    ///
    /// Applies: extended result codes, a busy timeout, `foreign_keys=ON`,
    /// defensive mode, the `pinyin` collation (``PinyinCollation``); for the writer WAL mode and `synchronous=FULL` (a reply
    /// means durable: doc/design.md "Durability"; group commit pays for it).
    /// - Parameters:
    ///   - busyTimeoutMs: how long a locked database is retried, in milliseconds.
    ///   - vfs: the SQLite VFS by name (`nil`: the default; tests inject faults with their own).
    /// - Throws: ``SQLiteError`` when the file cannot be opened or configured.
    package init(path: String, readOnly: Bool = false, busyTimeoutMs: Int32 = 5000, vfs: String? = nil)
        throws(SQLiteError)
    {
        _ = SQLiteConnection.configureLibrary
        var db: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, vfs)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: "\(message) (opening '\(path)')")
        }
        handle = db
        self.busyTimeoutMs = busyTimeoutMs
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMs)
        _ = csqlite_db_config_defensive(db, 1)
        try PinyinCollation.register(on: db)
        // Deleted and overwritten content is overwritten with zeros in the file, not only
        // unlinked from the b-tree (sqlite.org/pragma.html#pragma_secure_delete): an
        // erasure (doc/design.md "Erasure") must leave no value behind in free space.
        // > When secure_delete is on, SQLite overwrites deleted content with zeros.
        try execute("PRAGMA secure_delete=ON")
        if readOnly {
            try execute("PRAGMA query_only=ON")
        } else {
            try execute("PRAGMA journal_mode=WAL")
            try execute("PRAGMA synchronous=FULL")
            // After a checkpoint resets the WAL, truncate the file back to this
            // size (bytes), so a burst of writes does not leave a large WAL behind.
            try execute("PRAGMA journal_size_limit=\(SQLiteConnection.walSizeLimitBytes)")
            // The writer's page cache, in KiB (negative = KiB, sqlite.org/pragma.html#pragma_cache_size):
            // 32 MiB keeps the hot index pages of a million-entry table in memory during
            // imports; the readers keep SQLite's 2 MiB default.
            try execute("PRAGMA cache_size=-32768")
            // Savepoint sub-journals in memory (sqlite.org/tempfiles.html#statement_journals,
            // pragma.html#pragma_temp_store). The writer opens a savepoint per job of a
            // group commit; a sub-journal past 64 KiB would otherwise spill to a temp file
            // and every page a later job of the round touches would cost a pwrite of 4 KiB.
            // A sub-journal holds the original pages of one job (an Add about a dozen, an
            // Import of 1,000 rows a few MiB) and is freed when the job's savepoint ends.
            try execute("PRAGMA temp_store=MEMORY")
        }
        try execute("PRAGMA foreign_keys=ON")
    }

    deinit {
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements without parameters or results (schema, pragmas).
    /// - Throws: ``SQLiteError``.
    package func execute(_ sql: String) throws(SQLiteError) {
        var errmsg: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errmsg)
        if rc != SQLITE_OK {
            let message = errmsg.map { String(cString: $0) } ?? ""
            sqlite3_free(errmsg)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: message, sql: sql)
        }
    }

    /// The cached prepared statement for `sql`, reset and with bindings cleared.
    /// - Throws: ``SQLiteError`` when the SQL does not compile.
    package func statement(_ sql: String) throws(SQLiteError) -> any SQLStatement { try prepared(sql) }

    /// ``statement(_:)`` as its concrete type (backup, migrations, the bench's baseline).
    package func prepared(_ sql: String) throws(SQLiteError) -> Statement {
        if let s = cache[sql] {
            s.reset()
            return s
        }
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw error(rc, sql: sql) }
        let s = Statement(stmt, connection: self, sql: sql)
        cache[sql] = s
        return s
    }

    /// The error for result code `rc` with SQLite's current message.
    func error(_ rc: Int32, sql: String) -> SQLiteError {
        SQLiteError(
            code: sqlite3_extended_errcode(handle) != 0 ? sqlite3_extended_errcode(handle) : rc,
            message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    /// The rowid of the last row inserted on this connection (sqlite3_last_insert_rowid).
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    package var changes: Int { Int(sqlite3_changes(handle)) }

    /// True while a transaction is open.
    package var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Always false: SQLite undoes a failed statement alone and the transaction goes on.
    package var transactionFailed: Bool { false }

    /// Rows inserted, changed or deleted by completed statements on this
    /// connection since it opened, triggers included (`sqlite3_total_changes64`).
    /// A statement that failed counts nothing: SQLite undid it.
    package var totalChanges: Int64 { sqlite3_total_changes64(handle) }

    /// Runs `PRAGMA wal_checkpoint(mode)`; errors are ignored (a checkpoint is an optimisation).
    func checkpoint(_ mode: String = "PASSIVE") {
        try? execute("PRAGMA wal_checkpoint(\(mode))")
    }
}
