import EntryModel
import Foundation

/// The bulk rows of the hub bench (issue 34 item 1): one edge (entryd on
/// SQLite) holding ``changes`` changes (an Import of as many entries) pushes
/// them into a fresh hub with a whole `entryctl sync` (PeerSync: Applies of
/// 1,000 changes), first a hub on SQLite, then one on PostgreSQL; then a new
/// edge pulls them from each hub the same way. Printed as changes/s, with
/// PostgreSQL's ratio to SQLite and the issue's target (push ≥ 0.8×).
struct HubBulk {
    let entryd: String
    let directory: String
    /// Changes pushed and pulled. Default 20,000; `--quick` 2,000.
    let changes: Int

    /// The target for PostgreSQL's push against SQLite's (issue 34 item 1).
    static let pushTarget = 0.8

    /// One hub's figures: seconds for the push and for the pull.
    struct Timing {
        var push: Double
        var pull: Double
    }

    /// Runs the rows; `postgres` makes each PostgreSQL hub's database (`nil`: SQLite only).
    /// - Returns: the Markdown lines (a table, or why it did not run) and whether it ran through.
    func run(postgres: HubPostgres?) -> (text: String, ok: Bool) {
        guard let entryctl = EntryctlSync.locate(besides: entryd) else {
            return ("bulk: not run (no entryctl next to \(entryd))\n", true)
        }
        do {
            progress("hub bulk: an edge with \(changes) changes (Import)")
            let edge = DaemonProcess(executable: entryd, directory: directory, name: "bulk-edge")
            defer { edge.stop() }
            try edge.start()
            _ = try DaemonWorkload(socket: edge.socket, counter: Counter()).importEntries(0..<changes, batch: 1000)
            var timings: [(String, Timing)] = []
            timings.append(("SQLite", try measure(entryctl: entryctl, edge: edge, hubArguments: [], tag: "sqlite")))
            if let postgres {
                let uri = try postgres.createDatabase("entryd_bulk_" + UUID().uuidString.prefix(8).lowercased())
                timings.append(
                    (
                        "PostgreSQL",
                        try measure(
                            entryctl: entryctl, edge: edge, hubArguments: ["--db", uri, "--instance", "bulk"],
                            tag: "pg")
                    ))
            }
            return (render(timings), true)
        } catch {
            return ("bulk: failed: \(error)\n", false)
        }
    }

    /// Starts a fresh hub, times the edge's push into it and a new edge's pull from it.
    private func measure(entryctl: String, edge: DaemonProcess, hubArguments: [String], tag: String) throws -> Timing {
        let hub = DaemonProcess(
            executable: entryd, directory: directory, name: "bulk-hub-\(tag)", extraArguments: hubArguments)
        defer { hub.stop() }
        try hub.start()
        progress("hub bulk: \(changes) changes pushed into the \(tag) hub (entryctl sync)")
        let push = try sync(entryctl, from: edge.socket, with: hub.socket, log: "bulk-push-\(tag)")
        let held = try DaemonWorkload(socket: hub.socket, counter: Counter()).status()["entries"]?.intValue ?? 0
        guard held == Int64(changes) else {
            throw BenchFailure("the \(tag) hub holds \(held) entries after the push, not \(changes)")
        }
        progress("hub bulk: \(changes) changes pulled from the \(tag) hub by a new edge (entryctl sync)")
        let reader = DaemonProcess(executable: entryd, directory: directory, name: "bulk-reader-\(tag)")
        defer { reader.stop() }
        try reader.start()
        let pull = try sync(entryctl, from: reader.socket, with: hub.socket, log: "bulk-pull-\(tag)")
        let got = try DaemonWorkload(socket: reader.socket, counter: Counter()).status()["entries"]?.intValue ?? 0
        guard got == Int64(changes) else {
            throw BenchFailure("the new edge holds \(got) entries after pulling from the \(tag) hub, not \(changes)")
        }
        return Timing(push: push, pull: pull)
    }

    /// Times `entryctl --socket LOCAL --timeout 0 sync unix:PEER` (no bound on
    /// the wait: a slow hub is measured, not cut short), which must exit 0.
    private func sync(_ entryctl: String, from local: String, with peer: String, log: String) throws -> Double {
        let path = directory + "/\(log).log"
        let t0 = now()
        let status = try ChildProcess(
            entryctl, ["--socket", local, "--timeout", "0", "sync", "unix:" + peer], output: path
        ).wait()
        let seconds = now() - t0
        guard status == 0 else { throw BenchFailure("entryctl sync exited \(status); see \(path)") }
        return seconds
    }

    private func render(_ timings: [(String, Timing)]) -> String {
        let n = Double(changes)
        var out =
            "\n### Hub bulk: \(changes) changes, one edge, `entryctl sync` (Applies of 1,000)\n\n"
            + "| hub | push s | push changes/s | pull s | pull changes/s | push vs SQLite | pull vs SQLite |\n"
            + "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n"
        let sqlite = timings.first { $0.0 == "SQLite" }?.1
        for (label, t) in timings {
            var pushRatio = ""
            var pullRatio = ""
            if let sqlite, label != "SQLite" {
                let r = sqlite.push / max(t.push, 1e-9)
                pushRatio =
                    String(format: "%.2f×", r)
                    + " \(r >= HubBulk.pushTarget ? "✓" : "✗") (target ≥ \(HubBulk.pushTarget)×)"
                pullRatio = String(format: "%.2f×", sqlite.pull / max(t.pull, 1e-9))
            }
            out +=
                "| \(label) | \(format(t.push)) | \(format(n / max(t.push, 1e-9))) | \(format(t.pull)) | "
                + "\(format(n / max(t.pull, 1e-9))) | \(pushRatio) | \(pullRatio) |\n"
        }
        return out
    }
}
