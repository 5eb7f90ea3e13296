@preconcurrency import Glibc
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync
import EntryServer
import Foundation

/// systemd's watchdog (`WatchdogSec=`, sd_watchdog_enabled(3)): pings
/// `WATCHDOG=1` every `WATCHDOG_USEC / 2` microseconds, each only after a
/// query on the store's writer thread answered (``EntryStore/probeWriter()``),
/// so a wedged store stops the pings and systemd restarts the service.
///
/// Started last, after `READY=1`; stopped first. Does nothing when systemd
/// asks for no watchdog or no manager listens.
final class WatchdogService: DaemonService, @unchecked Sendable {
    let name = "watchdog"
    private let usec: UInt64?
    private let store: StoreService
    private let notifier: Notifier
    private let log: Log
    private let condition = NSCondition()
    private var stopping = false
    private var running = false
    /// Signalled when the ping loop has returned.
    private let finished = DispatchSemaphore(value: 0)

    /// - Parameter usec: `WATCHDOG_USEC` (``Notifier/watchdogMicroseconds(environment:)``), or `nil` for none.
    init(usec: UInt64?, store: StoreService, notifier: Notifier, log: Log) {
        self.usec = usec
        self.store = store
        self.notifier = notifier
        self.log = log
    }

    /// Starts the ping loop on the thread `entryd-watchdog`, when a watchdog is asked for.
    func start() {
        guard let usec, notifier.isActive else { return }
        running = true
        let thread = Thread { [self] in
            ping(every: usec / 2)
            finished.signal()
        }
        thread.name = "entryd-watchdog"
        thread.start()
    }

    /// Probes and pings, then waits the rest of `halfUSec` microseconds, until ``stop(deadline:)``.
    private func ping(every halfUSec: UInt64) {
        let store = store.store
        while true {
            let started = Notifier.monotonicMicroseconds()
            do {
                try store.probeWriter()
                notifier.send("WATCHDOG=1")
            } catch {
                log.error("watchdog: the store did not answer (\(error)); not pinging")
            }
            let spent = Notifier.monotonicMicroseconds() - started
            let wait = Double(halfUSec > spent ? halfUSec - spent : 0) / 1e6
            let done = condition.withLock {
                if !stopping { _ = condition.wait(until: Date(timeIntervalSinceNow: wait)) }
                return stopping
            }
            if done { return }
        }
    }

    /// Ends the ping loop and waits for it (a probe in progress first answers).
    /// - Throws: ``StopIncomplete`` when the probe has not answered by `deadline`.
    func stop(deadline: ContinuousClock.Instant) throws {
        guard running else { return }
        condition.withLock {
            stopping = true
            condition.broadcast()
        }
        if finished.wait(timeout: deadline.dispatchTime) == .timedOut {
            throw StopIncomplete(description: "the store's writer did not answer the last probe; leaving it")
        }
    }
}
