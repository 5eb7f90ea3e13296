import Foundation
import EntrySync
import EntryModel

/// What one sync with a peer gave: what moved, and handshake warnings.
struct PeerSyncOutcome {
    /// Changes pulled, pushed and conflicts recorded.
    var sync: PeerSyncResult
    /// Differences worth telling the user (form definitions, reference data, a joined run).
    var warnings: [String]
}

/// The syncs in flight, at most one per peer (doc/design.md "Peers").
///
/// A caller that finds a sync with the same peer running does not start a
/// second one behind it (which would find nothing left to move and report
/// zeros after waiting). It waits for the running one and takes its outcome —
/// counts, warnings or error — when nothing was committed on this node since
/// that run started; otherwise its own changes might have missed the run's push,
/// so it waits and then runs its own.
final class PeerRuns: Sendable {
    /// One sync in flight.
    final class Run {
        /// This node's last committed seq when the run started.
        let startSeq: Int64
        /// Set once, when the run ends; read and written with ``PeerRuns``' lock held.
        var outcome: Result<PeerSyncOutcome, any Error>?
        init(startSeq: Int64) { self.startSeq = startSeq }
    }

    /// What a caller does next.
    enum Turn {
        /// Run the sync, then ``finish(_:_:outcome:)``.
        case run(Run)
        /// A run that covered this caller's changes ended with this outcome.
        case joined(Result<PeerSyncOutcome, any Error>)
    }

    /// The run in flight per peer; its lock also guards each ``Run/outcome``.
    private let running = Monitor<[String: Run]>([:])

    /// Waits as the type's rule says and tells the caller what to do.
    /// - Parameters:
    ///   - peer: the peer's name (or ad-hoc address).
    ///   - callerSeq: this node's last committed seq when the caller asked.
    ///   - currentSeq: reads this node's last committed seq (for a run that starts).
    func begin(peer: String, callerSeq: Int64, currentSeq: () -> Int64) -> Turn {
        while true {
            // The peer's run in the way, or a new run when there is none.
            let (run, started) = running.withLock { running -> (Run, Bool) in
                if let run = running[peer] { return (run, false) }
                let run = Run(startSeq: currentSeq())
                running[peer] = run
                return (run, true)
            }
            if started { return .run(run) }
            if callerSeq <= run.startSeq {
                return .joined(running.withLock(while: { _ in run.outcome == nil }) { _ in run.outcome! })
            }
            running.withLock(while: { $0[peer] === run }) { _ in }
        }
    }

    /// Ends `run`, handing `outcome` to the callers that joined it.
    func finish(_ peer: String, _ run: Run, outcome: Result<PeerSyncOutcome, any Error>) {
        running.withLock(wake: .all) { running in
            run.outcome = outcome
            if running[peer] === run { running[peer] = nil }
        }
    }
}
