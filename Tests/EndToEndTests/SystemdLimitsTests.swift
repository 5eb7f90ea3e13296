import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// The limits of entryd.conf, enforced by the running daemon and reported by `Status`.
@Suite struct SystemdLimitsTests {
    @Test(
        "limits from entryd.conf: Status reports each; max-connections, max-batch, max-message-size and idle-timeout are enforced"
    )
    func limitsFromConfiguration() throws {
        let dir = try serviceTestDirectory("limits")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = dir + "/entryd.conf"
        try """
        max-message-size = 4K
        max-connections = 2
        idle-timeout = 1
        max-batch = 3
        max-clock-skew = 2min
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try Daemon(directory: dir + "/d", arguments: ["--config", config])
        // A closed connection's slot is given back when the daemon has taken its end
        // (the harness's readiness probe, a connection closed for idling): a loaded
        // machine may take a moment, so a refusal for max-connections is tried again.
        func admitted() throws -> VarlinkConnection {
            let deadline = ContinuousClock.now + .seconds(10)
            while true {
                let connection = try daemon.connect()
                do {
                    _ = try connection.call("org.varlink.service.GetInfo")
                    return connection
                } catch let e as WireError
                    where e.name == "io.entryd.Entries.LimitExceeded" && ContinuousClock.now < deadline
                {
                    usleep(50_000)
                }
            }
        }

        let first = try admitted()
        let limits = try first.call("io.entryd.Sync.Status")["limits"]
        #expect(limits?["max-message-size"]?.intValue == 4096)
        #expect(limits?["max-connections"]?.intValue == 2)
        #expect(limits?["idle-timeout"]?.intValue == 1)
        #expect(limits?["max-batch"]?.intValue == 3)
        #expect(limits?["max-clock-skew"]?.intValue == 120)

        // max-batch: an Import of 4 rows is refused whole.
        let rows = JSON.array(Array(repeating: .object([("fields", .object([]))]), count: 4))
        #expect(throws: WireError(mapping: EntryError.limitExceeded("max-batch", maximum: 3))) {
            try first.call("io.entryd.Entries.Import", .object([("entries", rows)]))
        }

        // max-connections: the third client is told so and closed; the others carry on.
        let second = try admitted()
        let third = try daemon.connect()
        // The daemon answers and closes at once, so the send itself may meet EPIPE.
        try? third.send(VarlinkCall(method: "org.varlink.service.GetInfo"))
        let refused = try third.receive()
        #expect(refused.error == "io.entryd.Entries.LimitExceeded")
        #expect(refused.parameters["limit"]?.stringValue == "max-connections")
        #expect(refused.parameters["maximum"]?.intValue == 2)
        #expect(throws: (any Error).self) { try third.receive() }

        // max-message-size from the file: a 5000-byte message is refused and that connection closed.
        // (The daemon may close before the whole message is written: EPIPE is expected then.)
        try? second.sendRaw(
            Array(#"{"method":"org.varlink.service.GetInfo","parameters":{"pad":""#.utf8)
                + Array(repeating: UInt8(ascii: "x"), count: 5000) + Array(#""}}"#.utf8) + [0])
        let tooBig = try second.receive()
        #expect(tooBig.parameters["limit"]?.stringValue == "max-message-size")

        // idle-timeout: a connection silent for more than 1 s is closed.
        usleep(1_500_000)
        #expect(throws: (any Error).self) { try first.call("org.varlink.service.GetInfo") }
        let fresh = try admitted()
        #expect(try fresh.call("org.varlink.service.GetInfo")["product"]?.stringValue == "entryd")
        #expect(daemon.stop() == 0)
    }
}
