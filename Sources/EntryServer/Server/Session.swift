#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CSystem
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync

/// What a method handler gets besides its parameters: who calls, and how to
/// answer (once, or several times for a `more` call).
public struct CallContext {
    /// The connected client, from SO_PEERCRED.
    public let caller: Caller
    /// The call as received (its `more` flag tells whether streaming is allowed).
    public let call: VarlinkCall
    /// Sends one reply. Throws ``SystemError`` when the client is gone.
    public let send: (VarlinkReply) throws -> Void
    /// True once the client has hung up (for long-running streams).
    public let peerHungUp: () -> Bool
}

/// Handles calls; implemented by ``EntryService``.
public protocol CallHandler: AnyObject, Sendable {
    /// Handles one call: sends its reply (or replies) through `context.send`,
    /// or throws a ``WireError`` (or any error, which the session maps with
    /// ``WireError/init(mapping:)``) to answer with an error instead.
    func handle(_ context: CallContext) throws

    /// Starts a call that may overlap with the calls after it on the same
    /// connection (a write queued for the next group commit), or returns `nil`
    /// to have it handled by ``handle(_:)`` once every earlier call is answered.
    ///
    /// ### Implementing
    /// Queue the work in the order of the calls (the session calls `begin` in
    /// the order the calls arrived) and do not send anything here: the
    /// returned closure waits for the outcome and sends the reply; the session
    /// runs those closures in call order. What `begin` throws is the call's
    /// error reply, sent in its turn.
    func begin(_ context: CallContext) throws -> (() throws -> Void)?
}

extension CallHandler {
    /// No call overlaps: every call is handled in turn.
    public func begin(_ context: CallContext) throws -> (() throws -> Void)? { nil }
}

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
                reply(VarlinkReply(error: WireError(mapping: EntryError.limitExceeded("max-message-size", maximum: limits.maxMessageBytes))))
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
