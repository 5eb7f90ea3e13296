@preconcurrency import Glibc
import CSystem
import EntryModel

/// Blocking helpers for Unix stream sockets (unix(7)); the descriptor is a plain `Int32`.
package enum UnixSocket {
    /// Longest path `sockaddr_un.sun_path` holds, in bytes, without the NUL.
    package static let maxPathBytes = 107

    /// Fills a `sockaddr_un` for `path`.
    /// - Throws: ``SystemError`` (`ENAMETOOLONG`) when the path does not fit.
    static func address(_ path: String) throws(SystemError) -> sockaddr_un {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count <= maxPathBytes, !bytes.isEmpty else {
            throw SystemError("socket path", errno: ENAMETOOLONG, detail: path)
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
        return addr
    }

    /// Connects to the socket at `path`.
    /// - Returns: the connected descriptor (close-on-exec).
    /// - Throws: ``SystemError`` from `socket` or `connect` (`ENOENT`, `ECONNREFUSED`, `EACCES` …).
    package static func connect(path: String) throws(SystemError) -> Int32 {
        var addr = try address(path)
        let fd = csystem_unix_stream_socket()
        guard fd >= 0 else { throw SystemError("socket") }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if rc != 0 {
            let e = errno
            close(fd)
            throw SystemError("connect", errno: e, detail: path)
        }
        return fd
    }

    /// Creates a socket bound to `path` and listening, with `mode` (e.g. 0o660).
    /// - Parameter backlog: the listen(2) queue length.
    /// - Throws: ``SystemError`` from `socket`, `bind` (`EADDRINUSE` when the file exists), `chmod` or `listen`.
    package static func listen(path: String, mode: mode_t, backlog: Int32 = 128) throws(SystemError) -> Int32 {
        var addr = try address(path)
        let fd = csystem_unix_stream_socket()
        guard fd >= 0 else { throw SystemError("socket") }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if rc != 0 {
            let e = errno
            close(fd)
            throw SystemError("bind", errno: e, detail: path)
        }
        if chmod(path, mode) != 0 {
            let e = errno
            close(fd)
            throw SystemError("chmod", errno: e, detail: path)
        }
        if Glibc.listen(fd, backlog) != 0 {
            let e = errno
            close(fd)
            throw SystemError("listen", errno: e, detail: path)
        }
        return fd
    }

    /// Writes all of `bytes`, retrying on `EINTR` and short writes. Uses
    /// `MSG_NOSIGNAL`, so a connection closed at the other end gives `EPIPE` instead of SIGPIPE.
    /// - Throws: ``SystemError`` from `send` (`EPIPE`, `EAGAIN` on a send timeout …).
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError("send")
            }
            offset += n
        }
    }

    /// Reads what is available, up to `maxBytes`, blocking until something arrives.
    /// - Returns: the bytes read; empty at end of stream.
    /// - Throws: ``SystemError`` from `recv` (`EAGAIN` on a receive timeout, `ECONNRESET` …).
    package static func read(_ fd: Int32, maxBytes: Int = 65536) throws(SystemError) -> [UInt8] {
        try receive(fd, maxBytes: maxBytes, flags: 0)
    }

    /// Reads up to `maxBytes` that have already arrived on `fd`, without
    /// waiting (`recv` with `MSG_DONTWAIT`).
    /// - Returns: the bytes; empty when none have arrived, at the end of the
    ///   stream, or on a read error (a blocking ``read(_:maxBytes:)`` after it
    ///   tells those apart).
    package static func readAvailable(_ fd: Int32, maxBytes: Int = 65536) -> [UInt8] {
        (try? receive(fd, maxBytes: maxBytes, flags: Int32(MSG_DONTWAIT))) ?? []
    }

    /// `recv(2)` of up to `maxBytes` into a new array, again after EINTR.
    private static func receive(_ fd: Int32, maxBytes: Int, flags: Int32) throws(SystemError) -> [UInt8] {
        while true {
            var failure: Int32 = 0
            // Uninitialised capacity: recv fills what it reads, nothing is zeroed first.
            let buffer = [UInt8](unsafeUninitializedCapacity: maxBytes) { bytes, count in
                let n = recv(fd, bytes.baseAddress, maxBytes, flags)
                failure = n < 0 ? errno : 0
                count = max(n, 0)
            }
            if failure != 0 {
                if failure == EINTR { continue }
                throw SystemError("recv", errno: failure)
            }
            return buffer
        }
    }
}
