import EntryModel
import EntryLedger
import EntryProtocol
import Foundation
import Testing

/// Issue 16: the re-spelling pass over stored phones and e-mails under new
/// library rules runs after entryd serves (READY), a page at a time, and a
/// stop part-way leaves nothing half done: the next start goes on.
@Suite(.serialized) struct StoredValuesPassTests {
    /// A database as an entryd with older rules left it: `count` entries whose
    /// phones keep the trunk 0 after +49, and the rules of its last pass.
    func oldDatabase(count: Int) throws -> String {
        let directory = NSTemporaryDirectory() + "entryd-respell-" + String(UUID().uuidString.prefix(8))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try EntryStore(path: directory + "/entries.db", readers: 1)
        defer { store.close() }
        let rows = (0..<count).map { i in
            ImportRow(
                index: i, id: nil,
                fields: [
                    "name": "用户\(i)", "birthday": "1990-05-17", "country": "DE",
                    "contact_method": "phone", "phone": String(format: "+4901512%07d", i),
                ],
                deleted: false, problems: [])
        }
        #expect(
            try store.importEntries(
                form: "registration", rows: rows, layout: .registration, atomic: true,
                origin: WriteOrigin(actor: "seed")
            ).added == count)
        try store.setNodeValue("canonical_rules", "phonenumber 8.12.0, idn2 2.3.0")
        return directory
    }

    /// The entries of `d` as `List` gives them, oldest first, with their phones.
    func phones(_ d: Daemon) throws -> [String: String] {
        let c = try d.connect()
        defer { c.close() }
        var phones: [String: String] = [:]
        var cursor: JSON = .null
        repeat {
            var parameters: [(String, JSON)] = [("limit", .int(1000)), ("order", .string("created"))]
            if cursor != .null { parameters.append(("cursor", cursor)) }
            let page = try c.call("io.entryd.Entries.List", .object(parameters))
            for e in page["entries"]?.arrayValue ?? [] {
                phones[e["id"]?.stringValue ?? ""] = e["fields"]?["phone"]?.stringValue
            }
            cursor = page["cursor"] ?? .null
        } while cursor != .null
        return phones
    }

    @Test(
        "the pass runs after entryd listens; stopped part-way, the next start finishes it; each value is re-spelled once, by entryd:migration"
    )
    func passAfterReadyAndResumed() throws {
        let count = 3_000
        let directory = try oldDatabase(count: count)
        let d = try Daemon(directory: directory)
        // Stop while it works: SIGTERM ends the pass after the page in hand.
        usleep(300_000)
        #expect(d.stop() == 0)
        let log = try String(contentsOfFile: d.logPath, encoding: .utf8)
        let listening = try #require(log.range(of: "listening on"))
        let began = try #require(log.range(of: "re-spelling stored phones and e-mails under"))
        #expect(listening.lowerBound < began.lowerBound, "the pass began before entryd listened")
        #expect(log.contains("re-spelling stopped after"), "the pass was not stopped part-way: \(log)")
        try d.start()
        defer { d.stop() }
        let deadline = Date().addingTimeInterval(120)
        var done = false
        while Date() < deadline, !done {
            done = (try? String(contentsOfFile: d.logPath, encoding: .utf8))?.contains("re-spelled") == true
            if !done { usleep(100_000) }
        }
        #expect(done, "the pass did not finish")
        let phones = try phones(d)
        #expect(phones.count == count)
        #expect(phones.values.allSatisfy { $0.hasPrefix("+491512") && $0.count == 14 }, "a phone kept its old spelling")
        // Once each: the changes by entryd:migration are one per entry.
        let c = try d.connect()
        defer { c.close() }
        var migrations = 0
        var since: Int64 = 0
        while true {
            let page = try c.call("io.entryd.Sync.Changes", .object([("since", .int(since)), ("limit", .int(1000))]))
            let changes = page["changes"]?.arrayValue ?? []
            migrations += changes.filter { $0["actor"]?.stringValue == WriteOrigin.migrationActor }.count
            guard let last = changes.last?["seq"]?.intValue, !changes.isEmpty else { break }
            since = last
        }
        #expect(migrations == count)
        // The rules are recorded: a third start reads nothing again.
        d.stop()
        try d.start()
        usleep(500_000)
        let again = try String(contentsOfFile: d.logPath, encoding: .utf8)
        #expect(
            again.components(separatedBy: "re-spelling stored phones and e-mails under").count == 3,
            "a start after a finished pass read the entries again")
    }
}
