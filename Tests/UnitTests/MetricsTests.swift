@preconcurrency import Glibc
import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntryServer

/// The monitoring call (issue 35): what ``ServiceMetrics`` counts through real
/// sessions, the bounds on its labels, ``Histogram``, and
/// ``MetricsExposition``'s text (the web test parses it with prometheus-client).
@Suite struct MetricsTests {
    static func fields(_ name: String, birthday: String = "1990-05-17") -> JSON {
        GroupCommitSessionTests.fields(name, birthday: birthday)
    }

    @Test("calls are counted once each by method and outcome, pipelined or not, with the refused Add's problems")
    func callsCounted() throws {
        let daemon = try SocketDaemon()
        defer { daemon.stop() }
        let conn = try daemon.connect()
        // Pipelined: two Adds (one refused before queueing, one stored) and a Get between them.
        var bytes = VarlinkCall(method: "io.entryd.Entries.Add", parameters: .object([("fields", Self.fields("a"))]))
            .encoded
        bytes += VarlinkCall(method: "io.entryd.Entries.Get", parameters: .object([("id", .string("nope"))])).encoded
        bytes +=
            VarlinkCall(
                method: "io.entryd.Entries.Add",
                parameters: .object([("fields", .stringMap(["name": "b", "birthday": "x", "typo": "1"]))])
            ).encoded
        bytes += VarlinkCall(method: "io.entryd.Nope.Nothing", parameters: .object([])).encoded
        try conn.sendRaw(bytes)
        for _ in 0..<4 { _ = try conn.receive() }
        let reply = try conn.call(.syncMetrics)
        func calls(_ method: String, _ outcome: String) -> Int64? {
            reply["calls"]?.arrayValue?.first {
                $0["method"]?.stringValue == method && $0["outcome"]?.stringValue == outcome
            }?["count"]?.intValue
        }
        #expect(calls("io.entryd.Entries.Add", "ok") == 1)
        #expect(calls("io.entryd.Entries.Add", "io.entryd.Entries.ValidationFailed") == 1)
        #expect(calls("io.entryd.Entries.Get", "io.entryd.Entries.EntryNotFound") == 1)
        #expect(calls("unknown", "org.varlink.service.InterfaceNotFound") == 1, "\(reply["calls"]?.text ?? "")")
        #expect(calls("io.entryd.Sync.Metrics", "ok") == nil, "the call itself is counted once it is answered")
        let problems = reply["problems"]?.arrayValue ?? []
        let keyed = Dictionary(
            uniqueKeysWithValues: problems.map {
                ("\($0["field"]?.stringValue ?? "?")/\($0["code"]?.stringValue ?? "?")", $0["count"]?.intValue ?? 0)
            })
        #expect(keyed["/unknown-field"] == 1 && keyed["typo/unknown-field"] == nil, "\(keyed)")
        #expect(keyed["birthday/invalid-format"] == 1, "\(keyed)")
        #expect(reply["writeRounds"]?.intValue ?? 0 >= 1)
        #expect(reply["entries"]?.intValue == 1)
        let commits = reply["commitSeconds"]
        #expect(commits?["count"]?.intValue == reply["writeRounds"]?.intValue)
        #expect(commits?["counts"]?.arrayValue?.last?.intValue ?? -1 <= commits?["count"]?.intValue ?? 0)
        #expect(reply["databaseReachable"] == nil, "SQLite has no server to reach")
        #expect(reply["storageFailures"]?.intValue == 0, "present from the start, so an alert sees the first")
        #expect(reply["watchdogEnabled"]?.boolValue == false)
        // The reply matches the interface's declared members, each present.
        for member in ["startedAt", "version", "seq", "conflicts", "peers", "erasures", "purgePending", "incarnation"] {
            #expect(reply[member] != nil, "\(member)")
        }
    }

