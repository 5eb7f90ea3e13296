import Foundation
@preconcurrency import Glibc
import EntryModel
import EntryProtocol

/// Copies bytes both ways between a pair of plain descriptors and a socket,
/// until both directions end: `entryctl bridge` puts a remote daemon on its
/// stdin/stdout, so `exec:ssh HOST entryctl bridge` is a varlink peer address.
///
/// Input end of stream half-closes the socket (`SHUT_WR`), so the daemon sees
/// the hang-up and still delivers its last replies; the socket's end of stream
/// ends the bridge.
package enum ByteBridge {
    /// Runs the bridge; returns when the socket side has closed.
    /// - Parameters:
    ///   - input: read end (stdin, 0), copied to `socket`.
    ///   - output: write end (stdout, 1), receives what `socket` sends.
    package static func run(input: Int32, output: Int32, socket: Int32) {
        let upstream = Thread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = buffer.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, 65536) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                do { try UnixSocket.writeAll(socket, Array(buffer[0..<n])) } catch { break }
            }
            shutdown(socket, Int32(SHUT_WR))
        }
        upstream.start()
        while true {
            guard let bytes = try? UnixSocket.read(socket), !bytes.isEmpty else { break }
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes { Glibc.write(output, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
            }
        }
    }
}
