import Dispatch
import EntryModel

/// The change log as a feed that never skips a row: how `seq` is handed out,
/// how it is read, and how readers wake up (issue 19 item 3).
///
/// ## The trap
/// With a sequence (`bigserial`), a transaction takes its number when it
/// inserts and becomes visible when it commits, and those orders differ: T1
/// takes 7, T2 takes 8, T2 commits, a reader of `seq > 6` sees 8 and keeps "up
/// to 8" as its checkpoint; T1 commits 7, which that reader never reads.
///
/// ## The design: numbers handed out in commit order (option b)
/// `seq` comes from the one-row table `change_counter`: a writing transaction
/// runs ``reserve(_:observed:wall:on:)`` — `UPDATE change_counter SET seq = seq + n` — as the
/// last thing before its `COMMIT`, and gives its change-log rows the numbers it
/// got. The row lock that update takes is held until the transaction ends, so
/// a second writer's reserve waits for the first one's commit (or rollback)
/// and then reads the committed counter (READ COMMITTED re-reads the row it
/// waited for). PostgreSQL makes a transaction visible before it releases its
/// locks (`CommitTransaction` in src/backend/access/transam/xact.c:
/// `ProcArrayEndTransaction`, then the locks), so when a writer holds numbers above N, every number up to N is
/// already committed and visible: any snapshot sees a prefix of the log, and a
/// reader of `seq > N` (``read(after:limit:on:)``) never skips a row. A rolled
/// back transaction rolls its reserve back too, so the log has no gaps at all.
/// The same `UPDATE` sends `NOTIFY entryd_changes, '<last seq>'`, delivered
/// only if and when the transaction commits, in commit order.
///
/// ## HLC stamps from the same row (issue 19 item 2)
/// Many entryd instances on one database are one node, so they share one
/// hybrid logical clock: `change_counter.hlc` holds the node's last stamp
/// (``HLC/rawValue`` as a `bigint`, schema migration 2), and ``reserve(_:observed:wall:on:)``
/// hands out, in the same locked `UPDATE` as the seqs, one stamp per seq. The
/// rule is ``HybridClock``'s: a clock that has observed every remote stamp the
/// caller has seen (`observed`) and ticks `n` times at wall time `wall` issues
///
///     first = max(last + 1, HybridClock.successor(of: observed, wall: wall))
///
/// (packed values; the second operand is computed in Swift by
/// ``HybridClock/successor(of:wall:)``, the first in SQL from the stored last),
/// then `first + 1`, …, `first + n - 1` (the wall clock stands still within one
/// reservation), and stores `first + n - 1` as the new last. So each stamp is
/// above the last one stored (whatever this instance's wall clock says), above
/// `observed`, and at least `wall` milliseconds; and since the row lock orders
/// the reservations, stamps are unique across instances and increase with seq
/// among local changes. ``append(_:on:)`` moves the stored last past the
/// stamps of the rows it appends (``HybridClock/observe(_:)``), so a stamp
/// received from a peer and written to the log is never issued again locally.
///
/// Writers must run in READ COMMITTED (``PGIsolation/readCommitted``, the
/// default): under REPEATABLE READ or SERIALIZABLE the second writer's reserve
/// fails with a serialization failure instead of waiting.
///
/// ## Its cost
/// Writing transactions commit one at a time: the counter's lock is held from
/// the reserve through the commit's WAL flush, so concurrent writers no longer
/// share PostgreSQL's WAL flushes, and the rate of writing transactions is at
/// most one per (flush + the append statement). `NOTIFY` costs something of the
/// same kind anyway: PostgreSQL serializes the commits of notifying
/// transactions on one lock per database. The store's own group commit (one
/// transaction per round of many writes, the append at its end, sent with
/// `COMMIT` in one pipeline batch: ``appendStatement(_:)``) keeps the rate of
/// *rows* high. `ChangeFeedTests` ("the cost …") prints the rates; on the
/// 2-core CI machine, loaded, 4 writers, fsync on, rows/s:
///
/// | rows per transaction | bigserial | bigserial + NOTIFY | counter + NOTIFY |
/// | --- | --- | --- | --- |
/// | 1  | 580–630 | 340–380 | 210–250 |
/// | 50 | 14,800–15,300 | 8,800–11,400 | 6,400–8,000 |
///
/// (Less loaded, earlier: 1 row 2,100–2,900 without NOTIFY against 740–1,270
/// with the counter; 50 rows 22,000–23,500 against 7,300–10,800.)
///
/// ## Why not the snapshot bound (option a)
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

    /// One change-log row's columns but its seq, as text (the `changes` table).
    struct Row: Sendable, Equatable {
        /// The node where the change was made.
        var node: String
        /// Its HLC there (16 hex digits).
        var hlc: String
        /// The entry's id.
        var entry: String
        /// The entry's form.
        var form: String
        /// `create`, `update`, `delete`, `restore` or `erase`.
        var op: String
        /// JSON object: the values the change set.
        var fields: String
        /// JSON object: field → HLC it replaced.
        var base: String
        /// Who made it.
        var actor: String
        /// Wall time at the origin, RFC 3339 UTC with milliseconds.
        var at: String
        /// Why, when given.
        var reason: String?
        /// The peer that delivered it; `nil` when local.
        var via: String?
    }

    /// What ``reserve(_:observed:wall:on:)`` hands out: consecutive seqs and,
    /// for each, the HLC of the local change that takes it.
    struct Reservation: Sendable, Equatable {
        /// The seqs, consecutive.
        var seqs: ClosedRange<Int64>
        /// One stamp per seq, in seq order, strictly increasing (consecutive
        /// packed values).
        var hlcs: [HLC]
    }

    /// Takes the next `count` seqs from `change_counter` with an HLC for each
    /// (see "HLC stamps from the same row" above), and announces the last seq
    /// on ``channel`` at commit.
    ///
    /// Call it inside the writing transaction (READ COMMITTED), as late as
    /// possible — ideally the last statement before `COMMIT` — since it makes
    /// every other writer's reserve wait until this transaction ends.
    /// - Parameters:
    ///   - count: the number of local changes, at least 1.
    ///   - observed: the greatest remote stamp the caller has seen and not yet
    ///     written to the log (`.zero` when none): the stamps go above it.
    ///   - wall: the wall clock, milliseconds since the epoch (injectable for tests).
    /// - Returns: the seqs and HLCs; valid only if the transaction commits.
    /// - Throws: ``PGError`` (`25000` when not in a transaction).
    static func reserve(_ count: Int, observed: HLC = .zero, wall: UInt64 = HybridClock.systemMilliseconds(),
                        on connection: PGConnection) throws(PGError) -> Reservation {
        precondition(count >= 1, "reserve at least one seq")
        guard connection.inTransaction else {
            throw PGError(sqlState: "25000", message: "seqs are reserved inside the writing transaction")
        }
        let floor = HybridClock.successor(of: observed, wall: wall).rawValue
        let result = try connection.execute("""
            UPDATE change_counter SET seq = seq + $1::bigint, hlc = GREATEST(hlc + 1, $2::bigint) + $1::bigint - 1
            RETURNING seq, hlc, pg_notify('\(channel)', seq::text)
            """, [String(count), String(floor)])
        guard let row = result.rows.first, row.count >= 2, let last = Int64(row[0] ?? ""),
              let lastHLC = UInt64(row[1] ?? "") else {
            throw PGError(sqlState: "55000", message: "change_counter has no row: the schema is not migrated")
        }
        let firstHLC = lastHLC - UInt64(count) + 1
        return Reservation(seqs: (last - Int64(count) + 1)...last,
                           hlcs: (0..<UInt64(count)).map { HLC(rawValue: firstHLC + $0) })
    }

    /// Reserves seqs for `rows` and inserts them into the change log with
    /// those seqs, in order, in one statement (``appendStatement(_:)``) in the
    /// caller's transaction.
    /// - Returns: the seqs given.
    /// - Throws: ``PGError`` (`23505` when a row's (node, hlc) is already in the
    ///   log; `25000` when not in a transaction).
    @discardableResult
    static func append(_ rows: [Row], on connection: PGConnection) throws(PGError) -> ClosedRange<Int64> {
        guard connection.inTransaction else {
            throw PGError(sqlState: "25000", message: "seqs are reserved inside the writing transaction")
        }
        let statement = appendStatement(rows)
        return try seqs(of: connection.execute(statement.sql, statement.params))
    }

    /// The one statement that reserves seqs for `rows` from `change_counter`
    /// (announcing the last on ``channel`` at commit) and inserts the rows with
    /// them, returning each row's seq; ``seqs(of:)`` reads its result.
    ///
    /// For a writer that sends it and `COMMIT` in one pipeline batch
    /// (``PGConnection/pipeline(_:)`` inside its transaction), so the counter's
    /// lock is held for the server's work only, never for a round trip.
    static func appendStatement(_ rows: [Row]) -> PGStatement {
        precondition(!rows.isEmpty, "append at least one row")
        var values: [String] = []
        let seen = rows.compactMap { HLC($0.hlc)?.rawValue }.max() ?? 0
        var params: [String?] = [String(rows.count), String(Int64(clamping: seen))]
        params.reserveCapacity(2 + rows.count * 12)
        for (i, row) in rows.enumerated() {
            let b = params.count
            values.append("($\(b + 1)::bigint, " + (2...12).map { "$\(b + $0)" }.joined(separator: ", ") + ")")
            params += [String(i + 1), row.node, row.hlc, row.entry, row.form, row.op, row.fields,
                       row.base, row.actor, row.at, row.reason, row.via]
        }
        return PGStatement("""
            WITH c AS (UPDATE change_counter SET seq = seq + $1::bigint, hlc = GREATEST(hlc, $2::bigint)
                       RETURNING seq, pg_notify('\(channel)', seq::text))
            INSERT INTO changes (seq, node, hlc, entry, form, op, fields, base, actor, at, reason, via)
            SELECT c.seq - $1::bigint + v.ord, v.node, v.hlc, v.entry, v.form, v.op, v.fields, v.base, v.actor, v.at, v.reason, v.via
            FROM c, (VALUES \(values.joined(separator: ", "))) AS v (ord, node, hlc, entry, form, op, fields, base, actor, at, reason, via)
            RETURNING seq
            """, params)
    }

    /// The seqs an ``appendStatement(_:)`` gave, from its result.
    /// - Throws: ``PGError`` (`55000`) when it inserted nothing: `change_counter` has no row.
    static func seqs(of result: PGResult) throws(PGError) -> ClosedRange<Int64> {
        let seqs = result.rows.compactMap { $0.first.flatMap { $0 }.flatMap { Int64($0) } }
        guard let low = seqs.min(), let high = seqs.max() else {
            throw PGError(sqlState: "55000", message: "change_counter has no row: the schema is not migrated")
        }
        return low...high
    }

    /// The committed rows after `after`, in seq order, at most `limit`: safe
    /// to pass (every row up to the last returned is committed, none can
    /// appear below it later).
    /// - Throws: ``PGError``.
    static func read(after: Int64, limit: Int, on connection: PGConnection) throws(PGError) -> [(seq: Int64, row: Row)] {
        let result = try connection.execute("""
            SELECT seq, node, hlc, entry, form, op, fields, base, actor, at, reason, via
            FROM changes WHERE seq > $1 ORDER BY seq LIMIT $2
            """, [String(after), String(limit)])
        return result.rows.map { r in
            (Int64(r[0] ?? "") ?? 0,
             Row(node: r[1] ?? "", hlc: r[2] ?? "", entry: r[3] ?? "", form: r[4] ?? "", op: r[5] ?? "",
                 fields: r[6] ?? "", base: r[7] ?? "", actor: r[8] ?? "", at: r[9] ?? "", reason: r[10], via: r[11]))
        }
    }

    /// The highest committed seq (0 before the first change).
    /// - Throws: ``PGError``.
    static func committedSeq(on connection: PGConnection) throws(PGError) -> Int64 {
        Int64(try connection.execute("SELECT seq FROM change_counter").rows.first?.first.flatMap { $0 } ?? "0") ?? 0
    }

    /// Waits for commits of change-log rows by any instance on the database:
    /// a connection of its own that listens on ``ChangeFeed/channel``.
    ///
    /// Not safe for concurrent use: one waiting thread.
    final class Waiter: @unchecked Sendable {
        private let connection: PGConnection
        private var highest: Int64

        /// Connects, listens, then reads the committed seq, so no commit after
        /// this call is missed.
        /// - Throws: ``PGError``.
        init(uri: String, database: String? = nil) throws(PGError) {
            connection = try PGConnection(uri: uri, database: database)
            try connection.listen(ChangeFeed.channel)
            highest = try ChangeFeed.committedSeq(on: connection)
        }

        /// The highest committed seq announced so far (or read at start).
        var committedSeq: Int64 { highest }

        /// Blocks until a commit announces a seq above `after`, or `timeout`
        /// seconds pass.
        /// - Returns: the highest committed seq known at wake-up (≤ `after` on a timeout).
        /// - Throws: ``PGError`` when the connection is lost.
        func wait(after: Int64, timeout: Double) throws(PGError) -> Int64 {
            let deadline = Double(DispatchTime.now().uptimeNanoseconds) / 1e9 + timeout
            while highest <= after {
                let left = deadline - Double(DispatchTime.now().uptimeNanoseconds) / 1e9
                guard left > 0, let n = try connection.waitForNotification(timeout: left) else { break }
                if n.channel == ChangeFeed.channel, let seq = Int64(n.payload) { highest = max(highest, seq) }
            }
            return highest
        }

        /// The next announcement, as sent (the highest seq of one commit), or
        /// `nil` after `timeout` seconds: one per committed transaction that
        /// reserved seqs.
        /// - Throws: ``PGError`` when the connection is lost.
        func next(timeout: Double) throws(PGError) -> Int64? {
            guard let n = try connection.waitForNotification(timeout: timeout), let seq = Int64(n.payload) else { return nil }
            highest = max(highest, seq)
            return seq
        }

        /// Stops listening and closes the connection.
        func close() { connection.close() }
    }
}
