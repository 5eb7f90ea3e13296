import Foundation
import EntryModel
import EntryLedger
import EntryProtocol

extension Histogram {
    /// The wire `Histogram` (`io.entryd.Sync`): bounds, cumulative counts per bound, sum, count.
    var json: JSON {
        .object([
            ("bounds", .array(bounds.map(JSON.double))), ("counts", .array(cumulative.map { .int(Int64($0)) })),
            ("sum", .double(sum)), ("count", .int(Int64(count))),
        ])
    }
}

extension EntryService {
    /// `Metrics()`: this instance's counters and the node's gauges for
    /// monitoring (interfaces/io.entryd.Sync.varlink). Peers by configured
    /// name only; no address, no path. Each peer's pending count is one range
    /// read of the change log.
    /// - Throws: the store's ``StorageError``.
    func metrics(_ c: CallContext) throws {
        let counters = metrics.snapshot
        let writes = store.writeStatistics
        let counts = try store.counts()
        let stored = try store.peerStates()
        var peerList: [JSON] = []
        for config in peers {
            let state = stored.first { $0.name == config.name }
            let runs = counters.peers[config.name] ?? ServiceMetrics.PeerRunCounts()
            let pending = try store.changeCount(after: state?.pushedSeq ?? 0, notMadeOn: state?.node)
            peerList.append(
                .object(
                    [
                        ("name", .string(config.name)), ("runsOk", .int(Int64(runs.ok))),
                        ("runsFailed", .int(Int64(runs.failed))), ("lastSuccess", state?.lastSync.map(JSON.string)),
                        ("pending", .int(Int64(pending))),
                    ].compactMap { name, value in value.map { (name, $0) } }))
        }
        let reachable = store.serverReachable
        let members: [(String, JSON?)] = [
            ("instance", instance.map(JSON.string)), ("version", .string(EntrydVersion.string)),
            ("startedAt", .string(metrics.startedAt)),
            ("calls", Self.countList(counters.calls) { [("method", $0.method), ("outcome", $0.outcome)] }),
            ("problems", Self.countList(counters.problems) { [("field", $0.field), ("code", $0.code)] }),
            ("storageFailures", .int(Int64(counters.storageFailures))),
            ("writeRounds", .int(Int64(writes.rounds))), ("writeJobs", .int(Int64(writes.jobs))),
            ("roundJobs", writes.roundJobs.json), ("commitSeconds", writes.commitSeconds.json),
            ("seq", .int(counts.seq)), ("entries", .int(Int64(counts.entries))),
            ("conflicts", .int(Int64(try store.openConflictCount()))), ("peers", .array(peerList)),
            ("erasures", .int(Int64(try store.erasures().count))), ("purgePending", .bool(store.purgeProgress != nil)),
            ("incarnation", .string(store.incarnation.id)), ("incarnationSeq", .int(store.incarnation.startSeq)),
            ("watchdogEnabled", .bool(counters.watchdog.enabled)),
            ("watchdogWithheld", .bool(counters.watchdog.withheld)),
            ("watchdogWithholds", .int(Int64(counters.watchdog.withholds))),
            ("databaseReachable", reachable.map { .bool($0.reachable) }),
            ("databaseLosses", reachable.map { .int(Int64($0.losses)) }),
        ]
        try reply(c, members.compactMap { name, value in value.map { (name, $0) } })
    }

    /// The wire list of a counter family: one object per key, its `labels`
    /// members then `count`, in the order of the labels' values.
    static func countList<Key>(_ counts: [Key: Int], labels: (Key) -> [(String, String)]) -> JSON {
        let rows = counts.map { (labels($0.key), $0.value) }.sorted {
            $0.0.map(\.1).lexicographicallyPrecedes($1.0.map(\.1))
        }
        return .array(rows.map { .object($0.0.map { ($0.0, JSON.string($0.1)) } + [("count", .int(Int64($0.1)))]) })
    }
}
