import EntryModel
import EntryProtocol
import EntryLedger
import Foundation
import Synchronization

/// The phases that drive a running entryd over its socket.
struct DaemonWorkload {
    let socket: String
    /// Next entry number to use (entries stay distinct across phases).
    let counter: Counter

    /// Durable Add from one client, one call at a time, for `seconds`.
    /// - Returns: the adds made, the latency of each call and the error replies.
    func addOneClient(seconds: Double) throws -> OneAtATime {
        let client = try RawClient(path: socket)
        let calls = (0..<4096).map { _ in Fixture.addCall(counter.next()) }
        var result = OneAtATime()
        let t0 = now()
        while now() - t0 < seconds {
            let t = now()
            try client.send(calls[result.calls % calls.count])
            if RawClient.isError(try client.receive()) { result.errors += 1 }
            result.latencies.add(now() - t)
            result.calls += 1
        }
        result.seconds = now() - t0
        return result
    }

    /// Durable Add from `clients` connections, each keeping `window` calls in
    /// flight (pipelining), for `seconds`.
    /// - Returns: acknowledged adds per second, the adds acknowledged without
    ///   error, and the number of error replies.
    func addPipelined(clients: Int, window: Int, seconds: Double) throws -> (rate: Double, adds: Int, errors: Int) {
        let connections = try (0..<clients).map { _ in try RawClient(path: socket) }
        let calls = (0..<clients).map { _ in (0..<1024).map { _ in Fixture.addCall(counter.next()) } }
        /// Per thread: acknowledged, errors, end time.
        let results = Monitor(Array(repeating: (0, 0, 0.0), count: clients))
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        var t0 = 0.0
        let deadline = Monitor(0.0)
        for c in 0..<clients {
            group.enter()
            Thread {
                defer { group.leave() }
                let client = connections[c]
                var sent = 0
                var acked = 0
                var errors = 0
                start.wait()
                let end = deadline.withLock { $0 }
                do {
                    for _ in 0..<window {
                        try client.send(calls[c][sent % 1024])
                        sent += 1
                    }
                    while acked < sent {
                        if RawClient.isError(try client.receive()) { errors += 1 }
                        acked += 1
                        if now() < end {
                            try client.send(calls[c][sent % 1024])
                            sent += 1
                        }
                    }
                } catch { errors += 1 }
                let t = now()
                results.withLock { $0[c] = (acked, errors, t) }
            }.start()
        }
        t0 = now()
        deadline.withLock { $0 = t0 + seconds }
        for _ in 0..<clients { start.signal() }
        group.wait()
        let all = results.withLock { $0 }
        let acked = all.reduce(0) { $0 + $1.0 }
        let errors = all.reduce(0) { $0 + $1.1 }
        let end = all.map(\.2).max() ?? now()
        return (Double(acked) / (end - t0), acked - errors, errors)
    }

    /// Imports entries `range` in calls of `batch` rows, keeping two calls in
    /// flight (the next batch is encoded while the daemon stores the last);
    /// `call` makes each call's bytes (``Fixture/importCall(_:)`` by default).
    /// - Returns: entries added per second.
    func importEntries(
        _ range: Range<Int>, batch: Int, onProgress: (Int) -> Void = { _ in },
        call: (Range<Int>) -> [UInt8] = { Fixture.importCall($0) }
    ) throws -> Double {
        let client = try RawClient(path: socket)
        var chunks = stride(from: range.lowerBound, to: range.upperBound, by: batch).map {
            $0..<min($0 + batch, range.upperBound)
        }
        chunks.reverse()
        var inFlight = 0
        var done = 0
        let t0 = now()
        while !chunks.isEmpty || inFlight > 0 {
            while inFlight < 2, let next = chunks.popLast() {
                try client.send(call(next))
                inFlight += 1
            }
            let reply = try client.receive()
            inFlight -= 1
            if RawClient.isError(reply) || Scan.int(after: "\"added\":", in: reply) == 0 {
                throw BenchFailure("Import failed: \(String(decoding: reply.prefix(300), as: UTF8.self))")
            }
            done += 1
            if done % 100 == 0 { onProgress(done * batch) }
        }
        return Double(range.count) / (now() - t0)
    }

    /// List with a country + province filter, 50 per page: the first page and
    /// following pages through the cursor, `pages` calls in all (restarting at
    /// the first page when the cursor runs out).
    /// - Returns: the latency of each call and entry ids seen (for Get).
    func listPages(_ pages: Int) throws -> (latencies: Latencies, ids: [String]) {
        let client = try RawClient(path: socket)
        var lat = Latencies()
        var ids: [String] = []
        var cursor: String?
        for _ in 0..<pages {
            var params: [(String, JSON)] = [
                ("filter", .object([("country", .string("CN")), ("province", .string("440000"))])), ("limit", .int(50)),
            ]
            if let cursor { params.append(("cursor", .string(cursor))) }
            let call = VarlinkCall(.entriesList, parameters: .object(params)).encoded
            let t = now()
            try client.send(call)
            let reply = try client.receive()
            lat.add(now() - t)
            if RawClient.isError(reply) {
                throw BenchFailure("List failed: \(String(decoding: reply.prefix(300), as: UTF8.self))")
            }
            cursor = Scan.string(after: "\"cursor\":\"", in: reply)
            if ids.count < 5000 { ids += Scan.all(after: "{\"id\":\"", in: reply) }
        }
        return (lat, ids)
    }

