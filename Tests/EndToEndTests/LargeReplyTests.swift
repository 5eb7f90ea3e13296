import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// Multi-megabyte replies: complete on a slow reader (the daemon handles
/// partial writes), and a reader that never reads blocks no one else.
@Suite(.serialized) struct LargeReplyTests {
    @Test("a multi-megabyte Changes reply arrives whole on a slow reader; a client that never reads stalls no one")
    func largeReplies() throws {
        let d = try Daemon()
        let writer = try d.connect()
        for batch in 0..<6 {
            let rows: [JSON] = (0..<1000).map { i in
                .object([
                    (
                        "fields",
                        .stringMap([
                            "name": "大回复\(batch)-\(i)-" + String(repeating: "长", count: 60), "birthday": "1990-05-17",
                            "country": "CN", "province": "440000", "city": "440100",
                            "contact_method": "email", "email": "big\(batch)x\(i)@example.cn",
                        ])
                    )
                ])
            }
            #expect(
                try writer.call("io.entryd.Entries.Import", .object([("entries", .array(rows))]))["added"]?.intValue
                    == 1000)
        }
        // A client that asks for everything and never reads.
        let sleeper = try d.connect()
        try sleeper.send(
            VarlinkCall(
                method: "io.entryd.Sync.Changes", parameters: .object([("since", .int(0)), ("limit", .int(10_000))])))
        // A slow reader: small reads with pauses, as a congested client would.
        let slow = try d.connect()
        try slow.send(
            VarlinkCall(
                method: "io.entryd.Sync.Changes", parameters: .object([("since", .int(0)), ("limit", .int(10_000))])))
        var bytes: [UInt8] = []
        while bytes.last != 0 {
            bytes += try UnixSocket.read(slow.fd, maxBytes: 4096)
            if bytes.count % (256 << 10) < 4096 { usleep(20_000) }
        }
        print("large reply: \(bytes.count / 1024) KiB read in 4 KiB pieces")
        #expect(bytes.count > 2 << 20)
        let reply = try VarlinkReply.decode(Array(bytes.dropLast()))
        #expect(reply.parameters["changes"]?.arrayValue?.count == 6000)
        // Meanwhile others are served, though the sleeper still holds its reply.
        let other = try d.connect()
        #expect(try other.call("io.entryd.Sync.Status")["entries"]?.intValue == 6000)
        let page = try other.call("io.entryd.Entries.List", .object([("limit", .int(1000))]))
        #expect(page["entries"]?.arrayValue?.count == 1000)
        sleeper.close()
        #expect(d.stop() == 0)
    }
}
