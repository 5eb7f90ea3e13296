import Foundation

/// The PostgreSQL server the tests use, for both test targets (issue 31 item 6):
/// `$ENTRYD_TEST_PG` (a libpq URI; scripts/check starts one cluster and
/// exports it) when set, else one throwaway cluster per test process, started
/// on first use with scripts/pg-cluster in a temporary directory and stopped
/// at exit — so a plain `swift test` works.
///
/// A PostgreSQL that is missing or does not start fails the tests that need it
/// (``server()`` throws with scripts/pg-cluster's reason); nothing is skipped.
package enum TestPostgres {
    /// The package's root directory (where `scripts/` is).
    package static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    /// scripts/pg-cluster.
    package static var clusterScript: String { packageRoot + "/scripts/pg-cluster" }

    /// The cluster's directory when this process started it, for the exit hook.
    nonisolated(unsafe) private static var startedDirectory: String?

    private static let started: Result<String, TestPostgresFailure> = {
        if let uri = ProcessInfo.processInfo.environment["ENTRYD_TEST_PG"], !uri.isEmpty { return .success(uri) }
        let directory = NSTemporaryDirectory() + "entryd-pg-" + UUID().uuidString.prefix(8)
        let (status, output) = shell([clusterScript, "start", directory])
        guard status == 0, let uri = output.split(separator: "\n").last(where: { $0.hasPrefix("postgresql://") }) else {
            _ = shell([clusterScript, "stop", directory])
            return .failure(
                TestPostgresFailure(message: "scripts/pg-cluster start failed (status \(status)): \(output)"))
        }
        startedDirectory = directory
        atexit {
            guard let directory = TestPostgres.startedDirectory else { return }
            _ = TestPostgres.shell([TestPostgres.clusterScript, "stop", directory])
            try? FileManager.default.removeItem(atPath: directory)
        }
        return .success(String(uri))
    }()

    /// The server's URI (its `postgres` database).
    /// - Throws: ``TestPostgresFailure`` when no server could be started.
    package static func server() throws -> String { try started.get() }

    /// A PostgreSQL program from the newest installed version (`psql`,
    /// `pg_ctl`, `pg_dump`, `pg_isready`), or `name` for the `PATH` to find.
    package static func program(_ name: String) -> String {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for v in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let path = "/usr/lib/postgresql/\(v)/bin/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return name
    }

    /// Runs `argv` through system(3) with its output in a file (not a pipe: the
    /// postmaster that pg_ctl leaves running would keep a pipe open).
    /// - Returns: the exit status and the output (stdout and stderr).
    package static func shell(_ argv: [String]) -> (Int32, String) {
        let out = NSTemporaryDirectory() + "entryd-pg-cmd-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: out) }
        let quoted = argv.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let status = system("\(quoted) </dev/null >'\(out)' 2>&1")
        let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        return (status == -1 ? -1 : (status >> 8) & 0xFF, text)
    }
}

/// No PostgreSQL for the tests, and why.
package struct TestPostgresFailure: Error, CustomStringConvertible {
    package let message: String
    package init(message: String) { self.message = message }
    package var description: String { message }
}
