import Foundation
import EntryModel

/// The single writer: runs the write jobs of every connection in rounds, one
/// round at a time, and commits the jobs of a round together (group commit).
///
/// A job is a body `(WriteContext) throws -> T` in a ``WriteJob``, which keeps
/// its own typed result; the caller holds a ``WriteTicket`` and its `wait()`
/// returns that `T`. The rules, each named in the code:
///
/// 1. **Who runs a round** (``RoundRunner``). The writer thread `entryd-writer`
///    (`.writerThread`), or a caller that waits for its job (`wait()`) while no
///    round runs and finds it still queued (`.caller`): it runs the next round on
///    its own thread, so a lone write costs no switch to the writer thread and
///    back. Only one round runs at a time, so the writer connection and the
///    ``WriteContext`` have one user at a time.
/// 2. **A lone job's grace** (``GroupCommitPolicy/loneJobGrace``, 2 ms). A job
///    queued on an idle queue is left to its caller that long, then the writer
///    thread takes it. A caller that promises to wait next (`callerWaitsNext`:
///    a session answering its queued calls before it reads its socket again)
///    does not even wake the writer thread.
/// 3. **Round limits** (``GroupCommitPolicy/maxJobsPerRound``, 1024). A round
///    takes the queued jobs in queue order, at most that many. A job
///    ``WriteJobKind/outsideTransaction`` (checkpoint, probe) runs alone,
///    between two rounds.
/// 4. **A round**: `BEGIN IMMEDIATE`; the jobs in queue order, each keeping its
///    outcome in its own slot; one `COMMIT` (one fsync in WAL mode with
///    `synchronous=FULL`).
/// 5. **A job fails alone** (``RoundMode``). Most failures (`.entryExists`,
///    `.versionMismatch`, a refused Apply) are found before the job writes
///    anything: in the first attempt (`.grouped`, no savepoints) such a job is
///    simply left out. A job that fails after it wrote rolls the round back,
///    and the round runs again `.savepointPerJob`: each job inside its own
///    `SAVEPOINT`, so the failed one is undone alone. Job bodies may therefore
///    run twice: they must depend only on the database and the ``WriteContext``.
/// 6. **Results only after the commit**. The callers of a round are woken once
///    it committed (their data is durable) or failed, never before. A round in
///    which every job failed rolls back instead. If `BEGIN` fails, or SQLite
///    rolled the whole transaction back (disk full, I/O error), every job of
///    the round fails with that error; if the `COMMIT` fails, every job that
///    had succeeded fails with the commit's error. Either way nothing of the
///    round is stored.
/// 7. **Shutdown** (``State``). ``stop()`` turns `.accepting` into `.draining`:
///    new jobs are refused with `.storageFailed`, the queued ones still run (a
///    lone one without grace), then the queue is `.stopped` and the thread ends.
///
/// Beside the rules, the queue counts its steps (``progress``, a
/// ``WriterProgress``): each job run in a round, each batch run to its end.
/// entryd's watchdog reads it; a caller never waits for it.
///
/// `@unchecked Sendable`: the queue's state is guarded by `shared`, and the
/// ``WriteContext`` passes from one round's runner to the next through it, an
/// order the compiler cannot see.
final class WriteQueue: @unchecked Sendable {
    /// Where the queue is in its life (rule 7).
    enum State {
        /// Takes new jobs.
        case accepting
        /// ``WriteQueue/stop()`` was called: refuses new jobs, runs the queued ones.
        case draining
        /// Drained; the writer thread has returned or is returning.
        case stopped
    }