    @Test("labels stay bounded: an unknown method is 'unknown', an unknown error 'other', and past the cap keys fold")
    func labelsBounded() {
        let m = ServiceMetrics()
        for i in 0..<(ServiceMetrics.maxSeries + 50) {
            m.answered("io.entryd.Made.Up\(i)", error: WireError(name: "x.y.Z\(i)"))
        }
        let calls = m.snapshot.calls
        #expect(calls.count == 1)
        #expect(calls[.init(method: "unknown", outcome: "other")] == ServiceMetrics.maxSeries + 50)
        #expect(m.snapshot.storageFailures == 0)
        m.answered("io.entryd.Entries.Update", error: WireError(.storageFailed))
        m.answered("io.entryd.Sync.Resolve", error: WireError(.storageFailed))
        #expect(m.snapshot.storageFailures == 2)
        m.syncEnded(peer: "office", succeeded: false)
        m.syncEnded(peer: "office", succeeded: true)
        #expect(m.snapshot.peers["office"] == .init(ok: 1, failed: 1))
        m.watchdog(enabled: true, withheld: true)
        m.watchdog(enabled: true, withheld: true)
        m.watchdog(enabled: true, withheld: false)
        #expect(m.snapshot.watchdog == .init(enabled: true, withheld: false, withholds: 1))
    }

    @Test(
        "a histogram counts each value in the first bucket at or above it; cumulative buckets and the +Inf count agree")
    func histogram() {
        var h = Histogram(bounds: [0.001, 0.01, 0.1])
        for v in [0.0005, 0.001, 0.002, 0.05, 0.5, 3] { h.observe(v) }
        #expect(h.counts == [2, 1, 1, 2])
        #expect(h.cumulative == [2, 3, 4])
        #expect(h.count == 6)
        #expect(abs(h.sum - 3.5535) < 1e-9)
    }

    @Test(
        "the exposition: HELP and TYPE per family, escaped labels, cumulative buckets with +Inf, absent members left out"
    )
    func exposition() {
        let reply = JSON.object([
            ("version", .string("1.0")), ("instance", .string("desk \"a\"\\\nb")),
            ("incarnation", .string("i")), ("startedAt", .string("2026-12-08T01:00:00.500Z")),
            (
                "calls",
                .array([
                    .object([
                        ("method", .string("io.entryd.Entries.Add")), ("outcome", .string("ok")), ("count", .int(3)),
                    ])
                ])
            ),
            (
                "commitSeconds",
                .object([
                    ("bounds", .array([.double(0.0005), .double(1)])), ("counts", .array([.int(1), .int(2)])),
                    ("sum", .double(0.25)), ("count", .int(3)),
                ])
            ),
            ("conflicts", .int(2)), ("purgePending", .bool(true)),
        ])
        let text = MetricsExposition.text(reply)
        #expect(
            text.contains(
                "entryd_info{version=\"1.0\",entryd_instance=\"desk \\\"a\\\"\\\\\\nb\",incarnation=\"i\"} 1\n"))
        #expect(text.contains("entryd_start_time_seconds 1796691600.5\n"))
        #expect(text.contains("# TYPE entryd_calls_total counter\n"))
        #expect(text.contains("entryd_calls_total{method=\"io.entryd.Entries.Add\",outcome=\"ok\"} 3\n"))
        #expect(text.contains("entryd_commit_duration_seconds_bucket{le=\"0.0005\"} 1\n"))
        #expect(text.contains("entryd_commit_duration_seconds_bucket{le=\"1\"} 2\n"))
        #expect(text.contains("entryd_commit_duration_seconds_bucket{le=\"+Inf\"} 3\n"))
        #expect(text.contains("entryd_commit_duration_seconds_count 3\n"))
        #expect(text.contains("entryd_conflicts_open 2\n") && text.contains("entryd_erasure_purge_pending 1\n"))
        #expect(!text.contains("entryd_database_up"), "a reply without databaseReachable (SQLite) has no such family")
        #expect(text.hasSuffix("\n"))
        // Every sample line belongs to a family announced with HELP and TYPE before it.
        var announced = Set<String>()
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") { announced.insert(String(line.split(separator: " ")[2])) }
            if line.hasPrefix("#") { continue }
            let name = String(line.prefix { $0 != "{" && $0 != " " })
            #expect(
                announced.contains {
                    name == $0 || name == $0 + "_bucket" || name == $0 + "_sum" || name == $0 + "_count"
                },
                "\(name)")
        }
    }
}
