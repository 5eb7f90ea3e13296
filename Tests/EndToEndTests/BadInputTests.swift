import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// Malformed messages against a live daemon: each gets its documented error or
/// close, the daemon keeps serving other clients, and stored data is unchanged.
@Suite(.serialized) struct BadInputTests {
    static let liLei: JSON = .object([
        ("name", .string("李雷")), ("birthday", .string("1990-05-17")), ("country", .string("CN")),
        ("province", .string("广东")), ("city", .string("广州")), ("contact_method", .string("phone")),
        ("phone", .string("13800138000")),
    ])

    /// Sends `bytes` on a fresh connection and returns the replies until the daemon closes it (or 2 s pass).
    func exchange(_ daemon: Daemon, _ bytes: [UInt8], expectClose: Bool) throws -> [VarlinkReply] {
        let c = try daemon.connect()
        defer { c.close() }
        try c.sendRaw(bytes)
        var replies: [VarlinkReply] = []
        _ = setsockopt(
            c.fd, SOL_SOCKET, SO_RCVTIMEO, [timeval(tv_sec: 2, tv_usec: 0)], socklen_t(MemoryLayout<timeval>.size))
        while true {
            do { replies.append(try c.receive()) } catch { break }
            if !expectClose { break }
        }
        return replies
    }

    @Test("not JSON, not an object, missing method: InvalidParameter(method), then close; others unaffected")
    func undecodable() throws {
        let daemon = try Daemon()
        let bystander = try daemon.connect()
        let added = try bystander.call("io.entryd.Entries.Add", .object([("fields", Self.liLei)]))
        let id = try #require(added["entry"]?["id"]?.stringValue)
        for bad in ["hello", "[1,2]", "{\"parameters\":{}}", "{\"method\":42}", "{\"method\":\"x\", \"more\": \"yes\""]
        {
            let replies = try exchange(daemon, Array(bad.utf8) + [0], expectClose: true)
            #expect(replies.count == 1, "\(bad)")
            #expect(replies.first?.error == "org.varlink.service.InvalidParameter", "\(bad)")
            #expect(replies.first?.parameters["parameter"]?.stringValue == "method", "\(bad)")
        }
        // Invalid UTF-8 and NUL inside a string literal (the NUL ends the message early).
        let replies = try exchange(daemon, [0x7B, 0x22, 0xFF, 0x22, 0x7D, 0], expectClose: true)
        #expect(replies.first?.error == "org.varlink.service.InvalidParameter")
        // The bystander still works, and the entry is unchanged.
        let got = try bystander.call("io.entryd.Entries.Get", .object([("id", .string(id))]))
        #expect(got["entry"] == added["entry"])
        #expect(daemon.stop() == 0)
    }

