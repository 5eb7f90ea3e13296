import EntryModel
import Foundation

/// What a write job sees: the writer connection, the node's clock and id.
/// Only ever used by the thread running the current round (one at a time).
final class WriteContext {
    let db: any SQLDatabase
    let nodeID: String
    var clock: HybridClock
    private var persistedClock: HLC
    /// Highest seq in the change log, committed or within the open transaction.
    var lastSeq: Int64
    private var committedSeq: Int64
    /// The rules that re-spell values arriving from elsewhere (``Canonicaliser``); `nil`: values stay as they come.
    let canonicaliser: Canonicaliser?

    /// The change log shared with other instances on a database server; `nil` on SQLite.
    let shared: (any SharedChangeLog)?
    /// What the running Apply read ahead for its batch (``claim(lookingUp:)``),
    /// or the round for all its Applies (``lookAhead(_:jobs:)``); `nil` otherwise.
    var lookups: BatchLookups?
    /// True while ``lookups`` is the round's (``lookAhead(_:jobs:)``), not one job's.
    var lookupsSpanRound = false
    /// What ``claim()`` read from the shared change log in the open transaction
    /// (`nil` before it): the round publishes only when it moved.
    private var claimed: (seq: Int64, hlc: HLC)?
    /// True when the open transaction took the shared change log (``claim()``); false on SQLite.
    var hasClaimed: Bool { claimed != nil }

    /// The highest seq this instance knows committed, its own and other
    /// instances' (the store's ``CommitSignal``): a claim below it means the
    /// shared change log went back in time.
    var knownSeq: () -> Int64 = { 0 }
    /// Called inside the transaction when a claim finds the shared change log
    /// below ``knownSeq`` (from, to): the store begins a new incarnation there
    /// and answers true (written in the open transaction: if it rolls back, the
    /// next claim must find the going back again), or takes one another
    /// instance already committed and answers false (nothing to find again).
    var wentBack: ((WriteContext, Int64, Int64) throws -> Bool)?
    /// Called on the writer thread after the commit of a transaction in which
    /// ``wentBack`` began a new incarnation: the store takes it at once, not
    /// only when its announcement comes back (the listener may be away).
    var beganIncarnation: (() -> Void)?
    /// The seq the change log went back from, found in the open transaction;
    /// if that transaction rolls back, the next claim finds it again.
    private var wentBackFrom: Int64?
    /// Set when a transaction that found the change log gone back rolled back.
    private var wentBackUnrecorded: Int64 = 0
    /// The seq a new incarnation that another instance began starts at, set
    /// by ``rebase(to:)`` from another thread until the next ``claim()`` takes it.
    private var rebasedTo: Int64?
    /// Guards ``rebasedTo``: the one member touched off the writer thread.
    private let rebaseLock = NSLock()

    /// The instance took a new incarnation another instance began at `seq`
    /// (it found the shared change log gone back): the seqs this context knew
    /// above it belong to the old history, so the next claim measures from
    /// `seq` and does not take the same going back for a new one. Any thread.
    func rebase(to seq: Int64) {
        rebaseLock.withLock { rebasedTo = min(rebasedTo ?? seq, seq) }
    }

    /// The seq of a ``rebase(to:)`` not yet taken, taking it. ``wentBack``
    /// asks too: a new incarnation taken between the claim and its own look
    /// is the one it would begin.
    func takeRebase() -> Int64? {
        rebaseLock.withLock {
            defer { rebasedTo = nil }
            return rebasedTo
        }
    }

    /// A context whose `lastSeq` is the change log's highest committed seq at open.
    init(
        db: any SQLDatabase, nodeID: String, clock: HybridClock, lastSeq: Int64, canonicaliser: Canonicaliser? = nil,
        shared: (any SharedChangeLog)? = nil
    ) {
        self.db = db
        self.shared = shared
        self.canonicaliser = canonicaliser
        self.nodeID = nodeID
        self.clock = clock
        self.persistedClock = clock.last
        self.lastSeq = lastSeq
        self.committedSeq = lastSeq
    }

    /// The last stamp this context issued for a local change (``tick()``) whose
    /// change-log row is still in the open transaction or committed: the round
    /// restores it when it undoes a job, and a rollback clears it. Only such a
    /// stamp may go unpersisted (``persistClock()``).
    var lastTick: HLC?

    /// A new HLC for a local change, which the caller records in the change log
    /// under this node's id.
    /// - Throws: the server's ``StorageError`` (claiming a shared change log).
    func tick() throws -> HLC {
        try claim()
        let hlc = clock.tick()
        lastTick = hlc
        return hlc
    }

    /// Before the transaction's first seq or local stamp: on a shared change
    /// log, takes it until the transaction ends (other instances' commits
    /// moved it), so `lastSeq` and the clock continue from what they
    /// committed. Rounds that log nothing (acknowledgements, peer checkpoints)
    /// never take it and never wait for other instances. Once per transaction;
    /// nothing on SQLite.
    /// - Throws: the server's ``StorageError``.
    func claim() throws {
        guard let shared, claimed == nil else { return }
        try took(try shared.claim(db))
    }

