#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CSystem

/// What a method handler gets besides its parameters: who calls, and how to
/// answer (once, or several times for a `more` call).
public struct CallContext {
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
}

/// One client connection: reads NUL-terminated messages, answers each in
/// order (pipelining allowed), and enforces the per-connection limits.
///
/// PROTOCOL.md "Errors for bad messages": a message that is not a JSON object
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

    public init(fd: Int32, caller: Caller, handler: any CallHandler, limits: Limits, log: @escaping (String) -> Void = { _ in }) {
        self.fd = fd
        self.caller = caller
        self.handler = handler
        self.limits = limits
        self.decoder = FrameDecoder(maxMessageBytes: limits.maxMessageBytes)
        self.log = log
    }

    /// Serves the connection until the client hangs up, stays idle past
    /// `idle-timeout`, or breaks a rule that closes it. Does not close `fd`.
    public func run() {
        _ = csystem_set_timeouts(fd, Int(limits.idleTimeoutSeconds) * 1000, 30_000)
        while true {
            do {
                while let message = try decoder.next() {
                    guard serve(message) else { return }
                }
            } catch {
                reply(VarlinkReply(error: .limitExceeded("max-message-size", maximum: limits.maxMessageBytes)))
                log("message over max-message-size, closing")
                return
            }
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
            reply(VarlinkReply(error: error))
            log("undecodable message, closing")
            return false
        }
        var alive = true
        let context = CallContext(
            caller: caller, call: call,
            send: { [self] r in
                if call.oneway { return }
                do { try UnixSocket.writeAll(fd, r.encoded) } catch { alive = false; throw error }
            },
            peerHungUp: { [self] in peerHungUp() })
        do {
            try handler.handle(context)
        } catch {
            if !call.oneway && alive { reply(VarlinkReply(error: WireError(mapping: error))) }
        }
        return alive
    }

    private func reply(_ r: VarlinkReply) {
        try? UnixSocket.writeAll(fd, r.encoded)
    }

    /// Polls the socket for a hang-up without consuming data.
    private func peerHungUp() -> Bool { csystem_peer_hung_up(fd) != 0 }
}

extension WireError {
    /// Maps any error to the wire, in one place: ``WireError`` as is; storage
    /// failures of SQLite to `StorageFailed` with a reason safe to show;
    /// anything else to `StorageFailed` with no detail (the daemon logs it).
    public init(mapping error: any Error) {
        switch error {
        case let e as WireError: self = e
        case let e as SQLiteError:
            switch e.primaryCode {
            case 13: self = .storageFailed("the disk is full: free space, then retry")
            case 8: self = .storageFailed("the database is read-only")
            case 5, 6: self = .storageFailed("the database is busy: retry")
            case 10: self = .storageFailed("an I/O error occurred writing the database")
            case 11, 26: self = .storageFailed("the database file is damaged")
            default: self = .storageFailed("the store refused the write (SQLite code \(e.code))")
            }
        default: self = .storageFailed("internal error; see the daemon log")
        }
    }
}
