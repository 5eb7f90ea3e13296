import EntryTestSupport
import Foundation

/// A fresh database in its own temporary directory, removed afterwards.
final class TestDatabase {
    let directory: String
    var path: String { directory + "/entries.db" }

    init() {
        directory = NSTemporaryDirectory() + "entryd-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// The PostgreSQL database of this place (``StoreKind/postgres``), made on first use.
    /// - Throws: ``TestPostgresFailure`` or `PGError`.
    func postgres() throws -> TestPostgresDatabase {
        if let made = postgresDatabase { return made }
        let made = try TestPostgresDatabase()
        postgresDatabase = made
        return made
    }
    private var postgresDatabase: TestPostgresDatabase?

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}