    /// What the callers, the writer thread and ``stop()`` share.
    private struct Shared {
        /// Jobs not yet taken by a round, in queue order.
        var pending: [any QueuedWriteJob] = []
        /// Taking jobs, draining them, or stopped (rule 7).
        var state = State.accepting
        /// Who runs the current round (or the job outside transactions); `nil` while none runs.
        var runner: RoundRunner?
        /// Until when the writer thread leaves a lone queued job to its caller (rule 2).
        var loneDeadline: DispatchTime?
        /// Backs ``WriteQueue/commits``.
        var commitCount = 0
        /// Backs ``WriteQueue/statistics``.
        var statistics = WriteStatistics()
        /// Backs ``WriteQueue/savepointRounds``.
        var savepointRoundCount = 0
        /// Backs ``WriteQueue/lookAheadRounds``.
        var lookAheadRoundCount = 0
        /// Steps finished (``WriterProgress/steps``).
        var stepCount: UInt64 = 0
        /// When the last step finished or work arrived at an idle queue, whichever
        /// came later (``WriterProgress/waitingSince`` while work waits).
        var quietSince = ContinuousClock.now
        /// The writer thread once ``WriteQueue/start()`` ran.
        var thread: Thread?

        /// No job to take now: none is queued, or a round runs.
        var idle: Bool { pending.isEmpty || runner != nil }
        /// Stopping, and nothing is left to run: the writer thread ends.
        var drained: Bool { state != .accepting && pending.isEmpty && runner == nil }
        /// When a lone job on an idle queue is left to its caller (rule 2), until when.
        var loneGrace: DispatchTime? {
            guard pending.count == 1, runner == nil, state == .accepting, let loneDeadline,
                DispatchTime.now() < loneDeadline
            else { return nil }
            return loneDeadline
        }
    }

    /// Guards the shared state, and wakes the writer thread.
    private let shared = Monitor(Shared())
    /// The writer connection and clock; used only by the current round's runner.
    private let context: WriteContext
    /// Called after each successful commit with the highest seq, by the round's runner.
    private let didCommit: (Int64) -> Void
    /// The round limits and the lone job's grace.
    let policy: GroupCommitPolicy
    /// `policy.loneJobGrace`, converted once.
    private let loneJobGrace: DispatchTimeInterval
    /// Transactions committed so far (tests count group commits with it).
    var commits: Int { shared.withLock { $0.commitCount } }
    /// Rounds committed, their jobs and commit latency, since the queue began.
    var statistics: WriteStatistics { shared.withLock { $0.statistics } }
    /// Rounds run again ``RoundMode/savepointPerJob`` because a job failed after writing.
    var savepointRounds: Int { shared.withLock { $0.savepointRoundCount } }
    /// Rounds that read ahead for more than one Apply at once (``WriteContext/lookAhead(_:jobs:)``).
    var lookAheadRounds: Int { shared.withLock { $0.lookAheadRoundCount } }
    /// Jobs queued and not yet taken by a round.
    var queued: Int { shared.withLock { $0.pending.count } }
    /// How the writer gets on: steps finished and, while work is queued or a
    /// round runs, since when it has finished none. Takes the lock briefly;
    /// never waits for a round.
    var progress: WriterProgress {
        shared.withLock { s in
            WriterProgress(steps: s.stepCount, waitingSince: s.pending.isEmpty && s.runner == nil ? nil : s.quietSince)
        }
    }

    /// A queue over the writer connection in `context`, without its writer
    /// thread yet: call ``start()``.
    /// - Parameters:
    ///   - policy: the round limits and the lone job's grace.
    ///   - didCommit: called after each commit that moved or claimed the change
    ///     log with the highest seq, by the thread that ran the round.
    init(context: WriteContext, policy: GroupCommitPolicy = .standard, didCommit: @escaping (Int64) -> Void) {
        precondition(policy.maxJobsPerRound >= 1 && policy.loneJobGrace >= .zero, "invalid group-commit policy")
        self.context = context
        self.policy = policy
        self.loneJobGrace = policy.loneJobGraceInterval
        self.didCommit = didCommit
    }

    /// Starts the writer thread.
    func start() {
        let t = Thread { [self] in loop() }
        t.name = "entryd-writer"
        shared.withLock { $0.thread = t }
        t.start()
    }

    // MARK: - Queueing

    /// Runs `body` inside the next round and returns its result once committed.
    /// - Throws: what `body` throws (only its own writes are undone), the
    ///   ``SQLiteError`` of a failed round or commit, or ``EntryError``
    ///   `.storageFailed` once the store is closing.
    func submit<T>(_ body: @escaping (WriteContext) throws -> T) throws -> T {
        try enqueue(body, callerWaitsNext: true).wait()
    }

