import Foundation
import Synchronization

/// The acknowledgements of pulls (``EntryStore/acknowledge(node:since:)``)
/// between the call and their write: a pull does not wait for a commit of its
/// own. Each is kept here and written by one job queued for the next write
/// round (group commit), with every other acknowledgement that arrives before
/// that job runs; one that does not move a node's `since` forward, made
/// within ``refreshInterval`` of the last one written, is not written at all.
///
/// A write that is lost (a crash before its round, a failed round) only holds
/// compaction back: the horizon is the least acknowledgement, and the
/// previous one stays stored (doc/design.md "Compaction").
final class PeerAcks: Sendable {
    /// How long an acknowledgement that does not move forward is not written
    /// again (its `at`, a peer's last contact, against `peer-expiry` of an
    /// hour at least).
    static let refreshInterval: Duration = .seconds(60)

    private struct State {
        /// Per node, the highest `since` not yet taken by a job.
        var pending: [String: Int64] = [:]
        /// A job is queued and has not taken ``pending`` yet.
        var jobQueued = false
        /// Per node, the highest `since` queued for writing, and when.
        var queued: [String: (since: Int64, at: ContinuousClock.Instant)] = [:]
    }
    private let state = Mutex(State())

    /// Records `since` for `node`.
    /// - Returns: true when the caller must queue a job that writes ``take()``'s acknowledgements.
    func record(node: String, since: Int64) -> Bool {
        let now = ContinuousClock.now
        return state.withLock { s in
            if let last = s.queued[node], since <= last.since, now - last.at < PeerAcks.refreshInterval {
                return false
            }
            s.queued[node] = (max(since, s.queued[node]?.since ?? since), now)
            s.pending[node] = max(since, s.pending[node] ?? since)
            guard !s.jobQueued else { return false }
            s.jobQueued = true
            return true
        }
    }

    /// The pending acknowledgements, sorted by node, emptied; the next ``record(node:since:)`` queues a new job.
    func take() -> [(node: String, since: Int64)] {
        state.withLock { s in
            s.jobQueued = false
            defer { s.pending = [:] }
            return s.pending.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
    }

    /// Forgets what was written (compaction may have marked a peer expired:
    /// its next acknowledgement must be written, which brings it back).
    func forgetQueued() {
        state.withLock { $0.queued = [:] }
    }
}

/// What one acknowledgement job took from ``PeerAcks``, kept for the job's
/// second run (a round run again with a savepoint per job runs it twice).
final class TakenAcks: @unchecked Sendable {
    // @unchecked: touched only by the round's runner, one round at a time.
    private var taken: [(node: String, since: Int64)]?

    /// The acknowledgements this job writes: taken from `acks` at its first run.
    func acknowledgements(from acks: PeerAcks) -> [(node: String, since: Int64)] {
        if let taken { return taken }
        let now = acks.take()
        taken = now
        return now
    }
}
