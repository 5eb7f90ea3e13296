import Foundation
@testable import EntryHub

/// The PostgreSQL server the tests use: `$ENTRYD_TEST_PG` (a libpq URI; scripts/check
/// starts one cluster and exports it) when set, else one throwaway cluster per
/// test process, started on first use with scripts/pg-cluster in a temporary
/// directory and stopped at exit — so a plain `swift test` works.
///
/// A PostgreSQL that is missing or does not start fails the tests that need it
/// (``server()`` throws with scripts/pg-cluster's reason); nothing is skipped.
enum TestPostgres {
    /// The cluster's directory when this process started it, for the exit hook.
    nonisolated(unsafe) private static var startedDirectory: String?

    private static let started: Result<String, TestPostgresFailure> = {
        if let uri = ProcessInfo.processInfo.environment["ENTRYD_TEST_PG"], !uri.isEmpty { return .success(uri) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
        let directory = NSTemporaryDirectory() + "entryd-pg-" + UUID().uuidString.prefix(8)
        let (status, output) = shell([root + "/scripts/pg-cluster", "start", directory])
        guard status == 0, let uri = output.split(separator: "\n").last(where: { $0.hasPrefix("postgresql://") }) else {
            _ = shell([root + "/scripts/pg-cluster", "stop", directory])
            return .failure(TestPostgresFailure(message: "scripts/pg-cluster start failed (status \(status)): \(output)"))
        }
        startedDirectory = directory
        pgClusterScript = root + "/scripts/pg-cluster"
        atexit {
            guard let directory = TestPostgres.startedDirectory, let script = TestPostgres.pgClusterScript else { return }
            _ = TestPostgres.shell([script, "stop", directory])
            try? FileManager.default.removeItem(atPath: directory)
        }
        return .success(String(uri))
    }()
    nonisolated(unsafe) private static var pgClusterScript: String?

    /// The server's URI (its `postgres` database).
    /// - Throws: ``TestPostgresFailure`` when no server could be started.
    static func server() throws -> String { try started.get() }

    /// Runs `argv` through system(3) with its output in a file (not a pipe: the
    /// postmaster that pg_ctl leaves running would keep a pipe open).
    /// - Returns: the exit status and the output (stdout and stderr).
    static func shell(_ argv: [String]) -> (Int32, String) {
        let out = NSTemporaryDirectory() + "entryd-pg-cmd-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: out) }
        let quoted = argv.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let status = system("\(quoted) </dev/null >'\(out)' 2>&1")
        let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        return (status == -1 ? -1 : (status >> 8) & 0xFF, text)
    }
}

/// No PostgreSQL for the tests, and why.
struct TestPostgresFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

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
        let bin = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql"))?.sorted().last
            .map { "/usr/lib/postgresql/\($0)/bin/\(program)" } ?? program
        let (status, output) = TestPostgres.shell([bin] + arguments + ["--dbname=" + uri(of: database ?? name)])
        guard status == 0 else { throw TestPostgresFailure(message: "\(program) failed: \(output)") }
    }

    /// A new connection to the database.
    func connect() throws -> PGConnection { try PGConnection(uri: uri, database: name) }

    deinit { _ = try? PGConnection(uri: uri).execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
}
