import Foundation
import Synchronization
import EntryModel
import EntryProtocol
import EntryLedger

/// A lean varlink client for the bench: sends pre-encoded calls and splits
/// replies at their NUL without decoding them, so the client's own CPU (which
/// shares the machine with the daemon) stays small.
final class RawClient: Sendable {
    let fd: Int32
    /// Bytes read, and where the next reply starts in them (one thread uses a client at a time).
    private let input = Mutex<(buffer: [UInt8], start: Int)>(([], 0))

    /// Connects to the daemon's socket at `path`.
    /// - Throws: ``SystemError``.
    init(path: String) throws {
        fd = try UnixSocket.connect(path: path)
    }

    deinit { close(fd) }

    /// Sends one or more pre-encoded calls (each NUL-terminated).
    func send(_ bytes: [UInt8]) throws { try UnixSocket.writeAll(fd, bytes) }

    /// The next whole reply, NUL excluded.
    /// - Throws: ``ConnectionClosed`` when the daemon hung up.
    func receive() throws -> ArraySlice<UInt8> {
        try input.withLock { try receive(&$0.buffer, &$0.start) }
    }

    private func receive(_ buffer: inout [UInt8], _ start: inout Int) throws -> ArraySlice<UInt8> {
        while true {
            if let nul = buffer[start...].firstIndex(of: 0) {
                let reply = buffer[start..<nul]
                start = nul + 1
                return reply
            }
            if start > 0 {
                buffer.removeSubrange(0..<start)
                start = 0
            }
            // 64 KiB per read: a larger buffer would be a fresh mmap (and munmap) per reply.
            let more = try UnixSocket.read(fd, maxBytes: 65536)
            if more.isEmpty { throw ConnectionClosed() }
            buffer += more
        }
    }

    /// True when `reply` is an error reply (entryd puts `"error"` first).
    static func isError(_ reply: ArraySlice<UInt8>) -> Bool {
        reply.starts(with: Array("{\"error\"".utf8))
    }

    /// Sends one call and waits for its reply, decoded.
    /// - Throws: ``WireError`` for an error reply; socket and parse errors.
    func call(_ method: Method, _ parameters: JSON = .object([])) throws -> JSON {
        try send(VarlinkCall(method, parameters: parameters).encoded)
        let reply = try VarlinkReply.decode(Array(try receive()))
        if let e = reply.error { throw WireError(name: e, parameters: reply.parameters) }
        return reply.parameters
    }
}
