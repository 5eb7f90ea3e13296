import EntryArguments

/// Command-line options of `entryd-bench`.
struct BenchOptions {
    /// Entries in the large database (Import, List, Changes, start-up). Default 100,000; `--quick` 2,000.
    var entries = 100_000
    /// Length of each timed phase (durable Add, raw SQLite per transaction, pgbench), in seconds. Default 5.
    var seconds = 5.0
    /// Run the PostgreSQL baseline when PostgreSQL is installed. Default true.
    var postgres = true
    /// Tiny sizes for CI: 2,000 entries, 0.5 s phases, no PostgreSQL.
    var quick = false
    /// Path of the `entryd` executable; default: next to `entryd-bench`.
    var entrydPath: String?
    /// Rows per Import call (entryd's `max-batch` allows up to 10,000). Default 1,000.
    var importBatch = 1000
    /// Keep the temporary directory (databases, logs) for inspection.
    var keep = false
    /// Run the entryd-web bench instead (HTTP beside varlink, issue 18).
    var web = false
    /// Concurrent clients of the web bench. Default 200.
    var clients = 200
    /// Run the hub bench instead (edges syncing through SQLite and PostgreSQL hubs, issue 19).
    var hub = false
    var search = false
    /// Simulated edge nodes of the hub bench. Default 200; `--quick` 20.
    var edges = 200
    /// entryd instances of the hub bench's PostgreSQL configurations. Default 1, 2, 4; `--quick` 1, 2.
    var instances = [1, 2, 4]
    /// Length of each hub configuration's run, in seconds. Default 10; `--quick` 1.
    var hubSeconds = 10.0
    /// The hub bench's PostgreSQL server (a libpq URI); default `$ENTRYD_TEST_PG`, else a throwaway cluster.
    var pg: String?
    /// Changes the hub bench's bulk rows push and pull (``HubBulk``). Default 20,000; `--quick` 2,000; 0: none.
    var bulk = 20_000

    static let usage = """
        usage: entryd-bench [--entries N] [--seconds S] [--quick] [--no-postgres] [--import-batch N] [--entryd PATH] [--keep]
           entryd-bench --web [--clients N] [--seconds S] [--entryd PATH] [--keep]
           entryd-bench --search [--entries N] [--quick] [--import-batch N] [--entryd PATH] [--keep]
           entryd-bench --hub [--edges N] [--instances 1,2,4] [--seconds S] [--bulk N] [--pg URI] [--quick] [--no-postgres] [--entryd PATH] [--keep]

        Starts the built entryd on a temporary socket and database, drives it over the
        socket, measures raw SQLite (and PostgreSQL 15 with pgbench when installed) on
        the same machine in the same run, and prints a table of figures with ratios.

          --entries N    entries in the large database (default 100000; the issue's full size is 1000000)
          --seconds S    length of each timed phase in seconds (default 5)
          --quick        tiny run for CI: 2000 entries, 0.5 s phases, no PostgreSQL
          --no-postgres  skip the PostgreSQL baseline
          --import-batch N  rows per Import call (default 1000; at most entryd's max-batch, 10000)
          --entryd PATH  the entryd executable (default: next to entryd-bench)
          --keep         keep the temporary directory
          --web          instead: Add through entryd-web (HTTP keep-alive) beside the socket,
                         from --clients N concurrent clients (default 200), and the page's weight
          --search       instead: Import --entries N entries with realistic names (Traditional and Simplified)
                         and phones into one entryd on SQLite, then time List with Filter.search by name,
                         pinyin and phone (also part of the default run, on its own entries)
          --hub          instead: --edges N simulated edge nodes (default 200) push with Sync.Apply and pull
                         with Sync.Changes through one entryd on SQLite, then 1, 2, 4 (--instances LIST)
                         entryd on one PostgreSQL database, then the most instances again with one killed
                         halfway; --seconds S per configuration (default 10); PostgreSQL from --pg URI,
                         else $ENTRYD_TEST_PG, else a throwaway cluster (scripts/pg-cluster);
                         --quick: 20 edges, 1 s, instances 1,2; --no-postgres: SQLite only;
                         then --bulk N changes (default 20000, --quick 2000, 0: none) pushed by one edge into
                         a SQLite and a PostgreSQL hub and pulled by a new edge, each a whole `entryctl sync`
        """