    /// ``submit(_:)`` for an Apply of `changes`: on a database server the round
    /// reads ahead what every Apply in it checks, in one round trip
    /// (``QueuedWriteJob/lookAhead``); `body` still calls ``WriteContext/claim(lookingUp:)``.
    func submit<T>(lookingUp changes: [ChangeRecord], _ body: @escaping (WriteContext) throws -> T) throws -> T {
        try add(WriteJob(lookAhead: changes, body), callerWaitsNext: true).wait()
    }

    /// Queues `body` for the next round and returns at once; the returned
    /// ticket's ``WriteTicket/wait()`` gives the result once committed. Jobs
    /// run in the order they were queued. `body` may run twice (rule 5): it must
    /// depend only on the database and the context.
    /// - Parameter callerWaitsNext: the caller promises to call `wait()` before
    ///   it blocks on anything else; then a lone job does not wake the writer
    ///   thread (rule 2), its caller alone runs it.
    /// - Throws: ``EntryError/storageFailed(_:)`` once the store is closing.
    func enqueue<T>(_ body: @escaping (WriteContext) throws -> T, callerWaitsNext: Bool = false) throws -> WriteTicket<
        T
    > {
        try add(WriteJob(body), callerWaitsNext: callerWaitsNext)
    }

    /// Runs `body` alone, outside any transaction, between two rounds
    /// (checkpoints, writer probes), and returns its result.
    /// - Throws: what `body` throws, or ``EntryError/storageFailed(_:)`` once the
    ///   store is closing.
    func perform<T>(_ body: @escaping (any SQLDatabase) throws -> T) throws -> T {
        try add(WriteJob(kind: .outsideTransaction) { ctx in try body(ctx.db) }, callerWaitsNext: true).wait()
    }

    /// Queues `body` to run alone, outside any transaction, between two rounds,
    /// and returns at once; nobody waits for its result (writer probes).
    /// - Throws: ``EntryError/storageFailed(_:)`` once the store is closing.
    func performLater(_ body: @escaping (any SQLDatabase) throws -> Void) throws {
        _ = try add(WriteJob(kind: .outsideTransaction) { ctx in try body(ctx.db) }, callerWaitsNext: false)
    }

    /// Appends `job` to the queue and wakes the writer thread, unless the job is
    /// lone and its caller promised to wait next (rule 2).
    private func add<T>(_ job: WriteJob<T>, callerWaitsNext: Bool) throws -> WriteTicket<T> {
        // Wakes the writer thread unless refused, or lone (alone in the queue now,
        // no round running) with its caller waiting next.
        try shared.withLock(waking: { s in
            s.state != .accepting || (callerWaitsNext && s.pending.count == 1 && s.runner == nil) ? .none : .one
        }) { s in
            guard s.state == .accepting else { throw EntryError.storageFailed("the daemon is shutting down") }
            if s.pending.isEmpty && s.runner == nil {
                s.loneDeadline = .now() + loneJobGrace
                s.quietSince = .now
            }
            s.pending.append(job)
        }
        return WriteTicket(job: job, queue: self)
    }

    /// Jobs waiting to be taken (tests use it to order jobs into one round).
    var queuedJobs: Int { shared.withLock { $0.pending.count } }

    // MARK: - Runners

    /// The caller's turn (``RoundRunner/caller``): when no round runs and `job`
    /// is still queued, runs the next round on the calling thread, with the jobs
    /// queued before and beside `job`. Returns at once otherwise; either way the
    /// caller then waits for `job` to be delivered.
    func runNextRoundIfIdle(holding job: any QueuedWriteJob) {
        let batch: [any QueuedWriteJob]? = shared.withLock { s in
            guard s.runner == nil, s.pending.contains(where: { $0 === job }) else { return nil }
            return takeBatch(&s, for: .caller)
        }
        guard let batch else { return }
        run(batch)
        // Wake the writer thread for the jobs queued meanwhile. Once draining,
        // ``stop()`` waits on `shared` too: wake both, lest a signal wake
        // only `stop()` and leave the writer thread asleep, never `.stopped`.
        shared.withLock(waking: { s in s.state != .accepting ? .all : s.pending.isEmpty ? .none : .one }) {
            $0.runner = nil
        }
    }

