import CPostgres
import Foundation
import Synchronization
import EntryLedger
import EntryModel

/// The store on PostgreSQL (issue 19): opens `EntryStore` on a database
/// server, so entries, the change log, conflicts, peers and checkpoints live
/// in PostgreSQL with the same semantics as on SQLite, and any number of
/// entryd instances on one database serve as one node.
package enum PostgresStoreFactory {
    /// How long a writer may sit idle inside a transaction before the server
    /// ends it, in seconds: the longest one stalled instance can hold the
    /// others' writes.
    static let writerStallSeconds = 15

    /// Connects to the database at `uri`, migrates it (once, whoever starts
    /// first), and opens the store.
    /// - Parameters:
    ///   - uri: a libpq connection URI.
    ///   - markerDirectory: where this instance keeps its marker file
    ///     (``StoreServer/markerPath``; entryd: its state directory), named
    ///     `hub-INSTANCE-DATABASE.node` after the instance and the database's
    ///     identity, so instances of one name on other databases never share one.
    ///   - instance: this instance's name.
    ///   - readers: reading connections (≥ 1); more than SQLite's 4 by default, since
    ///     each read waits for the server's replies (each is a connection of the server's).
    ///   - wallClock, copies, canonicaliser, layoutOf, rebuilding: as for `EntryStore`.
    ///   - progress: called before each migration this instance applies, with (version, total).
    /// - Throws: ``PGError`` (cannot connect, a migration failed, a database
    ///   newer than this build); `DatabaseMovedOrCopied`.
    package static func open(
        uri: String, markerDirectory: String, instance: String, readers: Int = 8,
        wallClock: @escaping @Sendable () -> UInt64 = HybridClock.systemMilliseconds,
        progress: (Int, Int) -> Void = { _, _ in },
        copies: CopiedDatabasePolicy = .refuse, canonicaliser: Canonicaliser? = nil,
        layoutOf: (String) -> FieldLayout = { _ in .registration }, rebuilding: (Int) -> Void = { _ in }
    ) throws -> EntryStore {
        let writer = try PGConnection(uri: uri)
        try PostgresSchema.migrate(writer, progress: progress)
        // A reply means durable: the operator may make commits asynchronous for others, not for
        // entryd. And a writer that stalls inside a transaction (a paused VM, SIGSTOP, a network
        // partition) holds the shared change log from every other instance: the server ends
        // such a transaction after 15 s, its writes fail unanswered, and the others go on.
        var session = ["SET idle_in_transaction_session_timeout = '\(writerStallSeconds)s'"]
        if try writer.execute("SHOW synchronous_commit").rows.first?.first == "off" {
            session.append("SET synchronous_commit TO on")
        }
        try writer.setSession(session)
        let server = try PostgresStoreServer(uri: uri, on: writer, markerDirectory: markerDirectory, instance: instance)
        let pool = try (0..<max(1, readers)).map { _ in PGDatabase(try PGConnection(uri: uri)) }
        return try EntryStore(
            server: server, writer: PGDatabase(writer), readers: pool, schemaVersion: PostgresSchema.all.count,
            wallClock: wallClock, copies: copies, canonicaliser: canonicaliser, layoutOf: layoutOf,
            rebuilding: rebuilding)
    }
}

/// The database server behind a PostgreSQL store: its shared change log
/// (``ChangeFeed``'s counter row), its identity, commits of other instances
/// (`LISTEN`), dead rows (`VACUUM`), and the erasure proof in SQL.
final class PostgresStoreServer: StoreServer, Sendable {
    let uri: String
    let location: String
    let home: String
    let identity: (device: UInt64, inode: UInt64)
    let markerPath: String
    /// A read sees one snapshot and never writes.
    let readBegin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
    /// The store's tables: what `VACUUM` cleans and the erasure proof scans.
    static let tables = [
        "entries", "changes", "conflicts", "erasures", "node", "peers", "peer_acks", "folded", "compacted",
        "entry_counts", "change_counter", "entry_keys",
    ]
    /// The tables whose rows hold personal values (entries, the change log's
    /// payloads, conflict copies, the search keys derived from values): after an erasure `VACUUM FULL` rewrites them
    /// and their indexes into new files, since `VACUUM` leaves the bytes of
    /// dead rows in the pages it frees. It holds each table's ACCESS EXCLUSIVE
    /// lock while it copies it: readers and writers wait (doc/hub.md "Erasure").
    static let valueTables = ["entries", "changes", "conflicts", "entry_keys"]
    /// Set by ``close()``: the listening thread then ends.
    private let closed = Atomic(false)

