import Dispatch
import EntryLedger
import EntryModel

/// The change log as a feed that never skips a row: how `seq` is handed out
/// across instances, how it is read, and how readers wake up (issue 19 item 3).
///
/// ## The trap
/// With a sequence (`bigserial`), a transaction takes its number when it
/// inserts and becomes visible when it commits, and those orders differ: T1
/// takes 7, T2 takes 8, T2 commits, a reader of `seq > 6` sees 8 and keeps "up
/// to 8" as its checkpoint; T1 commits 7, which that reader never reads.
///
/// ## The design: numbers handed out in commit order
/// `seq` comes from the one-row table `change_counter`. Every write
/// transaction of the store (one group-commit round) begins with
/// ``claim(_:)`` — `SELECT seq, hlc FROM change_counter FOR UPDATE` — and
/// numbers its change-log rows from the committed seq it read; with its
/// `COMMIT` it stores the new highest seq (``commit(_:publishing:)``). The row
/// lock is held until the transaction ends, so a second writer's claim waits
/// for the first one's commit (or rollback) and then reads the committed
/// counter (READ COMMITTED re-reads the row it waited for). PostgreSQL makes a
/// transaction visible before it releases its locks (`CommitTransaction` in
/// src/backend/access/transam/xact.c: `ProcArrayEndTransaction`, then the
/// locks), so when a writer holds numbers above N, every number up to N is
/// already committed and visible: any snapshot sees a prefix of the log, and a
/// reader of `seq > N` never skips a row. A rolled back round rolls its
/// numbers back too: the log has no gaps.
///
/// ## Claim first, then read (issue 30)
/// Numbering in commit order is not enough: a write reads the entry it
/// changes (does it exist, is its version the caller's `ifVersion`, what are
/// the values it merges into), and a read made before the claim may be of a
/// row another instance's open round is changing. So a round claims before
/// its first read of an entry (``WriteContext`` `load`, and an Apply or a
/// Resolve before anything else): the claim waits for the other round's
/// commit, and the rows read after it are the committed ones. `ifVersion` is
/// then a compare-and-set across instances, an id is created once, and a
/// write to one field group never writes another back stale. The counter's
/// row lock is the one lock: every round that logs a change takes it anyway
/// before its first stamp, so taking it a few reads earlier adds no lock;
/// locking each entry row (`FOR UPDATE`) instead would still serialize on the
/// counter at the first stamp, and add a lock per row that two rounds could
/// take in opposite orders. A round takes the counter before any other row
/// it locks for the change log's sake (the node table's `hlc` row too:
/// ``WriteContext`` `persistClock` claims first). Rounds that log nothing
/// (peer checkpoints, acknowledgements) never take it; one of them beside a
/// logging job in another instance's round can still meet it in the other
/// order, which PostgreSQL breaks as a deadlock (40P01): that round fails
/// whole and its callers retry, nothing half-written.
///
/// ## One clock for every instance (issue 19 item 2)
/// Many entryd instances on one database are one node, so they share one
/// hybrid logical clock: `change_counter.hlc` holds the node's last stamp
/// (``HLC/rawValue`` as a `bigint`, schema migration 2). The claim hands it to
/// the round's clock (``HybridClock/observe(_:)``), which then stamps with
/// ``HybridClock``'s own rule; the commit stores the clock's last stamp. So
/// each stamp is above every stamp any instance issued or observed before, and
/// since the row lock orders the rounds, stamps are unique across instances
/// and increase with seq among local changes.
///
/// ## Waking readers
/// The commit sends `NOTIFY entryd_changes, '<last seq>'`, delivered only if
/// and when the transaction commits, in commit order; every instance listens
/// (``Waiter``) and wakes its `Changes` streams.
///
/// ## Its cost
/// Writing rounds commit one at a time across instances: the counter's lock is
/// held from the round's first statement through the commit's WAL flush. The
/// store's group commit (one transaction per round of many writes) keeps the
/// rate of rows high; the hub bench (BENCHMARKS.md) measures it with 1, 2 and
/// 4 instances. Measured before the store existed, on the loaded 2-core CI
/// machine with 4 writers, rows/s: 1 row per transaction 210–250 against
/// 580–630 with a bigserial; 50 rows 6,400–8,000 against 14,800–15,300.
///
/// ## Why not the snapshot bound
/// Storing `pg_current_xact_id()` per row and serving only rows whose
/// transaction is below `pg_snapshot_xmin(pg_current_snapshot())` makes every
/// served row final, but transaction ids are not handed out in `seq` order
/// either, so a reader's position would have to be (xid, seq) rather than one
/// `seq`: the wire's `since`/`last` (doc/protocol.md) and every peer's
/// checkpoint are one integer. It also holds the whole feed back behind the
/// oldest open transaction of the database (even one that never writes changes).
enum ChangeFeed {
    /// The `NOTIFY` channel a commit of change-log rows is announced on; the
    /// payload is the highest seq that commit wrote, in decimal.
    static let channel = "entryd_changes"

