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
