import Foundation
import EntryModel

/// A small pool of reading connections: on SQLite read-only WAL connections
/// that read while the writer writes, each seeing the last committed state,
/// never waiting for it; on a database server, connections of their own.
final class ReaderPool: @unchecked Sendable {
    private var idle: [any SQLDatabase]
    private let lock = NSCondition()
    /// The SQL that opens each read's transaction: one snapshot for all its statements.
    private let begin: String

    /// A pool of `connections`, each read inside a transaction opened with `begin`.
    init(connections: [any SQLDatabase], begin: String = "BEGIN") {
        precondition(!connections.isEmpty, "a reader pool needs a connection")
        idle = connections
        self.begin = begin
    }

    /// Opens `count` read-only connections to the SQLite database at `path`.
    /// - Throws: ``SQLiteError`` when a connection cannot be opened.
    convenience init(path: String, count: Int, vfs: String? = nil) throws {
        self.init(connections: try (0..<max(1, count)).map { _ in try SQLiteConnection(path: path, readOnly: true, vfs: vfs) })
    }

    /// Runs `body` with a connection checked out of the pool, inside one read
    /// transaction so multi-statement reads see one snapshot.
    /// - Throws: what `body` throws, or the database's ``StorageError``.
    func read<T>(_ body: (any SQLDatabase) throws -> T) throws -> T {
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
        try db.statement(begin).run()
        defer { try? db.statement(db.transactionFailed ? "ROLLBACK" : "COMMIT").run() }
        return try body(db)
    }
}
