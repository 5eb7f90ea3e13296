@preconcurrency import Glibc
import EntryModel

// The two systemd protocols entryd and entryd-web speak, implemented directly rather than by
// linking libsystemd: both are documented as stable interfaces (sd_notify(3),
// sd_listen_fds(3)) and take some 100 lines; libsystemd-dev would add a C
// build dependency whose version must match the installed libsystemd0 (on
// Debian, installing a mismatched one pulls newer systemd packages), and the
// daemon would still need the fallbacks below when run without systemd.

/// Socket activation (sd_listen_fds(3)).
package enum SocketActivation {
    /// > SD_LISTEN_FDS_START: the first passed file descriptor is 3.
    package static let firstFD: Int32 = 3

    /// The listening socket systemd passed, or `nil` when not socket-activated.
    ///
    /// Follows sd_listen_fds(3): the descriptors are passed only when
    /// `LISTEN_PID` is this process; `LISTEN_FDS` counts them from fd 3. The
    /// variables are removed afterwards (as `unset_environment=1` does), so the
    /// commands of `exec:` peers do not see them, and the descriptors get
    /// FD_CLOEXEC. The first is used; extra ones are closed with a warning.
    /// `unit` names the socket unit in the error (`entryd.socket`).
    /// - Throws: ``SystemError`` when fd 3 is not a listening stream socket.
    package static func takeListeningSocket(environment: [String: String], log: Log, unit: String = "entryd.socket")
        throws -> Int32?
    {
        defer { for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) } }
        guard let pidText = environment["LISTEN_PID"], let pid = pid_t(pidText), pid == getpid(),
            let countText = environment["LISTEN_FDS"], let count = Int32(countText), count > 0
        else { return nil }
        for fd in firstFD..<(firstFD + count) { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        if count > 1 {
            log.warning("systemd passed \(count) sockets; serving the first, closing the others")
            for fd in (firstFD + 1)..<(firstFD + count) { close(fd) }
        }
        var st = stat()
        var listening: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard fstat(firstFD, &st) == 0, st.st_mode & S_IFMT == S_IFSOCK,
            getsockopt(firstFD, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0, listening != 0
        else {
            throw SystemError(
                "socket activation", errno: ENOTSOCK,
                detail: "fd 3 is not a listening socket; check ListenStream= in \(unit)")
        }
        return firstFD
    }

    /// The path a Unix socket is bound to (getsockname(2)), for the log.
    package static func boundPath(_ fd: Int32) -> String {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let rc = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard rc == 0, address.sun_family == sa_family_t(AF_UNIX) else { return "fd \(fd)" }
        return withUnsafeBytes(of: &address.sun_path) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
    }
}

/// Service notifications to the manager (sd_notify(3)): one datagram per
/// message on the `AF_UNIX` socket named by `NOTIFY_SOCKET`.
///
/// > If the first character of $NOTIFY_SOCKET is "@", the string is understood
/// > as Linux abstract namespace socket. (sd_notify(3))
///
/// Without `NOTIFY_SOCKET` every call does nothing. Thread-safe.
package final class Notifier: Sendable {
    private let address: sockaddr_un?
    private let addressLength: socklen_t
    private let fd: Int32
    private let log: Log

    /// Reads `NOTIFY_SOCKET` and removes it from the environment (children
    /// such as `exec:` peer commands must not notify in the daemon's name).
    package init(environment: [String: String], log: Log) {
        self.log = log
        unsetenv("NOTIFY_SOCKET")
        guard let name = environment["NOTIFY_SOCKET"], name.hasPrefix("/") || name.hasPrefix("@"),
            name.utf8.count <= UnixSocket.maxPathBytes
        else {
            if let name = environment["NOTIFY_SOCKET"], !name.isEmpty {
                log.warning("NOTIFY_SOCKET '\(name)' is not a path or @abstract name; not notifying")
            }
            address = nil
            addressLength = 0
            fd = -1
            return
        }
        var a = sockaddr_un()
        a.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(name.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &a.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        address = a
        // An abstract name's length is exact (no trailing NUL); a path's includes none either.
        addressLength = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }

    /// Whether a manager listens (NOTIFY_SOCKET was set).
    package var isActive: Bool { address != nil && fd >= 0 }

    /// Sends `lines` (e.g. `["READY=1", "STATUS=serving"]`) as one datagram.
    /// A failure is logged and otherwise ignored: the service keeps running.
    package func send(_ lines: String...) {
        guard var a = address, fd >= 0 else { return }
        let text = Array(lines.joined(separator: "\n").utf8)
        let sent = withUnsafePointer(to: &a) { ap in
            ap.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                text.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), sa, addressLength) }
            }
        }
        if sent < 0 {
            log.warning("sd_notify '\(lines.first ?? "")' failed: \(String(cString: strerror(errno))); ignoring")
        }
    }

    /// `MONOTONIC_USEC=` for a `RELOADING=1` message: CLOCK_MONOTONIC in microseconds.
    package static func monotonicMicroseconds() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000 + UInt64(t.tv_nsec) / 1000
    }

    /// The watchdog interval the manager asks for, in microseconds, or `nil`.
    ///
    /// > WATCHDOG_USEC … if WATCHDOG_PID is set, only the process with that PID
    /// > is meant to send keep-alive pings (sd_watchdog_enabled(3)).
    package static func watchdogMicroseconds(environment: [String: String]) -> UInt64? {
        defer {
            unsetenv("WATCHDOG_USEC")
            unsetenv("WATCHDOG_PID")
        }
        guard let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"], pid_t(pid) != getpid() { return nil }
        return usec
    }
}
