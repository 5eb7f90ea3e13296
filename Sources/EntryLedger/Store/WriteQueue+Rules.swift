import Foundation
import EntryModel

/// Who runs a round of the ``WriteQueue`` (its rule 1). One round runs at a
/// time, whoever runs it.
enum RoundRunner {
    /// The queue's own thread, `entryd-writer`: it takes the next round
    /// whenever jobs wait and none runs (after ``GroupCommitPolicy/loneJobGrace``
    /// for a lone job).
    case writerThread
    /// A caller in ``WriteTicket/wait()`` that finds no round running and its
    /// job still queued: it runs the next round (its job with those queued
    /// before and beside it) on its own thread, sparing two thread switches.
    case caller
}

/// How a round runs its jobs (rule 5 of ``WriteQueue``).
enum RoundMode {
    /// Every round's first attempt: no savepoints. A job that throws before it
    /// wrote anything is left out; one that throws after writing rolls the round
    /// back and makes it run again ``savepointPerJob``.
    case grouped
    /// The retry: each job inside its own `SAVEPOINT job`, so one that throws is
    /// rolled back alone, whatever it wrote. Only on a retry, because a savepoint
    /// copies every page a job touches into a sub-journal.
    case savepointPerJob
}

/// How many jobs one round takes and how long a lone job is left to its caller
/// (rules 2 and 3 of ``WriteQueue``).
struct GroupCommitPolicy {
    /// How long the writer thread leaves a lone job (queued while no round ran
    /// and nothing else waited) to its caller, who runs it on its own thread if
    /// it waits in time (``RoundRunner/caller``); after it the writer thread
    /// takes the job, so a caller busy elsewhere never stalls it. A caller that
    /// promised to wait next (`callerWaitsNext`) does not wake the writer thread
    /// at all. Default 2 ms (``standard``); at least zero.
    var loneJobGrace: Duration
    /// Most jobs in one round, that is in one transaction and one fsync;
    /// the rest wait for the next round. Default 1024; at least 1.
    var maxJobsPerRound: Int

    /// entryd's policy: a 2 ms grace, at most 1024 jobs a round.
    static let standard = GroupCommitPolicy(loneJobGrace: .milliseconds(2), maxJobsPerRound: 1024)

    /// ``loneJobGrace`` for `DispatchTime` arithmetic, in whole nanoseconds.
    var loneJobGraceInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = loneJobGrace.components
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}