    /// After the claim read `now` from the shared change log (``claim()``).
    func took(_ now: (seq: Int64, hlc: HLC)) throws {
        // After the claim, which may wait for another instance's transaction: a new incarnation
        // this instance took meanwhile is seen here (the seqs known above its start, in the
        // commit signal too, are the old history's), or by wentBack (see takeRebase()).
        let known: Int64
        if let seq = takeRebase() {
            committedSeq = min(committedSeq, seq)
            wentBackUnrecorded = 0
            known = committedSeq
        } else {
            known = max(committedSeq, knownSeq(), wentBackUnrecorded)
        }
        if now.seq < known, let wentBack {
            if try wentBack(self, known, now.seq) {
                wentBackFrom = known
            } else {
                // Taken, and committed by another instance: a rollback of this transaction
                // leaves nothing to find again.
                wentBackUnrecorded = 0
            }
        }
        claimed = now
        lastSeq = now.seq
        committedSeq = now.seq
        clock.observe(now.hlc)
    }

    /// Where a job began, to undo it (``undo(to:savepointRolledBack:)``).
    struct JobMark {
        let seq: Int64
        let tick: HLC?
        let claimed: (seq: Int64, hlc: HLC)?
    }

    /// The state a job starts from.
    var mark: JobMark { JobMark(seq: lastSeq, tick: lastTick, claimed: claimed) }

    /// After a job failed: its seqs and stamp are forgotten. A claim the job
    /// took inside its savepoint went with the savepoint's rollback; one it
    /// took without a savepoint (it wrote nothing, nothing was rolled back)
    /// stands, and the round goes on from the claimed seq.
    func undo(to mark: JobMark, savepointRolledBack: Bool) {
        lastTick = mark.tick
        if savepointRolledBack, mark.claimed == nil, let from = wentBackFrom {
            // The new incarnation was written inside the savepoint: the next claim finds it again.
            wentBackUnrecorded = max(wentBackUnrecorded, from)
            wentBackFrom = nil
        }
        if savepointRolledBack || mark.claimed != nil || claimed == nil {
            claimed = savepointRolledBack ? mark.claimed : claimed
            lastSeq = mark.seq
        } else if let claimed {
            lastSeq = claimed.seq
        }
    }

    /// Writes the clock's last stamp into the node table (same transaction),
    /// unless it is the stamp of a local change: those are in the change log
    /// under this node's id, where ``EntryStore`` finds the greatest at open
    /// (one index lookup), so most commits write one page fewer. Stamps
    /// observed from peers (Apply) are written here.
    func persistClock() throws {
        guard clock.last != persistedClock, clock.last != lastTick else { return }
        // On a shared change log the counter row is locked first, as every round that
        // logs takes it: the node row after it, or two instances could wait on each other.
        try claim()
        try db.statement(
            "INSERT INTO node (key, value) VALUES ('hlc', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        )
        .run([.text(clock.last.description)])
    }

    /// Commits the round's transaction: `COMMIT`; on a shared change log that
    /// the round moved, the new seq and HLC are published with it
    /// (``SharedChangeLog/commit(_:publishing:)``: one round trip).
    /// - Throws: the database's ``StorageError``; nothing of the round is kept then.
    func commit() throws {
        guard let shared else { return try db.statement("COMMIT").run() }
        // Stamps observed from peers (an Apply that only skipped) move the shared clock too.
        if claimed == nil && clock.last != persistedClock { try claim() }
        let moved = claimed.map { $0.seq != lastSeq || $0.hlc != clock.last } ?? false
        try shared.commit(db, publishing: moved ? (lastSeq, clock.last) : nil)
    }

    /// After a `COMMIT`: the clock's last stamp and `lastSeq` are now durable.
    /// - Returns: the seq to publish (``CommitSignal/publish(_:)``), or `nil` for
    ///   a round on a shared change log that never claimed it (acknowledgements,
    ///   peer checkpoints): its `lastSeq` is what this instance last claimed,
    ///   which may be an old history's seq after the database went back, and
    ///   publishing it would raise the signal rewound below it.
    func committed() -> Int64? {
        let claimedRound = shared == nil || claimed != nil
        dropLookups()
        if wentBackFrom != nil {
            wentBackUnrecorded = 0
            beganIncarnation?()
        }
        wentBackFrom = nil
        claimed = nil
        persistedClock = clock.last
        committedSeq = lastSeq
        return claimedRound ? lastSeq : nil
    }

    /// After a `ROLLBACK`: `lastSeq` returns to the last committed seq. The clock
    /// is not wound back (an HLC never goes backwards); its stamp is persisted
    /// with the next commit.
    func rolledBack() {
        dropLookups()
        if let from = wentBackFrom { wentBackUnrecorded = max(wentBackUnrecorded, from) }
        wentBackFrom = nil
        claimed = nil
        lastSeq = committedSeq
        lastTick = nil
    }
}
