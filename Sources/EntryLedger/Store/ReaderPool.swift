import Foundation
import EntryModel

/// A small pool of reading connections: on SQLite read-only WAL connections
/// that read while the writer writes, each seeing the last committed state,
/// never waiting for it; on a database server, connections of their own.
final class ReaderPool: Sendable {
    /// The connections not checked out; a reader waits while none is.
    private let idle: Monitor<[any SQLDatabase]>
    /// The SQL that opens each read's transaction: one snapshot for all its statements.
    private let begin: String

    /// A pool of `connections`, each read inside a transaction opened with `begin`.
    init(connections: [any SQLDatabase], begin: String = "BEGIN") {
        precondition(!connections.isEmpty, "a reader pool needs a connection")
        idle = Monitor(connections)
        self.begin = begin
    }

    /// Opens `count` read-only connections to the SQLite database at `path`.
    /// - Throws: ``SQLiteError`` when a connection cannot be opened.
    convenience init(path: String, count: Int, vfs: String? = nil) throws {
        self.init(
            connections: try (0..<max(1, count)).map { _ in try SQLiteConnection(path: path, readOnly: true, vfs: vfs) }
        )
    }

    /// Runs `body` with a connection checked out of the pool, inside one read
    /// transaction so multi-statement reads see one snapshot. A read that
    /// fails because a database server's connection was lost (it restarted
    /// while the connection sat idle) runs once more.
    /// - Throws: what `body` throws, or the database's ``StorageError``.
    func read<T>(_ body: (any SQLDatabase) throws -> T) throws -> T {
        do {
            return try readOnce(body)
        } catch let error as any StorageError where error.isConnectionFailure {
            // A read changes nothing: after a database server's restart it runs
            // once more, on the connection made again (the next BEGIN reconnects).
            return try readOnce(body)
        }
    }

    /// One read transaction on an idle connection (``read(_:)``).
    private func readOnce<T>(_ body: (any SQLDatabase) throws -> T) throws -> T {
        let db = idle.withLock(while: { $0.isEmpty }) { $0.removeLast() }
        defer { idle.withLock(wake: .one) { $0.append(db) } }
        // Cached statements: no SQL parsing on every read.
        try db.statement(begin).run()
        defer { try? db.statement(db.transactionFailed ? "ROLLBACK" : "COMMIT").run() }
        return try body(db)
    }
}
