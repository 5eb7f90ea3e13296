@preconcurrency import Glibc
import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// ``ClientConnection/requestShutdown()`` on a real socket pair: the socket loop feeds
/// the request to its machine (ConnectionMachineTests has the rules).
@Suite struct ConnectionShutdownTests {
    /// Answers `test.Stream` with `continues` replies until its hang-up poll
    /// says stop, then a last reply; anything else with `{}`.
    final class Streamer: CallHandler {
        func handle(_ context: CallContext) throws {
            guard context.call.method == "test.Stream" else {
                try context.send(VarlinkReply(parameters: .object([])))
                return
            }
            var page: Int64 = 0
            while !context.clientHungUp() {
                try context.send(VarlinkReply(parameters: .object([("page", .int(page))]), continues: true))
                page += 1
                usleep(10_000)
            }
            try? context.send(VarlinkReply(parameters: .object([("page", .int(page))])))
        }
    }

    /// A session on one end of a socket pair, run on its own thread; the other end is the client.
    final class Pair: @unchecked Sendable {
        let session: ClientConnection
        let client: Int32
        private let server: Int32
        private let ended = DispatchSemaphore(value: 0)
        /// How often the session called its `onStream`.
        private let streamCount = Counter()
        var streams: Int { streamCount.value }

        final class Counter: @unchecked Sendable {
            var value = 0
        }

        init() {
            var fds: [Int32] = [-1, -1]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
            server = fds[0]
            client = fds[1]
            let caller = Caller(pid: getpid(), uid: getuid(), gid: getgid(), userName: "tester", role: .admin)
            let count = streamCount
            session = ClientConnection(
                fd: server, caller: caller, handler: Streamer(), limits: Limits(), onStream: { count.value += 1 })
        }

        /// Runs the session on its own thread.
        func start() {
            Thread { [self] in
                session.run()
                ended.signal()
            }.start()
        }

        /// Waits up to `seconds` for ``ClientConnection/run()`` to return.
        func runEnded(within seconds: Double) -> Bool { ended.wait(timeout: .now() + seconds) == .success }

        /// Reads one reply from the client end.
        func receive() throws -> VarlinkReply {
            var bytes: [UInt8] = []
            while true {
                var byte: UInt8 = 0
                guard recv(client, &byte, 1, 0) == 1 else { throw SystemError("recv") }
                if byte == 0 { return try VarlinkReply.decode(bytes) }
                bytes.append(byte)
            }
        }

        deinit {
            close(client)
            close(server)
        }
    }

    @Test("requestShutdown wakes a session waiting for its client's next call, and run() returns")
    func shutdownWhileReading() throws {
        let pair = Pair()
        pair.start()
        try UnixSocket.writeAll(pair.client, VarlinkCall(method: "test.Ping").encoded)
        #expect(try pair.receive().error == nil)
        pair.session.requestShutdown()
        #expect(pair.runEnded(within: 5))
    }

    @Test("requestShutdown ends a running stream, and run() returns")
    func shutdownStopsStream() throws {
        let pair = Pair()
        pair.start()
        try UnixSocket.writeAll(pair.client, VarlinkCall(method: "test.Stream", more: true).encoded)
        #expect(try pair.receive().continues)
        #expect(try pair.receive().continues)
        pair.session.requestShutdown()
        #expect(pair.runEnded(within: 5))
        #expect(pair.streams == 1)
    }
}
