import Foundation

/// The single writer: runs write jobs from every connection one round at a
/// time and commits all jobs that are waiting together (group commit).
///
/// A round runs on the writer thread, or on the thread of a caller that waits
/// for its job while nothing else runs (``PendingWrite/wait()``): a lone write
/// then costs no thread switch. Either way only one round runs at a time, so
/// the writer connection and the ``WriteContext`` have one user at a time.
///
/// Each round: `BEGIN IMMEDIATE`; the waiting jobs in queue order; one `COMMIT`
/// (one fsync in WAL mode with `synchronous=FULL`); then every caller is
/// answered. A caller is thus answered only after its data is durable.
///
/// A job that fails fails alone. Most failures (`EntryExists`,
/// `VersionMismatch`, a refused Apply) are found before the job writes
/// anything; such a job is simply dropped from the round, so the common round
/// runs without a savepoint per job (a savepoint copies every page a job
/// touches into a sub-journal). When a job fails after it wrote something, the
/// round is rolled back and run again with a `SAVEPOINT` around each job, which
/// undoes the failed job alone. Job bodies may therefore run twice: they must
/// depend only on the database and the ``WriteContext``.
///
/// If SQLite rolled the whole transaction back (disk full, I/O error), or the
/// commit itself fails, every job of the round fails with that error and
/// nothing of the round is stored.
final class WriteQueue: @unchecked Sendable {
    final class Job {
        let body: (WriteContext) throws -> Any
        /// Runs alone, outside any transaction (checkpoints).
        let outsideTransaction: Bool
        var result: Result<Any, any Error>?
        let done = DispatchSemaphore(value: 0)
        /// A job running `body`; the writer sets `result`, then signals `done`.
        init(outsideTransaction: Bool = false, _ body: @escaping (WriteContext) throws -> Any) {
            self.outsideTransaction = outsideTransaction
            self.body = body
        }

        func finish(_ r: Result<Any, any Error>) {
            result = r
            done.signal()
        }
    }

    private let condition = NSCondition()
    private var pending: [Job] = []
    private var stopping = false
    private var finished = false
    /// A round (or a job outside transactions) is running, on the writer thread or a caller's.
    private var running = false
    /// Until when the writer thread leaves a lone queued job to its caller.
    private var loneDeadline: DispatchTime?
    private let context: WriteContext
    /// Called after each successful commit with the highest seq (by whichever thread ran the round).
    private let didCommit: (Int64) -> Void
    /// Largest number of jobs in one transaction.
    let maxJobsPerCommit: Int
    /// Transactions committed so far (tests count group commits with it).
    var commits: Int {
        condition.lock()
        defer { condition.unlock() }
        return commitCount
    }
    private var commitCount = 0
    /// Rounds run again with a savepoint per job because a job failed after writing.
    var savepointRounds: Int {
        condition.lock()
        defer { condition.unlock() }
        return savepointRoundCount
    }
    private var savepointRoundCount = 0
    private var thread: Thread?

    /// A stopped queue over the writer connection in `context`; call ``start()``.
    /// - Parameters:
    ///   - maxJobsPerCommit: most jobs in one group transaction.
    ///   - didCommit: called after each commit with the highest seq, by the thread that ran the round.
    init(context: WriteContext, maxJobsPerCommit: Int = 1024, didCommit: @escaping (Int64) -> Void) {
        self.context = context
        self.maxJobsPerCommit = maxJobsPerCommit
        self.didCommit = didCommit
    }

    /// Starts the writer thread.
    func start() {
        let t = Thread { [self] in loop() }
        t.name = "entryd-writer"
        thread = t
        t.start()
    }

    /// Runs `body` inside the next group transaction and
    /// returns its result once committed.
    /// - Throws: what `body` throws (only its own writes are undone), the
    ///   ``SQLiteError`` of a failed commit, or ``WireError`` `StorageFailed`
    ///   once the store is closing.
    func submit<T>(_ body: @escaping (WriteContext) throws -> T) throws -> T {
        try enqueue(body, callerWaitsNext: true).wait()
    }

