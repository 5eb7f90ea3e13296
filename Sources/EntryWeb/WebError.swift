import EntryModel
import EntryProtocol

/// An error as the HTTP API answers it: `{"error": NAME, "parameters": {…}}`
/// with a status chosen by the error's name (issue 18 "The API").
///
/// Errors of entryd keep their varlink names and parameters; the gateway's own
/// are named `io.entryd.web.*`.
package struct WebError: Error, Sendable, Equatable {
    /// The qualified error name (`io.entryd.Entries.ValidationFailed`, `io.entryd.web.LoginFailed`).
    package var name: String
    /// The error's parameters (an object).
    package var parameters: JSON
    /// The HTTP status it answers with.
    package var status: Int

    /// An error with an explicit status.
    package init(name: String, parameters: JSON = .object([]), status: Int) {
        self.name = name
        self.parameters = parameters
        self.status = status
    }

    /// The gateway's own error names (doc/man/entryd-web.8).
    package enum Name {
        /// 401: no session cookie or bearer token, or it expired.
        package static let authenticationRequired = "io.entryd.web.AuthenticationRequired"
        /// 401: a wrong user name or password (never says which).
        package static let loginFailed = "io.entryd.web.LoginFailed"
        /// 403: a cookie-authenticated POST without the session's `X-CSRF-Token`.
        package static let csrfRejected = "io.entryd.web.CSRFRejected"
        /// 429: too many failed logins for this user or address; `retryAfter` seconds.
        package static let tooManyAttempts = "io.entryd.web.TooManyAttempts"
        /// 503: too many connections from this address, or too many that no
        /// session has used; `retryAfter` seconds, `limit` the one reached
        /// (`address` or `unauthenticated`).
        package static let tooManyConnections = "io.entryd.web.TooManyConnections"
        /// 503: entryd cannot be reached.
        package static let daemonUnreachable = "io.entryd.web.DaemonUnreachable"
        /// 503: entryd does not name entryd-web's user as `gateway` in `[roles]` (`user`).
        package static let gatewayNotConfigured = "io.entryd.web.GatewayNotConfigured"
        /// 400: the body is not a JSON object, or a query argument is unusable (`reason`).
        package static let badRequest = "io.entryd.web.BadRequest"
        /// 404: no such page or API path.
        package static let notFound = "io.entryd.web.NotFound"
        /// 405: the path exists for other HTTP methods (`allowed`).
        package static let methodNotAllowed = "io.entryd.web.MethodNotAllowed"
        /// 413: the body is longer than `max-body` (`limit` bytes).
        package static let payloadTooLarge = "io.entryd.web.PayloadTooLarge"
        /// 431: the request head is over `limit` bytes or `fields` header fields.
        package static let headerTooLarge = "io.entryd.web.HeaderTooLarge"
        /// 415: a POST whose body is not `application/json`.
        package static let unsupportedMediaType = "io.entryd.web.UnsupportedMediaType"
    }

    /// The gateway's own errors with their statuses and meanings (the OpenAPI
    /// document lists them).
    package static let own: [(name: String, status: Int, doc: String)] = [
        (Name.badRequest, 400, "The body is not a JSON object, or a query argument is unusable (reason)."),
        (Name.authenticationRequired, 401, "Not logged in: no valid bearer token or session cookie, or it expired."),
        (Name.loginFailed, 401, "A wrong user name or password (never says which)."),
        (
            Name.csrfRejected, 403,
            "A request with the session cookie lacks its session's X-CSRF-Token header, or it does not match."
        ),
        (Name.notFound, 404, "No such page or file."),
        (Name.methodNotAllowed, 405, "The path exists for other HTTP methods (allowed)."),
        (Name.payloadTooLarge, 413, "The body is longer than max-body (limit, in bytes)."),
        (Name.unsupportedMediaType, 415, "A POST whose body is not application/json."),
        (
            Name.headerTooLarge, 431,
            "The request line and headers are over limit bytes, or over fields header fields."
        ),
        (
            Name.tooManyAttempts, 429,
            "Too many failed logins for this user or address; try again after retryAfter seconds."
        ),
        (Name.daemonUnreachable, 503, "entryd cannot be reached on its socket; try again."),
        (
            Name.tooManyConnections, 503,
            "Too many connections at once from this address, or too many that have not logged in (limit: address or unauthenticated); try again after retryAfter seconds."
        ),
        (
            Name.gatewayNotConfigured, 503,
            "entryd does not name entryd-web's user as gateway in the [roles] of entryd.conf; the operator must add it and reload entryd."
        ),
    ]

    /// The status for an error name, entryd's or the gateway's (``own``); 500
    /// for a name neither declares (an error entryd passed on from a peer or a
    /// newer entryd).
    package static func status(for name: String) -> Int {
        if let mine = own.first(where: { $0.name == name }) { return mine.status }
        guard let known = WireErrorName(rawValue: name) else { return 500 }
        return status(for: known)
    }

    /// The status for each error of interfaces/*.varlink (issue 18 "The API"),
    /// an exhaustive switch: a new error does not compile until it has one.
    /// 400 ValidationFailed, InvalidParameter; 403 PermissionDenied;
    /// 404 EntryNotFound, FormNotFound, FieldNotFound, ConflictNotFound,
    /// PeerNotFound, MethodNotFound, InterfaceNotFound; 409 EntryExists,
    /// VersionMismatch, EntryErased, ClockSkew; 413 LimitExceeded;
    /// 501 MethodNotImplemented and BackupUnsupported (the node does not do it
    /// and asking again will not help: its database server is backed up with its
    /// own tool; "Not Implemented", RFC 9110 15.6.2, not a state of a resource a
    /// client could change as 409 would say); 503 StorageFailed, PeerUnreachable.
    package static func status(for name: WireErrorName) -> Int {
        switch name {
        case .validationFailed, .invalidParameter: 400
        case .permissionDenied: 403
        case .entryNotFound, .entriesFormNotFound, .formsFormNotFound, .fieldNotFound, .conflictNotFound, .peerNotFound,
            .methodNotFound, .interfaceNotFound:
            404
        case .entryExists, .versionMismatch, .entryErased, .clockSkew: 409
        case .limitExceeded: 413
        case .methodNotImplemented, .backupUnsupported: 501
        case .storageFailed, .peerUnreachable: 503
        }
    }

    /// The answer for any error a call can throw: a `WireError` keeps its name
    /// and parameters; ``DaemonLinkError`` (and any other failure to talk to
    /// entryd) is 503 `DaemonUnreachable`.
    package static func from(_ error: any Error) -> WebError {
        if let web = error as? WebError { return web }
        if let wire = error as? WireError {
            return WebError(name: wire.name, parameters: wire.parameters, status: status(for: wire.name))
        }
        return WebError(name: Name.daemonUnreachable, status: 503)
    }

    /// `{"error": name, "parameters": parameters}`.
    package var body: JSON { .object([("error", .string(name)), ("parameters", parameters)]) }

    /// The JSON response, with the header RFC 9110 and RFC 6585 ask of its
    /// status: `Allow` on 405 (the `allowed` methods), `Retry-After` on 429
    /// and 503 (`retryAfter` seconds, when given), `WWW-Authenticate: Bearer` on 401.
    package var response: HTTPResponse {
        var headers: [(String, String)] = []
        switch status {
        case 401: headers.append(("WWW-Authenticate", #"Bearer realm="entryd""#))
        case 405: if let allowed = parameters["allowed"]?.stringValue { headers.append(("Allow", allowed)) }
        case 429, 503:
            if let seconds = parameters["retryAfter"]?.intValue { headers.append(("Retry-After", String(seconds))) }
        default: break
        }
        return .json(status, body, headers: headers)
    }

    /// 400 `BadRequest` with its reason.
    package static func badRequest(_ reason: String) -> WebError {
        WebError(name: Name.badRequest, parameters: .object([("reason", .string(reason))]), status: 400)
    }
    /// 503 `TooManyConnections`: the connection was accepted over `limit`
    /// (`address` or `unauthenticated`); the client may try again after `retryAfter` seconds.
    package static func tooManyConnections(limit: String, retryAfter: Int) -> WebError {
        WebError(
            name: Name.tooManyConnections,
            parameters: .object([("limit", .string(limit)), ("retryAfter", .int(Int64(retryAfter)))]), status: 503)
    }
    static let authenticationRequired = WebError(
        name: Name.authenticationRequired,
        parameters: .object([("login", .string("/api/v1/login"))]), status: 401)
    static let notFound = WebError(name: Name.notFound, status: 404)
    static func methodNotAllowed(_ allowed: String) -> WebError {
        WebError(name: Name.methodNotAllowed, parameters: .object([("allowed", .string(allowed))]), status: 405)
    }
    static func permissionDenied(_ role: Role) -> WebError {
        WebError(
            name: WireErrorName.permissionDenied.rawValue, parameters: .object([("role", .string(role.name))]),
            status: 403)
    }
}
