@preconcurrency import Glibc
import EntryModel

/// A blocking varlink client connection over a Unix stream socket.
///
/// Used by `entryctl`, the tests and (later) peer sync. Not thread-safe: one
/// thread at a time. Calls are answered in order, so several may be sent before
/// reading replies (pipelining) with ``send(_:)`` and ``receive()``.
package final class VarlinkConnection {
    /// The connected descriptor.
    package let fd: Int32
    private var decoder: FrameDecoder
    private var closed = false

    /// Connects to `path`.
    /// - Parameter maxReplyBytes: largest reply accepted, in bytes (default 64 MiB).
    /// - Throws: ``SystemError`` when the socket cannot be reached.
    package init(path: String, maxReplyBytes: Int = 64 << 20) throws(SystemError) {
        fd = try UnixSocket.connect(path: path)
        decoder = FrameDecoder(maxMessageBytes: maxReplyBytes)
    }

    /// Wraps an already connected descriptor (a pipe pair is not supported; a socket is).
    package init(fd: Int32, maxReplyBytes: Int = 64 << 20) {
        self.fd = fd
        decoder = FrameDecoder(maxMessageBytes: maxReplyBytes)
    }

    deinit { close() }

    /// Closes the connection; further calls fail with `EBADF`.
    package func close() {
        if !closed {
            closed = true
            _ = Glibc.close(fd)
        }
    }

    /// Sends one call without waiting for its reply.
    /// - Throws: ``SystemError`` from the socket.
    package func send(_ call: VarlinkCall) throws(SystemError) {
        try UnixSocket.writeAll(fd, call.encoded)
    }

    /// Sends raw bytes (tests use this to send malformed messages).
    package func sendRaw(_ bytes: [UInt8]) throws(SystemError) {
        try UnixSocket.writeAll(fd, bytes)
    }

    /// Reads the next reply.
    /// - Throws: ``ConnectionClosed`` when the daemon hung up first, ``SystemError``
    ///   from the socket, ``JSONParseError`` for an undecodable reply.
    package func receive() throws -> VarlinkReply {
        while true {
            if let message = try decoder.next() { return try VarlinkReply.decode(message) }
            let bytes = try UnixSocket.read(fd)
            if bytes.isEmpty { throw ConnectionClosed() }
            decoder.append(bytes)
        }
    }

    /// Calls `method` and returns the reply's parameters.
    /// - Throws: ``WireError`` when the daemon replies with an error, or the
    ///   errors of ``receive()``.
    package func call(_ method: String, _ parameters: JSON = .object([])) throws -> JSON {
        try send(VarlinkCall(method: method, parameters: parameters))
        let reply = try receive()
        if let error = reply.error { throw WireError(name: error, parameters: reply.parameters) }
        return reply.parameters
    }

    /// Calls `method` (one declared in interfaces/*.varlink) and returns the
    /// reply's parameters, as the overload that takes its name does.
    package func call(_ method: Method, _ parameters: JSON = .object([])) throws -> JSON {
        try call(method.rawValue, parameters)
    }

    /// Streams the replies of `method` (one declared in interfaces/*.varlink),
    /// as the overload that takes its name does.
    package func stream(_ method: Method, _ parameters: JSON, _ body: (JSON) throws -> Bool) throws {
        try stream(method.rawValue, parameters, body)
    }

    /// Calls `method` with `more: true` and hands each reply to `body` until the
    /// last one (without `continues`) or until `body` returns `false`.
    /// - Throws: ``WireError`` for an error reply, or the errors of ``receive()``.
    package func stream(_ method: String, _ parameters: JSON, _ body: (JSON) throws -> Bool) throws {
        try send(VarlinkCall(method: method, parameters: parameters, more: true))
        while true {
            let reply = try receive()
            if let error = reply.error { throw WireError(name: error, parameters: reply.parameters) }
            if try !body(reply.parameters) || !reply.continues { return }
        }
    }
}

/// The other end closed the connection before a complete reply arrived.
package struct ConnectionClosed: Error, Sendable, CustomStringConvertible {
    /// The error (it carries nothing).
    package init() {}
    /// A fixed sentence: "the daemon closed the connection".
    package var description: String { "the daemon closed the connection" }
}
