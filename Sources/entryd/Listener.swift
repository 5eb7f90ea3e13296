@preconcurrency import Glibc
import CSystem
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync
import EntryServer
import Foundation

/// Accepts clients on the listening socket and runs one session thread per
/// connection, up to `max-connections`; tracks them so shutdown can drain.
/// Each connection's role comes from the access policy in force: a reload
/// replaces it for new connections and gives every open one its role under
/// the new policy, so a revoked role (a gateway, an admin) ends at once.
final class Listener: Sendable {
    let fd: Int32
    let service: EntryService
    let log: Log
    /// The listener's shared state; ``stop(deadline:)`` waits on it for sessions to end.
    private struct State {
        /// The connections being served.
        var open: Set<Int32> = []
        /// The session serving each open connection, once its thread has made it
        /// (``stop(deadline:)`` asks each to end through ``ClientConnection/requestShutdown()``).
        var sessions: [Int32: ClientConnection] = [:]
        var stopping = false
        var policy: AccessPolicy
        /// Counts the policies set (``access``): a session made under an older one is reassigned.
        var policyGeneration = 0
        /// Refusals waiting for their first call, at most ``maxPendingRefusals``.
        var pendingRefusals = 0
    }
    private let state: Monitor<State>
    /// A pipe whose read end wakes ``run()`` for ``stop()``.
    private let wake: [Int32]

    init(fd: Int32, service: EntryService, access: AccessPolicy, log: Log) {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) != 0 { fatalError("pipe: \(String(cString: strerror(errno)))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        wake = ends
        self.fd = fd
        self.service = service
        self.state = Monitor(State(policy: access))
        self.log = log
    }

    /// The access policy in force; setting it (reload) re-reads the role of
    /// every open connection.
    var access: AccessPolicy {
        get { state.withLock { $0.policy } }
        set {
            let open = state.withLock { state in
                state.policy = newValue
                state.policyGeneration += 1
                return state.sessions
            }
            for (client, session) in open {
                let before = session.caller
                let after = SocketCredentials.caller(of: client, access: newValue)
                guard after.roles != before.roles || after.isGateway != before.isGateway else { continue }
                session.reassign(after)
                log.notice(
                    "client fd=\(client) user='\(after.userName)': role \(before.roleNames)\(before.isGateway ? " (gateway)" : "") → \(after.roleNames)\(after.isGateway ? " (gateway)" : "") after the reload"
                )
            }
        }
    }

    /// Sessions open now.
    var openCount: Int { state.withLock { $0.open.count } }

    /// Accepts until ``stop()``, then closes the listening descriptor and returns.
    ///
    /// The loop waits in poll(2) on the socket and on a wake-up pipe, rather
    /// than having ``stop()`` shut the socket down: shutdown(2) acts on the
    /// socket itself, which for a socket passed by systemd is shared with
    /// entryd.socket and must keep listening for the next activation.
    func run() {
        while true {
            var fds = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake[0], events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, -1)
            if isStopping || fds[1].revents != 0 { break }
            if ready < 0 {
                if errno == EINTR { continue }
                log.warning("poll on the listening socket failed: \(String(cString: strerror(errno))); retrying")
                usleep(100_000)
                continue
            }
            guard fds[0].revents != 0 else { continue }
            let client = csystem_accept_cloexec(fd)
            if client < 0 {
                let e = errno
                if e == EINTR || e == ECONNABORTED || e == EAGAIN { continue }
                log.warning("accept failed: \(String(cString: strerror(e))); retrying")
                usleep(100_000)
                continue
            }
            admit(client)
        }
        // Self-bound: the socket goes away and new clients are refused. Passed by
        // systemd: only this descriptor closes; systemd keeps listening.
        close(fd)
    }

    private var isStopping: Bool { state.withLock { $0.stopping } }

