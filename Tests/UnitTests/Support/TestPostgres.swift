import EntryTestSupport
import Foundation
@testable import EntryHub

/// A fresh database (`t_<random>`) on the test server for one test, dropped when released.
final class TestPostgresDatabase: @unchecked Sendable {
    /// The server's URI; connect with ``connect()`` or `PGConnection(uri: uri, database: name)`.
    let uri: String
    /// The database's name.
    let name: String

    /// Creates the database.
    /// - Throws: ``TestPostgresFailure`` or ``PGError``.
    init() throws {
        uri = try TestPostgres.server()
        name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try PGConnection(uri: uri).execute("CREATE DATABASE \(name)")
    }

    /// A libpq URI of the database (the server's, naming it).
    var databaseURI: String { uri(of: name) }

    /// A libpq URI of the database `database` on the test server.
    func uri(of database: String) -> String { uri + (uri.contains("?") ? "&" : "?") + "dbname=" + database }

    /// Runs a PostgreSQL client program (`pg_dump`, `pg_restore`) from the
    /// server's installation with `arguments`, then the database's URI.
    /// - Throws: ``TestPostgresFailure`` with its output when it fails.
    func client(_ program: String, _ arguments: [String], database: String? = nil) throws {
        let (status, output) = TestPostgres.shell(
            [TestPostgres.program(program)] + arguments + ["--dbname=" + uri(of: database ?? name)])
        guard status == 0 else { throw TestPostgresFailure(message: "\(program) failed: \(output)") }
    }

    /// A new connection to the database.
    func connect() throws -> PGConnection { try PGConnection(uri: uri, database: name) }

    deinit { _ = try? PGConnection(uri: uri).execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
}
