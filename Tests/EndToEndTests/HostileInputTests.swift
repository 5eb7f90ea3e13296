import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// Hostile messages on the socket: each gets its documented error or close,
/// the daemon keeps serving others, its memory stays bounded, and stored data
/// is unchanged.
@Suite(.serialized) struct HostileInputTests {
    /// Resident memory of a process in KiB (/proc/PID/status VmRSS).
    func residentKiB(_ pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    func firstReply(_ d: Daemon, _ bytes: [UInt8]) throws -> VarlinkReply? {
        let c = try d.connect()
        defer { c.close() }
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        _ = setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        try c.sendRaw(bytes)
        return try? c.receive()
    }

    func add(_ fields: JSON) -> [UInt8] {
        VarlinkCall(method: "io.entryd.Entries.Add", parameters: .object([("fields", fields)])).encoded
    }

    @Test("nested, huge, NUL-bearing, oversized and 100,000-field messages; the daemon stays up and bounded")
    func hostile() throws {
        let d = try Daemon()
        let keeper = try d.connect()
        let stored = try keeper.call(
            "io.entryd.Entries.Add",
            .object([
                (
                    "fields",
                    .stringMap([
                        "name": "李雷", "birthday": "1990-05-17", "country": "CN", "province": "广东", "city": "广州",
                        "contact_method": "phone", "phone": "13800138000",
                    ])
                )
            ]))
        let pid = try #require(d.process?.processIdentifier)
        let baseline = residentKiB(pid)

        // Deeply nested JSON: refused as undecodable.
        let nested =
            "{\"method\":\"io.entryd.Entries.Add\",\"parameters\":" + String(repeating: "[", count: 100_000)
            + String(repeating: "]", count: 100_000) + "}"
        #expect(try firstReply(d, Array(nested.utf8) + [0])?.error == "org.varlink.service.InvalidParameter")
        // Huge numbers where strings or small integers belong.
        let huge = "{\"method\":\"io.entryd.Entries.List\",\"parameters\":{\"limit\":1e308}}"
        #expect(try firstReply(d, Array(huge.utf8) + [0])?.error == "org.varlink.service.InvalidParameter")
        let bigger = "{\"method\":\"io.entryd.Entries.List\",\"parameters\":{\"limit\":123456789012345678901234567890}}"
        #expect(try firstReply(d, Array(bigger.utf8) + [0])?.error == "org.varlink.service.InvalidParameter")
        // An escaped NUL inside a value: a validation problem, not a crash or a stored control character.
        let nul = try firstReply(d, add(.stringMap(["name": "a\u{0}b", "birthday": "1990-05-17", "country": "CN"])))
        #expect(nul?.error == "io.entryd.Entries.ValidationFailed")
        #expect(nul?.parameters["problems"]?.arrayValue?.contains { $0["field"]?.stringValue == "name" } == true)
        // An oversized field value.
        let long = try firstReply(d, add(.stringMap(["name": String(repeating: "长", count: 100_000)])))
        #expect(long?.error == "io.entryd.Entries.ValidationFailed")
        #expect(long?.parameters["problems"]?.arrayValue?.contains { $0["code"]?.stringValue == "too-long" } == true)
        // 100,000 fields: refused with a bounded list of problems.
        var many: [(String, JSON)] = []
        for i in 0..<100_000 { many.append(("f\(i)", .string("x"))) }
        let manyReply = try firstReply(d, add(.object(many)))
        #expect(manyReply?.error == "io.entryd.Entries.ValidationFailed")
        #expect((manyReply?.parameters["problems"]?.arrayValue?.count ?? 0) <= Validator.maxUnknownFieldProblems + 20)
        // 10,000 messages in one write, on one connection, all answered in order.
        let c = try d.connect()
        var burst: [UInt8] = []
        for _ in 0..<10_000 { burst += VarlinkCall(method: "io.entryd.Sync.Status").encoded }
        // Written from another thread while this one reads the replies, as a pipelining client must.
        let fd = c.fd
        let bytes = burst
        let writer = Thread { try? UnixSocket.writeAll(fd, bytes) }
        writer.start()
        for _ in 0..<10_000 { #expect(try c.receive().parameters["entries"]?.intValue == 1) }

        // Still serving, nothing stored changed, memory bounded.
        let id = try #require(stored["entry"]?["id"]?.stringValue)
        #expect(try keeper.call("io.entryd.Entries.Get", .object([("id", .string(id))]))["entry"] == stored["entry"])
        #expect(try keeper.call("io.entryd.Sync.Status")["entries"]?.intValue == 1)
        let after = residentKiB(pid)
        print("daemon resident memory: \(baseline) KiB before, \(after) KiB after the hostile messages")
        #expect(after < baseline + 256 * 1024, "resident memory grew from \(baseline) to \(after) KiB")
        #expect(d.stop() == 0)
    }
}
