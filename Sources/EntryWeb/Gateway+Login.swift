import EntryModel
import EntryProtocol
import Foundation

// Login, sessions and who is calling: the part of the gateway between a
// request and the web user it acts for.
extension Gateway {
    /// `POST /api/v1/login` `{user, password}`: a session (token, CSRF token,
    /// cookie), 401 `LoginFailed`, or 429 `TooManyAttempts`.
    func login(_ r: HTTPRequest) throws -> HTTPResponse {
        guard r.method == "POST" else { throw WebError.methodNotAllowed("POST") }
        let body = try jsonObject(r)
        guard let user = body["user"]?.stringValue, let password = body["password"]?.stringValue,
            !user.isEmpty, user.utf8.count <= 256, password.utf8.count <= 4096
        else {
            throw WebError.badRequest("user (1 to 256 bytes) and password (up to 4096 bytes) must be strings")
        }
        let address = clientAddress(r)
        // The attempt counts before the password is checked, so that attempts
        // sent all at once meet the same limit as attempts in a row.
        if let wait = limiter.attempt(user: user, address: address) {
            throw WebError(
                name: WebError.Name.tooManyAttempts, parameters: .object([("retryAfter", .int(Int64(wait)))]),
                status: 429)
        }
        guard verifying.wait(timeout: .now() + 5) == .success else {
            throw WebError(
                name: WebError.Name.tooManyAttempts, parameters: .object([("retryAfter", .int(1))]), status: 429)
        }
        let found = users.verify(name: user, password: password)
        verifying.signal()
        guard let account = found else {
            log.notice("web login refused for \(Gateway.printable(user)) from \(address)")
            throw WebError(name: WebError.Name.loginFailed, status: 401)
        }
        limiter.succeeded(user: user, address: address)
        let session = sessions.open(account)
        var reply = sessionJSON(session)
        if case .object(var members) = reply {
            members.insert(("token", .string(session.token)), at: 0)
            reply = .object(members)
        }
        let cookie =
            "\(Gateway.cookieName)=\(session.token); Path=/; HttpOnly; SameSite=Strict"
            + (settings.secure ? "; Secure" : "")
        return .json(200, reply, headers: [("Set-Cookie", cookie)])
    }

    /// `POST /api/v1/logout`: ends the session and clears the cookie.
    func logout(_ r: HTTPRequest) throws -> HTTPResponse {
        guard r.method == "POST" else { throw WebError.methodNotAllowed("POST") }
        let (session, _) = try authenticate(r, csrfChecked: true)
        sessions.close(token: session.token)
        let cookie =
            "\(Gateway.cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0" + (settings.secure ? "; Secure" : "")
        return .json(200, .object([]), headers: [("Set-Cookie", cookie)])
    }

    /// `{user, role, csrf}` of a session.
    func sessionJSON(_ session: WebSession) -> JSON {
        .object([
            ("user", .string(session.user)),
            ("role", .string((users.account(named: session.user)?.role ?? .none).name)),
            ("csrf", .string(session.csrf)),
        ])
    }

    /// `text` for a log line: quoted, control characters and non-ASCII
    /// escaped, cut at 64 characters, so a user name cannot forge log lines.
    static func printable(_ text: String) -> String {
        var out = ""
        for s in text.unicodeScalars.prefix(64) {
            out +=
                s.isASCII && s.value >= 0x20 && s.value != 0x7F && s != "'" && s != "\\"
                ? String(s) : s.escaped(asASCII: true)
        }
        return "'" + out + (text.unicodeScalars.count > 64 ? "…" : "") + "'"
    }

    /// The session of a request and its user's current role.
    /// - Throws: 401 without a live session or when its user is gone; 403
    ///   `CSRFRejected` for a cookie-authenticated request whose `X-CSRF-Token`
    ///   is missing or wrong, when `csrfChecked`.
    func authenticate(_ r: HTTPRequest, csrfChecked: Bool) throws -> (WebSession, Role) {
        var token: String?
        var byCookie = false
        if let authorization = r.header("authorization") {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw WebError.authenticationRequired }
            token = String(parts[1].trimmingSpaces)
        } else if let cookie = r.cookie(Gateway.cookieName) {
            token = cookie
            byCookie = true
        }
        guard let token, let session = sessions.session(token: token) else { throw WebError.authenticationRequired }
        guard let account = users.account(named: session.user), account.credentialStamp == session.stamp,
            account.role != .none
        else {
            // Removed, or a new password (or removed and added again): the old sessions end.
            sessions.close(token: session.token)
            throw WebError.authenticationRequired
        }
        let role = account.role
        if byCookie, csrfChecked, !PasswordHash.constantTimeEqual(r.header("x-csrf-token") ?? "", session.csrf) {
            throw WebError(name: WebError.Name.csrfRejected, status: 403)
        }
        return (session, role)
    }

    /// Whether `r` carries a live session (bearer token or cookie) of a
    /// current user (the CSRF token is not asked), or is a `/metrics` scrape
    /// that may read it (``metricsAllowed(_:)``). entryd-web lifts a
    /// connection that has carried one out of the limits and deadline for
    /// connections that have not logged in, so that anonymous clients holding
    /// connections open blind neither the staff nor the monitoring.
    package func hasCredentials(_ r: HTTPRequest) -> Bool {
        (r.path == "/metrics" && metricsAllowed(r)) || (try? authenticate(r, csrfChecked: false)) != nil
    }

    /// The client's address for rate limiting: the connection's, or behind a
    /// proxy on loopback, the last `X-Forwarded-For` hop.
    func clientAddress(_ r: HTTPRequest) -> String {
        // Only the proxy on this host may say who the client is.
        if settings.behindProxy, WebSettings.ListenAddress.isLoopback(r.clientAddress),
            let forwarded = r.header("x-forwarded-for"),
            let last = forwarded.split(separator: ",").last?.trimmingSpaces, !last.isEmpty
        {
            return String(last)
        }
        return r.clientAddress
    }
}
