@preconcurrency import Glibc
import CWebServer
import EntryModel
import EntryWeb

/// libmicrohttpd serving a ``Gateway``: one thread per connection, each
/// request read whole (up to `max-body`), answered by the gateway, events
/// streamed as the client reads them.
final class HTTPServer: @unchecked Sendable {
    // @unchecked: `handle` is libmicrohttpd's daemon pointer, set by start() and cleared by stop() on one thread.
    private let gateway: Gateway
    private var handle: UnsafeMutableRawPointer?
    /// Headers the gateway reads; others are never copied out of libmicrohttpd.
    private static let headerNames = [
        "authorization", "cookie", "content-type", "x-csrf-token", "if-none-match",
        "last-event-id", "x-forwarded-for",
    ]

    /// Seconds a client over a connection limit is told to wait (`Retry-After`).
    private let retryAfter: Int

    init(gateway: Gateway, retryAfter: Int) {
        self.gateway = gateway
        self.retryAfter = retryAfter
    }

    /// Starts listening on `listen` (or on systemd's `listenFD`).
    /// - Throws: ``StartFailure`` saying why libmicrohttpd could not start.
    func start(settings: WebSettings, listenFD: Int32?, tls: (key: String, certificate: String)?) throws {
        var error = [CChar](repeating: 0, count: 512)
        let context = Unmanaged.passUnretained(self).toOpaque()
        let started: UnsafeMutableRawPointer? = settings.listen.host.withCString { host in
            withOptionalCString(tls?.key) { key in
                withOptionalCString(tls?.certificate) { certificate in
                    var options = cweb_options(
                        address: host, port: settings.listen.port, listen_fd: listenFD ?? -1,
                        tls_key_pem: key, tls_cert_pem: certificate,
                        connection_limit: UInt32(settings.maxConnections),
                        // Behind a proxy every connection comes from its address.
                        per_ip_limit: settings.behindProxy ? 0 : UInt32(settings.maxConnectionsPerAddress),
                        unauthenticated_limit: UInt32(
                            min(settings.maxUnauthenticatedConnections, settings.maxConnections)),
                        timeout_seconds: UInt32(settings.idleTimeout),
                        header_timeout_seconds: UInt32(settings.headerTimeout), memory_limit: 64 << 10,
                        body_limit: settings.maxBody)
                    return cweb_start(&options, HTTPServer.onRequest, context, &error, error.count)
                }
            }
        }
        guard let started else { throw StartFailure(message: cText(error)) }
        handle = started
    }

    /// The first step of a stop: no new connections, and no request whose
    /// header comes from now on is run (its connection is closed unanswered,
    /// so a client can send it again elsewhere without storing it twice);
    /// responses from now on close their connections.
    func beginStop() {
        if let handle { cweb_begin_stop(handle) }
    }

    /// Waits, at most `seconds`, until every request begun before
    /// ``beginStop()`` has been answered and its response sent, then ends
    /// the connections and waits for their threads.
    /// - Parameter cutOff: run when requests are still going at the deadline,
    ///   before the connections end: it must make their threads return (the
    ///   wait for them has no bound of its own).
    /// - Returns: how many requests were still going at the deadline (cut off).
    @discardableResult
    func stop(drainSeconds seconds: Double, cutOff: () -> Void) -> Int {
        guard let handle else { return 0 }
        let left = Int(cweb_drain(handle, seconds))
        if left > 0 { cutOff() }
        cweb_stop(handle)
        self.handle = nil
        return left
    }

    struct StartFailure: Error { var message: String }

    private static let onRequest: cweb_handler = { context, request in
        guard let context, let request else { return 0 }
        let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
        return server.serve(request.pointee)
    }

