import Foundation
import Testing
@testable import EntryModel
@testable import EntryServer

/// ``ServiceRunner`` with fake services: start order, reverse stop order, a
/// failed start, a hanging or unclean stop, and events. No signals, no sockets.
@Suite struct ServiceRunnerTests {
    /// What the fakes and the runner did, in order. Thread-safe.
    final class Journal: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [String] = []
        /// Appends `entry`.
        func record(_ entry: String) { lock.withLock { entries.append(entry) } }
        /// Everything recorded so far.
        var all: [String] { lock.withLock { entries } }
    }

    /// A failure a fake throws.
    struct Failure: Error, CustomStringConvertible {
        /// The text, e.g. `2 session(s) still busy`.
        let description: String
    }

    /// A service that records its start and stop; it can fail to start, throw
    /// from stop, or hang in stop until `release` is signalled.
    final class FakeService: DaemonService, @unchecked Sendable {
        /// How ``stop(deadline:)`` behaves.
        enum Stop { case clean, unclean, hang }
        let name: String
        let journal: Journal
        let failsToStart: Bool
        let stopping: Stop
        /// Lets a hanging stop return (at the end of its test).
        let release = DispatchSemaphore(value: 0)
        /// The deadline the runner gave ``stop(deadline:)``, and when it was called.
        private(set) var deadline: (given: ContinuousClock.Instant, at: ContinuousClock.Instant)?

        /// A fake named `name` recording into `journal`.
        init(_ name: String, _ journal: Journal, failsToStart: Bool = false, stopping: Stop = .clean) {
            self.name = name
            self.journal = journal
            self.failsToStart = failsToStart
            self.stopping = stopping
        }

        /// Records `start NAME`; throws when `failsToStart`.
        func start() throws {
            journal.record("start \(name)")
            if failsToStart { throw Failure(description: "\(name) cannot start") }
        }

        /// Records `stop NAME`, then returns, throws, or hangs as `stopping` says.
        func stop(deadline: ContinuousClock.Instant) throws {
            self.deadline = (deadline, .now)
            journal.record("stop \(name)")
            switch stopping {
            case .clean: return
            case .unclean: throw Failure(description: "1 session(s) still busy")
            case .hang: release.wait()
            }
        }
    }

    /// A runner over `services` whose log lines go to `journal` as `LEVEL: line`.
    func runner(
        _ services: [FakeService], _ events: RunnerEvents, _ journal: Journal,
        stopTimeout: Duration = .seconds(10), hangGrace: Duration = .seconds(2)
    ) -> ServiceRunner {
        ServiceRunner(services: services, events: events, stopTimeout: stopTimeout, hangGrace: hangGrace) {
            level, line in
            if level != .debug { journal.record("\(level): \(line)") }
        }
    }

    @Test("services start in order and, on shutdown, stop in reverse")
    func startInOrderStopInReverse() throws {
        let journal = Journal()
        let services = ["store", "scheduler", "listener", "watchdog"].map { FakeService($0, journal) }
        let events = RunnerEvents()
        events.post(.shutdown(signal: SIGTERM))
        let report = try runner(services, events, journal).run(
            onReload: { Issue.record("no reload was asked") },
            onShutdown: { journal.record("shutdown \($0)") })
        #expect(
            journal.all == [
                "start store", "start scheduler", "start listener", "start watchdog", "shutdown \(SIGTERM)",
                "stop watchdog", "stop listener", "stop scheduler", "stop store",
            ])
        #expect(report == ServiceRunner.StopReport(stopped: ["watchdog", "listener", "scheduler", "store"]))
        #expect(report.isClean)
    }

    @Test("reload events reach onReload after every service started, in order, until the shutdown")
    func reloadsThenShutdown() throws {
        let journal = Journal()
        let services = [FakeService("a", journal), FakeService("b", journal)]
        let events = RunnerEvents()
        // Posted before the run: they wait until both services have started.
        events.post(.reload)
        events.post(.reload)
        let poster = Thread {
            usleep(50_000)
            events.post(.shutdown(signal: SIGINT))
            events.post(.reload)  // after the shutdown: never taken
        }
        poster.start()
        var reloads = 0
        let report = try runner(services, events, journal).run(
            onReload: {
                reloads += 1
                journal.record("reload")
            },
            onShutdown: { journal.record("shutdown \($0)") })
        #expect(reloads == 2)
        #expect(journal.all == ["start a", "start b", "reload", "reload", "shutdown \(SIGINT)", "stop b", "stop a"])
        #expect(report.isClean)
    }

    @Test("a service that fails to start stops those started before it, in reverse; the later ones never start")
    func failedStart() {
        let journal = Journal()
        let services = [
            FakeService("store", journal), FakeService("scheduler", journal),
            FakeService("listener", journal, failsToStart: true), FakeService("watchdog", journal),
        ]
        let events = RunnerEvents()
        events.post(.shutdown(signal: SIGTERM))
        #expect {
            _ = try runner(services, events, journal).run(
                onReload: {}, onShutdown: { _ in Issue.record("no shutdown after a failed start") })
        } throws: { error in
            let failure = error as? ServiceRunner.StartFailure
            return failure?.service == "listener"
                && "\(failure?.error ?? Failure(description: ""))" == "listener cannot start"
                && failure?.description == "service 'listener' failed to start: listener cannot start"
        }
        #expect(journal.all == ["start store", "start scheduler", "start listener", "stop scheduler", "stop store"])
    }

    @Test("a stop that hangs past its deadline is reported by name, the others still stop, and the shutdown is unclean")
    func hangingStop() throws {
        let journal = Journal()
        let hanging = FakeService("listener", journal, stopping: .hang)
        defer { hanging.release.signal() }
        let services = [FakeService("store", journal), hanging, FakeService("watchdog", journal)]
        let events = RunnerEvents()
        events.post(.shutdown(signal: SIGTERM))
        let began = ContinuousClock.now
        let report = try runner(
            services, events, journal, stopTimeout: .milliseconds(200), hangGrace: .milliseconds(100)
        )
        .run(onReload: {}, onShutdown: { _ in })
        let took = ContinuousClock.now - began
        #expect(report == ServiceRunner.StopReport(stopped: ["watchdog", "store"], hung: ["listener"]))
        #expect(!report.isClean)
        #expect(
            journal.all.contains("error: service 'listener' hangs: not stopped 0.2 s after it was asked; leaving it"))
        #expect(journal.all.firstIndex(of: "stop store")! > journal.all.firstIndex(of: "stop listener")!)
        #expect(took >= .milliseconds(300) && took < .seconds(5), "shutdown took \(took)")
    }

    @Test("a stop that throws is logged as unclean and makes the shutdown unclean")
    func uncleanStop() throws {
        let journal = Journal()
        let services = [FakeService("store", journal), FakeService("listener", journal, stopping: .unclean)]
        let events = RunnerEvents()
        events.post(.shutdown(signal: SIGTERM))
        let report = try runner(services, events, journal).run(onReload: {}, onShutdown: { _ in })
        #expect(report == ServiceRunner.StopReport(stopped: ["store"], unclean: ["listener"]))
        #expect(!report.isClean)
        #expect(journal.all.contains("warning: service 'listener' stopped, not cleanly: 1 session(s) still busy"))
    }

    @Test("each service's stop gets a deadline stopTimeout after its own stop began")
    func deadlines() throws {
        let journal = Journal()
        let services = [FakeService("a", journal), FakeService("b", journal)]
        let events = RunnerEvents()
        events.post(.shutdown(signal: SIGTERM))
        _ = try runner(services, events, journal, stopTimeout: .seconds(3)).run(onReload: {}, onShutdown: { _ in })
        for service in services {
            let (given, at) = try #require(service.deadline)
            #expect(given - at <= .seconds(3) && given - at > .seconds(2), "\(service.name): \(given - at)")
        }
    }
}
