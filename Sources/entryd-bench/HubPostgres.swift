import Foundation

/// The PostgreSQL server of the hub bench (`entryd-bench --hub`): the one
/// named by `--pg URI`, else `$ENTRYD_TEST_PG`, else a throwaway cluster made
/// with `scripts/pg-cluster start DIR` and stopped with `scripts/pg-cluster
/// stop DIR` at the end. Each configuration gets a fresh database on it,
/// made with the `psql` client.
final class HubPostgres {
    /// The server's libpq URI as given or printed by scripts/pg-cluster.
    let uri: String
    /// Where it came from, for the report ("--pg", "$ENTRYD_TEST_PG", "a throwaway cluster …").
    let origin: String
    /// The cluster directory when this bench started the cluster, and the script that did.
    private let cluster: (directory: String, script: String)?
    private let psql: String
    private let scratch: String
    private var databases: [String] = []
    /// Keep the databases made (for `--keep`), instead of dropping them at ``stop()``.
    var keepDatabases = false

    /// Finds or starts the server.
    /// - Parameters:
    ///   - given: `--pg URI`, or `nil`.
    ///   - directory: the bench's temporary directory (the cluster goes in `DIR/pg`).
    ///   - searchFrom: directories whose parents (and themselves) are searched for `scripts/pg-cluster`.
    /// - Throws: ``BenchFailure`` naming what is missing (psql, the script) or scripts/pg-cluster's reason.
    init(given: String?, directory: String, searchFrom: [String]) throws {
        scratch = directory
        psql = try HubPostgres.findTool("psql")
        if let given {
            try HubPostgres.checkScheme(given, what: "--pg")
            uri = given
            origin = "--pg"
            cluster = nil
        } else if let env = ProcessInfo.processInfo.environment["ENTRYD_TEST_PG"], !env.isEmpty {
            try HubPostgres.checkScheme(env, what: "$ENTRYD_TEST_PG")
            uri = env
            origin = "$ENTRYD_TEST_PG"
            cluster = nil
        } else {
            let script = try HubPostgres.findScript(from: searchFrom)
            let dir = directory + "/pg"
            let (status, out, err) = HubPostgres.shell([script, "start", dir], scratch: directory)
            guard status == 0, let line = out.split(separator: "\n").last(where: { $0.hasPrefix("postgresql://") })
            else {
                _ = HubPostgres.shell([script, "stop", dir], scratch: directory)
                throw BenchFailure("\(script) start \(dir) failed (status \(status)): \(err.suffix(600))")
            }
            uri = String(line)
            origin = "a throwaway cluster (scripts/pg-cluster, fsync on, synchronous_commit on)"
            cluster = (dir, script)
        }
    }

    /// Makes a fresh database `name` (dropped first if a run before left it).
    /// - Returns: the URI of the new database (the server's URI with its dbname replaced).
    /// - Throws: ``BenchFailure`` with psql's output.
    func createDatabase(_ name: String) throws -> String {
        try runSQL("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        try runSQL("CREATE DATABASE \(name)")
        databases.append(name)
        return try HubPostgres.uri(uri, database: name)
    }

    /// Drops the databases made (unless ``keepDatabases``) and stops the cluster this bench started.
    func stop() {
        if !keepDatabases {
            for name in databases { try? runSQL("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        }
        databases = []
        if let cluster {
            let (status, _, err) = HubPostgres.shell([cluster.script, "stop", cluster.directory], scratch: scratch)
            if status != 0 { progress("hub: \(cluster.script) stop \(cluster.directory) failed: \(err)") }
        }
    }

    /// Runs one SQL command with psql on the server's own database.
    private func runSQL(_ sql: String) throws {
        let (status, out, err) = HubPostgres.shell(
            [psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", uri, "-c", sql], scratch: scratch)
        guard status == 0 else {
            throw BenchFailure("psql '\(sql)' on \(uri) failed (status \(status)): \(err.isEmpty ? out : err)")
        }
    }

    /// `base` with its database name replaced by `database` (the path of the URI;
    /// a `dbname=` parameter, which would override the path, is removed).
    /// - Throws: ``BenchFailure`` for a value that is not a `postgresql://` or `postgres://` URI.
    static func uri(_ base: String, database: String) throws -> String {
        try checkScheme(base, what: "the PostgreSQL URI")
        let afterScheme = base.range(of: "://")!.upperBound
        let queryStart = base[afterScheme...].firstIndex(of: "?") ?? base.endIndex
        let pathStart = base[afterScheme..<queryStart].firstIndex(of: "/") ?? queryStart
        var query = ""
        if queryStart < base.endIndex {
            let kept = base[base.index(after: queryStart)...].split(separator: "&").filter { !$0.hasPrefix("dbname=") }
            if !kept.isEmpty { query = "?" + kept.joined(separator: "&") }
        }
        return String(base[..<pathStart]) + "/" + database + query
    }

    private static func checkScheme(_ value: String, what: String) throws {
        guard value.hasPrefix("postgresql://") || value.hasPrefix("postgres://") else {
            throw BenchFailure("\(what) must be a libpq URI starting with postgresql:// or postgres://, not '\(value)'")
        }
    }

    /// `tool` on the PATH, else in the newest /usr/lib/postgresql/*/bin.
    private static func findTool(_ tool: String) throws -> String {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(
            String.init)
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }.map { "/usr/lib/postgresql/\($0)/bin" }
        for dir in path + versions where FileManager.default.isExecutableFile(atPath: dir + "/" + tool) {
            return dir + "/" + tool
        }
        throw BenchFailure(
            "no \(tool) on the PATH or under /usr/lib/postgresql/*/bin (scripts/setup --with-postgres installs PostgreSQL)"
        )
    }

    /// scripts/pg-cluster in one of `directories` or a parent of one (the
    /// repository of the entryd-bench executable, then the current directory).
    private static func findScript(from directories: [String]) throws -> String {
        for start in directories {
            var url = URL(fileURLWithPath: start).standardizedFileURL
            while true {
                let candidate = url.appendingPathComponent("scripts/pg-cluster").path
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
                if url.path == "/" { break }
                url.deleteLastPathComponent()
            }
        }
        throw BenchFailure(
            "no scripts/pg-cluster found above \(directories.joined(separator: " or ")); "
                + "run from the repository, or pass --pg URI")
    }

    /// Runs `argv` through system(3) with stdout and stderr in files, not
    /// pipes (the postmaster that `pg_ctl start` leaves running would hold a
    /// pipe open; see ``PostgresBaseline``).
    /// - Returns: the exit status, stdout and stderr.
    static func shell(_ argv: [String], scratch: String) -> (Int32, String, String) {
        let base = scratch + "/hub-cmd-" + UUID().uuidString.prefix(8)
        defer {
            try? FileManager.default.removeItem(atPath: base + ".out")
            try? FileManager.default.removeItem(atPath: base + ".err")
        }
        let quoted = argv.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let status = system("\(quoted) </dev/null >'\(base).out' 2>'\(base).err'")
        let out = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        return (status == -1 ? -1 : (status >> 8) & 0xFF, out, err)
    }
}