    /// Queues `body` for the next group transaction and returns at once; the
    /// returned ticket's ``PendingWrite/wait()`` gives the result once committed.
    /// A job queued while the writer is idle runs when its caller waits, or
    /// after ``loneJobGrace`` on the writer thread if the caller is busy elsewhere.
    /// Jobs run in the order they were queued. `body` may run twice (see the
    /// type's comment): it must depend only on the database and the context.
    /// - Throws: ``WireError`` `StorageFailed` once the store is closing.
    ///
    /// - Parameter callerWaitsNext: the caller promises to call `wait()` before
    ///   it blocks on anything else (a session answering its queued calls
    ///   before it reads the socket again). Then a lone job does not even wake
    ///   the writer thread: its caller alone will run it.
    func enqueue<T>(_ body: @escaping (WriteContext) throws -> T, callerWaitsNext: Bool = false) throws -> PendingWrite<T> {
        try add(Job { try body($0) }, callerWaitsNext: callerWaitsNext)
    }

    /// Runs `body` outside any transaction, between two
    /// rounds (checkpoints, watchdog probes), and returns its result.
    func perform<T>(_ body: @escaping (SQLiteConnection) throws -> T) throws -> T {
        try add(Job(outsideTransaction: true) { ctx in try body(ctx.db) }, callerWaitsNext: true).wait()
    }

    private func add<T>(_ job: Job, callerWaitsNext: Bool) throws -> PendingWrite<T> {
        condition.lock()
        if stopping {
            condition.unlock()
            throw WireError.storageFailed("the daemon is shutting down")
        }
        // A lone job on an idle queue is left to its caller, who runs it when it
        // waits (`wait(for:)`): no thread switch to the writer and back. Unless the
        // caller promised to wait next, the writer thread is woken all the same and
        // takes the job after `loneJobGrace` if the caller has not come by then
        // (so a caller busy elsewhere never stalls it).
        let lone = pending.isEmpty && !running
        if lone { loneDeadline = .now() + WriteQueue.loneJobGrace }
        pending.append(job)
        if !(lone && callerWaitsNext) { condition.signal() }
        condition.unlock()
        return PendingWrite(job: job, queue: self)
    }

    /// How long the writer thread leaves a lone job to its caller.
    static let loneJobGrace = DispatchTimeInterval.milliseconds(2)

    /// Waits until `job` is done. When nothing is running and `job` is queued,
    /// the calling thread runs the next round itself (with the jobs queued
    /// before and beside it), instead of waking the writer thread and sleeping
    /// until it answers: the writer's work, minus two thread switches.
    fileprivate func wait(for job: Job) {
        condition.lock()
        if !running, pending.contains(where: { $0 === job }) {
            let batch = takeBatch()
            condition.unlock()
            run(batch)
            condition.lock()
            running = false
            if !pending.isEmpty || stopping { condition.signal() }
        }
        condition.unlock()
        job.done.wait()
    }

    /// Removes the next round from `pending` (up to ``maxJobsPerCommit`` jobs in
    /// queue order, or one job outside transactions alone) and marks the queue
    /// running. Call with the lock held and `pending` not empty.
    private func takeBatch() -> [Job] {
        var n = 1
        if !pending[0].outsideTransaction {
            while n < min(pending.count, maxJobsPerCommit) && !pending[n].outsideTransaction { n += 1 }
        }
        let batch = Array(pending.prefix(n))
        pending.removeFirst(n)
        running = true
        loneDeadline = nil
        return batch
    }

    /// Runs a batch from ``takeBatch()``: a round, or the job outside transactions.
    private func run(_ batch: [Job]) {
        if batch[0].outsideTransaction {
            let job = batch[0]
            job.finish(Result { try job.body(context) })
        } else {
            runRound(batch)
        }
    }