    /// The options as the scanner reads them. Each may be given again, the last one counting.
    static let options: [ArgumentOption] = [
        (["--help", "-h"], nil), (["--entries"], "N"), (["--seconds"], "S"), (["--quick"], nil),
        (["--no-postgres"], nil),
        (["--import-batch"], "N"), (["--entryd"], "PATH"), (["--keep"], nil), (["--web"], nil), (["--clients"], "N"),
        (["--hub"], nil), (["--search"], nil), (["--edges"], "N"), (["--instances"], "LIST"), (["--pg"], "URI"),
        (["--bulk"], "N"),
    ].map { ArgumentOption($0.0, value: $0.1, repeatable: true) }

    /// Parses `arguments` (without the program name), in order.
    /// - Returns: `nil` for `--help`.
    /// - Throws: ``BenchUsageError`` for an unknown option or a bad value.
    static func parse(_ arguments: [String]) throws -> BenchOptions? {
        var o = BenchOptions()
        var explicitEntries: Int?
        var explicitSeconds: Double?
        var explicitEdges: Int?
        var explicitInstances: [Int]?
        var explicitBulk: Int?
        var noPostgres = false
        var scanner = ArgumentScanner(arguments, options: options, positionals: false)
        while true {
            let item: ArgumentScanner.Item?
            do { item = try scanner.next() } catch { throw BenchUsageError(error.en) }
            // Without positionals the scanner reads options only.
            guard case .option(let option, let value)? = item else { break }
            let text = value ?? ""
            switch option.name {
            case "--help": return nil
            case "--entries":
                guard let n = Int(text), n >= 100 else { throw BenchUsageError("--entries must be an integer ≥ 100") }
                explicitEntries = n
            case "--seconds":
                guard let s = Double(text), s > 0 else { throw BenchUsageError("--seconds must be a positive number") }
                explicitSeconds = s
            case "--quick": o.quick = true
            case "--web": o.web = true
            case "--hub": o.hub = true
            case "--search": o.search = true
            case "--edges":
                guard let n = Int(text), (2...2000).contains(n) else { throw BenchUsageError("--edges must be 2…2000") }
                explicitEdges = n
            case "--instances":
                let list = text.split(separator: ",", omittingEmptySubsequences: false).map {
                    Int($0.trimmingCharacters(in: .whitespaces))
                }
                guard !list.isEmpty, list.allSatisfy({ $0 != nil && (1...16).contains($0!) }) else {
                    throw BenchUsageError(
                        "--instances must be a comma-separated list of counts 1…16, e.g. 1,2,4 (not '\(text)')")
                }
                explicitInstances = list.map { $0! }
            case "--pg":
                guard text.hasPrefix("postgresql://") || text.hasPrefix("postgres://") else {
                    throw BenchUsageError(
                        "--pg must be a libpq URI starting with postgresql:// or postgres:// (not '\(text)')")
                }
                o.pg = text
            case "--bulk":
                guard let n = Int(text), (0...1_000_000).contains(n) else {
                    throw BenchUsageError("--bulk must be 0…1000000")
                }
                explicitBulk = n
            case "--clients":
                guard let n = Int(text), (1...2000).contains(n) else {
                    throw BenchUsageError("--clients must be 1…2000")
                }
                o.clients = n
            case "--no-postgres":
                o.postgres = false
                noPostgres = true
            case "--import-batch":
                guard let n = Int(text), (1...10_000).contains(n) else {
                    throw BenchUsageError("--import-batch must be 1…10000")
                }
                o.importBatch = n
            case "--entryd": o.entrydPath = text
            case "--keep": o.keep = true
            default: preconditionFailure("\(option.name) is in options but not read")
            }
        }
        if o.quick {
            o.entries = 2_000
            o.seconds = 0.5
            o.postgres = false
        }
        if let explicitEntries { o.entries = explicitEntries }
        if let explicitSeconds { o.seconds = explicitSeconds }
        if o.hub {
            // --quick turns PostgreSQL off for the other benches; the hub's quick run keeps it.
            o.postgres = !noPostgres
            if o.quick {
                o.edges = 20
                o.hubSeconds = 1
                o.instances = [1, 2]
                o.bulk = 2_000
            }
            if let explicitBulk { o.bulk = explicitBulk }
            if let explicitEdges { o.edges = explicitEdges }
            if let explicitSeconds { o.hubSeconds = explicitSeconds }
            if let explicitInstances { o.instances = explicitInstances }
        } else if explicitEdges != nil || explicitInstances != nil || o.pg != nil || explicitBulk != nil {
            throw BenchUsageError("--edges, --instances, --bulk and --pg belong to --hub")
        }
        if o.hub && o.web { throw BenchUsageError("--hub and --web are separate runs: give one") }
        return o
    }
}

/// A bad command line; the message says what to fix.
struct BenchUsageError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
