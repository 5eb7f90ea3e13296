@preconcurrency import Glibc
import CSystem
import Dispatch
import EntryModel
import EntryProtocol
import EntryWeb
import Foundation
import Synchronization

/// A few connections to entryd that carry many calls at once (pipelining):
/// a request's thread writes its call and waits; each connection's reader
/// thread hands the replies, which entryd sends in call order, to the
/// waiting threads in the order the calls were written, undecoded (each
/// thread decodes its own, so one slow reader holds up no other's work). entryd reads the
/// calls of many requests in one read, starts them all (an Add is validated
/// and queued to the write round at once) and answers them after one commit,
/// where a connection per request costs it a thread wake-up, a read and a
/// write per call.
///
/// Only for calls entryd starts without waiting for the earlier ones
/// (`Entries.Add`): another call on such a connection would hold every call
/// behind it until it is answered. And only for calls of at most
/// ``maxCallBytes``: entryd closes a connection that brings a message over
/// its `max-message-size`, which would fail every call on it. Thread-safe.
final class Pipeline: Sendable {
    /// entryd's socket.
    let path: String
    /// Longest wait for a reply, in milliseconds: past it the connection
    /// counts as broken and every call waiting on it fails.
    let replyTimeout: Int
    /// The connections, each opened on first use and again after it broke.
    private let lanes: [Lane]

    /// - Parameters:
    ///   - path: entryd's socket.
    ///   - lanes: most connections calls are spread over.
    ///   - replyTimeout: longest wait for a reply, in milliseconds.
    init(path: String, lanes: Int, replyTimeout: Int) {
        self.path = path
        self.replyTimeout = replyTimeout
        self.lanes = (0..<max(1, lanes)).map { _ in Lane() }
    }

    /// Ends every open connection (``PipelinedConnection/shutDown()``): the
    /// calls waiting fail at once (a stop that can wait no longer).
    func shutDownAll() {
        for lane in lanes { lane.connection.withLock { $0?.shutDown() } }
    }

    /// The largest call sent over a pipeline, in bytes: the least
    /// `max-message-size` entryd accepts (4 KiB), so no setting of entryd's
    /// can make it close a pipeline for a call's size.
    static let maxCallBytes = 4096

    /// Sends `bytes`, one encoded call (at most ``maxCallBytes``), on one of
    /// the connections and returns its reply.
    /// - Throws: `SystemError` or ``ConnectionClosed`` when entryd cannot be
    ///   reached or the connection broke (the call may or may not have run).
    func call(_ bytes: [UInt8]) throws -> VarlinkReply {
        // An idle lane first: entryd is reading it, so the call joins the next
        // write round; a lane with calls out is one whose session waits for
        // their commit before it reads again. Else the least busy.
        var lane = lanes[0]
        var least = Int.max
        for candidate in lanes {
            let calls = candidate.calls.load(ordering: .relaxed)
            if calls < least {
                lane = candidate
                least = calls
                if calls == 0 { break }
            }
        }
        lane.calls.wrappingAdd(1, ordering: .relaxed)
        defer { lane.calls.wrappingSubtract(1, ordering: .relaxed) }
        let waiter = try lane.connection.withLock { slot -> Waiter in
            // A connection entryd closed (it restarted) whose reader has not yet seen the end
            // refuses the write: nothing of the call reached entryd, so it goes once more on a
            // new connection, as the pool replaces a closed connection before use.
            for attempt in 0..<2 {
                if slot == nil || slot?.isOpen == false {
                    slot = try PipelinedConnection(path: path, replyTimeout: replyTimeout)
                }
                // Written in the lock, so the order of the waiters is the order of the calls.
                let waiter = Waiter()
                do {
                    try slot!.send(bytes, waiter)
                    return waiter
                } catch  where attempt == 0 && Pipeline.unsent(error) {
                    slot = nil
                }
            }
            throw ConnectionClosed()
        }
        return try waiter.wait(milliseconds: replyTimeout)
    }

    /// Whether `error` from ``PipelinedConnection/send(_:_:)`` means the call
    /// never reached entryd: the connection had ended (its reader saw the end
    /// first), or entryd had closed it (`EPIPE`).
    private static func unsent(_ error: any Error) -> Bool {
        error is ConnectionClosed || (error as? SystemError)?.errno == EPIPE
    }

    /// One connection's place: empty until first used, replaced once it broke.
    private final class Lane: Sendable {
        let connection = Mutex<PipelinedConnection?>(nil)
        /// Calls sent on it and not yet answered.
        let calls = Atomic<Int>(0)
    }

}

