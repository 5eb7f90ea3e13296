import EntryModel
import EntryProtocol
import Foundation
import Synchronization

/// What every edge of one hub configuration shares: the instances' sockets,
/// the libraries to name in Apply, and the convergence samples.
final class HubContext: Sendable {
    /// The sockets of the configuration's entryd instances, in order.
    let sockets: [String]
    /// The edges in all.
    let edgeCount: Int
    /// `Status.libraries` of the first instance, sent with every Apply as a
    /// peer with the same libraries does (so the hub does not re-spell values).
    let libraries: JSON?
    /// One table per origin edge, indexed by the edge's sample number.
    let samples: [SampleTable]
    /// Every `sampleEvery`-th change of each edge is followed to every other edge.
    let sampleEvery = 10
    /// The `limit` of each `Changes` call.
    let pageLimit = 1000
    /// Changes acknowledged so far (for the progress lines).
    let acknowledged = Atomic(0)

    /// A context for `edgeCount` edges on the instances at `sockets`.
    init(sockets: [String], edgeCount: Int, libraries: JSON?) {
        self.sockets = sockets
        self.edgeCount = edgeCount
        self.libraries = libraries
        samples = (0..<edgeCount).map { _ in SampleTable(others: edgeCount - 1) }
    }
}

/// The convergence samples of one origin edge: for its sample `k` (its
/// change number `k × sampleEvery`), when the push was acknowledged, how many
/// other edges have still to pull it, and when the last of them did.
final class SampleTable: Sendable {
    private let others: Int32
    /// Per sample: when its push was acknowledged, the edges still to pull it, the last pull.
    private struct Samples {
        var acked: [Double] = []
        var remaining: [Int32] = []
        var lastSeen: [Double] = []
        var unexpected = 0
    }
    private let samples = Mutex(Samples())
    /// Pulls of a sample not registered (never expected: registration precedes the push).
    var unexpected: Int { samples.withLock { $0.unexpected } }

    /// A table whose samples each wait for `others` edges.
    init(others: Int) { self.others = Int32(others) }

    /// Registers sample `k` before its push is sent (another edge may pull it
    /// before the origin reads the acknowledgement).
    func register(_ k: Int) {
        samples.withLock { s in
            while s.acked.count <= k {
                s.acked.append(.nan)
                s.remaining.append(others)
                s.lastSeen.append(0)
            }
        }
    }

    /// Sample `k`'s push was acknowledged at `t` (monotonic seconds).
    func acknowledged(_ k: Int, at t: Double) {
        samples.withLock { $0.acked[k] = t }
    }

    /// Another edge pulled sample `k` at `t` (once per edge: the caller drops repeats).
    func pulled(_ k: Int, at t: Double) {
        samples.withLock { s in
            guard k < s.remaining.count else {
                s.unexpected += 1
                return
            }
            s.remaining[k] -= 1
            s.lastSeen[k] = max(s.lastSeen[k], t)
        }
    }

    /// For every sample that every other edge pulled: seconds from its
    /// acknowledgement to the last pull (0 when the last pull came first).
    var convergence: [Double] {
        samples.withLock { s in
            s.acked.indices.compactMap { k in
                s.remaining[k] == 0 && !s.acked[k].isNaN ? max(0, s.lastSeen[k] - s.acked[k]) : nil
            }
        }
    }
}

