@preconcurrency import Glibc
import CSystem
import EntryModel
import EntryProtocol
import EntryWeb
import Foundation

/// Connections to entryd's socket, reused across requests: each request takes
/// one for its call and gives it back. A connection entryd has closed (it
/// restarted) is noticed before use and replaced. `Entries.Add`, the call
/// entryd starts at once and answers after its commit, goes instead over a
/// ``Pipeline``: a few connections shared by every request, many calls on
/// each at a time. Thread-safe.
final class DaemonPool: DaemonLink, Sendable {
    /// entryd's socket.
    let path: String
    /// The pool's connections and streams (a ``Monitor`` rather than a `Mutex`:
    /// a ``VarlinkConnection``, one thread's at a time, is not `Sendable`).
    private struct State {
        /// Connections given back, ready for the next call.
        var idle: [VarlinkConnection] = []
        /// The descriptors of open event streams, shut down at stop so their threads end at once.
        var streams: Set<Int32> = []
        /// ``closeStreams()`` was called: a stream opened since is ended at once.
        var streamsClosed = false
        /// The descriptors of connections taken by a call and not yet given back.
        var busy: Set<Int32> = []
        /// ``abortCalls()`` was called: no call starts any more.
        var aborted = false
    }
    private let state = Monitor(State())
    /// Idle connections kept; more are closed when given back.
    private let keep = 64
    /// Longest wait for a reply, in milliseconds.
    private let replyTimeout = DaemonPool.replyMilliseconds
    /// Longest wait for a reply, in milliseconds (calls on the pool and on the ``Pipeline``).
    static let replyMilliseconds = 60_000
    /// Seconds between keep-alives on an idle event stream: under the
    /// connection's idle timeout, so libmicrohttpd never cuts a live feed,
    /// and at most 5: a feed whose client went away is only noticed when a
    /// write fails (the second after a plain close: the kernel takes the
    /// first), and until then it holds a connection slot of its address
    /// (`max-connections-per-address`).
    let streamIdleSeconds: Int

    /// The shared connections Adds go over.
    private let pipeline: Pipeline
    /// Most connections of the ``Pipeline``, each opened when every open
    /// one has calls out. A call goes to an idle one first: entryd reads a
    /// connection again only once the calls it started are committed and
    /// answered, so a call on a busy one waits a write round longer
    /// (BENCHMARKS.md, issue 34 item 5: four connections taken in turn kept
    /// HTTP at 0.54–0.70× of varlink, sixteen, idle first, at 0.67–0.90×).
    static let pipelineLanes = 16

    /// - Parameters:
    ///   - path: entryd's socket.
    ///   - idleTimeout: the HTTP connections' idle timeout in seconds; keep-alives come at half of it, at most every 5 s.
    init(path: String, idleTimeout: Int) {
        self.path = path
        streamIdleSeconds = max(1, min(5, idleTimeout / 2))
        pipeline = Pipeline(path: path, lanes: DaemonPool.pipelineLanes, replyTimeout: DaemonPool.replyMilliseconds)
    }

    func call(_ method: String, _ parameters: JSON) throws -> JSON {
        if state.withLock({ $0.aborted }) { throw DaemonLinkError(reason: "\(path): entryd-web is stopping") }
        if method == Method.entriesAdd.rawValue {
            let bytes = VarlinkCall(method: method, parameters: parameters).encoded
            if bytes.count <= Pipeline.maxCallBytes { return try pipelined(bytes) }
        }
        let connection = try take()
        do {
            let reply = try connection.call(method, parameters)
            give(connection)
            return reply
        } catch let error as WireError {
            // After these entryd closes the connection (doc/protocol.md "Errors for bad
            // messages"): given back, it could reach the next request before the close
            // does, which would then answer 503 though entryd is up.
            if DaemonPool.closesConnection(error) { drop(connection) } else { give(connection) }
            throw error
        } catch {
            drop(connection)
            throw DaemonLinkError(reason: "\(path): \(error)")
        }
    }

    /// The last step of a stop whose wait for the requests in flight ran
    /// out (entryd stopped answering): ends every connection to entryd, the
    /// ``Pipeline``'s too, so the calls waiting on them fail at once and
    /// their threads return, instead of after ``replyMilliseconds``; no call
    /// starts any more.
    func abortCalls() {
        let fds = state.withLock { state -> [Int32] in
            state.aborted = true
            return Array(state.busy) + state.idle.map(\.fd)
        }
        for fd in fds { shutdown(fd, Int32(SHUT_RDWR)) }
        pipeline.shutDownAll()
    }

