import Foundation
import Synchronization
import EntryModel

/// A long-lived part of the daemon that ``ServiceRunner`` starts and stops:
/// entryd's store, peer scheduler, listener and watchdog.
///
/// ### Implementing
/// - ``start()`` returns once the service is up. A loop that lasts the
///   daemon's life runs on a thread the service starts there: the runner's
///   thread must come back to start the next service and then wait for events.
/// - ``stop(deadline:)`` is called once, only if ``start()`` returned, on a
///   thread of its own. It returns by `deadline`; a stop still running a
///   little past it (``ServiceRunner/hangGrace``) is reported as hanging and
///   left behind, and the runner goes on stopping the others.
/// - A stop that ends but not cleanly (sessions still busy at the deadline)
///   throws; the error's description names what was left.
package protocol DaemonService: AnyObject, Sendable {
    /// A short name for the log, e.g. `listener`.
    var name: String { get }
    /// Brings the service up; returns once it serves.
    /// - Throws: any error; the runner then stops the services started before
    ///   this one, in reverse, and throws ``ServiceRunner/StartFailure``.
    func start() throws
    /// Stops the service, finishing by `deadline` (the runner's
    /// ``ServiceRunner/stopTimeout`` after this service's stop began).
    /// - Throws: any error when the service stopped but not cleanly.
    func stop(deadline: ContinuousClock.Instant) throws
}

/// What the runner is told while its services run; entryd turns signals into
/// these (SIGTERM, SIGINT → ``shutdown(signal:)``; SIGHUP → ``reload``).
package enum RunnerEvent: Sendable, Equatable {
    /// Stop every service, in reverse order, and return. `signal` is the number
    /// of the signal that asked for it, for the log.
    case shutdown(signal: Int32)
    /// Re-read the configuration; the services keep running.
    case reload
}

/// The runner's mailbox: any thread posts (entryd's signal thread, a test),
/// the runner takes events one at a time, in order. Thread-safe.
package final class RunnerEvents: Sendable {
    /// The events not taken yet, oldest first.
    private let queue = Monitor<[RunnerEvent]>([])

    /// An empty mailbox.
    package init() {}

    /// Adds `event` after those not taken yet; never blocks.
    package func post(_ event: RunnerEvent) {
        queue.withLock(wake: .one) { $0.append(event) }
    }

    /// Blocks until an event is there, then takes the oldest.
    func next() -> RunnerEvent {
        queue.withLock(while: { $0.isEmpty }) { $0.removeFirst() }
    }
}

/// Runs the daemon's services, after swift-service-lifecycle's `ServiceGroup`:
/// starts them in order, waits for events, and on shutdown stops them in
/// reverse, each within ``stopTimeout``; a stop still running after that plus
/// ``hangGrace`` is logged as hanging and makes the shutdown unclean.
///
/// Thread-based, like the rest of entryd: ``run(onReload:onShutdown:)`` blocks
/// the calling thread for the daemon's life.
package final class ServiceRunner: Sendable {
    /// The services, in start order.
    package let services: [any DaemonService]
    /// Time each service's stop is given, from the moment it begins. Default 10 s.
    package let stopTimeout: Duration
    /// How long past its deadline a stop may still return before the service is
    /// reported as hanging (a stop that waits until its deadline, as the
    /// listener's drain does, returns just after it). Default 2 s.
    let hangGrace: Duration
    private let events: RunnerEvents
    private let log: @Sendable (Log.Level, String) -> Void

    /// A service failed to start; those started before it have been stopped.
    package struct StartFailure: Error, CustomStringConvertible {
        /// The name of the service that failed.
        package let service: String
        /// What its ``DaemonService/start()`` threw.
        package let error: any Error
        /// `service 'NAME' failed to start: ERROR`.
        package var description: String { "service '\(service)' failed to start: \(error)" }
    }

    /// How the services stopped, in the order they were stopped.
    package struct StopReport: Sendable, Equatable {
        /// Services whose stop returned without an error.
        package var stopped: [String] = []
        /// Services whose stop returned an error (stopped, not cleanly).
        var unclean: [String] = []
        /// Services whose stop did not return by its deadline plus ``ServiceRunner/hangGrace``.
        var hung: [String] = []
        /// Whether every service stopped cleanly: entryd then exits 0.
        package var isClean: Bool { unclean.isEmpty && hung.isEmpty }
    }

    /// - Parameters:
    ///   - services: started in this order, stopped in reverse.
    ///   - events: where shutdown and reload requests arrive.
    ///   - stopTimeout: time each service's stop is given. Default 10 s.
    ///   - hangGrace: time past its deadline before a stop is reported as hanging. Default 2 s.
    ///   - log: receives the runner's lines: hangs at `error`, unclean stops at
    ///     `warning`, each start and stop at `debug`.
    package init(
        services: [any DaemonService], events: RunnerEvents, stopTimeout: Duration = .seconds(10),
        hangGrace: Duration = .seconds(2), log: @escaping @Sendable (Log.Level, String) -> Void
    ) {
        self.services = services
        self.events = events
        self.stopTimeout = stopTimeout
        self.hangGrace = hangGrace
        self.log = log
    }

    /// Starts the services in order, calls `onReload` for each ``RunnerEvent/reload``
    /// until a ``RunnerEvent/shutdown(signal:)``, then calls `onShutdown` with the
    /// signal and stops the services in reverse. Events that arrive during start
    /// wait until every service has started. Both closures run on this thread.
    /// - Returns: how the services stopped.
    /// - Throws: ``StartFailure`` when a service fails to start, after stopping
    ///   (in reverse) the ones started before it.
    package func run(onReload: () -> Void, onShutdown: (Int32) -> Void) throws(StartFailure) -> StopReport {
        for (index, service) in services.enumerated() {
            log(.debug, "starting service '\(service.name)'")
            do {
                try service.start()
            } catch {
                log(.debug, "service '\(service.name)' failed to start; stopping the \(index) started before it")
                _ = stop(services[..<index])
                throw StartFailure(service: service.name, error: error)
            }
        }
        while true {
            switch events.next() {
            case .reload:
                onReload()
            case .shutdown(let signal):
                onShutdown(signal)
                return stop(services[...])
            }
        }
    }

    /// Stops `started` in reverse order, each on a thread of its own within
    /// ``stopTimeout``; a hanging one is left behind and the next is stopped.
    private func stop(_ started: ArraySlice<any DaemonService>) -> StopReport {
        var report = StopReport()
        for service in started.reversed() {
            log(.debug, "stopping service '\(service.name)'")
            let outcome = StopOutcome()
            let deadline = ContinuousClock.now + stopTimeout
            let thread = ServiceThread(name: "runner-stop") {
                do { try service.stop(deadline: deadline) } catch { outcome.error.withLock { $0 = error } }
            }
            let patience = (stopTimeout + hangGrace).seconds
            if !thread.wait(seconds: patience) {
                log(
                    .error,
                    "service '\(service.name)' hangs: not stopped \(String(format: "%g", stopTimeout.seconds)) s after it was asked; leaving it"
                )
                report.hung.append(service.name)
            } else if let error = outcome.error.withLock({ $0 }) {
                log(.warning, "service '\(service.name)' stopped, not cleanly: \(error)")
                report.unclean.append(service.name)
            } else {
                report.stopped.append(service.name)
            }
        }
        return report
    }
}

/// One stop's result, handed from its thread to the runner: `error` is
/// written before the thread returns and read only after.
private final class StopOutcome: Sendable {
    let error = Mutex<(any Error)?>(nil)
}

extension Duration {
    /// The duration in seconds, e.g. `1.5` for 1500 ms.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
