import Foundation
import EntryModel
import EntryLedger
import EntryProtocol

/// What the scheduler syncs through: the node's configured peers, its change
/// log's end, and one sync with a peer (the service implements it, with the
/// peer's lock and the handshake).
package protocol PeerSyncHost: AnyObject, Sendable {
    /// The configured peers (those with `intervalSeconds` 0 are synced on demand only).
    var peers: [PeerConfig] { get }
    /// The seq of the last committed change in this node's change log.
    var lastCommittedSeq: Int64 { get }
    /// Syncs with `peer` both ways.
    /// - Throws: whatever the sync throws (the scheduler logs it and backs off).
    func syncPeer(_ peer: PeerConfig) throws -> PeerSyncResult
}

/// Syncs the configured peers in the background: every `interval`, and about
/// a second after local writes; after a failure it backs off exponentially
/// (5 s doubling, at most 10 minutes) before trying that peer again.
package final class PeerScheduler: Sendable {
    let host: any PeerSyncHost
    let log: @Sendable (String) -> Void
    /// Set by ``stop()``; ``run()`` waits on it between rounds.
    private let stopped = Monitor(false)
    /// Delay after a local write before syncing, in seconds.
    static let writeDebounceSeconds = 1.0
    /// Longest back-off after repeated failures, in seconds.
    static let maxBackoffSeconds = 600.0

    /// - Parameter log: receives one line per sync outcome (ids and counts only).
    package init(host: any PeerSyncHost, log: @escaping @Sendable (String) -> Void) {
        self.host = host
        self.log = log
    }

    /// Runs until ``stop()``. Call on a thread of its own.
    package func run() {
        struct Due {
            var next: Date
            var failures: Int
        }
        var due: [String: Due] = [:]
        var seenSeq = host.lastCommittedSeq
        while true {
            let peers = host.peers.filter { $0.intervalSeconds > 0 }
            let now = Date()
            for peer in peers where due[peer.name] == nil { due[peer.name] = Due(next: now, failures: 0) }
            // Local writes since the last look make every healthy peer due soon.
            let seq = host.lastCommittedSeq
            if seq > seenSeq {
                seenSeq = seq
                for peer in peers where due[peer.name]!.failures == 0 {
                    due[peer.name]!.next = min(
                        due[peer.name]!.next, now.addingTimeInterval(PeerScheduler.writeDebounceSeconds))
                }
            }
            for peer in peers where due[peer.name]!.next <= now {
                do {
                    let r = try host.syncPeer(peer)
                    if r.pulled + r.pushed > 0 {
                        log(
                            "synced peer '\(peer.name)': pulled \(r.pulled), pushed \(r.pushed), conflicts \(r.conflicts)"
                        )
                    }
                    seenSeq = max(seenSeq, host.lastCommittedSeq)
                    due[peer.name] = Due(next: Date().addingTimeInterval(Double(peer.intervalSeconds)), failures: 0)
                } catch {
                    let failures = due[peer.name]!.failures + 1
                    let backoff = min(PeerScheduler.maxBackoffSeconds, 5 * pow(2, Double(failures - 1)))
                    log("sync with peer '\(peer.name)' failed (\(error)); retrying in \(Int(backoff)) s")
                    due[peer.name] = Due(next: Date().addingTimeInterval(backoff), failures: failures)
                }
            }
            let next = due.values.map(\.next).min() ?? now.addingTimeInterval(60)
            let wake = min(next, Date().addingTimeInterval(0.5))
            if stopped.withLock(waitingUntil: wake, while: { !$0 }, { $0 }) { return }
        }
    }

    /// Ends ``run()`` after the sync in progress, if any.
    package func stop() {
        stopped.withLock(wake: .all) { $0 = true }
    }
}
