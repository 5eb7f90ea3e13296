import EntryModel
import Synchronization

/// One HTTP request as entryd-web's server hands it over: complete, with its
/// body read (up to `max-body`).
package struct HTTPRequest: Sendable {
    /// `GET`, `POST`, … as sent.
    package var method: String
    /// The path, percent-decoded, without the query (`/api/v1/io.entryd.Entries.Add`).
    package var path: String
    /// Query-string arguments in order, percent-decoded.
    package var query: [(String, String)]
    /// Request headers, names lower-cased; a repeated header keeps its first value.
    package var headers: [String: String]
    /// The body (empty when none).
    package var body: [UInt8]
    /// The body was longer than `max-body` and was dropped: the answer is 413.
    package var bodyTooLarge: Bool
    /// The connecting address (`127.0.0.1`, `::1`), before any proxy header.
    package var clientAddress: String
    /// The request head as received: its bytes (request line and headers)
    /// and its header fields, for the 431 answer.
    package var head: (bytes: Int, fields: Int)

    /// A request; `headers` keys are lower-cased here.
    package init(
        method: String, path: String, query: [(String, String)] = [], headers: [String: String] = [:],
        body: [UInt8] = [], bodyTooLarge: Bool = false, clientAddress: String = "127.0.0.1",
        head: (bytes: Int, fields: Int) = (0, 0)
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        self.body = body
        self.bodyTooLarge = bodyTooLarge
        self.clientAddress = clientAddress
        self.head = head
    }

    /// The header `name` (any case), or nil.
    package func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The first query argument `name`, or nil.
    package func queryValue(_ name: String) -> String? { query.first { $0.0 == name }?.1 }

    /// The value of cookie `name` from the `Cookie` header (RFC 6265 §5.4), or nil.
    package func cookie(_ name: String) -> String? {
        guard let header = header("cookie") else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingSpaces == name { return String(parts[1].trimmingSpaces) }
        }
        return nil
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var s = self
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return s
    }
}

/// A response: status, headers, and a whole body or a stream of events.
package struct HTTPResponse: Sendable {
    /// What follows the headers.
    package enum Body: Sendable {
        /// A whole body.
        case bytes([UInt8])
        /// Server-Sent Events, produced as the client reads (`text/event-stream`).
        case events(EventStream)
    }

    /// The HTTP status code (200, 404, …).
    package var status: Int
    /// Header lines in order (`Content-Type`, `Set-Cookie`, …).
    package var headers: [(String, String)]
    /// The body.
    package var body: Body

    /// A response with a whole body.
    package init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
    }

    /// A JSON response (`application/json`, never cached).
    package static func json(_ status: Int, _ value: JSON, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")] + headers,
            body: value.encoded)
    }

    /// The body's bytes (empty for a stream).
    package var bytes: [UInt8] {
        if case .bytes(let b) = body { return b }
        return []
    }

    /// The first header `name` (any case), or nil.
    package func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}

/// Server-Sent Events (WHATWG HTML "Server-sent events") fed from a source of
/// varlink replies: each reply becomes one `changes` event whose `id` is its
/// `last` seq, so a browser's reconnect (`Last-Event-ID`) resumes after it.
///
/// ``next()`` blocks until the next event or keep-alive; it is called from the
/// connection's own thread only.
package final class EventStream: Sendable {
    private let source: any ReplySource
    private let allowed: @Sendable () -> Bool
    /// Set once the stream has ended; ``close()`` may set it from another thread.
    private let finished = Atomic(false)

    /// A stream over `source` (already called with `more`), for as long as `allowed` holds.
    /// - Parameter allowed: asked before each wait for the source and again
    ///   after it, before anything is sent; false ends the stream with an
    ///   `AuthenticationRequired` error event, and what the wait brought is dropped.
    package init(source: any ReplySource, allowed: @escaping @Sendable () -> Bool = { true }) {
        self.source = source
        self.allowed = allowed
    }

    /// The next bytes to send: an event, or a `: keep-alive` comment after
    /// the source's idle interval; nil at the end (the daemon ended the stream
    /// or failed: an `error` event is sent first).
    ///
    /// The session is asked before the wait (so an ended one stops the feed
    /// at once) and after it: the wait can outlast the session (a logout, a new
    /// password, a removed user), and the batch it brings is for that session.
    package func next() -> [UInt8]? {
        if finished.load(ordering: .acquiring) { return nil }
        guard allowed() else { return ended() }
        let reply: JSON?
        do {
            reply = try source.next()
        } catch {
            finished.store(true, ordering: .releasing)
            guard allowed() else { return ended() }
            let failure = WebError.from(error)
            return Array("event: error\ndata: \(failure.body.text)\n\n".utf8)
        }
        guard allowed() else { return ended() }
        guard let reply else { return Array(": keep-alive\n\n".utf8) }
        var event = ""
        if let last = reply["last"]?.intValue { event += "id: \(last)\n" }
        event += "event: changes\ndata: " + reply.text + "\n\n"
        return Array(event.utf8)
    }

    /// Ends the stream because its session ended: the source is closed and
    /// the last bytes are the `AuthenticationRequired` error event.
    private func ended() -> [UInt8] {
        finished.store(true, ordering: .releasing)
        source.close()
        return Array("event: error\ndata: \(WebError.authenticationRequired.body.text)\n\n".utf8)
    }

    /// Ends the stream and closes its source (the client is gone).
    package func close() {
        finished.store(true, ordering: .releasing)
        source.close()
    }
}