/// One simulated edge node: a peer client of the hub with its own node id
/// (a random UUIDv7) and HLC. It pushes its changes with
/// `io.entryd.Sync.Apply` (creates of registration entries, and every fourth
/// change an update of the name of one of its last entries) and pulls the
/// others' with `io.entryd.Sync.Changes` from its own cursor, excluding its
/// own node.
///
/// Each change's `actor` is `edge-ORIGIN-NUMBER`, so a puller knows which
/// change it received without a shared lookup; its view is a bitset per
/// origin edge, which tells a change received twice from one received once.
///
/// On a connection error (its instance was killed) it reconnects to the next
/// instance and repeats the call in flight with the same cursor, or the same
/// change (Apply is idempotent by node and HLC). A `Changes` reply naming
/// another incarnation than before would make its cursor meaningless: it then
/// reads again from 0 (a resync, counted), taking what it holds already as
/// held, not as duplicates.
///
/// An edge is driven by one worker thread at a time (the phases hand edges
/// over through a thread join).
final class HubEdge: @unchecked Sendable {
    // @unchecked: driven by one worker thread at a time, handed over through a thread join.
    /// Its number, 0 ..< edges (the ORIGIN of its changes' actor).
    let index: Int
    /// This edge's node id.
    let node: String
    /// The instance the edge was assigned (round robin).
    let home: Int
    /// The instance it talks to now.
    private(set) var instance: Int
    private var client: RawClient?
    private var clock = HybridClock()
    /// Its cursor: the `last` of its latest `Changes` reply.
    private(set) var cursor: Int64 = 0
    private var incarnation: String?
    /// Its changes acknowledged by the hub.
    private(set) var made = 0
    private var own: [(entry: String, name: HLC)] = []
    /// Per origin edge, bit `n` set once change `n` of that edge was pulled.
    private(set) var view: [[UInt64]]
    /// Other edges' changes it pulled for the first time (deliveries).
    private(set) var delivered = 0
    /// Changes pulled that it held already (outside a resync).
    private(set) var duplicates = 0
    /// Its own changes handed back despite `excludeNode`.
    private(set) var ownReturned = 0
    /// Changes pulled that no edge made (an actor not `edge-ORIGIN-NUMBER` of this run).
    private(set) var foreign = 0
    /// Times it read again from 0 because the incarnation changed.
    private(set) var resyncs = 0
    private var resyncing = false
    /// The last resync: the edge, its cursor, the instance and the two incarnations (for the report).
    private(set) var resyncSeen: String?
    /// Error replies retried (Apply or Changes).
    private(set) var retries = 0
    /// Pushes whose retry found the change already stored (skipped).
    private(set) var skippedRetries = 0
    /// Times it moved to another instance after a connection error.
    private(set) var reconnects = 0
    /// Calls sent, a call sent again after a connection error included.
    private var sends = 0

    /// Edge `index` of `edgeCount`, assigned to instance `home`, with a new random node id.
    init(index: Int, home: Int, edgeCount: Int) {
        self.index = index
        self.home = home
        instance = home
        node = UUIDv7.generate()
        view = Array(repeating: [], count: edgeCount)
    }

    /// Connects to its instance ahead of the timed phase.
    /// - Throws: ``SystemError`` when the instance does not accept.
    func connect(_ ctx: HubContext) throws {
        if client == nil { client = try RawClient(path: ctx.sockets[instance]) }
    }

    /// Hangs up (the instances stop after the run).
    func disconnect() { client = nil }

    /// Makes one change and pushes it until the hub acknowledges it.
    /// - Throws: ``BenchFailure`` when no instance answers or Apply keeps refusing it.
    func push(_ ctx: HubContext) throws {
        let number = made
        let hlc = clock.tick()
        let change: JSON
        let actor = "edge-\(index)-\(number)"
        if number % 4 == 3 && !own.isEmpty {
            let slot = (number / 4) % own.count
            let fields = ["name": "用户\(index * 1_000_000 + number) 改"]
            change = HubEdge.change(
                node: node, hlc: hlc, entry: own[slot].entry, op: "update", fields: fields,
                base: ["name": own[slot].name.description], actor: actor)
            own[slot].name = hlc
        } else {
            let entry = UUIDv7.generate(milliseconds: hlc.milliseconds)
            let fields = Fixture.fields(index * 1_000_000 + number)
            change = HubEdge.change(
                node: node, hlc: hlc, entry: entry, op: "create", fields: fields,
                base: fields.mapValues { _ in "" }, actor: actor)
            if own.count < 8 { own.append((entry, hlc)) } else { own[number % 8] = (entry, hlc) }
        }
        var parameters: [(String, JSON)] = [("changes", .array([change]))]
        if let libraries = ctx.libraries { parameters.append(("libraries", libraries)) }
        let call = VarlinkCall(.syncApply, parameters: .object(parameters)).encoded
        let sampled = number % ctx.sampleEvery == 0
        if sampled { ctx.samples[index].register(number / ctx.sampleEvery) }
        var refusals = 0
        let sendsBefore = sends
        while true {
            let reply = try exchange(call, ctx)
            if !RawClient.isError(reply) {
                let applied = Scan.int(after: "\"applied\":", in: reply) ?? -1
                let skipped = Scan.int(after: "\"skipped\":", in: reply) ?? -1
                guard applied + skipped == 1, applied >= 0, skipped >= 0 else {
                    throw BenchFailure(
                        "edge \(index): Apply of one change answered \(String(decoding: reply.prefix(300), as: UTF8.self))"
                    )
                }
                // A first attempt that skips means the change was stored before it was sent: never expected.
                if skipped == 1 && sends - sendsBefore == 1 {
                    throw BenchFailure(
                        "edge \(index): Apply skipped a change never sent before (node \(node), hlc \(hlc))")
                }
                if skipped == 1 { skippedRetries += 1 }
                break
            }
            try refused(&refusals, "Apply", reply: reply, ctx)
        }
        if sampled { ctx.samples[index].acknowledged(number / ctx.sampleEvery, at: now()) }
        made += 1
        ctx.acknowledged.add(1, ordering: .relaxed)
    }

