import Foundation
import Testing
@testable import EntryLedger
@testable import EntryModel
@testable import EntrySync

/// `Changes` pages written straight from the change log (``ChangeWire``,
/// ``EntryStore/wireChanges(since:limit:excludeNode:excludeSince:)``) are the
/// bytes `ChangeRecord.json` gives for the same rows, whatever the rows hold.
@Suite struct ChangeWireTests {
    let layout = FieldLayout.registration

    /// Changes of every op and shape: values with quotes, backslashes and
    /// non-ASCII text (stored with escapes, so read the slow way), a reason, a
    /// peer's change with `superseded`, a delete and a restore, and an erased
    /// entry (of which only the erase is served).
    func fill(_ store: EntryStore) throws -> String {
        let plain = try store.create(
            form: "f", id: nil, fields: ["name": "王芳", "email": "wf@example.com"], layout: layout,
            origin: WriteOrigin(actor: "tester")
        ).entry
        let quoted = try store.create(
            form: "f", id: nil, fields: ["name": #"O"Brien \ 🇫🇷"#], layout: layout,
            origin: WriteOrigin(actor: #"web:"ada""#, reason: #"typo "fixed""#)
        ).entry
        _ = try store.update(
            id: plain.id, ifVersion: nil, layout: layout, origin: WriteOrigin(actor: "tester", reason: "moved")
        ) { _ in ["name": "王芳芳", "email": ""] }
        _ = try store.delete(id: quoted.id, ifVersion: nil, layout: layout, origin: WriteOrigin(actor: "tester"))
        _ = try store.restore(id: quoted.id, layout: layout, origin: WriteOrigin(actor: "tester"))
        let now = HybridClock.systemMilliseconds()
        let peer = UUIDv7.generate()
        let remote = ChangeRecord(
            seq: 0, node: peer, hlc: HLC(milliseconds: now, counter: 1), entry: UUIDv7.generate(milliseconds: now),
            form: "f", op: .create, fields: ["name": "远端", "phone": "+8613800000001"],
            base: ["name": "", "phone": ""], actor: "x", at: Timestamp.rfc3339(milliseconds: now), reason: nil,
            via: nil, superseded: ["name", "phone"])
        _ = try store.apply([remote], via: "peer", layout: { _ in self.layout }, maxClockSkewMs: 60_000)
        let erased = try store.create(
            form: "f", id: nil, fields: ["name": "要删除"], layout: layout, origin: WriteOrigin(actor: "tester")
        ).entry
        _ = try store.erase(id: erased.id, origin: WriteOrigin(actor: "tester", reason: "asked to be forgotten"))
        return peer
    }

    @Test("each served change is the bytes of its ChangeRecord's wire form", arguments: StoreKind.allCases)
    func sameBytes(kind: StoreKind) throws {
        let db = TestDatabase()
        let store = try kind.open(db)
        defer { store.close() }
        let peer = try fill(store)
        for (exclude, limit): (String?, Int) in [(nil, 1000), (peer, 1000), (nil, 3), (store.nodeID, 2)] {
            var since: Int64 = 0
            var pages = 0
            while true {
                let records = try store.changes(since: since, limit: limit, excludeNode: exclude, excludeSince: .zero)
                let wire = try store.wireChanges(since: since, limit: limit, excludeNode: exclude, excludeSince: .zero)
                #expect(wire.last == records.last)
                #expect(wire.changes.count == records.changes.count)
                #expect(
                    JSON.array(wire.changes).text == JSON.array(records.changes.map(\.json)).text,
                    "exclude \(exclude ?? "-") limit \(limit) since \(since)")
                // What a peer reads back from the bytes is the change it would have read.
                for (bytes, record) in zip(wire.changes, records.changes) {
                    let parsed = try ChangeRecord(json: try JSON.parse(bytes.encoded))
                    #expect(parsed.entry == record.entry && parsed.fields == record.fields)
                    #expect(parsed.base == record.base && parsed.superseded == record.superseded)
                }
                if records.last == since { break }
                since = records.last
                pages += 1
            }
            #expect(pages >= 1)
        }
        let all = try store.wireChanges(since: 0, limit: 1000, excludeNode: nil, excludeSince: .zero).changes
        let text = JSON.array(all).text
        #expect(text.contains(#""reason":"typo \"fixed\"""#) && text.contains(#""superseded":["name","phone"]"#))
        #expect(text.contains(#"O\"Brien \\ 🇫🇷"#) && !text.contains("要删除") && text.contains(#""op":"erase""#))
    }

    @Test("a stored map is copied only when it is a plain object of strings")
    func plainMaps() {
        func plain(_ text: String) -> Bool {
            var text = text
            return text.withUTF8 { ChangeWire.isPlainStringMap($0) }
        }
        for text in ["{}", " { } ", #"{"a":"1","b":""}"#, #"{ "a" : "王" }"#, #"{"name":"用户1","ab":"x"}"#] {
            #expect(plain(text), "\(text)")
        }
        for text in [
            "", "{", #"{"a":"1""#, #"{"a":"1","a":"2"}"#, #"{"a":"x\"y"}"#, #"{"a":1}"#, #"{"a":null}"#,
            #"{"a":"1"} x"#, #"{"a":"1",}"#, "{\"a\":\"x\ny\"}", #"["a"]"#, #"{"a":{"b":"c"}}"#, #"{"a" "1"}"#,
        ] {
            #expect(!plain(text), "\(text)")
        }
    }
}
