@preconcurrency import Glibc
import CSystem
import EntryCore
import Foundation

/// Accepts clients on the listening socket and runs one session thread per
/// connection, up to `max-connections`; tracks them so shutdown can drain.
/// Each connection's role comes from the access policy in force when it was
/// accepted (a reload replaces the policy for new connections).
final class Listener: @unchecked Sendable {
    let fd: Int32
    let service: EntryService
    let log: Log
    private let lock = NSCondition()
    private var open: Set<Int32> = []
    private var stopping = false
    private var policy: AccessPolicy

    init(fd: Int32, service: EntryService, access: AccessPolicy, log: Log) {
        self.fd = fd
        self.service = service
        self.policy = access
        self.log = log
    }

    /// The access policy for connections accepted from now on (reload).
    var access: AccessPolicy {
        get { lock.lock(); defer { lock.unlock() }; return policy }
        set { lock.lock(); policy = newValue; lock.unlock() }
    }

    /// Sessions open now.
    var openCount: Int { lock.lock(); defer { lock.unlock() }; return open.count }

    /// Accepts until ``stop()``; returns then.
    func run() {
        while true {
            let client = csystem_accept_cloexec(fd)
            if client < 0 {
                let e = errno
                if isStopping { return }
                if e == EINTR || e == ECONNABORTED { continue }
                log.warning("accept failed: \(String(cString: strerror(e))); retrying")
                usleep(100_000)
                continue
            }
            admit(client)
        }
    }

    private var isStopping: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopping
    }

    private func admit(_ client: Int32) {
        let limits = service.limits
        lock.lock()
        let full = open.count >= limits.maxConnections
        if !full && !stopping { open.insert(client) }
        let refuse = full || stopping
        lock.unlock()
        if refuse {
            // PROTOCOL.md: the first call of a connection over max-connections gets
            // LimitExceeded, then the connection is closed.
            _ = csystem_set_timeouts(client, 1000, 1000)
            try? UnixSocket.writeAll(client, VarlinkReply(error: .limitExceeded("max-connections", maximum: limits.maxConnections)).encoded)
            close(client)
            log.notice("refused a connection: max-connections=\(limits.maxConnections) reached")
            return
        }
        let policy = access
        let thread = Thread { [self] in
            // Account look-ups may be slow (NSS), so they run here, not in the accept loop.
            let caller = Peer.caller(of: client, access: policy)
            log.debug("client fd=\(client) pid=\(caller.pid) user='\(caller.userName)' role=\(caller.role.name): connected")
            let session = Session(fd: client, caller: caller, handler: service, limits: limits) { [log] event in
                log.debug("client fd=\(client) pid=\(caller.pid): \(event)")
            }
            session.run()
            lock.lock()
            open.remove(client)
            close(client)
            lock.broadcast()
            lock.unlock()
        }
        thread.stackSize = 1 << 20
        thread.name = "entryd-session"
        thread.start()
    }

    /// Stops accepting, lets each session finish the call it is in, then waits
    /// up to `deadline` seconds for all to end.
    /// - Returns: the number of sessions still open at the deadline.
    func stop(deadline: Double) -> Int {
        lock.lock()
        stopping = true
        lock.unlock()
        shutdown(fd, Int32(SHUT_RDWR))
        lock.lock()
        let drained = open.count
        // Ending the read side makes each session see end of stream after its current call.
        for client in open { shutdown(client, Int32(SHUT_RD)) }
        let until = Date(timeIntervalSinceNow: deadline)
        while !open.isEmpty { if !lock.wait(until: until) { break } }
        let left = open.count
        lock.unlock()
        log.info("drained \(drained - left) session(s)")
        return left
    }
}

/// Peer credentials (SO_PEERCRED, unix(7)) mapped to a caller with a role.
enum Peer {
    /// The uid entryd runs as: that user is always admin.
    static let daemonUID = getuid()

    /// Who is on the other end of `fd`, with the role `access` grants: the
    /// user name from getpwuid_r(3), groups from getgrouplist(3). A socket
    /// without credentials (never on Linux AF_UNIX) gets no role.
    static func caller(of fd: Int32, access: AccessPolicy) -> Caller {
        var pid: pid_t = 0, uid: uid_t = 0, gid: gid_t = 0
        guard csystem_peercred(fd, &pid, &uid, &gid) == 0 else {
            return Caller(pid: 0, uid: UInt32.max, gid: UInt32.max, userName: "unknown", role: .none)
        }
        let name = Accounts.userName(uid)
        let role = access.role(uid: uid, userName: name, groups: Accounts.groupNames(userName: name, gid: gid), daemonUID: daemonUID)
        return Caller(pid: pid, uid: uid, gid: gid, userName: name, role: role)
    }
}