    /// Get of `ids`, one call at a time. - Returns: the latency of each call.
    func gets(_ ids: [String], count: Int) throws -> Latencies {
        let client = try RawClient(path: socket)
        var lat = Latencies()
        guard !ids.isEmpty else { return lat }
        for i in 0..<count {
            let call = VarlinkCall(.entriesGet, parameters: .object([("id", .string(ids[i % ids.count]))])).encoded
            let t = now()
            try client.send(call)
            let reply = try client.receive()
            lat.add(now() - t)
            if RawClient.isError(reply) { throw BenchFailure("Get failed") }
        }
        return lat
    }

    /// Reads the whole change log with `Changes` in pages of 10,000.
    /// - Returns: (changes read, changes per second).
    func readChanges() throws -> (count: Int, rate: Double) {
        let client = try RawClient(path: socket)
        var since: Int64 = 0
        var count = 0
        let t0 = now()
        while true {
            let call = VarlinkCall(
                .syncChanges,
                parameters: .object([("since", .int(since)), ("limit", .int(10_000))])
            ).encoded
            try client.send(call)
            let reply = try client.receive()
            if RawClient.isError(reply) { throw BenchFailure("Changes failed") }
            guard let last = Scan.int(after: "\"last\":", in: reply) else {
                throw BenchFailure("Changes reply without last")
            }
            if last == since { break }
            count += Int(last - since)
            since = last
        }
        return (count, Double(count) / (now() - t0))
    }

    /// `SyncPeer` on this daemon with the daemon at `peerSocket`.
    /// - Returns: changes pulled and the time it took, in seconds.
    func syncFrom(_ peerSocket: String) throws -> (pulled: Int, seconds: Double) {
        let client = try RawClient(path: socket)
        let t0 = now()
        let r = try client.call(.syncSyncPeer, .object([("peer", .string("unix:" + peerSocket))]))
        return (Int(r["pulled"]?.intValue ?? 0), now() - t0)
    }

    /// Incremental sync, `times` over: one Add here, then `SyncPeer` from this
    /// daemon on `target`, which must pull exactly that change.
    /// - Returns: the median seconds of the `SyncPeer` calls (one call is at the
    ///   mercy of a checkpoint or a busy disk; the median is the typical cost).
    /// - Throws: ``BenchFailure`` when a sync pulls other than one change.
    func incrementalSyncs(to target: DaemonWorkload, times: Int) throws -> Double {
        var seconds: [Double] = []
        for _ in 0..<times {
            let client = try RawClient(path: socket)
            try client.send(Fixture.addCall(counter.next()))
            guard !RawClient.isError(try client.receive()) else {
                throw BenchFailure("Add failed before an incremental sync")
            }
            let r = try target.syncFrom(socket)
            guard r.pulled == 1 else { throw BenchFailure("incremental sync pulled \(r.pulled) changes") }
            seconds.append(r.seconds)
        }
        return seconds.sorted()[seconds.count / 2]
    }

    /// The `Status` reply.
    func status() throws -> JSON { try RawClient(path: socket).call(.syncStatus) }

    /// One Add with a phone number and one with an e-mail address (the fixture
    /// alternates them), then one List page: the libraries an ordinary day uses
    /// (libphonenumber, libidn2, ICU) are then loaded and initialised.
    /// - Throws: ``BenchFailure`` when an Add fails.
    func useEveryLibrary() throws {
        let client = try RawClient(path: socket)
        var kinds: Set<String> = []
        while kinds.count < 2 {
            let n = counter.next()
            let kind = Fixture.fields(n)["contact_method"] ?? ""
            guard !kinds.contains(kind) else { continue }
            try client.send(Fixture.addCall(n))
            guard !RawClient.isError(try client.receive()) else {
                throw BenchFailure("an Add failed after the restart")
            }
            kinds.insert(kind)
        }
        _ = try listPages(1)
    }
}

/// A thread-safe counter of entry numbers.
final class Counter: Sendable {
    /// The last number handed out.
    private let n: Atomic<Int>
    /// A counter whose first number is `first + 1`.
    init(from first: Int = 0) { n = Atomic(first) }
    func next() -> Int { n.add(1, ordering: .relaxed).newValue }
    /// Reserves `count` numbers. - Returns: their range.
    func reserve(_ count: Int) -> Range<Int> {
        let end = n.add(count, ordering: .relaxed).newValue
        return (end - count + 1)..<(end + 1)
    }
}

/// Byte scans of encoded replies (the bench avoids decoding whole replies).
enum Scan {
    /// The JSON string text right after the first `marker` (no escapes expected).
    static func string(after marker: String, in bytes: ArraySlice<UInt8>) -> String? {
        all(after: marker, in: bytes, limit: 1).first
    }

    /// The string after each `marker`, at most `limit`.
    static func all(after marker: String, in bytes: ArraySlice<UInt8>, limit: Int = .max) -> [String] {
        let m = Array(marker.utf8)
        var out: [String] = []
        var i = bytes.startIndex
        while i + m.count < bytes.endIndex, out.count < limit {
            if bytes[i] == m[0], bytes[i..<(i + m.count)].elementsEqual(m) {
                let s = i + m.count
                guard let e = bytes[s...].firstIndex(of: UInt8(ascii: "\"")) else { break }
                out.append(String(decoding: bytes[s..<e], as: UTF8.self))
                i = e
            }
            i += 1
        }
        return out
    }

    /// The integer after the last `marker`.
    static func int(after marker: String, in bytes: ArraySlice<UInt8>) -> Int64? {
        let m = Array(marker.utf8)
        var i = bytes.endIndex - m.count
        while i >= bytes.startIndex {
            if bytes[i..<(i + m.count)].elementsEqual(m) {
                var j = i + m.count
                var v: Int64 = 0
                while j < bytes.endIndex, bytes[j] >= 48, bytes[j] <= 57 {
                    v = v * 10 + Int64(bytes[j] - 48)
                    j += 1
                }
                return v
            }
            i -= 1
        }
        return nil
    }
}
