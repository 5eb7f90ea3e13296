import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryWeb

/// Free text reaches storage whole or not at all (doc/protocol.md "Free text"):
/// a `reason` with a control character or a line separator is refused with
/// ValidationFailed naming it, before anything is stored; Sync.Apply holds
/// values to what Add takes and refuses a NUL in a reason; below the service,
/// SQLite binds text whole and PostgreSQL refuses a NUL rather than cut it.
@Suite struct FreeTextTests {
    /// Calls the service in process as `role` and returns the reply or the wire error.
    static func call(_ service: EntryService, _ method: String, _ params: [(String, JSON)], role: Role = .admin)
        -> Result<JSON, WireError>
    {
        var replies: [VarlinkReply] = []
        let caller = Caller(pid: 1, uid: 0, gid: 0, userName: "tester", role: role)
        let context = CallContext(
            caller: caller, call: VarlinkCall(method: method, parameters: .object(params)),
            send: { replies.append($0) }, clientHungUp: { false })
        do {
            try service.handle(context)
        } catch {
            return .failure(WireError(mapping: error))
        }
        guard let r = replies.last else { return .failure(WireError(name: "no reply")) }
        if let e = r.error { return .failure(WireError(name: e, parameters: r.parameters)) }
        return .success(r.parameters)
    }

    static let fields = JSON.stringMap([
        "name": "李雷", "birthday": "1990-05-17", "country": "CN", "province": "440000",
        "city": "440100", "contact_method": "phone", "phone": "13800138000",
    ])

    /// The refused reasons: a NUL in the middle (once kept as `before`), C0, DEL, C1, U+2028, U+2029.
    static let badReasons = [
        "before\u{0}after", "\u{0}", "line\nbreak", "tab\there", "cr\r", "del\u{7F}", "c1\u{85}", "c1\u{9F}",
        "ls\u{2028}x", "ps\u{2029}x",
    ]

    /// One entry's state as the caller sees it: Get's reply and the History.
    static func snapshot(_ service: EntryService, _ id: String) throws -> (JSON, JSON) {
        let get = try call(service, "io.entryd.Entries.Get", [("id", .string(id))]).get()
        let history = try call(service, "io.entryd.Entries.History", [("id", .string(id))]).get()
        return (get, history)
    }