    private func admit(_ client: Int32) {
        let limits = service.limits
        let refuse = state.withLock { state in
            let full = state.open.count >= limits.maxConnections
            if !full && !state.stopping { state.open.insert(client) }
            return full || state.stopping
        }
        if refuse {
            self.refuse(client, limits: limits)
            return
        }
        let (policy, generation) = state.withLock { ($0.policy, $0.policyGeneration) }
        let thread = Thread { [self] in
            // Account look-ups may be slow (NSS), so they run here, not in the accept loop.
            let caller = SocketCredentials.caller(of: client, access: policy)
            log.debug(
                "client fd=\(client) pid=\(caller.pid) user='\(caller.userName)' role=\(caller.roleNames): connected")
            let session = ClientConnection(
                fd: client, caller: caller, handler: service, limits: limits,
                log: { [log] event in
                    log.debug("client fd=\(client) pid=\(caller.pid): \(event)")
                })
            let late = state.withLock { state in
                state.sessions[client] = session
                return state.stopping
            }
            // A reload between reading the policy and this session being listed could not
            // reassign it: it takes the policy in force now (until that stays the same).
            var seen = generation
            while let (now, current) = state.withLock({ s in
                s.policyGeneration == seen ? nil : (s.policyGeneration, s.policy)
            }) {
                session.reassign(SocketCredentials.caller(of: client, access: current))
                seen = now
            }
            if late { session.requestShutdown() }
            session.run()
            state.withLock(wake: .all) { state in
                state.open.remove(client)
                state.sessions[client] = nil
                close(client)
            }
        }
        thread.stackSize = 1 << 20
        thread.name = "entryd-session"
        thread.start()
    }

    /// Refused connections whose first call is awaited at once; past this they are closed at once.
    static let maxPendingRefusals = 64

    /// doc/protocol.md: the first call of a connection over max-connections gets
    /// `LimitExceeded(max-connections)`, then the connection is closed. The call
    /// is awaited for up to a second on a short-lived thread, so the client reads
    /// the refusal as the answer to its call instead of a reset connection.
    private func refuse(_ client: Int32, limits: Limits) {
        log.notice("refused a connection: max-connections=\(limits.maxConnections) reached")
        let reply = VarlinkReply(
            error: WireError(mapping: EntryError.limitExceeded("max-connections", maximum: limits.maxConnections))
        ).encoded
        let wait = state.withLock { state in
            let wait = state.pendingRefusals < Listener.maxPendingRefusals
            if wait { state.pendingRefusals += 1 }
            return wait
        }
        guard wait else {
            try? UnixSocket.writeAll(client, reply)
            close(client)
            return
        }
        let thread = Thread { [self] in
            _ = csystem_set_timeouts(client, 1000, 1000)
            var decoder = FrameDecoder(maxMessageBytes: limits.maxMessageBytes)
            readLoop: while true {
                guard let bytes = try? UnixSocket.read(client), !bytes.isEmpty else { break }
                decoder.append(bytes)
                switch Result(catching: { try decoder.next() }) {
                case .success(nil): continue
                default: break readLoop
                }
            }
            try? UnixSocket.writeAll(client, reply)
            shutdown(client, Int32(SHUT_WR))
            close(client)
            state.withLock { $0.pendingRefusals -= 1 }
        }
        thread.stackSize = 256 << 10
        thread.start()
    }

    /// Stops accepting, lets each session finish the call it is in, then waits
    /// up to `deadline` seconds for all to end. Sessions serving a `more`
    /// stream (which has no end of its own) are cut at once.
    /// - Returns: the number of sessions still open at the deadline.
    func stop(deadline: Double) -> Int {
        state.withLock { $0.stopping = true }
        var byte: UInt8 = 1
        _ = write(wake[1], &byte, 1)
        let drained = state.withLock { state in
            // Each session reads no more, answers the call it is in and stops a stream (which
            // never ends by itself); see ClientConnection.requestShutdown(). A connection whose session
            // is not made yet only has its read side ended: the session then sees the end.
            for client in state.open {
                if let session = state.sessions[client] {
                    session.requestShutdown()
                } else {
                    shutdown(client, Int32(SHUT_RD))
                }
            }
            return state.open.count
        }
        let until = Date(timeIntervalSinceNow: deadline)
        let left = state.withLock(waitingUntil: until, while: { !$0.open.isEmpty }) { $0.open.count }
        log.info("drained \(drained - left) session(s)")
        return left
    }
}