    private func serve(_ r: cweb_request) -> Int32 {
        let connection = r.connection
        // Two lengths, or a length beside chunked framing: where a proxy and
        // this server could read different requests (RFC 9112 §6.3). Refused,
        // and the connection closed, so nothing behind it on the connection is read.
        let lengths = cweb_header_count(connection, "content-length")
        var malformed: String?
        if lengths > 1 || (lengths == 1 && cweb_header_count(connection, "transfer-encoding") > 0) {
            malformed = "conflicting Content-Length and Transfer-Encoding"
        } else if cweb_header_has_control(connection) != 0 {
            // A bare CR inside a header (RFC 9110 §5.5): another reader could end the line there.
            malformed = "a control character in a header"
        }
        if let malformed { return refuse(connection, WebError.badRequest(malformed)) }
        var headers: [String: String] = [:]
        for name in HTTPServer.headerNames {
            if let value = cweb_header(connection, name) { headers[name] = String(cString: value) }
        }
        var query = QueryCollector()
        withUnsafeMutablePointer(to: &query) { pointer in
            cweb_query_each(
                connection,
                { context, key, value in
                    guard let context, let key, let value else { return }
                    context.assumingMemoryBound(to: QueryCollector.self).pointee.pairs.append(
                        (String(cString: key), String(cString: value)))
                }, pointer)
        }
        var address = [CChar](repeating: 0, count: 64)
        cweb_client_address(connection, &address, address.count)
        let body =
            r.body_length > 0 && r.body != nil ? Array(UnsafeBufferPointer(start: r.body, count: r.body_length)) : []
        let request = HTTPRequest(
            method: String(cString: r.method), path: String(cString: r.url), query: query.pairs,
            headers: headers, body: body, bodyTooLarge: r.body_too_large != 0,
            clientAddress: cText(address), head: (Int(r.header_size), Int(r.header_count)))
        if r.refused != Int32(CWEB_ADMITTED) {
            // Accepted over a limit so that it hears why: 503 and when to come back, then closed.
            // Over the unauthenticated limit, a request with a live session (or a metrics
            // scraper's token) is served all the same.
            let limit = r.refused == Int32(CWEB_OVER_ADDRESS_LIMIT) ? "address" : "unauthenticated"
            if limit == "address" || !gateway.hasCredentials(request) {
                return refuse(connection, WebError.tooManyConnections(limit: limit, retryAfter: retryAfter))
            }
        }
        if r.authenticated == 0, gateway.hasCredentials(request) { cweb_mark_authenticated(connection) }
        let response = gateway.handle(request)
        let headerText = response.headers.map { "\($0.0): \($0.1)\n" }.joined()
        switch response.body {
        case .bytes(let bytes):
            return bytes.withUnsafeBufferPointer {
                cweb_respond(connection, UInt32(response.status), headerText, $0.baseAddress, $0.count)
            }
        case .events(let events):
            let stream = Unmanaged.passRetained(StreamState(events)).toOpaque()
            return cweb_respond_stream(
                connection, UInt32(response.status), headerText, HTTPServer.read, HTTPServer.release, stream)
        }
    }

    /// Answers `error` in JSON and closes the connection after it: nothing
    /// behind the request on the connection is read.
    private func refuse(_ connection: UnsafeMutableRawPointer?, _ error: WebError) -> Int32 {
        var response = gateway.withCommonHeaders(error.response)
        response.headers.append(("Connection", "close"))
        let headerText = response.headers.map { "\($0.0): \($0.1)\n" }.joined()
        return response.bytes.withUnsafeBufferPointer {
            cweb_respond(connection, UInt32(response.status), headerText, $0.baseAddress, $0.count)
        }
    }

    private struct QueryCollector { var pairs: [(String, String)] = [] }

    /// An event stream and the part of an event the client has not taken yet.
    private final class StreamState {
        let events: EventStream
        var buffered: [UInt8] = []
        var offset = 0
        init(_ events: EventStream) { self.events = events }
    }

    private static let read: cweb_reader = { stream, _, buffer, max in
        guard let stream, let buffer else { return -2 }
        let state = Unmanaged<StreamState>.fromOpaque(stream).takeUnretainedValue()
        if state.offset >= state.buffered.count {
            guard let next = state.events.next() else { return -1 }
            state.buffered = next
            state.offset = 0
        }
        let n = min(max, state.buffered.count - state.offset)
        state.buffered.withUnsafeBufferPointer { source in
            UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + state.offset, byteCount: n)
        }
        state.offset += n
        return n
    }

    private static let release: cweb_release = { stream in
        guard let stream else { return }
        let state = Unmanaged<StreamState>.fromOpaque(stream).takeRetainedValue()
        state.events.close()
    }
}

/// Calls `body` with a C string of `text`, or NULL.
private func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}
