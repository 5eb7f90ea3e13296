import EntryModel

/// A value bound to a statement parameter: what the store writes is integers
/// and text, or NULL.
package enum SQLValue {
    case null
    case int(Int64)
    case text(String)
}

/// One result row while a query steps through them. Columns are 0-based.
package protocol SQLRow: AnyObject {
    /// The integer value of column `i`; 0 for NULL (a server's `t`/`f` read as 1/0).
    func int(_ i: Int32) -> Int64
    /// The text value of column `i`; `""` for NULL.
    func text(_ i: Int32) -> String
    /// True when column `i` is NULL.
    func isNull(_ i: Int32) -> Bool
}

/// A prepared statement of one ``SQLDatabase``, reused with new parameters.
/// Parameters are positional: `?` (the next one) or `?N` (the N-th, 1-based).
package protocol SQLStatement: AnyObject {
    /// Binds `values` to parameters 1…n and runs the statement to completion.
    /// - Throws: the database's ``StorageError``.
    func run(_ values: [SQLValue]) throws
    /// Binds `values` and calls `row` for each result row, in order.
    /// - Throws: the database's ``StorageError``, or what `row` throws.
    func query(_ values: [SQLValue], _ row: (any SQLRow) throws -> Void) throws
}

extension SQLStatement {
    /// Runs the statement without parameters.
    package func run() throws { try run([]) }
    /// Calls `row` for each result row of the statement without parameters.
    package func query(_ row: (any SQLRow) throws -> Void) throws { try query([], row) }
}

/// One connection to the store's database, used by one thread at a time: the
/// writer (one round at a time) or a reader checked out of the pool.
///
/// The store's SQL is written once for both engines: SQLite's dialect with
/// portable types (integers for flags, text for JSON and stamps), which a
/// database server's connection translates where the dialects differ
/// (placeholders, `BEGIN IMMEDIATE`, `INSERT OR IGNORE`, `instr`).
///
/// Implemented by ``SQLiteConnection`` and by the PostgreSQL connection of
/// EntryHub.
package protocol SQLDatabase: AnyObject {
    /// The prepared statement for `sql`, ready to run (cached per connection).
    /// - Throws: the database's ``StorageError`` when the SQL does not compile.
    func statement(_ sql: String) throws -> any SQLStatement
    /// Runs one or more statements without parameters or results.
    /// - Throws: the database's ``StorageError``.
    func execute(_ sql: String) throws
    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { get }
    /// Rows changed by completed statements since the connection opened: a
    /// job that changed it has written.
    var totalChanges: Int64 { get }
    /// True while a transaction is open (also one a failed statement spoilt).
    var inTransaction: Bool { get }
    /// True when a failed statement left the open transaction unusable until it
    /// is rolled back, or back to a savepoint (a database server's rule; SQLite
    /// undoes only the failed statement and never reports this).
    var transactionFailed: Bool { get }
}

/// The change log of a node that several store instances share in one
/// database server: the seq and the node's clock live in the database, and a
/// write transaction holds them from its first statement to its commit, so
/// seqs commit in order across instances (a reader of `seq > N` never skips a
/// row that commits later) and HLC stamps stay unique per node.
///
/// ``EntryStore`` calls it from its writer; implemented by EntryHub's PostgreSQL
/// change feed. A store on SQLite has one writer process and needs none.
package protocol SharedChangeLog: AnyObject, Sendable {
    /// Right after a write transaction began: takes the node's counter until
    /// the transaction ends and returns the highest committed seq and the
    /// node's last HLC.
    /// - Throws: the database's ``StorageError`` (the round fails).
    func claim(_ db: any SQLDatabase) throws -> (seq: Int64, hlc: HLC)
    /// Commits the write transaction on `db`. When it logged changes or moved
    /// the clock (`publishing`), first stores the new highest seq and last HLC
    /// and wakes the readers of every instance once it commits — in one round
    /// trip with the `COMMIT` where the server allows (pipeline mode).
    /// - Throws: the database's ``StorageError`` (nothing of the round is kept).
    func commit(_ db: any SQLDatabase, publishing: (seq: Int64, hlc: HLC)?) throws
}

/// A database server that keeps a store (``EntryStore/init(server:writer:readers:schemaVersion:wallClock:copies:canonicaliser:)``):
/// what differs from a SQLite file, beside the shared change log. Implemented
/// by EntryHub for PostgreSQL.
package protocol StoreServer: SharedChangeLog {
    /// The server and database for people, without credentials (`Status`'s `database`).
    var location: String { get }
    /// The database's identity, the same for every instance that serves it
    /// (e.g. `postgresql:SYSTEM-ID/NAME`): a database restored on another
    /// server is a copy (``CopiedDatabasePolicy``).
    var home: String { get }
    /// Two numbers that change when the database is dropped and made again
    /// (e.g. the server's system id and the database's oid): a database
    /// replaced under the same name begins a new incarnation.
    var identity: (device: UInt64, inode: UInt64) { get }
    /// This instance's marker file (``NodeMarker``): outside the database, so
    /// that a database that went back in time leaves evidence.
    var markerPath: String { get }
    /// The SQL that opens a read: one snapshot for all its statements.
    var readBegin: String { get }
    /// Calls `publish` with the highest committed seq after each commit of any
    /// instance, and `nodeChanged` when another instance changed the node
    /// table (``announceNodeChange(_:)``), from a thread of its own, until ``close()``.
    ///
    /// `reachable` is called with false (and the reason) when the server goes
    /// away, and with true when it is back, once per change.
    func watchCommits(
        _ publish: @escaping @Sendable (Int64) -> Void, nodeChanged: @escaping @Sendable () -> Void,
        reachable: @escaping @Sendable (Bool, String) -> Void)
    /// Tells the running instances, once the transaction on `db` commits, that
    /// the node table changed (a new incarnation began at this start).
    /// - Throws: the server's ``StorageError``.
    func announceNodeChange(_ db: any SQLDatabase) throws
    /// Removes the dead rows erasure and compaction leave (e.g. `VACUUM` of the
    /// store's tables), on `db` outside any transaction. With `rewritingValues`
    /// (after an erasure) the tables that hold personal values are rewritten
    /// whole, so no page of the server's files keeps a copy of an erased value
    /// (a plain `VACUUM` only marks the space free, its bytes stay).
    /// - Throws: the server's ``StorageError``.
    func removeDeadRows(_ db: any SQLDatabase, rewritingValues: Bool) throws
    /// The bytes the change log takes (its tables and indexes).
    /// - Throws: the server's ``StorageError``.
    func changeLogBytes(_ db: any SQLDatabase) throws -> Int64
    /// The erasure proof on a server: for each of the store's tables, the rows
    /// of any text column that still hold one of `needles` (as given, or as
    /// stored JSON writes them), as one ``ErasureVerification/FileScan`` per
    /// table (its `path` names the table, `bytes` its size).
    /// - Throws: the server's ``StorageError``.
    func scan(_ needles: [String], on db: any SQLDatabase) throws -> [ErasureVerification.FileScan]
    /// Stops watching commits and closes the server's own connections.
    func close()
}
