import Foundation
import EntryModel
import EntryProtocol

extension Gateway {
    /// `GET /metrics`: entryd's `Metrics` in Prometheus's text format
    /// (``MetricsExposition``), for a scraper. Let in from loopback when no
    /// proxy forwards (behind one every request comes from loopback), or with
    /// `Authorization: Bearer TOKEN` where TOKEN is the first non-blank line of
    /// `metrics-token-file`, read at each request so a new token needs no
    /// restart. No session, and no web user's token, lets it in; the metrics
    /// token lets nothing else in.
    /// - Throws: ``WebError``: 405 for another method, 401
    ///   `AuthenticationRequired` without a loopback client or the token, 503
    ///   when entryd cannot be reached.
    func metrics(_ r: HTTPRequest) throws -> HTTPResponse {
        guard r.method == "GET" || r.method == "HEAD" else { throw WebError.methodNotAllowed("GET, HEAD") }
        guard metricsAllowed(r) else {
            var refusal = WebError(
                name: WebError.Name.authenticationRequired, parameters: .object([("scheme", .string("Bearer"))]),
                status: 401
            ).response
            refusal.headers.removeAll { $0.0 == "WWW-Authenticate" }
            refusal.headers.append(("WWW-Authenticate", "Bearer realm=\"entryd metrics\""))
            return refusal
        }
        let reply = try asGateway { try link.call(Method.syncMetrics.rawValue, .object([])) }
        let body = Array(MetricsExposition.text(reply).utf8)
        return HTTPResponse(
            status: 200, headers: [("Content-Type", MetricsExposition.contentType), ("Cache-Control", "no-store")],
            body: r.method == "HEAD" ? [] : body)
    }

    /// Whether `r` may read `/metrics` (see ``metrics(_:)``).
    func metricsAllowed(_ r: HTTPRequest) -> Bool {
        if !settings.behindProxy, WebSettings.ListenAddress.isLoopback(r.clientAddress) { return true }
        guard let path = settings.metricsTokenFile, let header = r.header("authorization"),
            header.lowercased().hasPrefix("bearer "), let token = try? Self.metricsToken(at: path)
        else { return false }
        let given = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        return !given.isEmpty && PasswordHash.constantTimeEqual(given, token)
    }

    /// The least length of the `/metrics` token, in characters.
    package static let metricsTokenMinimum = 16

    /// The `/metrics` token in the file at `path`: its first non-blank line,
    /// without surrounding spaces.
    /// - Throws: ``MetricsTokenProblem`` naming what is wrong (entryd-web logs
    ///   it at start and on SIGHUP; a request then gets 401).
    package static func metricsToken(at path: String) throws(MetricsTokenProblem) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw MetricsTokenProblem(
                description: "\(path): cannot be read as UTF-8 text (missing, a directory, or no permission)")
        }
        guard
            let token = text.split(whereSeparator: \.isNewline).lazy
                .map({ $0.trimmingCharacters(in: .whitespaces) }).first(where: { !$0.isEmpty })
        else { throw MetricsTokenProblem(description: "\(path): holds no token") }
        guard token.count >= metricsTokenMinimum else {
            throw MetricsTokenProblem(
                description: "\(path): the token is \(token.count) characters, fewer than \(metricsTokenMinimum)")
        }
        return token
    }
}

/// Why the `metrics-token-file` gives no token (``Gateway/metricsToken(at:)``).
package struct MetricsTokenProblem: Error, CustomStringConvertible {
    /// The file and what is wrong with it.
    package var description: String
}
