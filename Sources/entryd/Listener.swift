@preconcurrency import Glibc
import CSystem
import EntryCore
import Foundation

/// Accepts clients on the listening socket and runs one session thread per
/// connection, up to `max-connections`; tracks them so shutdown can drain.
final class Listener: @unchecked Sendable {
    let fd: Int32
    let service: EntryService
    let log: Log
    private let lock = NSCondition()
    private var open: Set<Int32> = []
    private var stopping = false

    init(fd: Int32, service: EntryService, log: Log) {
        self.fd = fd
        self.service = service
        self.log = log
    }

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
        let caller = Peer.caller(of: client)
        let thread = Thread { [self] in
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

/// Peer credentials and user names (SO_PEERCRED, getpwuid_r(3)).
enum Peer {
    static func caller(of fd: Int32) -> Caller {
        var pid: pid_t = 0, uid: uid_t = 0, gid: gid_t = 0
        if csystem_peercred(fd, &pid, &uid, &gid) != 0 { uid = UInt32.max; gid = UInt32.max }
        // Roles come with the configuration (issue 4); until then every local peer may write and sync.
        return Caller(pid: pid, uid: uid, gid: gid, userName: userName(uid), role: .admin)
    }

    static func userName(_ uid: uid_t) -> String {
        var pwd = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        if getpwuid_r(uid, &pwd, &buffer, buffer.count, &result) == 0, let p = result, let name = p.pointee.pw_name {
            return String(cString: name)
        }
        return String(uid)
    }
}
