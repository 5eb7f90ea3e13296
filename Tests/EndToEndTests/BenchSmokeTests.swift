import Foundation
import Testing

/// The bench of issue 6 builds and runs at a tiny size so it cannot rot.
/// Speed is judged from its printed figures (BENCHMARKS.md), never here.
@Suite struct BenchSmokeTests {
    @Test(
        "entryd-bench --quick runs every phase against the built entryd, prints the table and leaves no neighbour running"
    )
    func quickRun() throws {
        let bench = productsDirectory() + "/entryd-bench"
        try #require(FileManager.default.isExecutableFile(atPath: bench), "build entryd-bench first")
        let neighboursBefore = neighbourProcesses()
        let r = try runProcess(bench, ["--quick", "--entries", "500", "--seconds", "0.2"], timeout: 120)
        #expect(r.status == 0, "\(r.stderr)")
        for row in [
            "durable Add, 1 client, no pipelining", "durable Add, 1 client, two CPU-bound neighbours",
            "durable Add, 8 clients, pipelining", "daemon CPU per Add, 8 clients pipelining",
            "durable Add, 8 Python clients", "Import 500 entries",
            "List CN+440000", "Search by Traditional name", "Search by pinyin", "Search by phone, national",
            "Search by phone, international", "Get p50", "Changes, read of", "peer sync", "incremental sync",
            "incremental sync of 1 change, whole `entryctl sync` process", "idle daemon RSS",
            "start-up to listening",
        ] {
            #expect(r.stdout.contains("| " + row), "missing row '\(row)' in:\n\(r.stdout)")
        }
        // The new rows carry figures, not n/a (python3 and entryctl are part of the build and test image).
        for row in ["two CPU-bound neighbours", "daemon CPU per Add", "8 Python clients", "entryctl sync"] {
            let line = r.stdout.split(separator: "\n").first { $0.hasPrefix("| ") && $0.contains(row) }
            #expect(
                line.map { !$0.split(separator: "|")[1].contains("n/a") } == true,
                "no figure for '\(row)' in:\n\(r.stdout)")
        }
        #expect(r.stdout.contains("raw SQLite 1 tx/entry: "))
        #expect(r.stdout.contains("raw SQLite 1 tx/entry, same neighbours: "))
        #expect(r.stdout.contains("the daemon's SyncPeer: "))
        #expect(neighbourProcesses() <= neighboursBefore, "a CPU-bound neighbour outlived the bench")
        #expect(r.stdout.contains("PostgreSQL rows skipped"))
        #expect(!r.stdout.contains("Add calls failed"))
        #expect(r.stderr.contains("entryd-bench: entryd: durable Add, 1 client"))
    }

    @Test("entryd-bench --search --quick imports named entries and times each kind of search against its target")
    func searchRun() throws {
        let bench = productsDirectory() + "/entryd-bench"
        try #require(FileManager.default.isExecutableFile(atPath: bench), "build entryd-bench first")
        let r = try runProcess(bench, ["--search", "--quick"], timeout: 120)
        #expect(r.status == 0, "\(r.stderr)")
        for kind in ["Traditional name", "Simplified name", "pinyin", "phone, national", "phone, international"] {
            let line = r.stdout.split(separator: "\n").first { $0.contains("| Search by \(kind),") }
            #expect(line?.contains("p99 < 20 ms") == true, "missing row for \(kind) in:\n\(r.stdout)")
        }
        #expect(r.stdout.contains("SQLite only"))
    }

    @Test("entryd-bench --web adds through entryd-web and over the socket, and weighs the page")
    func webRun() throws {
        let bench = productsDirectory() + "/entryd-bench"
        try #require(FileManager.default.isExecutableFile(atPath: bench), "build entryd-bench first")
        let r = try runProcess(bench, ["--web", "--clients", "8", "--seconds", "0.5"], timeout: 120)
        #expect(r.status == 0, "\(r.stderr)")
        for row in ["| HTTP (entryd-web) |", "| varlink (socket) |"] {
            let line = try #require(
                r.stdout.split(separator: "\n").first { $0.hasPrefix(row) }, "missing row '\(row)' in:\n\(r.stdout)")
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect((Double(cells[1]) ?? 0) > 0, "no adds: \(line)")
            #expect(cells[4] == "0", "errors: \(line)")
        }
        // The target, judged in the run (issue 34 item 5), and where each path's CPU went.
        #expect(r.stdout.contains("≥ 0.9× ✓") || r.stdout.contains("≥ 0.9× ✗"))
        #expect(r.stdout.contains("CPU per Add"))
        #expect(r.stdout.contains("The form page: "))
    }

    @Test(
        "entryd-bench --hub --quick syncs edges through SQLite and 1 and 2 entryd on PostgreSQL, kills one, loses nothing"
    )
    func hubRun() throws {
        let bench = productsDirectory() + "/entryd-bench"
        try #require(FileManager.default.isExecutableFile(atPath: bench), "build entryd-bench first")
        // PostgreSQL: $ENTRYD_TEST_PG when the tests have one, else the bench starts a throwaway cluster.
        let r = try runProcess(bench, ["--hub", "--quick"], timeout: 300)
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        let rows = r.stdout.split(separator: "\n").filter { $0.hasPrefix("| ") }
            .map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
        for (label, instances) in [
            ("SQLite (one entryd)", "1"), ("PostgreSQL", "1"), ("PostgreSQL", "2"),
            ("PostgreSQL, one instance killed (kill -9) at 0.50 s", "2"),
        ] {
            let row = try #require(
                rows.first { $0.count >= 7 && $0[0] == label && $0[1] == instances },
                "missing row '\(label)' with \(instances) instances in:\n\(r.stdout)")
            #expect((Double(row[2].replacingOccurrences(of: ",", with: "")) ?? 0) > 0, "no changes: \(row)")
            #expect((Double(row[3].replacingOccurrences(of: ",", with: "")) ?? 0) > 0, "no deliveries: \(row)")
            #expect(Double(row[4].replacingOccurrences(of: ",", with: "")) != nil, "no convergence p50: \(row)")
            // entryd's CPU per change and per delivery, but where an instance was killed.
            let cpu = (row.count > 7 ? row[7].split(separator: "/") : []).map {
                Double($0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: ",", with: "")) ?? 0
            }
            #expect(label.contains("killed") || (cpu.count == 2 && cpu.allSatisfy { $0 > 0 }), "no CPU: \(row)")
        }
        let kill = try #require(
            r.stdout.split(separator: "\n").first { $0.hasPrefix("kill: ") }, "no kill line in:\n\(r.stdout)")
        #expect(
            kill.hasPrefix("kill: instance 2 killed at ") && kill.hasSuffix("lost 0, duplicated 0, resyncs 0"),
            "\(kill)")
        #expect(r.stderr.contains("entryd-bench: hub: draining"))
        // The bulk rows (issue 34): 2,000 changes pushed into each hub and pulled back.
        #expect(
            r.stdout.contains("### Hub bulk: 2000 changes") && r.stdout.contains("| PostgreSQL | ")
                || r.stdout.contains("bulk: not run"), "\(r.stdout)")
    }

    /// Processes whose command line holds the bench's neighbour marker (`entryd-bench-neighbour`).
    private func neighbourProcesses() -> Int {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { Int($0) != nil } ?? []
        return pids.filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: data, as: UTF8.self).contains("entryd-bench-neighbour")
        }.count
    }

    @Test("entryd-bench refuses an unknown option with its usage (exit 64)")
    func usage() throws {
        let r = try runProcess(productsDirectory() + "/entryd-bench", ["--frob"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("unknown option '--frob'") && r.stderr.contains("usage: entryd-bench"))
        let typo = try runProcess(productsDirectory() + "/entryd-bench", ["--entires", "200"])
        #expect(
            typo.status == 64
                && typo.stderr.hasPrefix("entryd-bench: unknown option '--entires'; did you mean '--entries'?"),
            "\(typo)")
        // --flag=value is read as --flag value: the value is checked.
        let small = try runProcess(productsDirectory() + "/entryd-bench", ["--entries=50"])
        #expect(
            small.status == 64 && small.stderr.hasPrefix("entryd-bench: --entries must be an integer ≥ 100"), "\(small)"
        )
        let missing = try runProcess(productsDirectory() + "/entryd-bench", ["--quick", "--seconds"])
        #expect(
            missing.status == 64
                && missing.stderr.hasPrefix("entryd-bench: option '--seconds' needs a value (--seconds S)"),
            "\(missing)")
    }
}
