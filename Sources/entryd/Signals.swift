@preconcurrency import Glibc
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync
import EntryServer
import Foundation

/// SIGTERM, SIGINT and SIGHUP as ``RunnerEvent``s: blocked in every thread and
/// taken by sigwait(3) on one thread of their own, which posts them to the runner.
enum Signals {
    /// SIGTERM, SIGINT and SIGHUP.
    static var handled: sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for s in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&set, s) }
        return set
    }

    /// Blocks ``handled`` in the calling thread and ignores SIGPIPE (a client
    /// gone mid-write is an `EPIPE` error, not the end of the daemon). Call
    /// before any thread starts, so every thread inherits the mask and only the
    /// one of ``deliver(to:)`` receives the signals.
    static func block() {
        var blocked = handled
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        signal(SIGPIPE, SIG_IGN)
    }

    /// The event a signal asks for: SIGHUP reloads, SIGTERM and SIGINT shut down.
    static func event(for signal: Int32) -> RunnerEvent {
        signal == SIGHUP ? .reload : .shutdown(signal: signal)
    }

    /// Starts the thread that waits for ``handled`` signals and posts each as an
    /// event to `events`, for the rest of the process's life. Signals that
    /// arrived since ``block()`` are delivered at once.
    static func deliver(to events: RunnerEvents) {
        let thread = Thread {
            var set = handled
            while true {
                var received: Int32 = 0
                guard sigwait(&set, &received) == 0 else { continue }
                events.post(event(for: received))
            }
        }
        thread.name = "entryd-signals"
        thread.stackSize = 256 << 10
        thread.start()
    }
}
