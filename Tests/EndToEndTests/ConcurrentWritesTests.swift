import EntryModel
import EntryProtocol
import Foundation
import Synchronization
import Testing

/// Writes that read what they change, made at once over several connections
/// to one SQLite entryd (issue 30 item 1; the same cases over two hub
/// instances are ReadModifyWriteTests'): an `ifVersion` passes once per
/// version, a field group is never written back stale, an id is created once.
@Suite struct ConcurrentWritesTests {
    /// Runs `body(t)` on `n` threads at once and waits for all.
    func onThreads(_ n: Int, _ body: @escaping @Sendable (Int) -> Void) {
        DispatchQueue.concurrentPerform(iterations: n, execute: body)
    }

    /// A valid registration with `changes` over it.
    func fields(_ changes: [String: String]) -> JSON {
        .stringMap(
            [
                "name": "并发", "birthday": "2000-01-01", "country": "DE", "contact_method": "email",
                "email": "p@example.de",
            ]
            .merging(changes) { $1 })
    }

    /// The counter an email `c<N>@example.de` holds.
    static func counter(_ email: String?) -> Int {
        Int(email?.dropFirst().prefix { $0 != "@" } ?? "") ?? -1000
    }

    @Test(
        "compare-and-set increments from four connections: the final counter is the number of acknowledged increments")
    func compareAndSet() throws {
        let d = try Daemon()
        let setup = try d.connect()
        let id = try #require(
            try setup.call("io.entryd.Entries.Add", .object([("fields", fields(["email": "c0@example.de"]))]))[
                "entry"]?["id"]?.stringValue)
        let acknowledged = Mutex(0)
        let errors = Mutex<[String]>([])
        onThreads(4) { t in
            guard let c = try? d.connect() else {
                errors.withLock { $0.append("connect") }
                return
            }
            for _ in 0..<25 {
                do {
                    let entry = try c.call("io.entryd.Entries.Get", .object([("id", .string(id))]))["entry"]
                    let n = Self.counter(entry?["fields"]?["email"]?.stringValue)
                    _ = try c.call(
                        "io.entryd.Entries.Update",
                        .object([
                            ("id", .string(id)), ("fields", .stringMap(["email": "c\(n + 1)@example.de"])),
                            ("ifVersion", entry?["version"] ?? .null),
                        ]))
                    acknowledged.withLock { $0 += 1 }
                } catch let e as WireError where e.name == "io.entryd.Entries.VersionMismatch" {
                    continue  // another connection's increment came first: read again
                } catch {
                    errors.withLock { $0.append("\(t): \(error)") }
                }
            }
        }
        #expect(errors.withLock { $0 } == [])
        let count = acknowledged.withLock { $0 }
        #expect(count >= 25, "at least one connection's worth of increments succeeded: \(count)")
        let final = try setup.call("io.entryd.Entries.Get", .object([("id", .string(id))]))["entry"]?["fields"]?[
            "email"]?.stringValue
        #expect(Self.counter(final) == count, "acknowledged \(count), stored \(final ?? "nil")")
        let history =
            try setup.call("io.entryd.Entries.History", .object([("id", .string(id))]))["changes"]?.arrayValue ?? []
        #expect(history.filter { $0["op"]?.stringValue == "update" }.count == count)
        #expect(d.stop() == 0)
    }

    @Test(
        "one id sent to Add over four connections at once: created once; the same values answer as the retry they are, others EntryExists"
    )
    func sameIdAdded() throws {
        let d = try Daemon()
        for round in 0..<5 {
            let id = UUIDv7.generate(milliseconds: UInt64(Date().timeIntervalSince1970 * 1000))
            let outcomes = Mutex<[String]>([])
            onThreads(4) { t in
                // Threads 0 and 1 send the same values, 2 and 3 others of their own.
                let name = t < 2 ? "同一个\(round)" : "另一个\(round)-\(t)"
                do {
                    let c = try d.connect()
                    let e = try c.call(
                        "io.entryd.Entries.Add", .object([("id", .string(id)), ("fields", fields(["name": name]))]))
                    outcomes.withLock { $0.append("stored \(e["entry"]?["fields"]?["name"]?.stringValue ?? "")") }
                } catch let e as WireError {
                    outcomes.withLock { $0.append(e.name) }
                } catch {
                    outcomes.withLock { $0.append("\(error)") }
                }
            }
            let c = try d.connect()
            let stored = try #require(
                try c.call("io.entryd.Entries.Get", .object([("id", .string(id))]))["entry"]?["fields"]?["name"]?
                    .stringValue)
            let seen = outcomes.withLock { $0 }
            // Every caller told "stored" holds the stored values; every other one got EntryExists.
            #expect(
                seen.filter { $0.hasPrefix("stored ") }.allSatisfy { $0 == "stored \(stored)" },
                "\(seen), stored \(stored)")
            #expect(
                seen.filter { !$0.hasPrefix("stored ") }.allSatisfy { $0 == "io.entryd.Entries.EntryExists" }, "\(seen)"
            )
            #expect(seen.count == 4)
            let history =
                try c.call("io.entryd.Entries.History", .object([("id", .string(id))]))["changes"]?.arrayValue ?? []
            #expect(history.map { $0["op"]?.stringValue } == ["create"], "one create: \(history)")
        }
        #expect(d.stop() == 0)
    }

    @Test(
        "two field groups of one entry written at once over two connections: each holds its last acknowledged value, no conflict"
    )
    func disjointGroups() throws {
        let d = try Daemon()
        let setup = try d.connect()
        let id = try #require(
            try setup.call(
                "io.entryd.Entries.Add", .object([("fields", fields(["name": "名-1", "email": "e-1@x.cn"]))]))["entry"]?[
                    "id"]?.stringValue)
        let last = Mutex<[String: String]>([:])
        let errors = Mutex<[String]>([])
        onThreads(2) { t in
            let field = t == 0 ? "name" : "email"
            guard let c = try? d.connect() else {
                errors.withLock { $0.append("connect") }
                return
            }
            for i in 0..<40 {
                let value = t == 0 ? "名\(i)" : "e\(i)@x.cn"
                do {
                    _ = try c.call(
                        "io.entryd.Entries.Update",
                        .object([("id", .string(id)), ("fields", .stringMap([field: value]))]))
                    last.withLock { $0[field] = value }
                } catch {
                    errors.withLock { $0.append("\(field): \(error)") }
                }
            }
        }
        #expect(errors.withLock { $0 } == [])
        let final = try setup.call("io.entryd.Entries.Get", .object([("id", .string(id))]))["entry"]?["fields"]
        let expected = last.withLock { $0 }
        #expect(
            final?["name"]?.stringValue == expected["name"] && final?["email"]?.stringValue == expected["email"],
            "expected \(expected), stored \(final ?? .null)")
        #expect(
            try setup.call("io.entryd.Sync.ListConflicts", .object([("entry", .string(id))]))["conflicts"]?.arrayValue?
                .isEmpty == true)
        #expect(d.stop() == 0)
    }
}
