/// How the single writer gets on, in a reading cheap enough to take every
/// second: a count of the steps it finished and, while work waits for it,
/// since when it has finished none. entryd's watchdog pings systemd on it
/// (`WatchdogMachine`, doc/design.md "Running").
///
/// A step is a write job run in a round (whether it succeeded or failed), a
/// round ended (committed, rolled back or failed), or a job run alone between
/// rounds (a probe, a checkpoint): the writer moves on with every one, and a
/// writer stuck in SQLite (a lock, an fsync that never returns) finishes none.
package struct WriterProgress: Sendable, Equatable {
    /// Steps finished since the store opened; it only grows.
    package let steps: UInt64
    /// While a job is queued or a round runs: since when the writer has
    /// finished no step, that is the later of the last step's end and the
    /// moment work arrived at an idle queue. `nil` when nothing is queued or
    /// running.
    package let waitingSince: ContinuousClock.Instant?
}