    /// Finishes the waiting jobs, then stops the thread and waits for it.
    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        while !finished { condition.wait() }
        condition.unlock()
    }

    /// The writer thread: when jobs wait and no round runs, takes the next batch
    /// (``takeBatch()``) and runs it; a lone job on an idle queue is left to its
    /// caller for ``loneJobGrace`` first. Once stopping it still drains the
    /// queue, then sets `finished` and returns.
    private func loop() {
        condition.lock()
        while true {
            if pending.isEmpty || running {
                if stopping && pending.isEmpty && !running {
                    finished = true
                    condition.broadcast()
                    condition.unlock()
                    return
                }
                condition.wait()
                continue
            }
            if pending.count == 1, !stopping, let deadline = loneDeadline, DispatchTime.now() < deadline {
                let nanoseconds = deadline.uptimeNanoseconds - DispatchTime.now().uptimeNanoseconds
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(nanoseconds) / 1e9))
                continue
            }
            let batch = takeBatch()
            condition.unlock()
            run(batch)
            condition.lock()
            running = false
        }
    }

    /// Runs `batch` as one group transaction (see the type's comment) and signals
    /// every job. When no job succeeded it rolls back instead of committing.
    ///
    /// Without `savepoints` (the common round) a job that fails having written
    /// nothing is dropped; one that wrote makes the round roll back and run
    /// again with `savepoints`, where each job runs inside its own `SAVEPOINT`
    /// and one that throws is rolled back alone, whatever it wrote.
    private func runRound(_ batch: [Job], savepoints: Bool = false) {
        let db = context.db
        do {
            try db.statement("BEGIN IMMEDIATE").run()
        } catch {
            for job in batch { job.finish(.failure(error)) }
            return
        }
        var outcomes: [Result<Any, any Error>] = []
        outcomes.reserveCapacity(batch.count)
        for job in batch {
            // A job that is undone must leave neither its seqs (they would be published
            // to Changes streams as committed) nor its HLC stamp (persistClock) behind.
            let seqBefore = context.lastSeq
            let tickBefore = context.lastTick
            let changesBefore = db.totalChanges
            do {
                if savepoints { try db.statement("SAVEPOINT job").run() }
                let value = try job.body(context)
                if savepoints { try db.statement("RELEASE job").run() }
                outcomes.append(.success(value))
            } catch {
                guard db.inTransaction else {
                    // SQLite rolled the transaction back (disk full, I/O error): nothing of the round is kept.
                    context.rolledBack()
                    for job in batch { job.finish(.failure(error)) }
                    return
                }
                if savepoints {
                    try? db.execute("ROLLBACK TO job")
                    try? db.execute("RELEASE job")
                } else if db.totalChanges != changesBefore {
                    // The job wrote before it failed: undo the round, run it again with savepoints.
                    try? db.execute("ROLLBACK")
                    context.rolledBack()
                    condition.lock()
                    savepointRoundCount += 1
                    condition.unlock()
                    runRound(batch, savepoints: true)
                    return
                }
                context.lastSeq = seqBefore
                context.lastTick = tickBefore
                outcomes.append(.failure(error))
            }
        }
        commit(batch, outcomes)
    }

    /// Jobs waiting to be taken (tests use it to order jobs into one round).
    var queuedJobs: Int {
        condition.lock()
        defer { condition.unlock() }
        return pending.count
    }

    /// Commits the open round transaction (or rolls it back when no job
    /// succeeded), then answers every job: its outcome, or the commit's error
    /// for a job that had succeeded.
    private func commit(_ batch: [Job], _ outcomes: [Result<Any, any Error>]) {
        let db = context.db
        guard outcomes.contains(where: { if case .success = $0 { true } else { false } }) else {
            // Nothing to keep: roll back instead of paying for a commit.
            try? db.execute("ROLLBACK")
            context.rolledBack()
            for (job, outcome) in zip(batch, outcomes) { job.finish(outcome) }
            return
        }
        do {
            try context.persistClock()
            try db.statement("COMMIT").run()
            condition.lock()
            commitCount += 1
            condition.unlock()
            context.committed()
            didCommit(context.lastSeq)
            for (job, outcome) in zip(batch, outcomes) { job.finish(outcome) }
        } catch {
            if db.inTransaction { try? db.execute("ROLLBACK") }
            context.rolledBack()
            for (job, outcome) in zip(batch, outcomes) {
                if case .success = outcome { job.finish(.failure(error)) } else { job.finish(outcome) }
            }
        }
    }
}

/// A write queued for the writer, not yet known to be committed.
///
/// ``wait()`` blocks until the job's group transaction committed (its data is
/// durable) or failed. Call it exactly once, from any one thread.
public struct PendingWrite<T>: @unchecked Sendable {
    let job: WriteQueue.Job
    let queue: WriteQueue

    /// Waits for the commit of the job's group transaction.
    /// - Returns: what the job returned.
    /// - Throws: what the job threw (its savepoint was rolled back), or the
    ///   ``SQLiteError`` of a failed commit.
    public func wait() throws -> T {
        queue.wait(for: job)
        return try job.result!.get() as! T
    }
}
