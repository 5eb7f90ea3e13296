import EntryModel
import EntryProtocol
import Foundation
import Synchronization

/// `entryd-bench --hub` (issue 19, item 5): simulated edge nodes sync with a
/// hub through `io.entryd.Sync.Apply` (push) and `io.entryd.Sync.Changes`
/// (pull from each edge's own cursor). The hub is one entryd on SQLite (the
/// baseline), then 1, 2, 4 … entryd instances on one PostgreSQL database;
/// last, the largest count again with one instance killed (SIGKILL) halfway.
///
/// Figures per configuration: changes pushed and acknowledged per second, and
/// convergence (for every tenth change of each edge, the time from its
/// acknowledgement until every other edge has pulled it). After each run every
/// edge pulls until nothing is new, and the bench checks that each edge holds
/// every other edge's changes exactly once and that the hub's change log holds
/// each change made exactly once.
struct HubBench {
    let options: BenchOptions
    let entryd: String
    let directory: String
    /// Where to look for scripts/pg-cluster (the bench's own directory first).
    let searchFrom: [String]

    /// Worker threads that drive the edges (each drives its share in turn).
    static let workers = 16

    /// One hub configuration.
    struct Configuration {
        /// The table's first column.
        let label: String
        /// entryd processes serving the hub.
        let instances: Int
        /// On PostgreSQL (one database shared by the instances), else one SQLite file.
        let postgres: Bool
        /// Kill one instance with SIGKILL halfway through.
        let kill: Bool
        /// A short name for files and database names.
        let tag: String
    }

    /// What one configuration measured and found.
    struct Outcome {
        let configuration: Configuration
        /// Changes pushed and acknowledged per second in the timed phase.
        var rate = 0.0
        /// Changes delivered to another edge (first pulls) per second in the timed phase:
        /// each change is delivered to every other edge, so up to `rate` × (edges − 1).
        var deliveryRate = 0.0
        /// CPU time (user + system) the entryd instances spent in the timed
        /// phase per change pushed and per delivery, in microseconds: figures a
        /// busy machine moves less than the rates. `nil` when an instance was
        /// killed. PostgreSQL's own processes are not counted.
        var cpuPerChange: Double?
        var cpuPerDelivery: Double?
        var seconds = 0.0
        /// Seconds from acknowledgement to the last edge's pull, per sample.
        var convergence = Latencies()
        /// Changes made (each acknowledged).
        var made = 0
        /// Rows of the hub's change log, and rows not made by an edge of this run.
        var logRows = 0
        var foreignRows = 0
        /// Changes missing from the log or from at least one edge's view.
        var lost = 0
        /// Extra copies: log rows and deliveries to an edge beyond the first.
        var duplicated = 0
        var missingInLog = 0
        var duplicateRows = 0
        var missingDeliveries = 0
        var duplicateDeliveries = 0
        var ownReturned = 0
        /// Deliveries of changes no edge made, and sample pulls of unregistered samples.
        var phantomDeliveries = 0
        var unexpectedSamples = 0
        var resyncs = 0
        /// One resync, described (which edge, cursor, instance, incarnations).
        var resyncExample: String?
        var retries = 0
        var skippedRetries = 0
        /// Edges that ended on another instance than their own.
        var moved = 0
        /// The instance killed (1-based) and when, seconds after the start.
        var killed: (instance: Int, at: Double)?
        /// Convergence samples never pulled by every edge (even after the drain).
        var incompleteSamples = 0
        /// Why the configuration could not run, if it could not.
        var failure: String?

        init(configuration: Configuration) { self.configuration = configuration }
    }

