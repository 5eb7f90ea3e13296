import Foundation

/// Wakes readers that wait for the change log to grow (the `Changes` stream,
/// the peer scheduler): a ``EntryStore``'s ``EntryStore/commits``.
///
/// Subscribers do not queue changes: they remember their cursor and re-read the
/// change log after each wake-up, so a slow subscriber costs no daemon memory.
/// Nothing in it knows the storage: every store makes one and publishes to it.
public final class CommitSignal: @unchecked Sendable {
    private let condition = NSCondition()
    private var seq: Int64
    private var closed = false

    /// A signal whose committed seq starts at `seq` (the change log's highest at open).
    public init(seq: Int64) { self.seq = seq }

    /// Highest committed seq.
    public var lastSeq: Int64 {
        condition.lock()
        defer { condition.unlock() }
        return seq
    }

    /// Raises the committed seq to `newSeq` (never lowers it) and wakes every
    /// waiter. The store calls it after each durable commit, never before it
    /// and never for a rolled-back transaction (``EntryStore`` "Implementing").
    func publish(_ newSeq: Int64) {
        condition.lock()
        if newSeq > seq { seq = newSeq }
        condition.broadcast()
        condition.unlock()
    }

    /// Lowers the committed seq to `seq`: the change log went back (a server
    /// database that failed over or was restored under a running instance),
    /// and a new incarnation began there.
    func rewind(to seq: Int64) {
        condition.lock()
        self.seq = seq
        condition.unlock()
    }

    /// Ends every wait, now and later (shutdown: open `Changes` streams finish).
    public func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks until the committed seq passes `after`, the signal closes, or
    /// `timeout` (seconds) passes.
    /// - Returns: the committed seq at wake-up, or `nil` once closed.
    public func wait(after: Int64, timeout: Double) -> Int64? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while seq <= after && !closed {
            if !condition.wait(until: deadline) { break }
        }
        return closed ? nil : seq
    }
}