/// One pipelined connection: calls are written by the requests' threads in
/// turn, replies read by a thread of its own. Its descriptor is closed only
/// when the object goes (no lane, reader or writing thread holds it), so a
/// write or a shutdown never reaches a descriptor number reused since.
private final class PipelinedConnection: Sendable {
    fileprivate let fd: Int32
    private struct State {
        /// Calls written and not yet answered, oldest first (from `head`).
        var waiting: [Waiter] = []
        var head = 0
        /// False once the connection broke; its calls have all failed.
        var open = true
    }
    private let state = Mutex(State())

    init(path: String, replyTimeout: Int) throws {
        fd = try UnixSocket.connect(path: path)
        // No receive timeout: the reader waits however long entryd is quiet; a
        // request that waits too long shuts the connection down (Waiter).
        _ = csystem_set_timeouts(fd, 0, replyTimeout)
        Reader(owner: self).start()
    }

    deinit { _ = Glibc.close(fd) }

    var isOpen: Bool { state.withLock { $0.open } }

    /// Writes `bytes` (one call) and queues `waiter` for its reply. The caller holds the lane's lock.
    func send(_ bytes: [UInt8], _ waiter: Waiter) throws {
        waiter.connection = self
        let open = state.withLock { state in
            guard state.open else { return false }
            state.waiting.append(waiter)
            return true
        }
        guard open else { throw ConnectionClosed() }
        do {
            try UnixSocket.writeAll(fd, bytes)
        } catch {
            // The reader fails every call queued, this one with them.
            shutDown()
            throw error
        }
    }

    /// Ends the connection: the reader's read returns and fails the calls waiting.
    func shutDown() {
        state.withLock { if $0.open { _ = shutdown(fd, Int32(SHUT_RDWR)) } }
    }

    /// The reader's: the reply to the oldest call waiting, as received.
    fileprivate func deliver(_ reply: [UInt8]) -> Bool {
        let waiter: Waiter? = state.withLock { state in
            guard state.head < state.waiting.count else { return nil }
            let first = state.waiting[state.head]
            state.head += 1
            if state.head == state.waiting.count {
                state.waiting.removeAll(keepingCapacity: true)
                state.head = 0
            } else if state.head >= 256, state.head * 2 >= state.waiting.count {
                state.waiting.removeFirst(state.head)
                state.head = 0
            }
            return first
        }
        guard let waiter else { return false }
        waiter.finish(.success(reply))
        return true
    }

    /// The reader's: the connection broke; every call waiting fails with `error`.
    fileprivate func fail(_ error: any Error) {
        let waiting = state.withLock { state in
            state.open = false
            let rest = Array(state.waiting[state.head...])
            state.waiting = []
            state.head = 0
            return rest
        }
        for waiter in waiting { waiter.finish(.failure(error)) }
    }

    /// The thread that reads the replies.
    private final class Reader: Sendable {
        let owner: PipelinedConnection
        init(owner: PipelinedConnection) { self.owner = owner }

        /// Starts ``run()`` on a thread of its own (`entryd-web-pipe`, a 256 KiB stack).
        func start() {
            let thread = Thread { [self] in run() }
            thread.name = "entryd-web-pipe"
            thread.stackSize = 256 << 10
            thread.start()
        }

        /// Splits what arrives into replies and hands each, undecoded, to its
        /// call's thread: the one reader of many calls does no more than that.
        func run() {
            var decoder = FrameDecoder(maxMessageBytes: 64 << 20)
            reading: while true {
                do {
                    while let message = try decoder.next() {
                        if !owner.deliver(message) {
                            owner.fail(DaemonLinkError(reason: "a reply to no call"))
                            break reading
                        }
                    }
                    let bytes = try UnixSocket.read(owner.fd)
                    if bytes.isEmpty { throw ConnectionClosed() }
                    decoder.append(bytes)
                } catch {
                    owner.fail(error)
                    break
                }
            }
        }
    }
}

/// A call's reply, handed from the reader thread to the request's thread.
private final class Waiter: @unchecked Sendable {
    // @unchecked: `result` is written once, before `done` is signalled, and read after it.
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<[UInt8], any Error>?
    /// The connection the call went out on (shut down when the reply is late).
    weak var connection: PipelinedConnection?

    func finish(_ result: Result<[UInt8], any Error>) {
        self.result = result
        done.signal()
    }

    func wait(milliseconds: Int) throws -> VarlinkReply {
        if done.wait(timeout: .now() + .milliseconds(milliseconds)) == .timedOut {
            // entryd is stuck: end the connection (its reader fails every call on it), then take the outcome.
            connection?.shutDown()
            done.wait()
        }
        return try VarlinkReply.decode(try result!.get())
    }
}