    @Test(
        "a reason with a control character or line separator is refused naming it, in the locale, and nothing changes",
        arguments: ["Update", "Delete", "Restore"], badReasons)
    func refusedReason(method: String, reason: String) throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 2)
        defer { store.close() }
        let service = EntryService(store: store, forms: .builtIn)
        let added = try Self.call(service, "io.entryd.Entries.Add", [("fields", Self.fields)]).get()
        let id = try #require(added["entry"]?["id"]?.stringValue)
        if method == "Restore" {
            _ = try Self.call(service, "io.entryd.Entries.Delete", [("id", .string(id))]).get()
        }
        let before = try Self.snapshot(service, id)
        let seq = store.commits.lastSeq
        for locale in ["zh", "en"] {
            var params: [(String, JSON)] = [
                ("id", .string(id)), ("reason", .string(reason)), ("locale", .string(locale)),
            ]
            if method == "Update" { params.append(("fields", .stringMap(["name": "韩梅梅"]))) }
            let result = Self.call(service, "io.entryd.Entries.\(method)", params)
            guard case .failure(let error) = result else {
                Issue.record("\(method) took the reason \(reason.debugDescription)")
                continue
            }
            #expect(error.name == "io.entryd.Entries.ValidationFailed")
            let problems = try #require(error.parameters["problems"]?.arrayValue)
            #expect(problems.count == 1)
            #expect(problems.first?["field"]?.stringValue == "reason")
            #expect(problems.first?["code"]?.stringValue == "invalid-format")
            let message = try #require(problems.first?["message"]?.stringValue)
            #expect(message == FreeText.reasonProblem(locale: EntryLocale(tag: locale)!).message)
            #expect(locale == "zh" ? message.contains("原因") : message.hasPrefix("The reason"))
        }
        // Nothing stored: the same entry, the same history, no change logged.
        let after = try Self.snapshot(service, id)
        #expect(after.0 == before.0 && after.1 == before.1)
        #expect(store.commits.lastSeq == seq)
    }

    @Test("the reason is refused before the id is looked up: an unknown id with a bad reason is ValidationFailed")
    func reasonFirst() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 2)
        defer { store.close() }
        let service = EntryService(store: store, forms: .builtIn)
        let result = Self.call(
            service, "io.entryd.Entries.Delete", [("id", .string(UUIDv7.generate())), ("reason", .string("a\u{0}b"))])
        guard case .failure(let error) = result else { throw TestFailure("accepted") }
        #expect(error.name == "io.entryd.Entries.ValidationFailed")
    }

    @Test(
        "a reason in any script, with spaces, or empty, is kept whole",
        arguments: ["", "客户来电更正 (ticket #42)", "naïve — ok"])
    func keptReason(reason: String) throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 2)
        defer { store.close() }
        let service = EntryService(store: store, forms: .builtIn)
        let added = try Self.call(service, "io.entryd.Entries.Add", [("fields", Self.fields)]).get()
        let id = try #require(added["entry"]?["id"]?.stringValue)
        _ = try Self.call(
            service, "io.entryd.Entries.Update",
            [("id", .string(id)), ("fields", .stringMap(["name": "韩梅梅"])), ("reason", .string(reason))]
        ).get()
        let history = try #require(try Self.snapshot(service, id).1["changes"]?.arrayValue)
        #expect(history.last?["reason"]?.stringValue == reason)
    }

    /// A valid wire change creating a new entry, with `fields` and `reason`.
    static func change(fields: [String: String], reason: String? = nil) -> JSON {
        var members: [(String, JSON)] = [
            ("seq", .int(1)), ("node", .string(UUIDv7.generate())), ("hlc", .string("01a22c9745290000")),
            ("entry", .string(UUIDv7.generate())), ("form", .string("registration")), ("op", .string("create")),
            ("fields", .stringMap(fields)), ("base", .stringMap(fields.mapValues { _ in "" })),
            ("actor", .string("a")), ("at", .string("2026-11-30T08:15:02.123Z")),
        ]
        if let reason { members.append(("reason", .string(reason))) }
        return .object(members)
    }

    @Test(
        "Sync.Apply refuses a value Add refuses (U+2028 and the rest) and a NUL in a reason; nothing of the batch is stored",
        arguments: [
            (["name": "李\u{2028}雷"], nil), (["name": "李\u{2029}雷"], nil), (["name": "a\u{202E}b"], nil),
            (["name": "a\u{200B}b"], nil), (["name": "a\u{FEFF}b"], nil), (["name": "a\u{85}b"], nil),
            (["name": "李雷"], "before\u{0}after"),
        ] as [([String: String], String?)])
    func applyRefuses(fields: [String: String], reason: String?) throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 2)
        defer { store.close() }
        let service = EntryService(store: store, forms: .builtIn)
        let good = Self.change(fields: ["name": "韩梅梅"])
        let bad = Self.change(fields: fields, reason: reason)
        let seq = store.commits.lastSeq
        let result = Self.call(service, "io.entryd.Sync.Apply", [("changes", .array([good, bad]))])
        guard case .failure(let error) = result else {
            throw TestFailure("Apply took \(fields) \(String(describing: reason))")
        }
        #expect(error.name == "org.varlink.service.InvalidParameter")
        #expect(error.parameters["parameter"]?.stringValue == "changes")
        // Nothing of the batch: not the good change either.
        #expect(store.commits.lastSeq == seq)
        for entry in [good, bad] {
            let id = try #require(entry["entry"]?.stringValue)
            guard case .failure(let e) = Self.call(service, "io.entryd.Entries.Get", [("id", .string(id))]) else {
                throw TestFailure("entry \(id) stored")
            }
            #expect(e.name == "io.entryd.Entries.EntryNotFound")
        }
    }

    @Test("Sync.Apply still takes a reason with a line break (Update took them before the rule) and keeps it whole")
    func applyKeepsOldReasons() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 2)
        defer { store.close() }
        let service = EntryService(store: store, forms: .builtIn)
        let change = Self.change(fields: ["name": "韩梅梅"], reason: "line one\nline two")
        let reply = try Self.call(service, "io.entryd.Sync.Apply", [("changes", .array([change]))]).get()
        #expect(reply["applied"] == .int(1))
        let history = try #require(try Self.snapshot(service, change["entry"]!.stringValue!).1["changes"]?.arrayValue)
        #expect(history.first?["reason"]?.stringValue == "line one\nline two")
    }

    @Test("lookups by a text with a NUL: List's text filter is refused naming it, Resolve finds no conflict")
    func lookups() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 2)
        defer { store.close() }
        let service = EntryService(store: store, forms: .builtIn)
        let list = Self.call(
            service, "io.entryd.Entries.List",
            [("filter", .object([("text", .string("李\u{0}雷"))])), ("locale", .string("en"))])
        guard case .failure(let error) = list else { throw TestFailure("List took a NUL") }
        #expect(error.name == "io.entryd.Entries.ValidationFailed")
        #expect(error.parameters["problems"]?.arrayValue?.first?["field"]?.stringValue == "text")
        let resolve = Self.call(service, "io.entryd.Sync.Resolve", [("id", .string("x\u{0}y"))])
        guard case .failure(let e) = resolve else { throw TestFailure("Resolve took a NUL") }
        #expect(e.name == "io.entryd.Sync.ConflictNotFound")
        let conflicts = try Self.call(service, "io.entryd.Sync.ListConflicts", [("entry", .string("x\u{0}y"))]).get()
        #expect(conflicts["conflicts"] == .array([]))
    }

    @Test("SyncPeer refuses a unix: address with a NUL (a socket path is a C string)")
    func syncPeerAddress() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 2)
        defer { store.close() }
        let service = EntryService(store: store, forms: .builtIn)
        let result = Self.call(service, "io.entryd.Sync.SyncPeer", [("peer", .string("unix:/tmp/x\u{0}y"))])
        guard case .failure(let error) = result else { throw TestFailure("accepted") }
        #expect(error.name == "org.varlink.service.InvalidParameter")
        #expect(error.parameters["parameter"]?.stringValue == "peer")
        #expect(try store.peerStates().isEmpty)
    }

    @Test(
        "below the service, a NUL never cuts text short: SQLite keeps it whole, PostgreSQL refuses it",
        arguments: StoreKind.allCases)
    func storeKeepsOrRefusesNUL(kind: StoreKind) throws {
        let place = TestDatabase()
        let store = try kind.open(place)
        defer { store.close() }
        let layout = FieldLayout.registration
        let id = try store.create(
            form: "registration", id: nil, fields: ["name": "李雷"], layout: layout,
            origin: WriteOrigin(actor: "a", reason: nil)
        ).entry.id
        let seq = store.commits.lastSeq
        let write = {
            try store.update(
                id: id, ifVersion: nil, layout: layout, origin: WriteOrigin(actor: "a", reason: "before\u{0}after")
            ) {
                var f = $0.fields
                f["name"] = "韩梅梅"
                return f
            }
        }
        switch kind {
        case .sqlite:
            _ = try write()
            #expect(try store.history(id).last?.reason == "before\u{0}after")
            // A lookup is by the whole text too: `id` and a NUL after it is no id.
            #expect(try store.get(id + "\u{0}x") == nil)
        case .postgres:
            #expect(throws: (any Error).self) { _ = try write() }
            #expect(try store.get(id)?.fields["name"] == "李雷")
            #expect(store.commits.lastSeq == seq)
            #expect(try store.history(id).allSatisfy { $0.reason == nil })
        }
    }

    @Test("FreeText: the OpenAPI pattern refuses exactly what isLineSafe refuses")
    func patternAgrees() throws {
        // ECMA 262's `$` (no m flag) is the end of the input; ICU's also matches before a
        // final line end, so it is spelled `\z` here (as schemathesis spells it `\Z`).
        #expect(FreeText.reasonPattern.hasSuffix("$"))
        let regex = try NSRegularExpression(pattern: FreeText.reasonPattern.dropLast() + "\\z")
        var samples = Self.badReasons + ["", "ok", "客户 更正", "a\u{A0}b", "a\u{200B}b", "a\u{2027}b", "a\u{202A}b"]
        for v in [0x00, 0x1F, 0x20, 0x7E, 0x7F, 0x9F, 0xA0, 0x2028, 0x2029] {
            samples.append("x\(Character(Unicode.Scalar(UInt32(v))!))y")
        }
        for s in samples {
            let ns = s as NSString
            let matches = regex.firstMatch(in: s, range: NSRange(location: 0, length: ns.length)) != nil
            #expect(matches == FreeText.isLineSafe(s), "\(s.debugDescription)")
        }
    }

    @Test("the OpenAPI document states the reason rule on Update, Delete and Restore")
    func openAPIPattern() throws {
        let doc = OpenAPIDocument.generate()
        let schemas = try #require(doc["components"]?["schemas"])
        for method in ["Update", "Delete", "Restore"] {
            let reason = schemas["io.entryd.Entries.\(method).Parameters"]?["properties"]?["reason"]
            #expect(reason?["pattern"]?.stringValue == FreeText.reasonPattern, "\(method)")
        }
    }

    @Test("FreeText.isAcceptableValue agrees with the validator's text rule, ASCII fast path included")
    func valueRule() {
        for v: UInt32 in [
            0, 9, 0x1F, 0x20, 0x41, 0x7E, 0x7F, 0x80, 0x9F, 0xA0, 0x200B, 0x200C, 0x2028, 0x202E, 0xFEFF, 0xFFFB,
            0x4E00,
        ] {
            let s = "a\(Character(Unicode.Scalar(v)!))b"
            #expect(FreeText.isAcceptableValue(s) == !FreeText.isRefusedInValue(Unicode.Scalar(v)!), "\(v)")
        }
        #expect(FreeText.isAcceptableValue("") && FreeText.isAcceptableValue("plain ascii"))
    }
}

/// A test's own failure with a message.
private struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