    /// Reads the identity of the database `connection` is on.
    init(uri: String, on connection: PGConnection, markerDirectory: String, instance: String) throws {
        self.uri = uri
        let row =
            try connection.execute(
                """
                SELECT current_user, COALESCE(inet_server_addr()::text, ''), COALESCE(inet_server_port()::text, ''),
                       current_database(), (SELECT oid FROM pg_database WHERE datname = current_database())::text,
                       COALESCE((SELECT system_identifier::text FROM pg_control_system()), '0')
                """
            ).rows.first ?? []
        let value = { (i: Int) in row.count > i ? row[i] ?? "" : "" }
        let host =
            value(1).isEmpty ? (connection.conn.flatMap { PQhost($0) }.map { String(cString: $0) } ?? "") : value(1)
        let port =
            value(2).isEmpty ? (connection.conn.flatMap { PQport($0) }.map { String(cString: $0) } ?? "") : value(2)
        location = "postgresql://\(value(0))@\(host.hasPrefix("/") ? "[\(host)]" : host):\(port)/\(value(3))"
        home = "postgresql:\(value(5))/\(value(3))"
        identity = (UInt64(value(5)) ?? 0, UInt64(value(4)) ?? 0)
        // The database in the name: its server's system id and its oid, as hex.
        markerPath =
            markerDirectory
            + "/hub-\(instance)-\(String(identity.device, radix: 16))-\(String(identity.inode, radix: 16)).node"
    }

    func claim(_ db: any SQLDatabase) throws -> (seq: Int64, hlc: HLC) { try ChangeFeed.claim(db) }

    func commit(_ db: any SQLDatabase, publishing: (seq: Int64, hlc: HLC)?) throws {
        guard let db = db as? PGDatabase else {
            throw PGError(sqlState: "XX000", message: "not a PostgreSQL connection")
        }
        try ChangeFeed.commit(db, publishing: publishing)
    }

    func announceNodeChange(_ db: any SQLDatabase) throws {
        try db.statement("SELECT pg_notify('\(ChangeFeed.nodeChannel)', '')").query { _ in }
    }

    func watchCommits(
        _ publish: @escaping @Sendable (Int64) -> Void, nodeChanged: @escaping @Sendable () -> Void,
        reachable: @escaping @Sendable (Bool, String) -> Void
    ) {
        let thread = Thread { [self] in
            var waiter: ChangeFeed.Waiter?
            var away = false
            while !isClosed {
                do {
                    if waiter == nil {
                        waiter = try ChangeFeed.Waiter(uri: uri)
                        if away { reachable(true, "") }
                        away = false
                        // What changed while no one listened: an announcement of a new incarnation
                        // made then was missed (another instance, or this one's writer, found the
                        // database went back across a failover before this listener was back),
                        // so the node table is read again; then the commits.
                        nodeChanged()
                        publish(waiter!.committedSeq)
                    }
                    let event = try waiter?.next(timeout: 0.5)
                    guard !isClosed else { break }  // a closed store hears nothing more
                    switch event {
                    case .committed(let seq): publish(seq)
                    case .nodeChanged: nodeChanged()
                    case nil: break
                    }
                } catch {
                    waiter?.close()
                    waiter = nil
                    if !away && !isClosed {
                        // libpq's messages run over several lines: one line for the log.
                        let why = ((error as? PGError)?.message ?? "\(error)").split(whereSeparator: \.isNewline)
                            .map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
                        reachable(false, why)
                    }
                    away = true
                    Thread.sleep(forTimeInterval: 0.5)  // the server is away: try again
                }
            }
            waiter?.close()
        }
        thread.name = "entryd-pg-listen"
        thread.start()
    }

    private var isClosed: Bool {
        closed.load(ordering: .acquiring)
    }

