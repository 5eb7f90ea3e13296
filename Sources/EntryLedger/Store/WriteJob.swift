import Foundation
import EntryModel

/// Where a job of the ``WriteQueue`` runs.
enum WriteJobKind {
    /// Inside a round's group transaction, beside the other jobs of the round
    /// (every write).
    case inRound
    /// Alone between two rounds, outside any transaction (a WAL checkpoint, a
    /// writer probe): a round never takes it together with other jobs.
    case outsideTransaction
}

/// A queued job as the ``WriteQueue`` sees it, whatever its result type. The
/// queue keeps `[any QueuedWriteJob]` and drives each job through ``run(_:)``,
/// ``hold(_:)`` and ``deliver()``; the typed result never leaves the job
/// (``WriteJob``), so nothing is cast back.
///
/// A job keeps one outcome at a time, not yet seen by its caller: ``run(_:)``
/// and ``hold(_:)`` replace it (a round run again replaces what the first
/// attempt kept), ``deliver()`` hands it over once the round is over.
///
/// ### Implementing
/// Only ``WriteJob`` implements it. All methods are called by the one thread
/// running the job's round, ``deliver()`` last and exactly once.
protocol QueuedWriteJob: AnyObject {
    /// Whether the job runs in a round or alone, outside transactions.
    var kind: WriteJobKind { get }

    /// The changes an Apply job checks (``WriteContext/claim(lookingUp:)``),
    /// read ahead with the other Apply jobs' of its round in one round trip
    /// on a database server; empty for other jobs.
    var lookAhead: [ChangeRecord] { get }

    /// Runs the job's body with `context` and keeps what it returns as the
    /// outcome, not yet delivered.
    /// - Throws: what the body throws; the kept outcome is then unchanged and
    ///   the round decides (``hold(_:)``, or run the round again).
    func run(_ context: WriteContext) throws

    /// Keeps `error` as the outcome, replacing a value or an earlier error.
    func hold(_ error: any Error)

    /// Whether the kept outcome is a value: the last ``run(_:)`` returned and
    /// nothing was held since. A failed commit turns exactly these into its error.
    var holdsValue: Bool { get }

    /// Wakes the caller waiting for the job (``WriteTicket/wait()``), which
    /// then gets the kept outcome. Call once, after the round committed or failed.
    func deliver()
}

/// One job whose body returns a `T`, with its own typed result slot: the
/// compiler checks `T` from ``WriteQueue/enqueue(_:callerWaitsNext:)`` to the
/// caller's ``WriteTicket/wait()``.
///
/// One object per job: the body, the slot and the semaphore that hands the
/// slot over. The thread running the round writes `outcome` and then signals
/// `delivered`; the caller waits on `delivered` and then reads `outcome`. The
/// semaphore orders the two, so the slot needs no lock.
final class WriteJob<T>: QueuedWriteJob {
    let kind: WriteJobKind
    let lookAhead: [ChangeRecord]
    private let body: (WriteContext) throws -> T
    /// `nil` until the job ran or was failed; then the latest attempt's outcome.
    private var outcome: Result<T, any Error>?
    private let delivered = DispatchSemaphore(value: 0)

    /// A job that runs `body`, in a round unless `kind` says otherwise; an Apply
    /// names the changes it checks (`lookAhead`, see ``QueuedWriteJob/lookAhead``).
    init(
        kind: WriteJobKind = .inRound, lookAhead: [ChangeRecord] = [], _ body: @escaping (WriteContext) throws -> T
    ) {
        self.kind = kind
        self.lookAhead = lookAhead
        self.body = body
    }

    /// Runs the body and keeps its value (see ``QueuedWriteJob/run(_:)``).
    /// - Throws: what the body throws.
    func run(_ context: WriteContext) throws {
        outcome = .success(try body(context))
    }

    /// Keeps `error` as the outcome (see ``QueuedWriteJob/hold(_:)``).
    func hold(_ error: any Error) {
        outcome = .failure(error)
    }

    /// Whether the kept outcome is a value (see ``QueuedWriteJob/holdsValue``).
    var holdsValue: Bool {
        if case .success = outcome { true } else { false }
    }

    /// Hands the kept outcome to the caller (see ``QueuedWriteJob/deliver()``).
    func deliver() {
        delivered.signal()
    }

    /// Blocks the calling thread until ``deliver()``, then gives the outcome.
    /// - Returns: what the body returned, in the round that committed.
    /// - Throws: what the body threw, or the error that failed its round.
    func outcomeWhenDelivered() throws -> T {
        delivered.wait()
        guard let outcome else { preconditionFailure("a write job was delivered without an outcome") }
        return try outcome.get()
    }
}

/// A write queued for the writer, not yet known to be committed: the ticket
/// ``WriteQueue/enqueue(_:callerWaitsNext:)`` returns, and ``EntryStore``'s
/// ``PendingWrite``.
///
/// ``wait()`` blocks until the job's round committed (its data is durable) or
/// failed. Call it exactly once. The ticket is not `Sendable`: the caller that
/// queued the job is the one that waits for it. Two references: an
/// `any PendingWrite` holds it inline, with no allocation.
struct WriteTicket<T>: PendingWrite {
    let job: WriteJob<T>
    let queue: WriteQueue

    /// Waits for the commit of the job's round; when no round runs and the job
    /// is still queued, this thread runs the next round itself
    /// (``RoundRunner/caller``).
    /// - Returns: what the job returned.
    /// - Throws: what the job threw (only its own writes were undone), or the
    ///   ``SQLiteError`` of a failed round or commit.
    func wait() throws -> T {
        queue.runNextRoundIfIdle(holding: job)
        return try job.outcomeWhenDelivered()
    }
}
