import Foundation
import EntryModel

/// Wakes readers that wait for the change log to grow (the `Changes` stream,
/// the peer scheduler): a ``EntryStore``'s ``EntryStore/commits``.
///
/// Subscribers do not queue changes: they remember their cursor and re-read the
/// change log after each wake-up, so a slow subscriber costs no daemon memory.
/// Nothing in it knows the storage: every store makes one and publishes to it.
package final class CommitSignal: Sendable {
    /// The highest committed seq, and whether the signal is closed.
    private struct State {
        var seq: Int64
        var closed = false
    }

    private let state: Monitor<State>

    /// A signal whose committed seq starts at `seq` (the change log's highest at open).
    package init(seq: Int64) { state = Monitor(State(seq: seq)) }

    /// Highest committed seq.
    package var lastSeq: Int64 {
        state.withLock { $0.seq }
    }

    /// Raises the committed seq to `newSeq` (never lowers it) and wakes every
    /// waiter. The store calls it after each durable commit, never before it
    /// and never for a rolled-back transaction (``EntryStore`` "Implementing").
    func publish(_ newSeq: Int64) {
        state.withLock(wake: .all) { if newSeq > $0.seq { $0.seq = newSeq } }
    }

    /// Lowers the committed seq to `seq`: the change log went back (a server
    /// database that failed over or was restored under a running instance),
    /// and a new incarnation began there.
    func rewind(to seq: Int64) {
        state.withLock { $0.seq = seq }
    }

    /// Ends every wait, now and later (shutdown: open `Changes` streams finish).
    package func close() {
        state.withLock(wake: .all) { $0.closed = true }
    }

    /// Blocks until the committed seq passes `after`, the signal closes, or
    /// `timeout` (seconds) passes.
    /// - Returns: the committed seq at wake-up, or `nil` once closed.
    package func wait(after: Int64, timeout: Double) -> Int64? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        return state.withLock(waitingUntil: deadline, while: { $0.seq <= after && !$0.closed }) {
            $0.closed ? nil : $0.seq
        }
    }
}
