import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger

/// WriteQueue's named rules on a bare connection: the round limit and the lone
/// job's grace of ``GroupCommitPolicy``. (Who runs a round, the retry with
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
            let blocker = try queue.enqueue { _ in running.signal(); release.wait() }
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
}
