import Foundation
import Testing
@testable import EntryHub
import EntryModel

/// `ChangeFeed.reserve`: HLC stamps from `change_counter`, one clock for every
/// instance on the database (issue 19 item 2), and schema migration 2.
@Suite struct ChangeFeedHLCTests {
    /// Reserves `count` in a transaction of its own on `c`.
    static func reserve(_ count: Int, observed: HLC = .zero, wall: UInt64 = HybridClock.systemMilliseconds(),
                        on c: PGConnection) throws -> ChangeFeed.Reservation {
        try c.transaction { c in try ChangeFeed.reserve(count, observed: observed, wall: wall, on: c) }
    }

    static func storedHLC(_ c: PGConnection) throws -> HLC {
        HLC(rawValue: UInt64(try c.execute("SELECT hlc FROM change_counter").rows[0][0]!)!)
    }

    @Test("HybridClock.successor is tick's rule: max(last + 1, wall << 16) in packed values")
    func successor() {
        let now = HybridClock.systemMilliseconds()
        for _ in 0..<1000 {
            let last = HLC(milliseconds: now + UInt64.random(in: 0...3), counter: [0, 1, .max - 1, .max, .random(in: 0 ... .max)].randomElement()!)
            let wall = now + UInt64.random(in: 0...4)
            var clock = HybridClock(last: last, wallClock: { wall })
            let next = HybridClock.successor(of: last, wall: wall)
            #expect(clock.tick() == next)
            #expect(next.rawValue == max(last.rawValue + 1, wall << 16))
            #expect(HLC(rawValue: next.rawValue) == next)
        }
    }

    @Test("instances reserving concurrently: every HLC unique, by seq strictly increasing", arguments: [2, 4])
    func concurrentInstances(instances: Int) throws {
        let db = try TestPostgresDatabase()
        let setup = try db.connect()
        try PostgresSchema.migrate(setup)
        let got = Locked<[(seq: Int64, hlc: HLC)]>([])
        let errors = Locked<[String]>([])
        let transactions = Locked(0)
        let deadline = Date(timeIntervalSinceNow: 2)
        runThreads(instances) { _ in
            do {
                let c = try db.connect()
                var mine: [(seq: Int64, hlc: HLC)] = []
                var n = 0
                while Date() < deadline {
                    let r = try Self.reserve(Int.random(in: 1...20), on: c)
                    if r.hlcs.count != r.seqs.count { errors.with { $0.append("\(r.hlcs.count) stamps for \(r.seqs)") } }
                    mine += zip(r.seqs, r.hlcs).map { (seq: $0, hlc: $1) }
                    n += 1
                }
                got.with { $0 += mine }
                transactions.with { $0 += n }
            } catch { errors.with { $0.append("\(error)") } }
        }
        #expect(errors.value == [])
        let all = got.value.sorted { $0.seq < $1.seq }
        #expect(all.count > instances * 10, "only \(all.count) stamps in \(transactions.value) transactions")
        #expect(all.map(\.seq) == Array(1...Int64(all.count)), "seqs consecutive from 1")
        #expect(Set(all.map(\.hlc)).count == all.count, "every HLC unique")
        let notIncreasing = zip(all, all.dropFirst()).filter { !($0.hlc < $1.hlc) }
        #expect(notIncreasing.isEmpty, "by seq, HLCs strictly increase: \(notIncreasing.prefix(3))")
        #expect(try Self.storedHLC(setup) == all.last?.hlc)
        print("ChangeFeedHLCTests: \(instances) instances, \(transactions.value) reservations, \(all.count) stamps in 2 s")
    }

