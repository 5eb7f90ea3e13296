import CSQLite
import EntryModel
import EntryProtocol
import EntryLedger
import Foundation

/// One bench run: the baselines, then entryd, in the order that lets one
/// daemon serve every phase (small-database reads first, then the writes, then
/// the large-database reads, then a restart).
struct Bench {
    let options: BenchOptions
    let entryd: String
    let directory: String

    /// Pipelined calls each Add client keeps in flight.
    static let window = 32
    /// Incremental syncs measured at each size (their median is reported).
    static let syncRepeats = 7
    /// Alternating rounds of the one-at-a-time Add phases (raw SQLite, entryd).
    static let rounds = 5
    /// Entries in the "small" database of the 1,000-entry figures.
    static let small = 1000
    /// CPU-bound neighbour processes of the busy-machine phase (its row says "two").
    static let neighbours = 2
    /// Python client processes of the ordinary-clients phase, and the Adds each keeps in flight.
    static let pythonClients = 8, pythonWindow = 8

    func run() throws -> Report {
        let report = Report()
        let s = options.seconds
        let numbers = Counter()
        let n = options.entries
        report.note(
            "entryd-bench \(EntrydVersion.string), \(Date()) UTC; \(ProcessInfo.processInfo.activeProcessorCount) CPUs; "
                + "entries=\(n), phases of \(s) s; SQLite \(String(cString: sqlite3_libversion()))")

        // Raw SQLite baselines (one transaction per entry runs later, in rounds beside entryd's).
        var raw: RawSQLiteBaseline? = try RawSQLiteBaseline(path: directory + "/raw.db")
        progress("raw SQLite: durable batches of 100, \(s) s")
        let raw100 = try raw!.batches(of: 100, seconds: s, numbers: numbers)
        progress("raw SQLite: \(n) entries in one transaction")
        var bulk: RawSQLiteBaseline? = try RawSQLiteBaseline(path: directory + "/raw-bulk.db")
        let rawBulk = try bulk!.bulk(numbers.reserve(n))
        bulk = nil
        for f in ["raw-bulk.db", "raw-bulk.db-wal", "raw-bulk.db-shm"] {
            try? FileManager.default.removeItem(atPath: directory + "/" + f)
        }

        // PostgreSQL baselines.
        var pg1: Double?
        var pg8: Double?
        if options.postgres {
            do {
                let pg = try PostgresBaseline(directory: directory + "/pg")
                progress("PostgreSQL \(pg.version): starting a private cluster")
                try pg.start()
                defer { pg.stop() }
                let pgSeconds = Int(s.rounded(.up))
                progress("PostgreSQL: pgbench 1 client, \(pgSeconds) s")
                pg1 = try pg.pgbench(clients: 1, seconds: pgSeconds)
                progress("PostgreSQL: pgbench 8 clients, \(pgSeconds) s")
                pg8 = try pg.pgbench(clients: 8, seconds: pgSeconds)
                report.note(
                    "PostgreSQL \(pg.version): private cluster on a Unix socket, fsync=on, synchronous_commit=on, pgbench -c 1 and -c 8 (-j 2)"
                )
            } catch {
                report.note("PostgreSQL rows skipped: \(error)")
            }
        } else {
            report.note("PostgreSQL rows skipped (--no-postgres or --quick)")
        }

        // entryd.
        let a = DaemonProcess(executable: entryd, directory: directory, name: "a")
        try a.start()
        defer { a.stop() }
        let w = DaemonWorkload(socket: a.socket, counter: numbers)
        progress("entryd: importing \(Bench.small) entries")
        _ = try w.importEntries(numbers.reserve(Bench.small), batch: options.importBatch)
        let list1k = try w.listPages(300)
        let get1k = try w.gets(list1k.ids, count: 2000)

        let b = DaemonProcess(executable: entryd, directory: directory, name: "b")
        try b.start()
        defer { b.stop() }
        let wb = DaemonWorkload(socket: b.socket, counter: numbers)
        _ = try wb.syncFrom(a.socket)
        let inc1k = try w.incrementalSyncs(to: wb, times: Bench.syncRepeats)

        // One call at a time is bound by fsync latency, which drifts on a shared
        // disk over minutes: raw SQLite and entryd take turns in short rounds, so
        // both meet the same disk, and each gets `s` seconds in all.
        progress(
            "raw SQLite and entryd: one durable Add at a time, \(Bench.rounds) rounds of \(s / Double(Bench.rounds)) s each"
        )
        var raw1 = OneAtATime()
        var add1 = OneAtATime()
        for _ in 0..<Bench.rounds {
            raw1.merge(try raw!.oneTransactionPerEntry(seconds: s / Double(Bench.rounds), numbers: numbers))
            add1.merge(try w.addOneClient(seconds: s / Double(Bench.rounds)))
        }
        // The same turns on a busy machine: two CPU-bound neighbours share the two cores with both.
        progress(
            "\(Bench.neighbours) CPU-bound neighbours (nice 0); raw SQLite and entryd: one durable Add at a time, \(Bench.rounds) rounds"
        )
        var rawBusy = OneAtATime()
        var addBusy = OneAtATime()
        do {
            let neighbours = try Neighbours(count: Bench.neighbours)
            defer { neighbours.stop() }
            for _ in 0..<Bench.rounds {
                rawBusy.merge(try raw!.oneTransactionPerEntry(seconds: s / Double(Bench.rounds), numbers: numbers))
                addBusy.merge(try w.addOneClient(seconds: s / Double(Bench.rounds)))
            }
        }
        raw = nil
        for f in ["raw.db", "raw.db-wal", "raw.db-shm"] {
            try? FileManager.default.removeItem(atPath: directory + "/" + f)
        }
        progress("entryd: durable Add, 1 client pipelining \(Bench.window), \(s) s")
        let add1p = try w.addPipelined(clients: 1, window: Bench.window, seconds: s)
        progress("entryd: durable Add, 8 clients pipelining \(Bench.window) each, \(s) s")
        let cpu0 = a.cpuSeconds
        let add8 = try w.addPipelined(clients: 8, window: Bench.window, seconds: s)
        let cpu1 = a.cpuSeconds
        progress(
            "entryd: durable Add, \(Bench.pythonClients) Python clients pipelining \(Bench.pythonWindow) each, \(s) s")
        var python: (rate: Double, errors: Int)?
        do {
            python = try PythonClients.run(
                socket: a.socket, directory: directory, clients: Bench.pythonClients,
                window: Bench.pythonWindow, seconds: s, numbers: numbers)
        } catch {
            report.note("Python clients row n/a: \(error)")
        }
        progress("entryd: durable Add, 16 clients without pipelining, \(s) s")
        let add16 = try w.addPipelined(clients: 16, window: 1, seconds: s)

        progress("entryd: Import of \(n) entries in calls of \(options.importBatch)")
        let imported = numbers.reserve(n)
        let importRate = try w.importEntries(imported, batch: options.importBatch) { done in
            if done % 100_000 == 0 { progress("entryd: imported \(done)") }
        }
        let peak = a.peakResidentBytes
        let status = try w.status()
        let total = Int(status["entries"]?.intValue ?? 0)
        progress("entryd: List and Get at \(total) entries")
        let listN = try w.listPages(300)
        let getN = try w.gets(listN.ids, count: 2000)
        progress("entryd: searches at \(total) entries")
        let searches = try SearchPhase.run(
            socket: a.socket, numbers: imported, fields: Fixture.fields,
            perKind: options.quick ? 20 : 200, entries: total)
        progress("entryd: Changes, whole log")
        let changes = try w.readChanges()
        progress("entryd: peer sync of the whole log")
        let syncAll = try wb.syncFrom(a.socket)
        let incN = try w.incrementalSyncs(to: wb, times: Bench.syncRepeats)
        var ctlSync: Double?
        if let entryctl = EntryctlSync.locate(besides: entryd) {
            progress("entryctl sync of 1 change, \(Bench.syncRepeats) times")
            ctlSync = try EntryctlSync.median(
                entryctl: entryctl, source: w, target: b.socket,
                log: directory + "/entryctl.log", times: Bench.syncRepeats)
        } else {
            report.note(
                "entryctl sync row n/a: no entryctl next to \(entryd) (swift build -c release --product entryctl)")
        }
        b.stop()

        progress("entryd: restart with \(total) entries")
        a.stop()
        try a.start()
        _ = try w.status()
        // Every library in use before the idle figure: an Add with a phone (libphonenumber),
        // one with an e-mail (libidn2), a List page (SQLite reads and the display of each entry).
        try w.useEveryLibrary()
        let idle = a.residentBytes

        progress("validation cost in process")
        let validationMicroseconds = try ValidationCost.microsecondsPerEntry(count: options.quick ? 2_000 : 50_000)

        // The table.
        let (r1, l1) = (raw1.rate, raw1.latencies)
        report.rate(
            "durable Add, 1 client, no pipelining", add1.rate, unit: "adds/s",
            baseline: ("raw SQLite 1 tx/entry", r1), target: 0.8)
        report.add(
            ReportRow(
                what: "… latency p50 / p99",
                value: "\(msText(add1.latencies.ms(0.5))) / \(msText(add1.latencies.ms(0.99)))",
                baseline: "raw SQLite: \(msText(l1.ms(0.5))) / \(msText(l1.ms(0.99)))"))
        report.rate(
            "durable Add, 1 client, two CPU-bound neighbours", addBusy.rate, unit: "adds/s",
            baseline: ("raw SQLite 1 tx/entry, same neighbours", rawBusy.rate), target: 0.6)
        report.add(
            ReportRow(
                what: "… latency p50 / p99 with neighbours",
                value: "\(msText(addBusy.latencies.ms(0.5))) / \(msText(addBusy.latencies.ms(0.99)))",
                baseline: "raw SQLite: \(msText(rawBusy.latencies.ms(0.5))) / \(msText(rawBusy.latencies.ms(0.99)))"))
        report.rate(
            "durable Add, 1 client, pipelining \(Bench.window)", add1p.rate, unit: "adds/s",
            baseline: ("raw SQLite batches of 100", raw100))
        report.rate(
            "durable Add, 8 clients, pipelining \(Bench.window) each", add8.rate, unit: "adds/s",
            baseline: ("raw SQLite batches of 100", raw100), target: 1.5)
        report.rate(
            "durable Add, 8 clients, pipelining \(Bench.window) each", add8.rate, unit: "adds/s",
            baseline: ("PostgreSQL pgbench 8 clients", pg8), target: 2.0)
        var cpuPerAdd: (user: Double, system: Double)?
        if let c0 = cpu0, let c1 = cpu1 {
            let adds = Double(max(add8.adds, 1))
            cpuPerAdd = ((c1.user - c0.user) / adds * 1e6, (c1.system - c0.system) / adds * 1e6)
        }
        report.atMost(
            "daemon CPU per Add, 8 clients pipelining \(Bench.window) each", cpuPerAdd.map { $0.user + $0.system },
            unit: "µs",
            limit: 40, baseline: cpuPerAdd.map { "user \(format($0.user)) µs + system \(format($0.system)) µs" } ?? "")
        report.rate(
            "durable Add, \(Bench.pythonClients) Python clients (own JSON), pipelining \(Bench.pythonWindow) each",
            python?.rate,
            unit: "adds/s", baseline: ("raw SQLite 1 tx/entry", r1), target: 2.0)
        report.rate(
            "durable Add, 1 client (vs PostgreSQL)", add1.rate, unit: "adds/s",
            baseline: ("PostgreSQL pgbench 1 client", pg1))
        report.rate(
            "durable Add, 16 clients, no pipelining", add16.rate, unit: "adds/s",
            baseline: ("raw SQLite batches of 100", raw100))
        report.add(
            ReportRow(
                what: "validation of one Add's fields (in process, 1 thread)",
                value: String(format: "%.1f µs", validationMicroseconds)))
        report.rate(
            "Import \(format(Double(n))) entries (calls of \(options.importBatch))", importRate, unit: "entries/s",
            baseline: ("raw SQLite bulk, 1 tx", rawBulk), target: 1.0)
        report.add(
            ReportRow(
                what: "List CN+440000, 50/page, p50 / p99 at \(Bench.small) entries",
                value: "\(msText(list1k.latencies.ms(0.5))) / \(msText(list1k.latencies.ms(0.99)))"))
        report.add(
            ReportRow(
                what: "List CN+440000, 50/page, p50 / p99 at \(format(Double(total))) entries",
                value: "\(msText(listN.latencies.ms(0.5))) / \(msText(listN.latencies.ms(0.99)))",
                target: "p99 < 10 ms " + ((listN.latencies.ms(0.99) ?? 99) < 10 ? "✓" : "✗")))
        for row in searches { report.add(row) }
        report.add(
            ReportRow(
                what: "Get p50 / p99 at \(Bench.small) / at \(format(Double(total))) entries",
                value:
                    "\(msText(get1k.ms(0.5))) / \(msText(get1k.ms(0.99))); \(msText(getN.ms(0.5))) / \(msText(getN.ms(0.99)))"
            ))
        report.rate("Changes, read of \(format(Double(changes.count))) changes", changes.rate, unit: "changes/s")
        report.rate(
            "peer sync (SyncPeer) of \(format(Double(syncAll.pulled))) changes, first sync of the large log",
            Double(syncAll.pulled) / syncAll.seconds, unit: "entries/s",
            baseline: ("raw SQLite bulk of the same rows, 1 tx", rawBulk), target: 0.5)
        report.add(
            ReportRow(
                what:
                    "incremental sync of 1 change on top of \(format(Double(total))) (median of \(Bench.syncRepeats))",
                value: msText(incN * 1000), baseline: "on top of \(Bench.small): \(msText(inc1k * 1000))",
                ratio: String(format: "%.2f×", incN / max(inc1k, 1e-9)),
                target: "≤ 2× " + (incN <= 2 * inc1k ? "✓" : "✗")))
        report.atMost(
            "incremental sync of 1 change, whole `entryctl sync` process (median of \(Bench.syncRepeats))",
            ctlSync.map { $0 * 1000 }, unit: "ms", limit: 20, baseline: "the daemon's SyncPeer: \(msText(incN * 1000))")
        report.add(
            ReportRow(
                what: "peak daemon RSS (through the Import)", value: mib(peak),
                target: "< 200 MiB " + ((peak ?? .max) < 200 << 20 ? "✓" : "✗")))
        report.atMost(
            "idle daemon RSS after start with \(format(Double(total))) entries", idle.map { Double($0) / 1_048_576 },
            unit: "MiB", limit: 25)
        report.add(
            ReportRow(
                what: "start-up to listening with \(format(Double(total))) entries",
                value: msText(a.startupSeconds * 1000)))
        let errors = add1.errors + addBusy.errors + add1p.errors + add8.errors + add16.errors + (python?.errors ?? 0)
        if errors > 0 { report.note("\(errors) Add calls failed; see \(a.logPath)") }
        return report
    }
}

func mib(_ bytes: Int?) -> String { bytes.map { String(format: "%.1f MiB", Double($0) / 1_048_576) } ?? "n/a" }