    /// The writer thread (``RoundRunner/writerThread``): whenever jobs wait and
    /// no round runs, takes the next batch and runs it; a lone job on an idle
    /// queue is first left to its caller until `loneDeadline` (rule 2). Once
    /// draining it runs what is queued without grace, then sets `.stopped` and
    /// returns.
    private func loop() {
        while true {
            // Waits while there is nothing to take (or, a lone job, until its grace
            // ends), then stops, takes a batch, or (`[]`: its wait ended, but
            // another thread took the job) looks again.
            let batch: [any QueuedWriteJob]? = shared.withLock(
                waitingUntil: { s in
                    s.loneGrace.map { deadline in
                        let nanoseconds =
                            deadline.uptimeNanoseconds
                            - min(deadline.uptimeNanoseconds, DispatchTime.now().uptimeNanoseconds)
                        return Date(timeIntervalSinceNow: Double(nanoseconds) / 1e9)
                    }
                }, while: { s in s.idle ? !s.drained : s.loneGrace != nil },
                waking: { s in s.state == .stopped ? .all : .none }
            ) { s in
                if s.drained {
                    s.state = .stopped
                    return nil
                }
                if s.idle || s.loneGrace != nil { return [] }
                return takeBatch(&s, for: .writerThread)
            }
            guard let batch else { return }
            guard !batch.isEmpty else { continue }
            run(batch)
            shared.withLock { $0.runner = nil }
        }
    }

    /// Refuses new jobs, lets the queued ones run, then stops the writer thread
    /// and waits for it (rule 7). Idempotent.
    func stop() {
        shared.withLock(wake: .all) { s in  // the writer thread, whatever else waits
            if s.state == .accepting { s.state = .draining }
        }
        shared.withLock(while: { $0.state != .stopped }) { s in
            // The Thread keeps its closure, and so this queue and its writer connection,
            // after the loop returned: let go of it, or neither is ever freed.
            s.thread = nil
        }
    }

    /// Removes the next batch from `s.pending` and makes `runner` its runner: up
    /// to ``GroupCommitPolicy/maxJobsPerRound`` jobs in queue order, or one job
    /// outside transactions alone (rule 3). Call inside `shared`'s lock, no round
    /// running and `pending` not empty.
    private func takeBatch(_ s: inout Shared, for runner: RoundRunner) -> [any QueuedWriteJob] {
        var n = 1
        if s.pending[0].kind == .inRound {
            let limit = min(s.pending.count, policy.maxJobsPerRound)
            while n < limit && s.pending[n].kind == .inRound { n += 1 }
        }
        let batch = Array(s.pending.prefix(n))
        s.pending.removeFirst(n)
        s.runner = runner
        s.loneDeadline = nil
        return batch
    }

    // MARK: - Rounds

    /// Runs a batch from ``takeBatch(for:)``: a round, or the job outside
    /// transactions, and delivers every job's outcome.
    private func run(_ batch: [any QueuedWriteJob]) {
        guard batch[0].kind == .inRound else {
            let job = batch[0]
            do { try job.run(context) } catch { job.hold(error) }
            stepped()
            job.deliver()
            return
        }
        runRound(batch, mode: .grouped)
        stepped()
    }

