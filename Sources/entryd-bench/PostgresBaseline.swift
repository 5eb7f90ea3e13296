import Foundation

/// The PostgreSQL baseline: a private cluster in a temporary directory on a
/// Unix socket (fsync on, synchronous_commit on: the defaults), the same two
/// tables and indexes as entryd, and `pgbench` custom scripts that insert one
/// entry row and its change-log row per durable transaction.
///
/// Runs initdb, pg_ctl and postgres as the `postgres` user (through
/// `runuser -u postgres`) when the bench runs as root, since PostgreSQL refuses
/// to run as root.
final class PostgresBaseline {
    let directory: String
    let bin: String
    let port = 54329
    private var started = false

    /// Finds the PostgreSQL binaries.
    /// - Throws: ``BenchFailure`` when `initdb`, `pg_ctl` or `pgbench` is missing.
    init(directory: String) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let candidates = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .sorted().reversed().map { "/usr/lib/postgresql/\($0)/bin" }
        guard
            let found = candidates.first(where: { dir in
                ["initdb", "pg_ctl", "pgbench", "psql"].allSatisfy {
                    FileManager.default.isExecutableFile(atPath: "\(dir)/\($0)")
                }
            })
        else {
            throw BenchFailure("PostgreSQL is not installed (scripts/setup --with-postgres installs it)")
        }
        bin = found
    }

    /// The server version text, e.g. `15.8`.
    var version: String {
        let text = (try? run([bin + "/pg_ctl", "--version"]))?.1 ?? "?"
        // "pg_ctl (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)"
        let words = text.split(separator: " ")
        return words.count > 2 ? String(words[2]) : "?"
    }

    private var asRoot: Bool { getuid() == 0 }

    /// Runs a command (as `postgres` when root) through system(3); returns its
    /// status and output.
    ///
    /// Output goes to a file, not a pipe, and the child is waited for with
    /// system(3) rather than Foundation's `Process`: the postmaster that
    /// `pg_ctl start` leaves running inherits descriptors, and `Process` then
    /// never reported the exit of `runuser` here.
    @discardableResult
    private func run(_ argv: [String], asPostgres: Bool = false) throws -> (Int32, String) {
        let full = asPostgres && asRoot ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + argv : argv
        let outPath = directory + "/command.out"
        let quoted = full.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let status = system("cd / && \(quoted) </dev/null >'\(outPath)' 2>&1")
        let text = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let code: Int32 = status == -1 ? -1 : (status >> 8) & 0xFF
        return (code, text)
    }

    /// Creates and starts the cluster, and the schema.
    /// - Throws: ``BenchFailure`` with the tool's output when a step fails.
    func start() throws {
        if asRoot {
            try run(["/bin/chown", "postgres:", directory])
            try run(["/bin/chmod", "0755", (directory as NSString).deletingLastPathComponent])
        }
        let data = directory + "/data"
        var (status, out) = try run(
            [bin + "/initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale"],
            asPostgres: true)
        guard status == 0 else { throw BenchFailure("initdb failed: \(out.suffix(400))") }
        (status, out) = try run(
            [
                bin + "/pg_ctl", "-D", data, "-l", directory + "/server.log", "-w", "-o",
                "-k \(directory) -c listen_addresses= -p \(port) -c fsync=on -c synchronous_commit=on -c max_connections=30 -c shared_buffers=256MB",
                "start",
            ], asPostgres: true)
        guard status == 0 else { throw BenchFailure("pg_ctl start failed: \(out.suffix(400))") }
        started = true
        let schema = """
            CREATE TABLE entries (id TEXT PRIMARY KEY, form TEXT NOT NULL, fields TEXT NOT NULL, clocks TEXT NOT NULL,
              version TEXT NOT NULL, deleted INTEGER NOT NULL DEFAULT 0, deleted_clock TEXT NOT NULL DEFAULT '',
              created_at TEXT NOT NULL, updated_at TEXT NOT NULL, created_by TEXT NOT NULL, updated_by TEXT NOT NULL,
              name TEXT NOT NULL DEFAULT '', name_folded TEXT NOT NULL DEFAULT '', birthday TEXT NOT NULL DEFAULT '',
              country TEXT NOT NULL DEFAULT '', province TEXT NOT NULL DEFAULT '', city TEXT NOT NULL DEFAULT '');
            CREATE INDEX entries_by_created ON entries (created_at, id);
            CREATE INDEX entries_by_updated ON entries (updated_at, id);
            CREATE INDEX entries_by_birthday ON entries (birthday, id);
            CREATE INDEX entries_by_name ON entries (name, id);
            CREATE INDEX entries_by_country ON entries (country, created_at, id);
            CREATE INDEX entries_by_province ON entries (province, created_at, id);
            CREATE INDEX entries_by_city ON entries (city, created_at, id);
            CREATE TABLE changes (seq BIGSERIAL PRIMARY KEY, node TEXT NOT NULL, hlc TEXT NOT NULL, entry TEXT NOT NULL,
              form TEXT NOT NULL, op TEXT NOT NULL, fields TEXT NOT NULL, base TEXT NOT NULL, actor TEXT NOT NULL,
              at TEXT NOT NULL, reason TEXT, via TEXT, UNIQUE (node, hlc));
            CREATE INDEX changes_by_entry ON changes (entry, seq);
            CREATE SEQUENCE hlc_counter;
            """
        (status, out) = try run([
            bin + "/psql", "-q", "-v", "ON_ERROR_STOP=1", "-h", directory, "-p", "\(port)", "-U", "postgres",
            "-d", "postgres", "-c", schema,
        ])
        guard status == 0 else { throw BenchFailure("schema failed: \(out.suffix(400))") }
    }

    /// The pgbench script: one transaction inserting an entry and its change
    /// row (text of the same shape and size as entryd's; a random UUIDv4 key,
    /// as PostgreSQL 15 has no UUIDv7 generator).
    static let script = """
        \\set n random(1, 1000000000)
        BEGIN;
        WITH e AS (
          INSERT INTO entries (id, form, fields, clocks, version, created_at, updated_at, created_by, updated_by,
            name, name_folded, birthday, country, province, city)
          VALUES (gen_random_uuid()::text, 'registration',
            '{"birthday":"1990-05-17","city":"440100","contact_method":"phone","country":"CN","name":"用户' || :n || '","phone":"+8613800138000","province":"440000"}',
            '{"birthday":"0194d2a1b3c40001 0194d2a1-b3c4-7def-8123-456789abcdef","city":"0194d2a1b3c40001 0194d2a1-b3c4-7def-8123-456789abcdef","contact_method":"0194d2a1b3c40001 0194d2a1-b3c4-7def-8123-456789abcdef","country":"0194d2a1b3c40001 0194d2a1-b3c4-7def-8123-456789abcdef","name":"0194d2a1b3c40001 0194d2a1-b3c4-7def-8123-456789abcdef","phone":"0194d2a1b3c40001 0194d2a1-b3c4-7def-8123-456789abcdef","province":"0194d2a1b3c40001 0194d2a1-b3c4-7def-8123-456789abcdef"}',
            lpad(to_hex(nextval('hlc_counter')), 16, '0'), to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'bench', 'bench',
            '用户' || :n, '用户' || :n, '1990-05-17', 'CN', '440000', '440100')
          RETURNING id, version, fields, created_at)
        INSERT INTO changes (node, hlc, entry, form, op, fields, base, actor, at)
          SELECT '0194d2a1-b3c4-7def-8123-456789abcdef', version, id, 'registration', 'create', fields,
            '{"birthday":"","city":"","contact_method":"","country":"","name":"","phone":"","province":""}', 'bench', created_at FROM e;
        END;

        """

    /// Runs pgbench with `clients` clients for `seconds`.
    /// - Returns: transactions (entries) per second, without connection time.
    /// - Throws: ``BenchFailure`` with pgbench's output when it fails.
    func pgbench(clients: Int, seconds: Int) throws -> Double {
        let scriptPath = directory + "/add.sql"
        try PostgresBaseline.script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let (status, out) = try run([
            bin + "/pgbench", "-n", "-h", directory, "-p", "\(port)", "-U", "postgres",
            "-c", "\(clients)", "-j", "\(min(clients, 2))", "-T", "\(max(1, seconds))",
            "-f", scriptPath, "postgres",
        ])
        guard status == 0, let line = out.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }),
            let tps = Double(line.dropFirst(6).prefix(while: { $0 != " " }))
        else {
            throw BenchFailure("pgbench failed: \(out.suffix(600))")
        }
        return tps
    }

    /// Stops the cluster (fast shutdown).
    func stop() {
        guard started else { return }
        _ = try? run([bin + "/pg_ctl", "-D", directory + "/data", "-m", "fast", "-w", "stop"], asPostgres: true)
        started = false
    }

    deinit { stop() }
}
