import Foundation
import Testing
@testable import EntryHub
import EntryModel

/// The node's clock in `change_counter` (issue 19 item 2): the rule every
/// instance stamps by, and schema migration 2 that put the clock there.
/// (HubInstancesTests checks the stamps of instances writing at once.)
@Suite struct ChangeFeedHLCTests {
    static func storedHLC(_ c: PGConnection) throws -> HLC {
        HLC(rawValue: UInt64(try c.execute("SELECT hlc FROM change_counter").rows[0][0]!)!)
    }

    @Test("HybridClock.successor is tick's rule: max(last + 1, wall << 16) in packed values")
    func successor() {
        let now = HybridClock.systemMilliseconds()
        for _ in 0..<1000 {
            let last = HLC(
                milliseconds: now + UInt64.random(in: 0...3),
                counter: [0, 1, .max - 1, .max, .random(in: 0 ... .max)].randomElement()!)
            let wall = now + UInt64.random(in: 0...4)
            var clock = HybridClock(last: last, wallClock: { wall })
            let next = HybridClock.successor(of: last, wall: wall)
            #expect(clock.tick() == next)
            #expect(next.rawValue == max(last.rawValue + 1, wall << 16))
            #expect(HLC(rawValue: next.rawValue) == next)
        }
    }

    @Test("migration 2 applies once on a database at version 1, from the stamps already there, and is idempotent")
    func migration2() throws {
        let db = try TestPostgresDatabase()
        let c = try db.connect()
        #expect(try PostgresSchema.migrate(c, to: 1) == 0)
        #expect(try PostgresSchema.version(c) == 1)
        #expect(
            try c.execute(
                "SELECT count(*) FROM information_schema.columns WHERE table_name = 'change_counter' AND column_name = 'hlc'"
            ).rows == [["0"]])
        // A version-1 database with history: the node's last observed stamp and the log.
        let nodeHLC = HLC(milliseconds: 1_800_000_000_000, counter: 4)
        let logHLC = HLC(milliseconds: 1_800_000_000_123, counter: 2)
        try c.execute("INSERT INTO node (key, value) VALUES ('hlc', $1)", [nodeHLC.description])
        for (i, h) in ["0000000000000001", logHLC.description, "0000000000000002"].enumerated() {
            try c.execute(
                """
                INSERT INTO changes (seq, node, hlc, entry, form, op, fields, base, actor, at)
                VALUES ($1, 'n', $2, $3, 'f', 'create', '{}', '{}', 't', '2026-01-01T00:00:00.000Z')
                """, [String(i + 1), h, "e\(i)"])
        }
        try c.execute("UPDATE change_counter SET seq = 3")
        #expect(try PostgresSchema.migrate(c, to: 2) == 1)
        #expect(try PostgresSchema.version(c) == 2)
        #expect(try Self.storedHLC(c) == logHLC)
        #expect(try c.execute("SELECT seq FROM change_counter").rows == [["3"]])
        // Again: nothing happens, the clock keeps its place.
        #expect(try PostgresSchema.migrate(c, to: 2) == 2)
        #expect(try PostgresSchema.migrate(c, to: 1) == 2)
        #expect(try PostgresSchema.version(c) == 2)
        #expect(try Self.storedHLC(c) == logHLC)
        #expect(
            try c.execute(
                "SELECT count(*) FROM information_schema.columns WHERE table_name = 'change_counter' AND column_name = 'hlc'"
            ).rows == [["1"]])
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
