#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CSystem

/// One client connection: reads NUL-terminated messages, answers each in
/// order (pipelining allowed), and enforces the per-connection limits.
///
/// doc/protocol.md "Errors for bad messages": a message that is not a JSON object
/// or lacks `method` gets `InvalidParameter(method)` and the connection is
/// closed; an oversized message gets `LimitExceeded(max-message-size)` and is
/// closed; wrong parameter types get `InvalidParameter` and the connection stays.
/// Bytes without a closing NUL when the client hangs up get no reply.
public final class Session {
    let fd: Int32
    let caller: Caller
    let handler: any CallHandler
    let limits: Limits
    private var decoder: FrameDecoder
    /// Called with a short event text for the daemon's debug log (ids, never values).
    let log: (String) -> Void

    /// A session on the accepted socket `fd` (the caller keeps ownership and
    /// closes it after ``run()``).
    /// - Parameters:
    ///   - caller: the client's credentials and role.
    ///   - limits: message size (bytes) and idle timeout (seconds) for this connection.
    ///   - log: gets short debug events (ids, never values).
    ///   - onStream: called once, when the session first sends a reply with
    ///     `continues` (a `more` stream such as `Changes`, which has no end of
    ///     its own: the listener cuts such sessions at shutdown).
    public init(fd: Int32, caller: Caller, handler: any CallHandler, limits: Limits,
                onStream: @escaping () -> Void = {}, log: @escaping (String) -> Void = { _ in }) {
        self.onStream = onStream
        self.fd = fd
        self.caller = caller
        self.handler = handler
        self.limits = limits
        self.decoder = FrameDecoder(maxMessageBytes: limits.maxMessageBytes)
        self.log = log
    }

    private let onStream: () -> Void
    private var streaming = false

    /// Calls started with ``CallHandler/begin(_:)`` and not yet answered, in call order.
    private var started: [(call: VarlinkCall, finish: () throws -> Void)] = []
    /// Most calls started before the session waits for their answers.
    static let maxStartedCalls = 256
    /// False once a reply could not be written (the client is gone).
    private var alive = true

    /// Serves the connection until the client hangs up, stays idle past
    /// `idle-timeout`, or breaks a rule that closes it. Does not close `fd`.
    ///
    /// Pipelined calls that the handler can start early (Add) are started one
    /// after another as they are decoded, so their writes share a group
    /// commit; their replies are still sent in call order, each only after its
    /// write is durable. Any other call first waits until every earlier call is
    /// answered, so it sees their effects.
    public func run() {
        _ = csystem_set_timeouts(fd, Int(limits.idleTimeoutSeconds) * 1000, 30_000)
        defer { finishStarted() }
        while true {
            do {
                while let message = try decoder.next() {
                    guard serve(message) else { return }
                }
            } catch {
                finishStarted()
                reply(VarlinkReply(error: .limitExceeded("max-message-size", maximum: limits.maxMessageBytes)))
                log("message over max-message-size, closing")
                return
            }
            // Nothing more buffered: answer what was started before blocking on the socket.
            finishStarted()
            guard alive else { return }
            let bytes: [UInt8]
            do {
                bytes = try UnixSocket.read(fd)
            } catch {
                log(error.errno == EAGAIN ? "idle for \(limits.idleTimeoutSeconds)s, closing" : "read failed: \(error)")
                return
            }
            if bytes.isEmpty {
                if decoder.hasPartialMessage { log("client hung up mid-message") }
                return
            }
            decoder.append(bytes)
        }
    }

    /// Serves one message. Returns false when the connection must close.
    private func serve(_ message: [UInt8]) -> Bool {
        let call: VarlinkCall
        do {
            call = try VarlinkCall.decode(message)
        } catch {
            finishStarted()
            reply(VarlinkReply(error: error))
            log("undecodable message, closing")
            return false
        }
        let context = CallContext(
            caller: caller, call: call,
            send: { [self] r in
                if call.oneway { return }
                if r.continues && !streaming {
                    streaming = true
                    onStream()
                }
                do { try UnixSocket.writeAll(fd, r.encoded) } catch { alive = false; throw error }
            },
            peerHungUp: { [self] in peerHungUp() })
        do {
            if let finish = try handler.begin(context) {
                started.append((call, finish))
                if started.count >= Session.maxStartedCalls { finishStarted() }
                return alive
            }
        } catch {
            started.append((call, { throw error }))
            return alive
        }
        finishStarted()
        guard alive else { return false }
        do {
            try handler.handle(context)
        } catch {
            if !call.oneway && alive { reply(VarlinkReply(error: WireError(mapping: error))) }
        }
        return alive
    }

    /// Answers the started calls in order (each waits for its commit).
    private func finishStarted() {
        guard !started.isEmpty else { return }
        let calls = started
        started.removeAll(keepingCapacity: true)
        for (call, finish) in calls {
            do {
                try finish()
            } catch {
                if !call.oneway && alive { reply(VarlinkReply(error: WireError(mapping: error))) }
            }
        }
    }

    private func reply(_ r: VarlinkReply) {
        do { try UnixSocket.writeAll(fd, r.encoded) } catch { alive = false }
    }

    /// Polls the socket for a hang-up without consuming data.
    private func peerHungUp() -> Bool { csystem_peer_hung_up(fd) != 0 }
}