    /// Runs `batch` as one transaction in `mode` (rules 4 to 6), then commits it
    /// (``commit(_:succeeded:)``) or, when the transaction was lost, fails and
    /// delivers every job. In `.grouped` mode a job that fails having written
    /// nothing is left out; one that wrote rolls the round back and runs it
    /// again `.savepointPerJob`, where a job that throws is rolled back to its
    /// own savepoint, whatever it wrote.
    private func runRound(_ batch: [any QueuedWriteJob], mode: RoundMode) {
        let db = context.db
        do {
            try db.statement("BEGIN IMMEDIATE").run()
        } catch {
            if db.inTransaction { try? db.execute("ROLLBACK") }
            deliver(batch, failingWith: error)
            return
        }
        do {
            try context.lookAhead(batch.flatMap(\.lookAhead), jobs: batch.count { !$0.lookAhead.isEmpty })
            if context.lookupsSpanRound { shared.withLock { $0.lookAheadRoundCount += 1 } }
        } catch {
            if db.inTransaction { try? db.execute("ROLLBACK") }
            context.rolledBack()
            deliver(batch, failingWith: error)
            return
        }
        var succeeded = 0
        for job in batch {
            defer { stepped() }
            // A job that is undone must leave neither its seqs (they would be published
            // to Changes streams as committed) nor its HLC stamp (persistClock) behind.
            let before = context.mark
            let changesBefore = db.totalChanges
            do {
                if mode == .savepointPerJob { try db.statement("SAVEPOINT job").run() }
                try job.run(context)
                if mode == .savepointPerJob { try db.statement("RELEASE job").run() }
                succeeded += 1
            } catch {
                // What the round read ahead may hold the failed job's undone writes.
                context.dropLookups()
                guard db.inTransaction else {
                    // SQLite rolled the transaction back (disk full, I/O error): nothing of the round is kept.
                    context.rolledBack()
                    deliver(batch, failingWith: error)
                    return
                }
                switch mode {
                case .savepointPerJob:
                    try? db.execute("ROLLBACK TO job")
                    try? db.execute("RELEASE job")
                    context.undo(to: before, savepointRolledBack: true)
                case .grouped where db.totalChanges != changesBefore || db.transactionFailed:
                    // The job wrote before it failed (or a server spoilt the transaction with
                    // its failed statement): undo the round, run it again with savepoints.
                    try? db.execute("ROLLBACK")
                    context.rolledBack()
                    shared.withLock { $0.savepointRoundCount += 1 }
                    runRound(batch, mode: .savepointPerJob)
                    return
                case .grouped:
                    // Wrote nothing: left out of the round.
                    context.undo(to: before, savepointRolledBack: false)
                }
                job.hold(error)
            }
        }
        commit(batch, succeeded: succeeded)
    }

    /// Commits the open round transaction, or rolls it back when no job
    /// succeeded (`succeeded` is the count of jobs that did), then delivers
    /// every job: its own outcome, or the commit's error for a job that had
    /// succeeded (rule 6).
    private func commit(_ batch: [any QueuedWriteJob], succeeded: Int) {
        let db = context.db
        guard succeeded > 0 else {
            // Nothing to keep: roll back instead of paying for a commit.
            try? db.execute("ROLLBACK")
            context.rolledBack()
            for job in batch { job.deliver() }
            return
        }
        do {
            try context.persistClock()
            let began = ContinuousClock.now
            try context.commit()
            let took = ContinuousClock.now - began
            shared.withLock {
                $0.commitCount += 1
                $0.statistics.rounds += 1
                $0.statistics.jobs += batch.count
                $0.statistics.roundJobs.observe(Double(batch.count))
                $0.statistics.commitSeconds.observe(
                    Double(took.components.seconds) + Double(took.components.attoseconds) * 1e-18)
            }
            if let seq = context.committed() { didCommit(seq) }
            for job in batch { job.deliver() }
        } catch {
            if db.inTransaction { try? db.execute("ROLLBACK") }
            context.rolledBack()
            for job in batch {
                if job.holdsValue { job.hold(error) }
                job.deliver()
            }
        }
    }

    /// Counts a finished step (``WriterProgress``): a job run in a round, or a
    /// batch from ``takeBatch(for:)`` run to its end.
    private func stepped() {
        shared.withLock { s in
            s.stepCount += 1
            s.quietSince = .now
        }
    }

    /// Fails every job of `batch` with `error` and delivers it.
    private func deliver(_ batch: [any QueuedWriteJob], failingWith error: any Error) {
        for job in batch {
            job.hold(error)
            job.deliver()
        }
    }
}