    /// Runs every configuration.
    /// - Returns: the report (Markdown) and whether nothing was lost or duplicated and every configuration ran.
    func run() -> (text: String, ok: Bool) {
        let edges = options.edges
        let seconds = options.hubSeconds
        var configurations = [
            Configuration(label: "SQLite (one entryd)", instances: 1, postgres: false, kill: false, tag: "sqlite")
        ]
        if options.postgres {
            configurations += options.instances.map {
                Configuration(label: "PostgreSQL", instances: $0, postgres: true, kill: false, tag: "pg\($0)")
            }
            if let most = options.instances.max(), most >= 2 {
                configurations.append(
                    Configuration(
                        label: "PostgreSQL, one instance killed (kill -9) at \(format(seconds / 2)) s",
                        instances: most, postgres: true, kill: true, tag: "kill\(most)"))
            }
        }
        var notes: [String] = []
        notes.append(
            "entryd-bench \(EntrydVersion.string), \(Date()) UTC; \(ProcessInfo.processInfo.activeProcessorCount) CPUs; "
                + "\(edges) edges on \(min(edges, HubBench.workers)) threads, \(format(seconds)) s per configuration")
        var postgres: HubPostgres?
        var postgresFailure: String?
        if configurations.contains(where: \.postgres) {
            do {
                progress("hub: finding PostgreSQL")
                let pg = try HubPostgres(given: options.pg, directory: directory, searchFrom: searchFrom)
                pg.keepDatabases = options.keep
                notes.append("PostgreSQL: \(pg.origin); a fresh database per configuration")
                postgres = pg
            } catch {
                postgresFailure = "\(error)"
            }
        }
        defer { postgres?.stop() }

        var outcomes: [Outcome] = []
        for configuration in configurations {
            var outcome = Outcome(configuration: configuration)
            do {
                if configuration.postgres {
                    guard let postgres else { throw BenchFailure("no PostgreSQL: \(postgresFailure ?? "?")") }
                    outcome = try runConfiguration(configuration, postgres: postgres, edges: edges, seconds: seconds)
                } else {
                    outcome = try runConfiguration(configuration, postgres: nil, edges: edges, seconds: seconds)
                }
            } catch {
                outcome.failure = "\(error)"
                progress("hub: \(configuration.label) ×\(configuration.instances) failed: \(error)")
            }
            outcomes.append(outcome)
        }
        var (text, ok) = render(outcomes, notes: notes, edges: edges, seconds: seconds)
        if options.bulk > 0 {
            let bulk = HubBulk(entryd: entryd, directory: directory, changes: options.bulk).run(postgres: postgres)
            text += bulk.text
            ok = ok && bulk.ok
        }
        return (text, ok)
    }