    /// Counts a refused call (an error reply) and waits 20 ms before it is sent again.
    /// - Throws: ``BenchFailure`` on the 50th refusal of one call, with the last reply.
    private func refused(_ refusals: inout Int, _ what: String, reply: ArraySlice<UInt8>, _ ctx: HubContext) throws {
        refusals += 1
        retries += 1
        if refusals >= 50 {
            throw BenchFailure(
                "edge \(index): \(what) refused 50 times on \(ctx.sockets[instance]); last reply: "
                    + String(decoding: reply.prefix(300), as: UTF8.self))
        }
        usleep(20_000)
    }

    /// One `Changes` call from its cursor (`excludeNode`: its own node).
    /// - Returns: whether the cursor moved (false: nothing new).
    /// - Throws: ``BenchFailure`` when no instance answers, Changes keeps refusing, or the reply has no `last`.
    @discardableResult
    func pull(_ ctx: HubContext) throws -> Bool {
        let call = VarlinkCall(
            .syncChanges,
            parameters: .object([
                ("since", .int(cursor)), ("limit", .int(Int64(ctx.pageLimit))), ("excludeNode", .string(node)),
            ])
        ).encoded
        var refusals = 0
        var reply = try exchange(call, ctx)
        while RawClient.isError(reply) {
            try refused(&refusals, "Changes(since: \(cursor))", reply: reply, ctx)
            reply = try exchange(call, ctx)
        }
        let t = now()
        guard let last = Scan.int(after: "\"last\":", in: reply) else {
            throw BenchFailure(
                "edge \(index): Changes reply without last: \(String(decoding: reply.prefix(300), as: UTF8.self))")
        }
        if let seen = Scan.string(after: "\"incarnation\":\"", in: reply) {
            if let incarnation, incarnation != seen {
                // The seqs belong to another log now: read again from the start.
                resyncs += 1
                resyncSeen =
                    "edge \(index) at cursor \(cursor) on instance \(instance + 1): incarnation \(incarnation) → \(seen)"
                self.incarnation = seen
                cursor = 0
                resyncing = true
                return true
            }
            incarnation = seen
        }
        var count = 0
        HubEdge.scanActors(reply) { origin, number in
            count += 1
            guard origin < view.count, number >= 0 else {
                foreign += 1
                return
            }
            guard origin != index else {
                ownReturned += 1
                return
            }
            let word = number >> 6
            let bit = UInt64(1) << UInt64(number & 63)
            if view[origin].count <= word { view[origin] += Array(repeating: 0, count: word - view[origin].count + 1) }
            if view[origin][word] & bit != 0 {
                if !resyncing { duplicates += 1 }
                return
            }
            view[origin][word] |= bit
            delivered += 1
            if number % ctx.sampleEvery == 0 { ctx.samples[origin].pulled(number / ctx.sampleEvery, at: t) }
        }
        if let highest = HubEdge.highestHLC(reply) { clock.observe(HLC(rawValue: highest)) }
        if resyncing && count < ctx.pageLimit && last == cursor { resyncing = false }
        let moved = last != cursor
        cursor = last
        return moved
    }

