@preconcurrency import Glibc
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync
import EntryServer
import Foundation
import Synchronization

/// systemd's watchdog (`WatchdogSec=`, sd_watchdog_enabled(3)): every
/// `WATCHDOG_USEC / 2` microseconds reads the writer's progress
/// (``EntryStore/writerProgress``) and does what ``WatchdogMachine`` says:
/// pings `WATCHDOG=1` while the writer makes progress or is idle, queues a
/// probe when it is idle, and stops pinging, with one log line, once work has
/// waited `WATCHDOG_USEC` without the writer finishing anything, so systemd
/// restarts a stuck daemon and only a stuck one. The thread never waits for
/// the writer: a long queue does not delay the pings.
///
/// Started last, after `READY=1`; stopped first. Does nothing when systemd
/// asks for no watchdog or no manager listens.
final class WatchdogService: DaemonService, Sendable {
    let name = "watchdog"
    private let usec: UInt64?
    private let store: StoreService
    private let notifier: Notifier
    private let log: Log
    /// Set by ``stop(deadline:)``; the tick loop waits on it between ticks.
    private let stopping = Monitor(false)
    /// The tick loop's thread; `nil` when no watchdog is asked for.
    private let loop = Mutex<ServiceThread?>(nil)

    /// - Parameter usec: `WATCHDOG_USEC` (``Notifier/watchdogMicroseconds(environment:)``), or `nil` for none.
    init(usec: UInt64?, store: StoreService, notifier: Notifier, log: Log) {
        self.usec = usec
        self.store = store
        self.notifier = notifier
        self.log = log
    }

    /// Starts the tick loop on the thread `entryd-watchdog`, when a watchdog is asked for.
    func start() {
        guard let usec, notifier.isActive else { return }
        let thread = ServiceThread(name: "entryd-watchdog") { [self] in
            tick(WatchdogMachine(interval: .microseconds(usec)))
        }
        loop.withLock { $0 = thread }
    }

    /// Ticks `machine` every ``WatchdogMachine/tickInterval`` and carries out its
    /// actions, until ``stop(deadline:)``.
    private func tick(_ machine: WatchdogMachine) {
        var machine = machine
        let metrics = store.entries.metrics
        let store = store.store
        metrics.watchdog(enabled: true, withheld: false)
        let clock = ContinuousClock()
        var next = clock.now
        while true {
            let now = clock.now
            for action in machine.tick(now: now, progress: store.writerProgress) {
                switch action {
                case .ping:
                    notifier.send("WATCHDOG=1")
                case .probe:
                    do { try store.queueWriterProbe() } catch {
                        log.warning("watchdog: cannot queue a probe for the writer: \(error)")
                    }
                case .withhold(let waited, let steps):
                    metrics.watchdog(enabled: true, withheld: true)
                    log.error(
                        "watchdog: work has waited \(Self.seconds(waited)) for the database writer, which has finished "
                            + "nothing since (\(steps) step(s) before; the watchdog interval is \(Self.seconds(machine.interval))); "
                            + "not pinging, so systemd restarts entryd")
                case .resume(let stuck):
                    metrics.watchdog(enabled: true, withheld: false)
                    log.notice(
                        "watchdog: the database writer moves on again after about \(Self.seconds(stuck)); pinging again"
                    )
                }
            }
            // A fixed cadence; after a late wake-up (a loaded machine) the next tick is a whole tick away.
            next += machine.tickInterval
            if next < clock.now { next = clock.now + machine.tickInterval }
            let wait = next - clock.now
            let until = Date(timeIntervalSinceNow: Self.seconds(of: wait))
            if stopping.withLock(waitingUntil: until, while: { !$0 }, { $0 }) { return }
        }
    }

    /// `duration` in seconds, as a `Double`.
    private static func seconds(of duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// `duration` for the log, e.g. `31.2 s`.
    private static func seconds(_ duration: Duration) -> String {
        String(format: "%.1f s", seconds(of: duration))
    }

    /// Ends the tick loop and waits for it.
    /// - Throws: ``StopIncomplete`` when the loop has not returned by `deadline`.
    func stop(deadline: ContinuousClock.Instant) throws {
        guard let thread = loop.withLock({ $0 }) else { return }
        stopping.withLock(wake: .all) { $0 = true }
        if !thread.wait(until: deadline) {
            throw StopIncomplete(description: "the watchdog's tick loop did not return; leaving it")
        }
    }
}
