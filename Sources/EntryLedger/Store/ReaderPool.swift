import Foundation
import EntryModel

/// A small pool of read-only connections (WAL mode lets them read while the
/// writer writes, each seeing the last committed state, never waiting for it).
final class ReaderPool: @unchecked Sendable {
    private var idle: [SQLiteConnection]
    private let lock = NSCondition()

    /// Opens `count` read-only connections to `path`.
    /// - Throws: ``SQLiteError`` when a connection cannot be opened.
    init(path: String, count: Int, vfs: String? = nil) throws {
        idle = try (0..<max(1, count)).map { _ in try SQLiteConnection(path: path, readOnly: true, vfs: vfs) }
    }

    /// Runs `body` with a connection checked out of the pool, inside one read
    /// transaction so multi-statement reads see one snapshot.
    /// - Throws: what `body` throws, or ``SQLiteError``.
    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        lock.lock()
        while idle.isEmpty { lock.wait() }
        let db = idle.removeLast()
        lock.unlock()
        defer {
            lock.lock()
            idle.append(db)
            lock.signal()
            lock.unlock()
        }
        // Cached statements: no SQL parsing on every read.
        try db.statement("BEGIN").run()
        defer { try? db.statement("COMMIT").run() }
        return try body(db)
    }
}

/// Wakes readers that wait for the change log to grow (the `Changes` stream).
///
/// Subscribers do not queue changes: they remember their cursor and re-read the
/// change log after each wake-up, so a slow subscriber costs no daemon memory.
public final class CommitSignal: @unchecked Sendable {
    private let condition = NSCondition()
    private var seq: Int64
    private var closed = false

    /// A signal whose committed seq starts at `seq` (the change log's highest at open).
    init(seq: Int64) { self.seq = seq }

    /// Highest committed seq.
    public var lastSeq: Int64 {
        condition.lock()
        defer { condition.unlock() }
        return seq
    }

    /// Raises the committed seq to `newSeq` (never lowers it) and wakes every
    /// waiter. Called on the writer thread after each commit.
    func publish(_ newSeq: Int64) {
        condition.lock()
        if newSeq > seq { seq = newSeq }
        condition.broadcast()
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
