import CSystem
import Foundation
@preconcurrency import Glibc
import EntryModel
import EntryLedger
import EntryProtocol

/// Opens a varlink connection to a peer address.
///
/// `unix:/path` connects to the socket. `exec:COMMAND` runs `/bin/sh -c
/// COMMAND` with its stdin and stdout on one end of a socket pair, so
/// `exec:ssh host entryctl bridge` reaches a remote daemon over SSH. The
/// command runs in a process group of its own: ``close()`` ends all of it,
/// its children too, so a command that never answers and never exits (ssh to
/// a host that drops packets) costs one sync a bounded time, not the peer
/// scheduler forever.
package final class PeerTransport {
    /// The open connection to the peer's daemon.
    package let connection: VarlinkConnection
    /// The `exec:` command's process id, also its process group's (`nil` for
    /// `unix:`, and once reaped); internal for the tests.
    private(set) var pid: pid_t?

    /// How long ``close()`` waits for an `exec:` command to end by itself once
    /// its connection is closed, then after `SIGTERM` to its group, in seconds.
    static let exitGrace = (own: 5.0, afterTerm: 2.0)

    /// - Parameter timeoutSeconds: how long a read or write may wait before the
    ///   call fails (a peer that accepts and never answers must not hang a sync).
    /// - Throws: ``SystemError`` when the socket cannot be reached or the
    ///   command cannot start; ``EntryError`` `.invalidParameter("peer")` for an
    ///   address of another scheme or a relative socket path.
    package init(address: String, timeoutSeconds: Int = 30) throws {
        if address.hasPrefix("unix:") {
            let path = String(address.dropFirst(5))
            // Relative to what? The daemon's working directory is no one's business.
            guard path.hasPrefix("/") else { throw EntryError.invalidParameter("peer") }
            connection = try VarlinkConnection(path: path)
            _ = csystem_set_timeouts(connection.fd, timeoutSeconds * 1000, timeoutSeconds * 1000)
            pid = nil
        } else if address.hasPrefix("exec:") {
            var fds: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
                throw SystemError("socketpair")
            }
            let child = csystem_spawn_shell(String(address.dropFirst(5)), fds[1])
            let spawnErrno = errno
            Glibc.close(fds[1])
            guard child > 0 else {
                Glibc.close(fds[0])
                throw SystemError("exec", errno: spawnErrno, detail: String(address.dropFirst(5)))
            }
            connection = VarlinkConnection(fd: fds[0])
            _ = csystem_set_timeouts(fds[0], timeoutSeconds * 1000, timeoutSeconds * 1000)
            pid = child
        } else {
            throw EntryError.invalidParameter("peer")
        }
    }

    /// Closes the connection and, for `exec:`, waits for the command to exit
    /// (``exitGrace``): then `SIGTERM` to its process group, then `SIGKILL`.
    /// Whatever of the group is left once the command has exited (a child it
    /// left running) gets `SIGTERM` before the command is reaped (until then
    /// the group's id cannot be another's). Idempotent.
    package func close() {
        connection.close()
        guard let child = pid else { return }
        pid = nil
        if !Self.exited(child, within: Self.exitGrace.own) {
            kill(-child, SIGTERM)
            if !Self.exited(child, within: Self.exitGrace.afterTerm) {
                kill(-child, SIGKILL)
                _ = Self.exited(child, within: .infinity)
            }
        }
        kill(-child, SIGTERM)  // ESRCH when nothing of the group is left
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
    }

    /// Polls for `child`'s exit (not reaping it) for up to `seconds`; true
    /// once it has exited, or when it is no child of this process.
    private static func exited(_ child: pid_t, within seconds: Double) -> Bool {
        let deadline = seconds.isFinite ? ContinuousClock.now + .milliseconds(Int(seconds * 1000)) : nil
        while true {
            let r = csystem_child_exited(child)
            if r == 1 || (r < 0 && errno != EINTR) { return true }
            if let deadline, ContinuousClock.now >= deadline { return false }
            usleep(10_000)
        }
    }

    deinit { close() }
}