    /// Starts the configuration's instances, runs the edges, drains, checks, and stops the instances.
    private func runConfiguration(_ c: Configuration, postgres: HubPostgres?, edges edgeCount: Int, seconds: Double)
        throws -> Outcome
    {
        var extra: [String] = []
        if let postgres {
            // A random suffix: benches sharing one server ($ENTRYD_TEST_PG) never meet.
            let uri = try postgres.createDatabase("entryd_hub_\(c.tag)_" + UUID().uuidString.prefix(8).lowercased())
            extra = ["--db", uri]  // after DaemonProcess's own --db: entryd takes the last one
        }
        progress("hub: \(c.label), \(c.instances) instance\(c.instances == 1 ? "" : "s"): starting entryd")
        // On PostgreSQL each instance is named (`--instance`, shown by Status and in its log).
        let daemons = (0..<c.instances).map {
            DaemonProcess(
                executable: entryd, directory: directory, name: "hub-\(c.tag)-\($0 + 1)",
                extraArguments: extra + (c.postgres ? ["--instance", "hub-\(c.tag)-\($0 + 1)"] : []))
        }
        defer { daemons.forEach { $0.stop() } }
        do {
            for d in daemons { try d.start() }
            return try measure(c, daemons: daemons, edges: edgeCount, seconds: seconds)
        } catch {
            // An instance that exited on its own (entryd listens before its store opens) says why in its log.
            var why = "\(error)"
            for (i, d) in daemons.enumerated() {
                guard let p = d.process, !p.isRunning, p.terminationReason == .exit else { continue }
                let log = (try? String(contentsOfFile: d.logPath, encoding: .utf8)) ?? ""
                why +=
                    "; instance \(i + 1) exited with status \(p.terminationStatus), its log ends: "
                    + log.suffix(400).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            throw BenchFailure(why)
        }
    }

    /// Runs the edges against the started `daemons`, drains, and checks.
    private func measure(_ c: Configuration, daemons: [DaemonProcess], edges edgeCount: Int, seconds: Double) throws
        -> Outcome
    {
        let libraries = try RawClient(path: daemons[0].socket).call(.syncStatus)["libraries"]
        let ctx = HubContext(sockets: daemons.map(\.socket), edgeCount: edgeCount, libraries: libraries)
        let edges = (0..<edgeCount).map { HubEdge(index: $0, home: $0 % c.instances, edgeCount: edgeCount) }
        for e in edges { try e.connect(ctx) }
        var outcome = Outcome(configuration: c)

        // The timed phase: every worker drives its edges in turn (push, pull) until the deadline.
        progress(
            "hub: \(c.label), \(c.instances) instance\(c.instances == 1 ? "" : "s"): \(edgeCount) edges for \(format(seconds)) s"
        )
        let cpu = { daemons.map { $0.cpuSeconds.map { $0.user + $0.system } } }
        let cpu0 = cpu()
        let t0 = now()
        let deadline = t0 + seconds
        let ends = try drive(edges) { edge in
            guard now() < deadline else { return false }
            try edge.push(ctx)
            try edge.pull(ctx)
            return true
        } during: {
            // The main thread: progress each second, and the kill halfway.
            var nextReport = t0 + 1
            var killDue = c.kill ? t0 + seconds / 2 : Double.infinity
            while now() < t0 + seconds {
                usleep(50_000)
                let t = now()
                if t >= killDue, let p = daemons.last?.process {
                    kill(p.processIdentifier, SIGKILL)
                    p.waitUntilExit()
                    outcome.killed = (c.instances, t - t0)
                    progress("hub: killed instance \(c.instances) (pid \(p.processIdentifier)) at \(format(t - t0)) s")
                    killDue = .infinity
                }
                if t >= nextReport {
                    progress(
                        "hub: \(format(t - t0)) s, \(ctx.acknowledged.load(ordering: .relaxed)) changes acknowledged")
                    nextReport += 1
                }
            }
        }
        outcome.made = edges.reduce(0) { $0 + $1.made }
        outcome.seconds = (ends.max() ?? now()) - t0
        outcome.rate = Double(outcome.made) / max(outcome.seconds, 1e-9)
        let delivered = edges.reduce(0) { $0 + $1.delivered }
        outcome.deliveryRate = Double(delivered) / max(outcome.seconds, 1e-9)
        if outcome.killed == nil {
            let spent = zip(cpu(), cpu0).compactMap { after, before in after.flatMap { a in before.map { a - $0 } } }
            if spent.count == daemons.count {
                let total = spent.reduce(0, +) * 1e6
                outcome.cpuPerChange = total / Double(max(outcome.made, 1))
                outcome.cpuPerDelivery = total / Double(max(delivered, 1))
            }
        }

        // The drain: every edge pulls until nothing is new.
        progress("hub: draining (every edge pulls until nothing is new)")
        _ = try drive(edges) { edge in
            while try edge.pull(ctx) {}
            return false
        } during: {
        }
        edges.forEach { $0.disconnect() }

        // The hub's change log, read whole from a running instance.
        guard let alive = daemons.first(where: { $0.process?.isRunning == true }) else {
            throw BenchFailure("no instance left running")
        }
        progress("hub: reading the whole change log from \(alive.socket)")
        let log = try readLog(socket: alive.socket, edges: edges)
        outcome.logRows = log.rows
        outcome.foreignRows = log.foreign
        outcome.duplicateRows = log.duplicates

        // The log and the edges' views: each edge's changes exactly once in the log and
        // in every other edge's view. `lost` counts each change missing anywhere once.
        for origin in edges {
            let made = origin.made
            let words = (made + 63) / 64
            func mask(_ w: Int) -> UInt64 {
                (w == words - 1 && made % 64 != 0) ? (UInt64(1) << UInt64(made % 64)) - 1 : ~0
            }
            var missingAnywhere = [UInt64](repeating: 0, count: words)
            let held = log.held[origin.index]
            for w in 0..<words {
                let missing = ~(w < held.count ? held[w] : 0) & mask(w)
                outcome.missingInLog += missing.nonzeroBitCount
                missingAnywhere[w] |= missing
            }
            for viewer in edges where viewer.index != origin.index {
                let bits = viewer.view[origin.index]
                for w in 0..<words {
                    let missing = ~(w < bits.count ? bits[w] : 0) & mask(w)
                    outcome.missingDeliveries += missing.nonzeroBitCount
                    missingAnywhere[w] |= missing
                }
                // Bits past `made`: changes the origin never made.
                for w in 0..<bits.count {
                    outcome.phantomDeliveries += (bits[w] & ~(w < words ? mask(w) : 0)).nonzeroBitCount
                }
            }
            outcome.lost += missingAnywhere.reduce(0) { $0 + $1.nonzeroBitCount }
        }
        for e in edges {
            outcome.duplicateDeliveries += e.duplicates
            outcome.ownReturned += e.ownReturned
            outcome.phantomDeliveries += e.foreign
            outcome.resyncs += e.resyncs
            if let seen = e.resyncSeen { outcome.resyncExample = seen }
            outcome.retries += e.retries
            outcome.skippedRetries += e.skippedRetries
            if e.instance != e.home { outcome.moved += 1 }
        }
        for table in ctx.samples {
            table.convergence.forEach { outcome.convergence.add($0) }
            outcome.unexpectedSamples += table.unexpected
        }
        let samplesMade = edges.reduce(0) { $0 + ($1.made + ctx.sampleEvery - 1) / ctx.sampleEvery }
        outcome.incompleteSamples = edgeCount > 1 ? samplesMade - outcome.convergence.samples.count : 0
        outcome.duplicated = outcome.duplicateRows + outcome.duplicateDeliveries + outcome.ownReturned
        progress(
            "hub: \(c.label) ×\(c.instances): \(format(outcome.rate)) changes/s, "
                + "\(format(outcome.deliveryRate)) deliveries/s, \(outcome.made) made, "
                + "log \(outcome.logRows) rows, lost \(outcome.lost), duplicated \(outcome.duplicated)")
        return outcome
    }

    /// Runs `step` for each edge in turn on ``workers`` threads until it
    /// returns false for every edge of a thread, while `during` runs on the
    /// calling thread; the first error stops every thread and is thrown.
    /// - Returns: each thread's end time.
    private func drive(
        _ edges: [HubEdge], _ step: @escaping @Sendable (HubEdge) throws -> Bool,
        during: () -> Void
    ) throws -> [Double] {
        let threads = min(edges.count, HubBench.workers)
        let failure = Monitor<(any Error)?>(nil)
        let ends = Monitor([Double]())
        let group = DispatchGroup()
        for w in 0..<threads {
            let mine = Array(stride(from: w, to: edges.count, by: threads).map { edges[$0] })
            group.enter()
            Thread {
                defer { group.leave() }
                var active = mine
                do {
                    while !active.isEmpty, failure.withLock({ $0 }) == nil {
                        active = try active.filter { try step($0) }
                    }
                } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                }
                let t = now()
                ends.withLock { $0.append(t) }
            }.start()
        }
        during()
        group.wait()
        if let error = failure.withLock({ $0 }) { throw error }
        return ends.withLock { $0 }
    }

