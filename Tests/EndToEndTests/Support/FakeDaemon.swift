@preconcurrency import Glibc
import Foundation
import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer

/// A stand-in for entryd that answers varlink calls from a script, so the
/// client can be tested before (and independently of) the real daemon.
///
/// It listens on `path` in its own temporary directory; each connection is
/// served on its own thread; every call is recorded in ``calls``. The handler
/// returns the replies for a call (several for a `more` call, the last without
/// `continues`).
final class FakeDaemon: @unchecked Sendable {
    let directory: TemporaryDirectory
    /// The socket path to pass as `--socket`.
    let path: String
    private let listenFD: Int32
    private let handler: @Sendable (VarlinkCall) -> [VarlinkReply]
    private let lock = NSLock()
    private var recorded: [VarlinkCall] = []

    /// Starts listening.
    /// - Throws: `SystemError` when the socket cannot be created.
    init(_ handler: @escaping @Sendable (VarlinkCall) -> [VarlinkReply]) throws {
        directory = try TemporaryDirectory()
        path = directory.url.appendingPathComponent("entryd.sock").path
        listenFD = try UnixSocket.listen(path: path, mode: 0o600)
        self.handler = handler
        let fd = listenFD
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { if errno == EINTR { continue } else { return } }
                Thread.detachNewThread { self.serve(client) }
            }
        }
    }

    /// Replies with `parameters`, or with the error `error` carrying them.
    static func reply(_ parameters: JSON, error: String? = nil) -> [VarlinkReply] {
        [VarlinkReply(parameters: parameters, error: error)]
    }

    /// The calls received so far, in order.
    var calls: [VarlinkCall] { lock.withLock { recorded } }

    /// Stops listening and removes the socket directory.
    func stop() {
        shutdown(listenFD, Int32(SHUT_RDWR))
        close(listenFD)
        directory.remove()
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var decoder = FrameDecoder()
        while true {
            guard let bytes = try? UnixSocket.read(fd), !bytes.isEmpty else { return }
            decoder.append(bytes)
            while let message = try? decoder.next() {
                guard let call = try? VarlinkCall.decode(message) else { return }
                lock.withLock { recorded.append(call) }
                for reply in handler(call) {
                    do { try UnixSocket.writeAll(fd, reply.encoded) } catch { return }
                }
            }
        }
    }
}
