import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync
import EntryServer
import Foundation
import Synchronization

/// The peer scheduler (``PeerScheduler``): syncs the configured peers at their
/// intervals and soon after local writes, on a thread of its own; and, on
/// another, compacts the change log every `compact-interval` when one is set
/// (doc/design.md "Compaction"; read again after each wait, so a reload applies).
///
/// Started after the store; stopped after the listener and before the store,
/// so no new sync starts on a closed store (see ``stop(deadline:)`` for one in progress).
final class SchedulerService: DaemonService, Sendable {
    let name = "peer scheduler"
    private let store: StoreService
    private let log: Log
    /// What ``start()`` started: the scheduler, its thread, and the compaction thread.
    private struct Started: Sendable {
        let scheduler: PeerScheduler
        let peers: ServiceThread
        let compactor: ServiceThread
    }
    private let started = Mutex<Started?>(nil)
    /// Signalled to end the compaction thread.
    private let stopCompacting = DispatchSemaphore(value: 0)

    /// A scheduler over `store`'s ``StoreService/entries``, logging one line per sync outcome.
    init(store: StoreService, log: Log) {
        self.store = store
        self.log = log
    }

    /// Starts the scheduler on the thread `entryd-peers`.
    func start() {
        let scheduler = PeerScheduler(host: store.entries) { [log] in log.info($0) }
        let peers = ServiceThread(name: "entryd-peers") { scheduler.run() }
        let entries = store.entries
        let compactor = ServiceThread(name: "entryd-compact") { [stopCompacting, log] in
            while true {
                // Off (0): look again in a minute, in case a reload set an interval.
                let interval = entries.limits.compactIntervalSeconds
                if stopCompacting.wait(timeout: .now() + Double(interval > 0 ? interval : 60)) == .success { break }
                guard entries.limits.compactIntervalSeconds > 0 else { continue }
                do {
                    let r = try entries.compactNow()
                    log.info(
                        "compaction: removed=\(r.removed) bytes-freed=\(r.bytesFreed) horizon=\(r.horizon) "
                            + "held-back-by='\(r.heldBackBy ?? "none")' expired=\(r.expired.count)")
                } catch {
                    log.warning("scheduled compaction failed, trying again after compact-interval: \(error)")
                }
            }
        }
        started.withLock { $0 = Started(scheduler: scheduler, peers: peers, compactor: compactor) }
    }

    /// How long a stop waits for a sync in progress, in seconds. Short on
    /// purpose: a sync can take up to `peer-timeout` (default 30 s) and cannot
    /// be interrupted, and entryd has always stopped without waiting for it.
    static let syncGraceSeconds = 1.0

    /// Ends the scheduler and waits for its thread, which returns at once unless
    /// a sync is in progress. A sync still running after ``syncGraceSeconds``
    /// (or at `deadline`, if sooner) is left behind, as entryd always did: each
    /// of its batches is a transaction of its own, so once the store closes the
    /// rest fails cleanly and the next sync picks up from there.
    func stop(deadline: ContinuousClock.Instant) {
        guard let started = started.withLock({ $0 }) else { return }
        started.scheduler.stop()
        stopCompacting.signal()
        let wait = min(deadline.secondsLeft, SchedulerService.syncGraceSeconds)
        if !started.compactor.wait(seconds: wait) {
            log.notice("a compaction is still running; not waiting for it (each batch is a transaction of its own)")
        }
        if !started.peers.wait(seconds: wait) {
            log.notice(
                "a sync with a peer is still running; not waiting for it (the next sync picks up where it stops)")
        }
    }
}
