@preconcurrency import Glibc
import EntryModel
import EntryProtocol

import CSystem
import Foundation
import Synchronization

/// One client connection: reads NUL-terminated messages, answers each in
/// order (pipelining allowed), and enforces the per-connection limits.
///
/// A thin socket loop around ``ConnectionMachine``, which holds every protocol
/// rule (pipelining, streams, bad messages, the idle timeout, shutdown): the
/// loop reads, feeds the machine, and executes the actions it returns. Reads
/// and writes block; the idle timer is the socket's receive timeout
/// (SO_RCVTIMEO), and a client that stops reading holds a write for at most
/// ``sendTimeout`` (SO_SNDTIMEO) before the session counts it as gone.
///
/// doc/protocol.md "Errors for bad messages": a message that is not a JSON object
/// or lacks `method` gets `InvalidParameter(method)` and the connection is
/// closed; an oversized message gets `LimitExceeded(max-message-size)` and is
/// closed; wrong parameter types get `InvalidParameter` and the connection stays.
/// Bytes without a closing NUL when the client hangs up get no reply.
///
/// A session is run by the thread that calls ``run()`` (its loop's state is
/// that thread's alone); ``requestShutdown()`` and ``reassign(_:)`` may be
/// called from any other.
package final class ClientConnection: Sendable {
    let fd: Int32
    private let assigned: Mutex<Caller>
    /// The client and its role: fixed at accept, replaced by ``reassign(_:)`` on a reload.
    package var caller: Caller { assigned.withLock { $0 } }
    let handler: any CallHandler
    let limits: Limits
    /// Called with a short event text for the daemon's debug log (ids, never values).
    let log: @Sendable (String) -> Void
    fileprivate let onStream: @Sendable () -> Void

    /// Most calls started with ``CallHandler/begin(_:)`` before the session
    /// waits for their answers.
    static let maxStartedCalls = 256
    /// How long one write may block on a client that does not read, before
    /// the client counts as gone (SO_SNDTIMEO): 30 s.
    static let sendTimeout: Duration = .seconds(30)
    /// ClientConnection time 0 (``ConnectionMachine`` takes durations since then).
    fileprivate let began = ContinuousClock.now
    /// What ``requestShutdown()`` shares with the session thread.
    fileprivate let shutdownShared = Mutex((requested: false, streaming: false, ended: false))

    /// A session on the accepted socket `fd` (the caller keeps ownership and
    /// closes it after ``run()``).
    /// - Parameters:
    ///   - caller: the client's credentials and role.
    ///   - limits: message size (bytes) and idle timeout (seconds) for this connection.
    ///   - log: gets short debug events (ids, never values).
    ///   - onStream: called once, when the session first sends a reply with
    ///     `continues` (a `more` stream such as `Changes`, which has no end of
    ///     its own: ``requestShutdown()`` stops it).
    package init(
        fd: Int32, caller: Caller, handler: any CallHandler, limits: Limits,
        onStream: @escaping @Sendable () -> Void = {}, log: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.onStream = onStream
        self.fd = fd
        self.assigned = Mutex(caller)
        self.handler = handler
        self.limits = limits
        self.log = log
    }

    /// Serves the connection until the client hangs up, stays idle past
    /// `idle-timeout`, breaks a rule that closes it, or shutdown is requested.
    /// Does not close `fd`.
    ///
    /// Pipelined calls that the handler can start early (Add, Import) are
    /// started one after another as they are decoded, so their writes share a
    /// group commit, or are stored while the next buffered call is validated;
    /// their replies are still sent in call order, each only after its write
    /// is durable. Any other call first waits until every earlier call is
    /// answered, so it sees their effects.
    package func run() {
        defer { shutdownShared.withLock { $0.ended = true } }
        SessionLoop(self).run()
    }

    /// Asks the session to end: it reads no more; the running call and the
    /// calls already buffered are answered, a running stream is told to stop,
    /// then ``run()`` returns. Safe from any thread; does nothing once ``run()``
    /// has returned. The listener calls it for every session at stop. It shuts
    /// the socket's read side down to wake a blocked read, and both sides of a
    /// session that streams (its client may not be reading).
    package func requestShutdown() {
        shutdownShared.withLock { shared in
            guard !shared.ended, !shared.requested else { return }
            shared.requested = true
            shutdown(fd, Int32(shared.streaming ? SHUT_RDWR : SHUT_RD))
        }
    }

    /// Gives the connection the role (and gateway standing) of `caller`: a
    /// reload changed `[roles]`. Calls that start from now on run with it;
    /// calls already running keep the role they started with.
    package func reassign(_ caller: Caller) {
        assigned.withLock { $0 = caller }
    }

    /// What a call's body threw, mapped to the wire for the call's `interface`, or `nil`.
    fileprivate static func outcome(interface: String, _ body: () throws -> Void) -> WireError? {
        do {
            try body()
            return nil
        } catch {
            return WireError(mapping: error, interface: interface)
        }
    }

    /// `duration` in whole milliseconds, rounded up, at least 1 (a socket
    /// timeout of 0 would mean none).
    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        let ms = Int(seconds) * 1000 + Int((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
        return max(ms, 1)
    }
}

/// The loop of one ``ClientConnection/run()``: the protocol machine and what the
/// session thread keeps beside it. Made and used by that thread alone.
private final class SessionLoop {
    let session: ClientConnection
    /// The protocol rules.
    private var machine: ConnectionMachine
    /// The calls `begin` started, by id: what finishes each, and the call (for the error mapping and counting).
    private var finishers: [ConnectionMachine.CallID: (finish: () throws -> Void, call: VarlinkCall)] = [:]
    /// Set when the machine says to stop the running stream: its hang-up poll reports true.
    private var streamStopped = false
    /// The receive timeout set on the socket, so that it is set only when it changes.
    private var receiveTimeout: Duration = .zero
    /// Why the last read failed, for the log.
    private var readError: SystemError?
    /// The machine has been told of the requested shutdown.
    private var shutdownDelivered = false

    var fd: Int32 { session.fd }
    var limits: Limits { session.limits }
    var handler: any CallHandler { session.handler }

    init(_ session: ClientConnection) {
        self.session = session
        machine = ConnectionMachine(limits: session.limits)
    }

    /// See ``ClientConnection/run()``.
    func run() {
        receiveTimeout = .seconds(limits.idleTimeoutSeconds)
        _ = csystem_set_timeouts(
            fd, ClientConnection.milliseconds(receiveTimeout),
            ClientConnection.milliseconds(ClientConnection.sendTimeout))
        var action = machine.next(now: now)
        while true {
            switch action {
            case .read(let timeout):
                action = deliverShutdownRequest() ? machine.next(now: now) : read(timeout: timeout)
            case .readAvailable:
                action = machine.bytesArrived(UnixSocket.readAvailable(fd), now: now)
            case .begin(let id, let call):
                let outcome = begin(id, call)
                action = machine.callBegun(id, outcome, now: now)
            case .handle(let id, let call):
                let context = context(id, call)
                let error = ClientConnection.outcome(interface: call.interface) { try handler.handle(context) }
                handler.answered(call, error: error)
                action = machine.callCompleted(id, error: error, now: now)
            case .finish(let id):
                guard let started = finishers.removeValue(forKey: id) else {
                    preconditionFailure("session: call \(id) was not started")
                }
                let error = ClientConnection.outcome(interface: started.call.interface, started.finish)
                handler.answered(started.call, error: error)
                action = machine.callCompleted(id, error: error, now: now)
            case .send(let reply):
                do { try UnixSocket.writeAll(fd, reply.encoded) } catch { machine.writeFailed() }
                action = machine.next(now: now)
            case .close(let reason):
                if reason == .readFailed, let readError {
                    session.log("read failed: \(readError)")
                } else if let text = reason.logText(idleTimeoutSeconds: limits.idleTimeoutSeconds) {
                    session.log(text)
                }
                return
            }
        }
    }

    /// ClientConnection time now.
    private var now: Duration { ContinuousClock.now - session.began }

    /// Reads once, waiting at most `timeout`, and feeds the outcome.
    private func read(timeout: Duration) -> ConnectionMachine.Action {
        if timeout != receiveTimeout {
            receiveTimeout = timeout
            _ = csystem_set_timeouts(
                fd, ClientConnection.milliseconds(timeout), ClientConnection.milliseconds(ClientConnection.sendTimeout))
        }
        let bytes: [UInt8]
        do {
            bytes = try UnixSocket.read(fd)
        } catch {
            if error.errno == EAGAIN { return machine.tick(now: now) }
            readError = error
            return machine.readFailed(now: now)
        }
        if bytes.isEmpty {
            _ = deliverShutdownRequest()  // a requested shutdown ends the read side: say so
            return machine.inputEnded(now: now)
        }
        return machine.bytesRead(bytes, now: now)
    }

    /// Offers call `id` to the handler's ``CallHandler/begin(_:)``.
    private func begin(_ id: ConnectionMachine.CallID, _ call: VarlinkCall) -> ConnectionMachine.BeginOutcome {
        do {
            guard let finish = try handler.begin(context(id, call)) else { return .declined }
            finishers[id] = (finish, call)
            return .started
        } catch {
            let mapped = WireError(mapping: error, interface: call.interface)
            handler.answered(call, error: mapped)
            return .failed(mapped)
        }
    }

    /// The context of call `id`: its replies go through the machine.
    private func context(_ id: ConnectionMachine.CallID, _ call: VarlinkCall) -> CallContext {
        CallContext(
            caller: session.caller, call: call,
            send: { [self] reply in try send(reply, from: id) },
            clientHungUp: { [self] in
                _ = deliverShutdownRequest()
                return streamStopped || csystem_other_end_hung_up(fd) != 0
            })
    }

    /// Sends one reply of running call `id`, as the machine says.
    /// - Throws: ``SystemError`` when the write fails or an earlier one did (`EPIPE`).
    private func send(_ reply: VarlinkReply, from id: ConnectionMachine.CallID) throws {
        switch machine.reply(reply, from: id) {
        case .discard:
            return
        case .clientGone:
            throw SystemError("send", errno: EPIPE)
        case .send(let startsStream):
            if startsStream { streamStarts() }
            do { try UnixSocket.writeAll(fd, reply.encoded) } catch {
                machine.writeFailed()
                throw error
            }
        }
    }

    /// The first reply with `continues`: tells the owner, and cuts both sides
    /// if shutdown was already requested (as ``requestShutdown()`` would now).
    private func streamStarts() {
        session.onStream()
        session.shutdownShared.withLock { shared in
            shared.streaming = true
            if shared.requested { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Tells the machine of a shutdown ``requestShutdown()`` asked for, once.
    /// - Returns: true when it did so now.
    private func deliverShutdownRequest() -> Bool {
        guard !shutdownDelivered else { return false }
        let requested = session.shutdownShared.withLock { $0.requested }
        guard requested else { return false }
        shutdownDelivered = true
        if machine.shutdownRequested() == .stopStreaming { streamStopped = true }
        return true
    }
}