    /// Sends `call` and reads its reply; on a connection error moves to the
    /// next instance and sends it again there.
    private func exchange(_ call: [UInt8], _ ctx: HubContext) throws -> ArraySlice<UInt8> {
        var failures = 0
        while true {
            do {
                if client == nil { client = try RawClient(path: ctx.sockets[instance]) }
                sends += 1
                try client!.send(call)
                return try client!.receive()
            } catch {
                client = nil
                failures += 1
                if failures > 3 * ctx.sockets.count {
                    throw BenchFailure(
                        "edge \(index): no instance answers (last tried \(ctx.sockets[instance]): \(error))")
                }
                if ctx.sockets.count > 1 {
                    instance = (instance + 1) % ctx.sockets.count
                    reconnects += 1
                }
                usleep(10_000)
            }
        }
    }

    /// The wire `Change` (io.entryd.Sync) of an edge's change; `seq` is left out (the hub assigns its own).
    static func change(
        node: String, hlc: HLC, entry: String, op: String, fields: [String: String],
        base: [String: String], actor: String
    ) -> JSON {
        .object([
            ("node", .string(node)), ("hlc", .string(hlc.description)), ("entry", .string(entry)),
            ("form", .string("registration")), ("op", .string(op)), ("fields", .stringMap(fields)),
            ("base", .stringMap(base)), ("actor", .string(actor)),
            ("at", .string(Timestamp.rfc3339(milliseconds: hlc.milliseconds))),
        ])
    }

    /// Calls `body(origin, number)` for each `"actor":"edge-ORIGIN-NUMBER"` in
    /// `reply`, and `body(-1, -1)` for an actor of another shape.
    static func scanActors(_ reply: ArraySlice<UInt8>, _ body: (Int, Int) -> Void) {
        let marker = Array("\"actor\":\"".utf8)
        let prefix = Array("edge-".utf8)
        var i = reply.startIndex
        let end = reply.endIndex
        while i + marker.count <= end {
            guard reply[i] == marker[0], reply[i..<(i + marker.count)].elementsEqual(marker) else {
                i += 1
                continue
            }
            var j = i + marker.count
            i = j
            guard j + prefix.count <= end, reply[j..<(j + prefix.count)].elementsEqual(prefix) else {
                body(-1, -1)
                continue
            }
            j += prefix.count
            func number() -> Int? {
                var v = 0
                var digits = 0
                while j < end, reply[j] >= 48, reply[j] <= 57 {
                    v = v * 10 + Int(reply[j] - 48)
                    j += 1
                    digits += 1
                }
                return digits > 0 ? v : nil
            }
            guard let origin = number(), j < end, reply[j] == UInt8(ascii: "-") else {
                body(-1, -1)
                i = j
                continue
            }
            j += 1
            guard let n = number(), j < end, reply[j] == UInt8(ascii: "\"") else {
                body(-1, -1)
                i = j
                continue
            }
            body(origin, n)
            i = j
        }
    }

    /// The highest `"hlc":"…"` (16 hex digits) in `reply`, or `nil`.
    static func highestHLC(_ reply: ArraySlice<UInt8>) -> UInt64? {
        let marker = Array("\"hlc\":\"".utf8)
        var best: UInt64?
        var i = reply.startIndex
        while i + marker.count + 16 <= reply.endIndex {
            guard reply[i] == marker[0], reply[i..<(i + marker.count)].elementsEqual(marker) else {
                i += 1
                continue
            }
            var v: UInt64 = 0
            var ok = true
            for b in reply[(i + marker.count)..<(i + marker.count + 16)] {
                switch b {
                case 48...57: v = v << 4 | UInt64(b - 48)
                case 97...102: v = v << 4 | UInt64(b - 87)
                case 65...70: v = v << 4 | UInt64(b - 55)
                default: ok = false
                }
            }
            if ok { best = max(best ?? 0, v) }
            i += marker.count + 16
        }
        return best
    }
}
