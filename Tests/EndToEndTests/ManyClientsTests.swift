import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// Many clients at once, idle clients, and clients that stall mid-message.
@Suite(.serialized) struct ManyClientsTests {
    @Test("1,000 simultaneous connections are served up to max-connections; the next one is refused clearly")
    func thousandConnections() throws {
        ResourceLimits.raiseOpenFiles()
        let d = try Daemon(arguments: ["--max-connections", "1000"])
        // Connect and call, one after another, until the daemon refuses. The
        // harness's readiness probe may still hold a slot for a moment, so the
        // refusal comes at the 1,000th or the 1,001st connection.
        var open: [VarlinkConnection] = []
        var refusal: WireError?
        for _ in 0..<1001 {
            let c = try d.connect()
            do {
                #expect(try c.call("org.varlink.service.GetInfo")["product"]?.stringValue == "entryd")
                open.append(c)
            } catch let e as WireError {
                refusal = e
                break
            }
        }
        #expect((999...1000).contains(open.count), "\(open.count) connections were served")
        #expect(refusal?.name == "io.entryd.Entries.LimitExceeded")
        #expect(refusal?.parameters["limit"]?.stringValue == "max-connections")
        #expect(refusal?.parameters["maximum"]?.intValue == 1000)
        // All of them are still being served.
        for (i, c) in open.enumerated() where i % 100 == 0 {
            #expect(try c.call("io.entryd.Sync.Status")["entries"]?.intValue == 0)
        }
        // Closing some makes room again.
        for c in open.prefix(10) { c.close() }
        open.removeFirst(10)
        var admitted = false
        for _ in 0..<50 where !admitted {
            usleep(20_000)
            if let c = try? d.connect(), (try? c.call("io.entryd.Sync.Status")) != nil { admitted = true }
        }
        #expect(admitted)
        open.forEach { $0.close() }
        #expect(d.stop() == 0)
    }

    @Test("idle connections are closed after idle-timeout; a half-sent message holds no one up")
    func idleAndStalled() throws {
        let d = try Daemon(arguments: ["--idle-timeout", "1"])
        let idle = try d.connect()
        let stalled = try d.connect()
        try stalled.sendRaw(Array("{\"method\":\"io.entryd.Entries.Li".utf8))
        // Others are served while one stalls.
        let other = try d.connect()
        for _ in 0..<5 { #expect(try other.call("io.entryd.Sync.Status")["entries"]?.intValue == 0) }
        usleep(1_600_000)
        #expect(throws: (any Error).self) { _ = try idle.call("io.entryd.Sync.Status") }
        #expect(throws: (any Error).self) { _ = try stalled.receive() }
        #expect(try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 0)
        #expect(d.stop() == 0)
    }
}