    @Test("unknown method and interface, wrong parameter types: named errors, connection stays open")
    func typedErrors() throws {
        let daemon = try Daemon()
        let c = try daemon.connect()
        func error(_ method: String, _ params: JSON) -> WireError? {
            do {
                _ = try c.call(method, params)
                return nil
            } catch { return error as? WireError }
        }
        #expect(error("io.entryd.Entries.Frobnicate", .object([]))?.name == "org.varlink.service.MethodNotFound")
        #expect(error("com.example.Nope", .object([]))?.name == "org.varlink.service.InterfaceNotFound")
        let wrong = error("io.entryd.Entries.Add", .object([("fields", .string("x"))]))
        #expect(wrong == .invalidParameter("fields"))
        #expect(
            error("io.entryd.Entries.Add", .object([("fields", .object([("name", .int(3))]))]))
                == .invalidParameter("fields"))
        #expect(error("io.entryd.Entries.List", .object([("limit", .string("10"))])) == .invalidParameter("limit"))
        #expect(error("io.entryd.Entries.Get", .object([])) == .invalidParameter("id"))
        #expect(
            error("io.entryd.Entries.Get", .object([("id", .string("nope"))]))?.name
                == "io.entryd.Entries.EntryNotFound")
        // Still the same connection.
        let status = try c.call("io.entryd.Sync.Status")
        #expect(status["entries"]?.intValue == 0)
        #expect(daemon.stop() == 0)
    }

    @Test("a message split into 1-byte writes, and 1,000 pipelined messages in one write, are answered in order")
    func framing() throws {
        let daemon = try Daemon()
        let c = try daemon.connect()
        for byte in VarlinkCall(method: "org.varlink.service.GetInfo").encoded { try c.sendRaw([byte]) }
        #expect(try c.receive().parameters["product"]?.stringValue == "entryd")
        var burst: [UInt8] = []
        for i in 0..<1000 {
            burst +=
                VarlinkCall(method: "io.entryd.Entries.Get", parameters: .object([("id", .string("id-\(i)"))])).encoded
        }
        try c.sendRaw(burst)
        for i in 0..<1000 {
            let r = try c.receive()
            #expect(r.error == "io.entryd.Entries.EntryNotFound" && r.parameters["id"]?.stringValue == "id-\(i)")
        }
        #expect(daemon.stop() == 0)
    }

    @Test("a message over max-message-size gets LimitExceeded and is closed; a hang-up mid-message gets no reply")
    func oversize() throws {
        let daemon = try Daemon(arguments: ["--max-message-size", "4096"])
        let big = VarlinkCall(
            method: "io.entryd.Entries.Add",
            parameters: .object([("fields", .object([("name", .string(String(repeating: "x", count: 10_000)))]))])
        ).encoded
        let replies = try exchange(daemon, big, expectClose: true)
        #expect(replies.count == 1)
        #expect(replies.first?.error == "io.entryd.Entries.LimitExceeded")
        #expect(replies.first?.parameters["limit"]?.stringValue == "max-message-size")
        let c = try daemon.connect()
        try c.sendRaw(Array("{\"method\":\"org.varlink.service.GetInfo\"".utf8))
        shutdown(c.fd, Int32(SHUT_WR))
        #expect(throws: ConnectionClosed.self) { _ = try c.receive() }
        #expect(try daemon.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 0)
        #expect(daemon.stop() == 0)
    }

    @Test(
        "Import rows refused for their shape, or for an id that exists with other values, say so in the locale asked for (code exists for the id); nothing stored changes"
    )
    func importRowProblemsInBothLanguages() throws {
        let d = try Daemon()
        defer { d.stop() }
        let c = try d.connect()
        defer { c.close() }
        let id = try #require(
            try c.call("io.entryd.Entries.Add", .object([("fields", Self.liLei)]))["entry"]?["id"]?.stringValue)
        let before = try c.call("io.entryd.Entries.Get", .object([("id", .string(id))]))
        var other = Self.liLei
        other = .object((other.objectValue ?? []).map { $0.0 == "name" ? ("name", .string("韩梅梅")) : $0 })
        let rows: [JSON] = [
            .string("not an object"), .object([("id", .string("nope")), ("fields", Self.liLei)]),
            .object([("fields", .array([]))]), .object([("id", .string(id)), ("fields", other)]),
        ]
        var messages: [String: [String]] = [:]
        for locale in ["zh", "en"] {
            let reply = try c.call(
                "io.entryd.Entries.Import", .object([("entries", .array(rows)), ("locale", .string(locale))]))
            #expect(reply["added"]?.intValue == 0)
            let rejected = try #require(reply["rejected"]?.arrayValue)
            #expect(rejected.map { $0["index"]?.intValue } == [0, 1, 2, 3])
            let problems = rejected.compactMap { $0["problems"]?.arrayValue?.first }
            #expect(problems.map { $0["field"]?.stringValue } == ["", "id", "fields", "id"])
            #expect(
                problems.map { $0["code"]?.stringValue } == [
                    "invalid-format", "invalid-format", "invalid-format", "exists",
                ])
            messages[locale] = problems.compactMap { $0["message"]?.stringValue }
        }
        #expect(messages["en"]?.last?.contains("already exists with other values") == true, "\(messages)")
        #expect(messages["zh"]?.last?.contains("已存在且值不同") == true, "\(messages)")
        // Each zh message is Chinese, each en one is not.
        for message in messages["zh"] ?? [] {
            #expect(message.unicodeScalars.contains { $0.value >= 0x4E00 && $0.value <= 0x9FFF }, "\(message)")
        }
        for message in messages["en"] ?? [] {
            #expect(!message.unicodeScalars.contains { $0.value >= 0x4E00 && $0.value <= 0x9FFF }, "\(message)")
        }
        #expect(try c.call("io.entryd.Entries.Get", .object([("id", .string(id))])) == before)
    }
}
