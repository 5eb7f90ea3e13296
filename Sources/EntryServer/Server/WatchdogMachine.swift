import EntryLedger

/// When entryd tells systemd it is alive (`WATCHDOG=1`, sd_watchdog_enabled(3)),
/// without sockets, threads or clocks: entryd's watchdog service reads the
/// writer's ``WriterProgress`` every ``tickInterval``, feeds it here with the
/// time, and carries out the ``Action``s returned (the shape of
/// ``ConnectionMachine``). Time is an instant of `ContinuousClock`, the clock of
/// ``WriterProgress/waitingSince``, passed in with every tick; the machine
/// never reads a clock, so tests drive it with the times they choose.
///
/// A keep-alive says that the daemon makes progress, not that some query got
/// through the writer's queue. The rules:
/// - **Ping** at every tick, unless work has waited for the writer a whole
///   ``interval`` or longer without the writer finishing a step (a job, a
///   round, a probe). A writer working through a long queue finishes steps
///   all the time, so the pings keep coming however much waits.
/// - **Probe** at every tick that finds nothing waiting: a cheap query is
///   queued for the writer. A writer wedged while idle leaves it waiting, and
///   so stops the pings like any other work (within ``interval`` plus a tick).
/// - **Withhold** the pings once work has waited ``interval`` without a step:
///   the writer is stuck, and systemd restarts entryd ``interval`` after the
///   last ping. Said once (``Action/withhold(waited:steps:)``), for the log.
/// - **Resume** pinging when the writer finishes a step again (a lock another
///   process held is released, and systemd has not acted yet), said once too.
///
/// A single write that takes longer than ``interval`` (an Import of a very
/// large batch) looks stuck: `WatchdogSec=` must exceed the longest write.
package struct WatchdogMachine: Sendable {
    /// What a tick asks entryd to do, in the order returned.
    package enum Action: Sendable, Equatable {
        /// Send `WATCHDOG=1`.
        case ping
        /// Queue a probe on the idle writer (``EntryStore/queueWriterProbe()``).
        case probe
        /// Pings stop: work has waited `waited` (at least ``interval``) for
        /// the writer, which finished nothing meanwhile; `steps` it finished
        /// before. Log it: systemd will restart entryd.
        case withhold(waited: Duration, steps: UInt64)
        /// Pings start again: the writer finished a step after being stuck for
        /// about `stuck`. Log it.
        case resume(stuck: Duration)
    }

    /// `WATCHDOG_USEC`: at most this long between two pings before systemd acts.
    package let interval: Duration
    /// How often to tick: half of ``interval``, as sd_watchdog_enabled(3) advises.
    package var tickInterval: Duration { interval / 2 }
    /// Since when the waiting work that stopped the pings has waited; `nil` while pinging.
    private var stuckSince: ContinuousClock.Instant?

    /// A machine for systemd's `WATCHDOG_USEC`, as `interval`; it pings at its first tick unless work is stuck already.
    package init(interval: Duration) {
        precondition(interval > .zero, "the watchdog interval must be positive")
        self.interval = interval
    }

    /// Whether pings are withheld now (a tick found the writer stuck, and none since found it moving).
    var isWithholding: Bool { stuckSince != nil }

    /// One tick: the writer's `progress` read at `now`.
    /// - Returns: what to do now, in order; empty while the pings are withheld.
    package mutating func tick(now: ContinuousClock.Instant, progress: WriterProgress) -> [Action] {
        if let since = progress.waitingSince, now - since >= interval {
            guard stuckSince == nil else { return [] }
            stuckSince = since
            return [.withhold(waited: now - since, steps: progress.steps)]
        }
        var actions: [Action] = []
        if let stuck = stuckSince {
            stuckSince = nil
            actions.append(.resume(stuck: now - stuck))
        }
        actions.append(.ping)
        if progress.waitingSince == nil { actions.append(.probe) }
        return actions
    }
}