    @Test("an instance whose wall clock is behind still stamps above the last stored; the rule is HybridClock's")
    func wallClockBehind() throws {
        let db = try TestPostgresDatabase()
        let a = try db.connect(), b = try db.connect()
        try PostgresSchema.migrate(a)
        let now = HybridClock.systemMilliseconds()
        // Instance a's clock runs ten minutes ahead.
        let ahead = try Self.reserve(3, wall: now + 600_000, on: a)
        #expect(ahead.seqs == 1...3)
        #expect(ahead.hlcs == [0, 1, 2].map { HLC(milliseconds: now + 600_000, counter: $0) })
        // Instance b's clock is right, then an hour behind: its stamps follow a's.
        for wall in [now, now - 3_600_000] {
            let before = try Self.storedHLC(b)
            let r = try Self.reserve(4, wall: wall, on: b)
            #expect(r.hlcs.allSatisfy { $0 > before })
            #expect(r.hlcs.first == HLC(rawValue: before.rawValue + 1))
            var clock = HybridClock(last: before, wallClock: { wall })
            #expect(r.hlcs == (0..<4).map { _ in clock.tick() })
            #expect(try Self.storedHLC(a) == r.hlcs.last)
        }
        // A full counter carries into the next millisecond, as HybridClock does.
        try a.execute("UPDATE change_counter SET hlc = $1",
                      [String(HLC(milliseconds: now + 700_000, counter: .max - 1).rawValue)])
        let carry = try Self.reserve(3, wall: now, on: b)
        #expect(carry.hlcs == [HLC(milliseconds: now + 700_000, counter: .max),
                               HLC(milliseconds: now + 700_001, counter: 0), HLC(milliseconds: now + 700_001, counter: 1)])
        // A wall clock past the last stored starts a new millisecond at counter 0.
        let later = try Self.reserve(2, wall: now + 800_000, on: b)
        #expect(later.hlcs == [HLC(milliseconds: now + 800_000, counter: 0), HLC(milliseconds: now + 800_000, counter: 1)])
        #expect(later.seqs == 15...16)
    }

    @Test("a remote HLC ahead of wall time lifts the next stamps above it, here and on other instances")
    func observedRemote() throws {
        let db = try TestPostgresDatabase()
        let a = try db.connect(), b = try db.connect()
        try PostgresSchema.migrate(a)
        let now = HybridClock.systemMilliseconds()
        _ = try Self.reserve(2, wall: now, on: a)
        let remote = HLC(milliseconds: now + 90_000, counter: 7)
        let r = try Self.reserve(3, observed: remote, wall: now, on: a)
        #expect(r.hlcs == [8, 9, 10].map { HLC(milliseconds: now + 90_000, counter: $0) })
        var clock = HybridClock(last: HLC(milliseconds: now, counter: 1), wallClock: { now })
        clock.observe(remote)
        #expect(r.hlcs == (0..<3).map { _ in clock.tick() })
        // Another instance, which never saw the remote stamp, stamps after it.
        let next = try Self.reserve(1, wall: now, on: b)
        #expect(next.hlcs == [HLC(milliseconds: now + 90_000, counter: 11)])
        // An observed stamp below the stored last changes nothing.
        let low = try Self.reserve(1, observed: HLC(milliseconds: now, counter: 5), wall: now, on: b)
        #expect(low.hlcs == [HLC(milliseconds: now + 90_000, counter: 12)])
        // A peer's row appended to the log moves the clock past its stamp.
        let peers = HLC(milliseconds: now + 120_000, counter: 3)
        try a.transaction { c in
            try ChangeFeed.append([ChangeFeed.Row(node: "peer", hlc: peers.description, entry: "e", form: "f", op: "create",
                                                  fields: "{}", base: "{}", actor: "t", at: "2026-01-01T00:00:00.000Z", via: "peer")],
                                  on: c)
        }
        #expect(try Self.storedHLC(b) == peers)
        #expect(try Self.reserve(1, wall: now, on: b).hlcs == [HLC(milliseconds: now + 120_000, counter: 4)])
        #expect(try ChangeFeed.committedSeq(on: a) == 9)
    }

    @Test("migration 2 applies once on a database at version 1, from the stamps already there, and is idempotent")
    func migration2() throws {
        let db = try TestPostgresDatabase()
        let c = try db.connect()
        #expect(try PostgresSchema.migrate(c, to: 1) == 0)
        #expect(try PostgresSchema.version(c) == 1)
        #expect(try c.execute("SELECT count(*) FROM information_schema.columns WHERE table_name = 'change_counter' AND column_name = 'hlc'").rows == [["0"]])
        // A version-1 database with history: the node's last observed stamp and the log.
        let nodeHLC = HLC(milliseconds: 1_800_000_000_000, counter: 4)
        let logHLC = HLC(milliseconds: 1_800_000_000_123, counter: 2)
        try c.execute("INSERT INTO node (key, value) VALUES ('hlc', $1)", [nodeHLC.description])
        // (The rows by hand: ChangeFeed.append needs migration 2.)
        for (i, h) in ["0000000000000001", logHLC.description, "0000000000000002"].enumerated() {
            try c.execute("""
                INSERT INTO changes (seq, node, hlc, entry, form, op, fields, base, actor, at)
                VALUES ($1, 'n', $2, $3, 'f', 'create', '{}', '{}', 't', '2026-01-01T00:00:00.000Z')
                """, [String(i + 1), h, "e\(i)"])
        }
        try c.execute("UPDATE change_counter SET seq = 3")
        #expect(try PostgresSchema.migrate(c) == 1)
        #expect(try PostgresSchema.version(c) == 2)
        #expect(try Self.storedHLC(c) == logHLC)
        #expect(try c.execute("SELECT seq FROM change_counter").rows == [["3"]])
        // Again: nothing happens, the clock keeps its place.
        let r = try Self.reserve(2, wall: 1_700_000_000_000, on: c)
        #expect(r.hlcs.first == HLC(rawValue: logHLC.rawValue + 1))
        #expect(try PostgresSchema.migrate(c) == 2)
        #expect(try PostgresSchema.migrate(c, to: 1) == 2)
        #expect(try PostgresSchema.version(c) == 2)
        #expect(try Self.storedHLC(c) == r.hlcs.last)
        #expect(try c.execute("SELECT count(*) FROM information_schema.columns WHERE table_name = 'change_counter' AND column_name = 'hlc'").rows == [["1"]])
        // The node table's stamp counts when it is the greatest.
        let other = try TestPostgresDatabase()
        let d = try other.connect()
        try PostgresSchema.migrate(d, to: 1)
        try d.execute("INSERT INTO node (key, value) VALUES ('hlc', $1)", [nodeHLC.description])
        try PostgresSchema.migrate(d)
        #expect(try Self.storedHLC(d) == nodeHLC)
        // A new database starts at zero.
        let fresh = try TestPostgresDatabase()
        let e = try fresh.connect()
        try PostgresSchema.migrate(e)
        #expect(try Self.storedHLC(e) == .zero)
    }
}
