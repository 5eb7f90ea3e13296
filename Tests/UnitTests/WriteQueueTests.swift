import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger

/// WriteQueue's named rules on a bare connection: the round limit and the lone
/// job's grace of ``GroupCommitPolicy``, and the progress it reports
/// (``WriterProgress``, for the watchdog). (Who runs a round, the retry with
/// savepoints and shutdown: WriterThreadTests and StoreRegressionTests.)
@Suite struct WriteQueueTests {
    /// Runs `body` with a started queue under `policy`, over a fresh database
    /// with one table `t (x INTEGER)`; stops the queue afterwards.
    func withQueue(_ policy: GroupCommitPolicy, _ body: (WriteQueue) throws -> Void) throws {
        let db = TestDatabase()
        let connection = try SQLiteConnection(path: db.path)
        try connection.execute("CREATE TABLE t (x INTEGER)")
        let context = WriteContext(db: connection, nodeID: "n", clock: HybridClock(), lastSeq: 0)
        let queue = WriteQueue(context: context, policy: policy) { _ in }
        queue.start()
        defer { queue.stop() }
        try body(queue)
    }

    @Test("a round takes at most maxJobsPerRound jobs, in queue order; the rest commit in the next rounds")
    func roundLimit() throws {
        try withQueue(GroupCommitPolicy(loneJobGrace: .milliseconds(2), maxJobsPerRound: 2)) { queue in
            // Hold the writer thread in a round of its own while five jobs queue up.
            let running = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let blocker = try queue.enqueue { _ in
                running.signal()
                release.wait()
            }
            running.wait()
            let jobs = try (1...5).map { n in
                try queue.enqueue { ctx -> Int in
                    try ctx.db.statement("INSERT INTO t VALUES (?)").run([.int(Int64(n))])
                    return n
                }
            }
            #expect(queue.queuedJobs == 5)
            release.signal()
            try blocker.wait()
            #expect(try jobs.map { try $0.wait() } == [1, 2, 3, 4, 5])
            #expect(queue.commits == 1 + 3)  // the blocker's round, then rounds of 2, 2 and 1
        }
    }

    @Test("a lone job whose caller does not wait is taken by the writer thread once loneJobGrace is over, not before")
    func loneJobGrace() throws {
        try withQueue(GroupCommitPolicy(loneJobGrace: .milliseconds(100), maxJobsPerRound: 1024)) { queue in
            let ran = DispatchSemaphore(value: 0)
            let start = DispatchTime.now()
            let lone = try queue.enqueue { _ -> pthread_t in
                ran.signal()
                return pthread_self()
            }
            ran.wait()  // not in wait(): this thread cannot be the one that runs it
            let waitedNanoseconds = DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds
            #expect(waitedNanoseconds >= 100_000_000, "taken after \(waitedNanoseconds / 1_000_000) ms")
            #expect(pthread_equal(try lone.wait(), pthread_self()) == 0)
        }
    }

    /// Waits (up to 5 s) until nothing is queued or running, and returns the reading then.
    func idleProgress(_ queue: WriteQueue) -> WriterProgress {
        let deadline = ContinuousClock.now + .seconds(5)
        while queue.progress.waitingSince != nil && ContinuousClock.now < deadline { usleep(1000) }
        return queue.progress
    }

    @Test(
        "progress: nothing waits on an idle queue; work waits from its arrival; each job of a round and each round's end are a step"
    )
    func progressCountsSteps() throws {
        try withQueue(.standard) { queue in
            let idle = queue.progress
            #expect(idle.waitingSince == nil)
            let arrival = ContinuousClock.now
            let running = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let blocker = try queue.enqueue { _ in
                running.signal()
                release.wait()
            }
            running.wait()
            let held = queue.progress
            #expect(held.steps == idle.steps)
            let since = try #require(held.waitingSince)
            #expect(since >= arrival && since <= ContinuousClock.now)
            // More work queued behind a running round does not move the mark: nothing finished.
            let jobs = try (1...3).map { n in
                try queue.enqueue { ctx in try ctx.db.statement("INSERT INTO t VALUES (?)").run([.int(Int64(n))]) }
            }
            #expect(queue.progress == held)
            release.signal()
            try blocker.wait()
            for job in jobs { try job.wait() }
            // The blocker and its round's end, then three jobs and their round's end.
            #expect(idleProgress(queue).steps == idle.steps + 2 + 4)
        }
    }

    @Test("progress: a job that never finishes keeps the work waiting since its arrival, with no step, however long")
    func progressOfAStuckWriter() throws {
        try withQueue(.standard) { queue in
            let running = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let stuck = try queue.enqueue { _ in
                running.signal()
                release.wait()
            }
            running.wait()
            let first = queue.progress
            try queue.performLater { db in try db.execute("SELECT 1") }  // a probe, queued behind it
            usleep(50_000)
            #expect(queue.progress == first)
            #expect(first.waitingSince != nil)
            release.signal()
            try stuck.wait()
            let after = idleProgress(queue)
            #expect(after.waitingSince == nil)
            #expect(after.steps == first.steps + 3)  // the job, its round, the probe
        }
    }

    @Test("performLater on an idle queue: the probe is work waiting until the writer thread runs it, then a step")
    func probeOnIdleQueue() throws {
        try withQueue(GroupCommitPolicy(loneJobGrace: .milliseconds(200), maxJobsPerRound: 1024)) { queue in
            let before = queue.progress
            try queue.performLater { db in try db.execute("SELECT 1") }
            // Left to a caller for the lone job's grace (none comes): waiting meanwhile.
            #expect(queue.progress.waitingSince != nil)
            #expect(queue.progress.steps == before.steps)
            let after = idleProgress(queue)
            #expect(after.waitingSince == nil)
            #expect(after.steps == before.steps + 1)
        }
    }
}