    func removeDeadRows(_ db: any SQLDatabase, rewritingValues: Bool) throws {
        let rewrite = rewritingValues ? Self.valueTables : []
        try db.execute("VACUUM " + Self.tables.filter { !rewrite.contains($0) }.joined(separator: ", "))
        guard !rewrite.isEmpty else { return }
        let heldBy = try waitForOlderSnapshots(db)
        guard heldBy == 0 else {
            // A rewrite now would copy the row versions those snapshots may still read,
            // and wait behind their locks: the erasure's mark stays, and the next
            // erasure or start rewrites.
            throw PGError(
                sqlState: "55000",
                message:
                    "\(heldBy) session(s) or standby(s) held a snapshot older than the erasure; the rewrite is repeated later"
            )
        }
        // A session that holds a lock on one of the tables (a pg_dump, a report left open)
        // would queue the rewrite's exclusive lock, and every instance's reads and
        // writes behind it: the rewrite gives up after the lock timeout instead.
        try db.execute("SET lock_timeout = '\(Int(Self.rewriteLockTimeout * 1000))ms'")
        defer { try? db.execute("RESET lock_timeout") }
        try db.execute("VACUUM FULL " + rewrite.joined(separator: ", "))
    }

    /// How long the rewrite after an erasure waits for a table's lock, in seconds.
    static let rewriteLockTimeout = 5.0

    /// How long ``waitForOlderSnapshots(_:)`` waits, in seconds.
    static let snapshotWait = 10.0

    /// Waits (up to ``snapshotWait``) until nothing holds the removal horizon
    /// from before now: `VACUUM FULL` copies the row versions that some
    /// transaction may still read ("recently dead"), erased values among them.
    /// Looked at: every session of this database and every one of none
    /// (walsenders of standbys with `hot_standby_feedback`), by its snapshot
    /// (`backend_xmin`) and its own open transaction (`backend_xid`); prepared
    /// transactions; replication slots. Sessions of other roles show neither
    /// without `pg_read_all_stats` (doc/hub.md: one role for the instances).
    /// - Returns: how many still held it when the wait ended (0: none).
    func waitForOlderSnapshots(_ db: any SQLDatabase) throws -> Int {
        var now = ""
        try db.statement("SELECT (txid_current() % 4294967296)::text").query { now = $0.text(0) }
        let older = try db.statement(
            """
            SELECT (SELECT count(*) FROM pg_stat_activity
                    WHERE (datname = current_database() OR datname IS NULL) AND pid <> pg_backend_pid()
                      AND (age(backend_xmin) > age(CAST(?1 AS xid)) OR age(backend_xid) > age(CAST(?1 AS xid))))
                 + (SELECT count(*) FROM pg_prepared_xacts WHERE age(transaction) > age(CAST(?1 AS xid)))
                 + (SELECT count(*) FROM pg_replication_slots WHERE age(xmin) > age(CAST(?1 AS xid)))
            """)
        let deadline = Date().addingTimeInterval(Self.snapshotWait)
        while true {
            var count = 0
            try older.query([.text(now)]) { count = Int($0.int(0)) }
            if count == 0 || Date() >= deadline { return count }
            usleep(50_000)
        }
    }

    func changeLogBytes(_ db: any SQLDatabase) throws -> Int64 {
        var bytes: Int64 = 0
        try db.statement("SELECT pg_total_relation_size('changes') + pg_total_relation_size('folded')").query {
            bytes = $0.int(0)
        }
        return bytes
    }

    func scan(_ needles: [String], on db: any SQLDatabase) throws -> [ErasureVerification.FileScan] {
        var forms = Set<String>()
        for value in needles where !value.isEmpty {
            forms.insert(value)
            forms.insert(String(JSON.string(value).text.dropFirst().dropLast()))
        }
        var scans: [ErasureVerification.FileScan] = []
        for table in Self.tables {
            var columns: [String] = []
            try db.statement(
                """
                SELECT column_name FROM information_schema.columns
                WHERE table_schema = current_schema() AND table_name = ? AND data_type = 'text' ORDER BY ordinal_position
                """
            ).query([.text(table)]) { columns.append($0.text(0)) }
            var bytes: Int64 = 0
            try db.statement("SELECT pg_total_relation_size(?::regclass)").query([.text(table)]) { bytes = $0.int(0) }
            var hits = 0
            if !columns.isEmpty {
                // Identifiers from the catalogue, quoted; the values are parameters.
                let test = columns.map { "strpos(\"\($0)\", ?1) > 0" }.joined(separator: " OR ")
                let count = try db.statement("SELECT COUNT(*) FROM \"\(table)\" WHERE \(test)")
                for needle in forms where !needle.isEmpty {
                    try count.query([.text(needle)]) { hits += Int($0.int(0)) }
                }
            }
            scans.append(ErasureVerification.FileScan(path: "table \(table)", bytes: bytes, exists: true, hits: hits))
        }
        return scans
    }

    func close() {
        // The listener notices within its wait (0.5 s) and delivers nothing more.
        closed.store(true, ordering: .releasing)
    }
}
