import EntryModel
import EntryProtocol
import EntryTestSupport
import Foundation

/// PostgreSQL for the hub tests: the shared server of ``TestPostgres`` (EntryTestSupport),
/// and what these tests do with the command-line tools.
enum HubPostgres {
    static var script: String { TestPostgres.clusterScript }

    /// The shared server's URI (its `postgres` database).
    /// - Throws: ``TestPostgresFailure`` when no server could be started.
    static func server() throws -> String { try TestPostgres.server() }

    /// A PostgreSQL program from the newest installed version (`psql`, `pg_ctl`, `pg_isready`).
    static func program(_ name: String) -> String { TestPostgres.program(name) }

    /// `uri` naming database `name` instead of its own.
    static func uri(_ uri: String, database name: String) -> String {
        guard var parts = URLComponents(string: uri) else { return uri }
        parts.path = "/" + name
        if let items = parts.queryItems { parts.queryItems = items.filter { $0.name != "dbname" } }
        return parts.string ?? uri
    }

    /// Runs one SQL command with psql on `uri`.
    /// - Throws: ``HarnessError`` with psql's output when it fails.
    static func psql(_ uri: String, _ sql: String) throws {
        let (status, output) = shell([program("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", uri, "-c", sql])
        guard status == 0 else { throw HarnessError("psql \(sql): status \(status): \(output)") }
    }

    /// Runs `argv` (``TestPostgres/shell(_:)``).
    static func shell(_ argv: [String]) -> (Int32, String) { TestPostgres.shell(argv) }
}

/// A fresh database (`hub_<random>`) on a PostgreSQL server for one test, dropped when released.
final class HubDatabase: @unchecked Sendable {
    /// The server's URI (its `postgres` database).
    let server: String
    let name: String
    /// The libpq URI entryd gets with `--db`.
    let uri: String

    /// Creates the database on `server` (default: the shared test server).
    init(server: String? = nil) throws {
        self.server = try server ?? HubPostgres.server()
        name = "hub_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
        uri = HubPostgres.uri(self.server, database: name)
        try HubPostgres.psql(self.server, "CREATE DATABASE \(name)")
    }

    deinit { try? HubPostgres.psql(server, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
}

/// A PostgreSQL cluster of one test's own (scripts/pg-cluster), which the test may
/// stop and start again; stopped and removed when released.
final class OwnPGCluster: @unchecked Sendable {
    let directory: String
    /// The server's URI (its `postgres` database).
    let uri: String

    init() throws {
        directory = NSTemporaryDirectory() + "entryd-hubpgown-" + UUID().uuidString.prefix(8)
        let (status, output) = HubPostgres.shell([HubPostgres.script, "start", directory])
        guard status == 0, let uri = output.split(separator: "\n").last(where: { $0.hasPrefix("postgresql://") }) else {
            _ = HubPostgres.shell([HubPostgres.script, "stop", directory])
            throw HarnessError("scripts/pg-cluster start failed (status \(status)): \(output)")
        }
        self.uri = String(uri)
    }

    /// Stops the server (fast shutdown: sessions are ended, nothing waits for clients).
    func stop() throws {
        let (status, output) = HubPostgres.shell([HubPostgres.script, "stop", directory])
        guard status == 0 else { throw HarnessError("pg-cluster stop: status \(status): \(output)") }
    }

    /// Starts the stopped server again with the options it was first started with
    /// (postmaster.opts, as `pg_ctl restart` does), as the cluster's owner
    /// (`entryd-test` when root, as scripts/pg-cluster does), and waits until it
    /// accepts connections.
    func startAgain() throws {
        let opts = try String(contentsOfFile: directory + "/data/postmaster.opts", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        // The first word is the postgres binary; the rest are its options, quoted.
        guard let firstSpace = opts.firstIndex(of: " ") else { throw HarnessError("postmaster.opts: \(opts)") }
        let options = String(opts[opts.index(after: firstSpace)...])
        var argv = [
            HubPostgres.program("pg_ctl"), "-D", directory + "/data", "-l", directory + "/server.log", "-w", "-t", "60",
            "-o", options, "start",
        ]
        if getuid() == 0 { argv = ["runuser", "-u", "entryd-test", "--"] + argv }
        let (status, output) = HubPostgres.shell(argv)
        guard status == 0 else { throw HarnessError("pg_ctl start: status \(status): \(output)") }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if HubPostgres.shell([HubPostgres.program("pg_isready"), "-q", "-d", uri]).0 == 0 { return }
            usleep(50_000)
        }
        throw HarnessError("the server started again but does not accept connections")
    }

    deinit {
        _ = HubPostgres.shell([HubPostgres.script, "stop", directory])
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A node the hub tests talk to with entryctl and varlink: an SQLite ``Daemon``
/// or a hub instance (``hubInstance(name:databaseURI:arguments:)``).
protocol HubNode: AnyObject {
    var socket: String { get }
    func entryctl(_ arguments: [String], input: String?) throws -> ProcessResult
}

extension Daemon: HubNode {}

extension HubNode {
    func entryctl(_ arguments: [String]) throws -> ProcessResult { try entryctl(arguments, input: nil) }
    func connect() throws -> VarlinkConnection { try VarlinkConnection(path: socket) }
}

/// One entryd instance of a hub: `entryd --db URI --instance NAME`, with its
/// state directory (where its marker file lives) its own directory (``Daemon``
/// passes `--state-directory`).
func hubInstance(name: String, databaseURI: String, arguments: [String] = []) throws -> Daemon {
    let directory = NSTemporaryDirectory() + "entryd-hub-" + name + "-" + String(UUID().uuidString.prefix(8))
    return try Daemon(directory: directory, arguments: ["--instance", name] + arguments, database: databaseURI)
}