    /// The claim's statement: the counter's row, locked until the transaction ends.
    static let claimSQL = "SELECT seq, hlc FROM change_counter FOR UPDATE"

    /// Takes the counter until the transaction on `db` ends (``SharedChangeLog/claim(_:)``).
    /// - Returns: the highest committed seq and the node's last HLC.
    /// - Throws: ``PGError``.
    static func claim(_ db: any SQLDatabase) throws -> (seq: Int64, hlc: HLC) {
        var now: (seq: Int64, hlc: HLC) = (0, .zero)
        try db.statement(claimSQL).query {
            now = ($0.int(0), HLC(rawValue: UInt64(bitPattern: $0.int(1))))
        }
        return now
    }

    /// Commits the round's transaction on `db` (``SharedChangeLog/commit(_:publishing:)``):
    /// with `publishing`, first stores the round's highest seq and last HLC and
    /// announces the seq on ``channel`` — the three statements in one pipeline
    /// batch, one round trip to the server.
    /// - Throws: ``PGError``; the transaction is then not committed.
    static func commit(_ db: PGDatabase, publishing: (seq: Int64, hlc: HLC)?) throws {
        guard let (seq, hlc) = publishing else { return try db.statement("COMMIT").run() }
        try db.commit(after: [
            PGStatement(
                "UPDATE change_counter SET seq = $1, hlc = $2", [String(seq), String(Int64(bitPattern: hlc.rawValue))]),
            PGStatement("SELECT pg_notify($1, $2)", [channel, String(seq)]),
        ])
    }

    /// The highest committed seq (0 before the first change).
    /// - Throws: ``PGError``.
    static func committedSeq(on connection: PGConnection) throws(PGError) -> Int64 {
        Int64(try connection.execute("SELECT seq FROM change_counter").rows.first?.first.flatMap { $0 } ?? "0") ?? 0
    }

    /// The `NOTIFY` channel an instance announces a change of the node table
    /// on (a new incarnation begun at its start), so running instances take it.
    static let nodeChannel = "entryd_node"

    /// What a ``Waiter`` hears.
    enum Event: Equatable {
        /// A commit of change-log rows, with its highest seq.
        case committed(Int64)
        /// Another instance changed the node table (a new incarnation).
        case nodeChanged
    }

    /// Waits for commits of change-log rows by any instance on the database,
    /// and for changes of the node: a connection of its own that listens on
    /// ``ChangeFeed/channel`` and ``ChangeFeed/nodeChannel``.
    ///
    /// Not safe for concurrent use: one waiting thread.
    final class Waiter: Sendable {
        private let connection: PGConnection

        /// The highest committed seq when the waiter began to listen.
        let committedSeq: Int64

        /// Connects, listens, then reads the committed seq, so no commit after
        /// this call is missed.
        /// - Throws: ``PGError``.
        init(uri: String, database: String? = nil) throws(PGError) {
            connection = try PGConnection(uri: uri, database: database)
            try connection.listen(ChangeFeed.channel)
            try connection.listen(ChangeFeed.nodeChannel)
            committedSeq = try ChangeFeed.committedSeq(on: connection)
        }

        /// The next announcement, as sent, or `nil` after `timeout` seconds.
        /// - Throws: ``PGError`` when the connection is lost.
        func next(timeout: Double) throws(PGError) -> Event? {
            guard let n = try connection.waitForNotification(timeout: timeout) else { return nil }
            if n.channel == ChangeFeed.nodeChannel { return .nodeChanged }
            return Int64(n.payload).map(Event.committed)
        }

        /// Stops listening and closes the connection.
        func close() { connection.close() }
    }
}