    /// Whether entryd closes the connection after answering `error`: a message
    /// over its `max-message-size` (`LimitExceeded(max-message-size)`), or one
    /// that is no call (`InvalidParameter(method)`).
    static func closesConnection(_ error: WireError) -> Bool {
        switch error.known {
        case .limitExceeded?: error.parameters["limit"]?.stringValue == "max-message-size"
        case .invalidParameter?: error.parameters["parameter"]?.stringValue == "method"
        default: false
        }
    }

    /// The call `bytes` over the ``Pipeline``.
    private func pipelined(_ bytes: [UInt8]) throws -> JSON {
        let reply: VarlinkReply
        do {
            reply = try pipeline.call(bytes)
        } catch {
            throw DaemonLinkError(reason: "\(path): \(error)")
        }
        if let error = reply.error { throw WireError(name: error, parameters: reply.parameters) }
        return reply.parameters
    }

    func stream(_ method: String, _ parameters: JSON) throws -> any ReplySource {
        let connection = try connect()
        do {
            try connection.send(VarlinkCall(method: method, parameters: parameters, more: true))
            let first = try connection.receive()
            if let error = first.error { throw WireError(name: error, parameters: first.parameters) }
            _ = csystem_set_timeouts(connection.fd, streamIdleSeconds * 1000, replyTimeout)
            let fd = connection.fd
            state.withLock { state in
                // A feed begun as the stop began ends with the others.
                if state.streamsClosed { _ = shutdown(fd, Int32(SHUT_RDWR)) } else { state.streams.insert(fd) }
            }
            return DaemonStream(connection: connection, first: first) { [weak self] fd in
                self?.state.withLock { _ = $0.streams.remove(fd) }
            }
        } catch let error as WireError {
            throw error
        } catch {
            throw DaemonLinkError(reason: "\(path): \(error)")
        }
    }

    /// Ends every open event stream, and any opened from now on (stopping):
    /// their reads return at once. The ``Pipeline``'s connections stay: the
    /// Adds on them are answered while the HTTP server stops, as those on a
    /// connection of their own.
    func closeStreams() {
        state.withLock { state in
            state.streamsClosed = true
            for fd in state.streams { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private func take() throws -> VarlinkConnection {
        while let connection = state.withLock({ $0.idle.popLast() }) {
            // entryd closed it (a restart): readable at end of file.
            if csystem_other_end_hung_up(connection.fd) == 0 {
                state.withLock { _ = $0.busy.insert(connection.fd) }
                return connection
            }
            connection.close()
        }
        let connection = try connect()
        let aborted = state.withLock { state in
            if !state.aborted { state.busy.insert(connection.fd) }
            return state.aborted
        }
        if aborted {
            connection.close()
            throw DaemonLinkError(reason: "\(path): entryd-web is stopping")
        }
        return connection
    }

    private func give(_ connection: VarlinkConnection) {
        let kept = state.withLock { state in
            state.busy.remove(connection.fd)
            guard state.idle.count < keep, !state.aborted else { return false }
            state.idle.append(connection)
            return true
        }
        if !kept { connection.close() }
    }

    /// Closes a connection a call took (broken, or entryd closes it).
    private func drop(_ connection: VarlinkConnection) {
        state.withLock { _ = $0.busy.remove(connection.fd) }
        connection.close()
    }

    private func connect() throws -> VarlinkConnection {
        do {
            let connection = try VarlinkConnection(path: path)
            _ = csystem_set_timeouts(connection.fd, replyTimeout, replyTimeout)
            return connection
        } catch {
            throw DaemonLinkError(reason: "\(path): \(error)")
        }
    }
}

/// The replies of one `more` call, on a connection of its own.
final class DaemonStream: ReplySource, @unchecked Sendable {
    // @unchecked: the connection is read by the stream's one thread; close() may come from another.
    private let connection: VarlinkConnection
    private var pending: VarlinkReply?
    private let onClose: (Int32) -> Void

    init(connection: VarlinkConnection, first: VarlinkReply, onClose: @escaping (Int32) -> Void) {
        self.connection = connection
        self.onClose = onClose
        pending = first
    }

    func next() throws -> JSON? {
        if let reply = pending {
            pending = nil
            return reply.parameters
        }
        do {
            let reply = try connection.receive()
            if let error = reply.error { throw WireError(name: error, parameters: reply.parameters) }
            return reply.parameters
        } catch let error as SystemError where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
            return nil
        } catch let error as WireError {
            throw error
        } catch {
            throw DaemonLinkError(reason: "\(error)")
        }
    }

    private var closed = false

    func close() {
        guard !closed else { return }
        closed = true
        onClose(connection.fd)
        connection.close()
    }
}
