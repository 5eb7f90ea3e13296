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
/// `exec:ssh host entryctl bridge` reaches a remote daemon over SSH.
package final class PeerTransport {
    /// The open connection to the peer's daemon.
    package let connection: VarlinkConnection
    /// The `exec:` command's process (`nil` for `unix:`); internal for the tests.
    let process: Process?

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
            process = nil
        } else if address.hasPrefix("exec:") {
            var fds: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
                throw SystemError("socketpair")
            }
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            p.arguments = ["-c", String(address.dropFirst(5))]
            let childEnd = FileHandle(fileDescriptor: fds[1], closeOnDealloc: false)
            p.standardInput = childEnd
            p.standardOutput = childEnd
            do {
                try p.run()
            } catch {
                Glibc.close(fds[0])
                Glibc.close(fds[1])
                throw SystemError("exec", errno: ENOENT, detail: String(address.dropFirst(5)))
            }
            Glibc.close(fds[1])
            connection = VarlinkConnection(fd: fds[0])
            _ = csystem_set_timeouts(fds[0], timeoutSeconds * 1000, timeoutSeconds * 1000)
            process = p
        } else {
            throw EntryError.invalidParameter("peer")
        }
    }

    /// Closes the connection and, for `exec:`, waits for the command (killing it after 5 s).
    package func close() {
        connection.close()
        guard let p = process else { return }
        let deadline = Date().addingTimeInterval(5)
        while p.isRunning && Date() < deadline { usleep(10_000) }
        if p.isRunning { p.terminate() }
        // Also when the command has already exited (it returns at once then): in
        // swift-corelibs-foundation only waitUntilExit() breaks the cycle between a
        // Process and its run-loop source, so without it every exec: sync kept one.
        p.waitUntilExit()
    }

    deinit { close() }
}