    /// Reads the whole change log (`Changes` from 0 in pages of 10,000, no
    /// node excluded) and checks it against the edges' changes.
    /// - Returns: the rows, the rows no edge of this run made, the rows held
    ///   twice, and per origin edge the bitset of its changes held.
    private func readLog(socket: String, edges: [HubEdge]) throws -> (
        rows: Int, foreign: Int, duplicates: Int, held: [[UInt64]]
    ) {
        let client = try RawClient(path: socket)
        var since: Int64 = 0
        var rows = 0
        var foreign = 0
        var duplicates = 0
        var held = Array(repeating: [UInt64](), count: edges.count)
        while true {
            let call = VarlinkCall(
                .syncChanges,
                parameters: .object([("since", .int(since)), ("limit", .int(10_000))])
            ).encoded
            try client.send(call)
            let reply = try client.receive()
            if RawClient.isError(reply) {
                throw BenchFailure(
                    "Changes(since: \(since)) failed on \(socket): \(String(decoding: reply.prefix(300), as: UTF8.self))"
                )
            }
            guard let last = Scan.int(after: "\"last\":", in: reply) else {
                throw BenchFailure("Changes reply without last on \(socket)")
            }
            HubEdge.scanActors(reply) { origin, number in
                rows += 1
                guard origin >= 0, origin < edges.count, number >= 0 else {
                    foreign += 1
                    return
                }
                let word = number >> 6
                let bit = UInt64(1) << UInt64(number & 63)
                if held[origin].count <= word {
                    held[origin] += Array(repeating: 0, count: word - held[origin].count + 1)
                }
                if held[origin][word] & bit != 0 { duplicates += 1 } else { held[origin][word] |= bit }
            }
            if last == since { break }
            since = last
        }
        for e in edges {
            for (w, bits) in held[e.index].enumerated() {
                let limit = e.made - w * 64
                let mask: UInt64 = limit >= 64 ? ~0 : limit <= 0 ? 0 : (UInt64(1) << UInt64(limit)) - 1
                foreign += (bits & ~mask).nonzeroBitCount
            }
        }
        return (rows, foreign, duplicates, held)
    }

