import Foundation
import Testing
@testable import EntryModel
@testable import EntrySync
@testable import EntryServer

/// One sync per peer at a time, and what a caller gets who finds one running (issue 14:
/// a manual sync during an automatic one waited and reported zeros).
@Suite struct PeerRunsTests {
    /// Calls `begin` on another thread; `turn` is set when it returns.
    final class Caller: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var result: PeerRuns.Turn?
        var turn: PeerRuns.Turn? {
            lock.lock()
            defer { lock.unlock() }
            return result
        }
        init(_ runs: PeerRuns, peer: String, callerSeq: Int64, currentSeq: Int64) {
            Thread.detachNewThread { [self] in
                let t = runs.begin(peer: peer, callerSeq: callerSeq, currentSeq: { currentSeq })
                lock.lock()
                result = t
                lock.unlock()
                done.signal()
            }
        }
    }

    func outcome(pulled: Int) -> PeerSyncOutcome {
        PeerSyncOutcome(sync: PeerSyncResult(pulled: pulled, pushed: 1, conflicts: 0), warnings: [])
    }

    @Test("a caller with nothing new here takes the running sync's outcome instead of running a second one")
    func joinsRunningSync() throws {
        let runs = PeerRuns()
        guard case .run(let first) = runs.begin(peer: "laptop", callerSeq: 5, currentSeq: { 5 }) else {
            Issue.record("nothing was running, yet the first caller did not run")
            return
        }
        let second = Caller(runs, peer: "laptop", callerSeq: 5, currentSeq: 5)
        Thread.sleep(forTimeInterval: 0.05)
        #expect(second.turn == nil, "the second caller must wait for the running sync")
        // Another peer is not held up.
        guard case .run(let other) = runs.begin(peer: "desk", callerSeq: 5, currentSeq: { 5 }) else {
            Issue.record("a sync with another peer waited")
            return
        }
        runs.finish("desk", other, outcome: .success(outcome(pulled: 0)))
        runs.finish("laptop", first, outcome: .success(outcome(pulled: 7)))
        #expect(second.done.wait(timeout: .now() + 5) == .success)
        guard case .joined(let result) = second.turn else {
            Issue.record("the second caller ran its own sync")
            return
        }
        #expect(try result.get().sync.pulled == 7)
        // The run is over: the next caller runs.
        guard case .run = runs.begin(peer: "laptop", callerSeq: 5, currentSeq: { 5 }) else {
            Issue.record("a finished run was joined")
            return
        }
    }

    @Test("a caller whose own changes came after the running sync started waits, then runs its own")
    func runsAfterWhenNewChanges() throws {
        let runs = PeerRuns()
        guard case .run(let first) = runs.begin(peer: "laptop", callerSeq: 5, currentSeq: { 5 }) else {
            Issue.record("the first caller did not run")
            return
        }
        let second = Caller(runs, peer: "laptop", callerSeq: 6, currentSeq: 6)
        Thread.sleep(forTimeInterval: 0.05)
        #expect(second.turn == nil, "syncs of one peer must not overlap")
        runs.finish("laptop", first, outcome: .failure(EntryError.peerUnreachable(peer: "laptop", reason: "gone")))
        #expect(second.done.wait(timeout: .now() + 5) == .success)
        guard case .run(let own) = second.turn else {
            Issue.record("the caller with new changes joined a run that missed them")
            return
        }
        #expect(own.startSeq == 6)
    }

    @Test("a joined sync's error reaches every caller who joined it")
    func joinedErrorIsShared() throws {
        let runs = PeerRuns()
        guard case .run(let first) = runs.begin(peer: "p", callerSeq: 1, currentSeq: { 1 }) else {
            Issue.record("the first caller did not run")
            return
        }
        let joiners = (0..<3).map { _ in Caller(runs, peer: "p", callerSeq: 1, currentSeq: 1) }
        Thread.sleep(forTimeInterval: 0.05)
        runs.finish("p", first, outcome: .failure(EntryError.peerUnreachable(peer: "p", reason: "gone")))
        for joiner in joiners {
            #expect(joiner.done.wait(timeout: .now() + 5) == .success)
            guard case .joined(let result) = joiner.turn else {
                Issue.record("a joiner ran its own sync")
                continue
            }
            #expect(throws: EntryError.self) { try result.get() }
        }
    }
}