    /// The table and notes.
    private func render(_ outcomes: [Outcome], notes: [String], edges: Int, seconds: Double) -> (text: String, ok: Bool)
    {
        var ok = true
        let sqliteRate = outcomes.first(where: { !$0.configuration.postgres && $0.failure == nil })?.rate
        var out = "## Hub: \(edges) edges, \(format(seconds)) s per configuration\n\n"
        out +=
            "| configuration | instances | changes/s | deliveries/s | convergence p50 ms | p99 ms | vs SQLite "
            + "| entryd CPU µs per change / per delivery |\n"
        out += "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
        var details: [String] = []
        var killLine: String?
        for o in outcomes {
            let c = o.configuration
            if let failure = o.failure {
                ok = false
                out += "| \(c.label) | \(c.instances) | failed | | | | | |\n"
                details.append("\(c.label) ×\(c.instances) failed: \(failure)")
                continue
            }
            let ratio = sqliteRate.map { String(format: "%.2f×", o.rate / max($0, 1e-9)) } ?? "n/a"
            out +=
                "| \(c.label) | \(c.instances) | \(format(o.rate)) | \(format(o.deliveryRate)) | "
                + "\(o.convergence.ms(0.5).map(format) ?? "n/a") | "
                + "\(o.convergence.ms(0.99).map(format) ?? "n/a") | \(ratio) | "
                + "\(o.cpuPerChange.map(format) ?? "n/a") / \(o.cpuPerDelivery.map { String(format: "%.1f", $0) } ?? "n/a") |\n"
            var d =
                "\(c.label) ×\(c.instances): \(o.made) changes made in \(format(o.seconds)) s; the log holds \(o.logRows) rows"
            if o.foreignRows > 0 { d += " (\(o.foreignRows) not made by an edge of this run)" }
            if o.phantomDeliveries + o.unexpectedSamples > 0 {
                d +=
                    "; \(o.phantomDeliveries) deliveries of changes no edge made, \(o.unexpectedSamples) of unregistered samples"
            }
            d += "; \(o.convergence.samples.count) convergence samples"
            if o.incompleteSamples > 0 { d += " (\(o.incompleteSamples) never reached every edge)" }
            d +=
                "; missing: \(o.missingInLog) from the log, \(o.missingDeliveries) deliveries; duplicates: \(o.duplicateRows) log rows, "
                + "\(o.duplicateDeliveries) deliveries, \(o.ownReturned) own changes returned; \(o.retries) error replies retried, "
                + "\(o.skippedRetries) pushes found stored on retry, \(o.resyncs) resyncs"
                + (o.resyncExample.map { " (e.g. \($0))" } ?? "")
            details.append(d)
            if o.lost > 0 || o.duplicated > 0 || o.foreignRows > 0 || o.incompleteSamples > 0 || o.phantomDeliveries > 0
            {
                ok = false
            }
            if c.kill {
                if let k = o.killed {
                    killLine =
                        "kill: instance \(k.instance) killed at \(format(k.at)) s; \(o.moved) edges moved; "
                        + "lost \(o.lost), duplicated \(o.duplicated), resyncs \(o.resyncs)"
                } else {
                    killLine = "kill: no instance was killed (the run ended first)"
                    ok = false
                }
            } else if o.lost > 0 || o.duplicated > 0 {
                details.append("\(c.label) ×\(c.instances): lost \(o.lost), duplicated \(o.duplicated)")
            }
        }
        if !outcomes.contains(where: \.configuration.kill) {
            killLine = "kill: not run (needs PostgreSQL and an instance count of 2 or more)"
        }
        out += "\n" + (killLine ?? "kill: failed (see below)") + "\n\n"
        for n in notes + details { out += "- \(n)\n" }
        return (out, ok)
    }
}
