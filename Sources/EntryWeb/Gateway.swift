import EntryModel
import EntryProtocol
import Foundation
import Synchronization

/// The web users the gateway knows (the file `entryctl web-user` manages).
/// entryd-web reads them from ``WebUserFile``; the gateway's tests give a fake
/// that checks passwords without Argon2id, so this stays a protocol.
package protocol WebUserStore: Sendable {
    /// The account of `name` when `password` is theirs, else nil. Names match
    /// scalar by scalar. Takes as long for an unknown name as for a wrong password.
    func verify(name: String, password: String) -> WebUser?
    /// The current account named `name` (exactly as stored), or nil when it no longer exists.
    func account(named name: String) -> WebUser?
    /// ``account(named:)`` read from the source itself, not from a copy that
    /// may be a moment old: for the live feed, which must not send one more
    /// batch after a password change or a removal.
    func freshAccount(named name: String) -> WebUser?
}

extension WebUserStore {
    /// A store without a cache has nothing fresher than ``account(named:)``.
    package func freshAccount(named name: String) -> WebUser? { account(named: name) }
}

/// What the gateway exposes and to whom, over the generated ``Method``: which
/// role may call which method, the role `PermissionDenied` names, and the
/// methods never served over HTTP.
package struct MethodPolicy: Sendable {
    /// The role `PermissionDenied` names for a method (the least of `read`,
    /// `write` and `admin` that may call it), or nil for one the gateway does not serve.
    package var roleOf: @Sendable (Method) -> Role?
    /// Whether a web user of a role may call a method the gateway serves.
    package var allows: @Sendable (Role, Method) -> Bool
    /// Methods that stay on the socket (Apply, SyncPeer, HeldFrom, Backup).
    package var socketOnly: @Sendable (Method) -> Bool

    /// - Parameters:
    ///   - roleOf: the role named when a method is refused, or nil when the gateway does not serve it.
    ///   - allows: whether a role may call a method.
    ///   - socketOnly: whether a method is never served over HTTP.
    package init(
        roleOf: @escaping @Sendable (Method) -> Role?, allows: @escaping @Sendable (Role, Method) -> Bool,
        socketOnly: @escaping @Sendable (Method) -> Bool
    ) {
        self.roleOf = roleOf
        self.allows = allows
        self.socketOnly = socketOnly
    }

    /// entryd's own rules: ``Method/role``, ``Role/allows(_:)`` and
    /// ``Method/isServedOverHTTP`` (EntryProtocol).
    package static let entryd = MethodPolicy(
        roleOf: { $0.role }, allows: { $0.allows($1) }, socketOnly: { !$0.isServedOverHTTP })
}

/// entryd-web's request handling, without sockets: static pages, login and
/// sessions, the API (`POST /api/v1/<interface>.<Method>` → entryd), the live
/// feed as Server-Sent Events, and the OpenAPI description (issue 18).
///
/// Called concurrently, one request per connection thread.
package final class Gateway: Sendable {
    /// Settings the handling depends on.
    package struct Settings: Sendable {
        /// Cookies get `Secure` and responses HSTS: TLS here or at a proxy.
        package var secure: Bool
        /// A reverse proxy on loopback forwards the requests: the client's
        /// address is the last `X-Forwarded-For` hop.
        package var behindProxy: Bool
        /// The body bound in bytes (`max-body`), for the 413 answer.
        package var maxBody: Int
        /// The file holding the bearer token for `GET /metrics` from anywhere
        /// but loopback (`metrics-token-file`); `nil`: loopback only.
        package var metricsTokenFile: String?

        /// - Parameters:
        ///   - secure: TLS here or at the proxy.
        ///   - behindProxy: trust the last `X-Forwarded-For` hop.
        ///   - maxBody: the body bound in bytes.
        ///   - metricsTokenFile: the `/metrics` token's file, if any.
        package init(secure: Bool, behindProxy: Bool, maxBody: Int, metricsTokenFile: String? = nil) {
            self.secure = secure
            self.behindProxy = behindProxy
            self.maxBody = maxBody
            self.metricsTokenFile = metricsTokenFile
        }
    }

    /// The session cookie's name.
    package static let cookieName = "entryd_session"
    /// The prefix of every API path.
    static let api = "/api/v1/"

    let link: any DaemonLink
    let users: any WebUserStore
    let policy: MethodPolicy
    let sessions: SessionStore
    let limiter: LoginLimiter
    let settings: Settings
    let openAPI: @Sendable () -> JSON
    let log: Log
    /// Argon2id takes 64 MiB and tens of milliseconds per check: two at a time.
    let verifying = DispatchSemaphore(value: 2)
    /// The last ``OfflineData`` built and when (see ``offlineData(_:)``).
    let offlineCache = Mutex<(body: [UInt8], version: String, forms: String, at: ContinuousClock.Instant)?>(nil)

    /// - Parameters:
    ///   - link: how entryd is called.
    ///   - users: the web users.
    ///   - policy: roles per method and the socket-only methods.
    ///   - sessions: the login sessions.
    ///   - limiter: failed-login counts.
    ///   - settings: TLS, proxy and size settings.
    ///   - openAPI: the OpenAPI document served at `/api/v1/openapi.json`.
    ///   - log: where refusals worth an operator's eye go.
    package init(
        link: any DaemonLink, users: any WebUserStore, policy: MethodPolicy, sessions: SessionStore,
        limiter: LoginLimiter, settings: Settings, openAPI: @escaping @Sendable () -> JSON, log: Log
    ) {
        self.link = link
        self.users = users
        self.policy = policy
        self.sessions = sessions
        self.limiter = limiter
        self.settings = settings
        self.openAPI = openAPI
        self.log = log
    }

    /// The response to `request`, with the headers every response carries.
    package func handle(_ request: HTTPRequest) -> HTTPResponse {
        var response: HTTPResponse
        do {
            response = try route(request)
        } catch {
            response = WebError.from(error).response
        }
        return withCommonHeaders(response)
    }

    /// `response` with the headers every response carries (`nosniff`,
    /// `no-referrer`, `DENY`, and HSTS under TLS): for the answers entryd-web
    /// gives before a request reaches ``handle(_:)`` too.
    package func withCommonHeaders(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers += [
            ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
            ("X-Frame-Options", "DENY"),
        ]
        if settings.secure { response.headers.append(("Strict-Transport-Security", "max-age=31536000")) }
        return response
    }

    /// The largest request head (request line and headers) in bytes, and the
    /// most header fields: past either the answer is 431 `HeaderTooLarge`.
    /// Under what libmicrohttpd holds per connection (64 KiB with its
    /// buffers), which answers a still larger head itself, in HTML.
    package static let headLimit = (bytes: 32 << 10, fields: 100)

    private func route(_ r: HTTPRequest) throws -> HTTPResponse {
        if r.head.bytes > Gateway.headLimit.bytes || r.head.fields > Gateway.headLimit.fields {
            throw WebError(
                name: WebError.Name.headerTooLarge,
                parameters: .object([
                    ("limit", .int(Int64(Gateway.headLimit.bytes))), ("fields", .int(Int64(Gateway.headLimit.fields))),
                ]), status: 431)
        }
        if r.bodyTooLarge {
            throw WebError(
                name: WebError.Name.payloadTooLarge, parameters: .object([("limit", .int(Int64(settings.maxBody)))]),
                status: 413)
        }
        if r.path == "/healthz" {
            guard r.method == "GET" || r.method == "HEAD" else { throw WebError.methodNotAllowed("GET, HEAD") }
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")],
                body: Array("ok\n".utf8))
        }
        if r.path == "/metrics" { return try metrics(r) }
        guard r.path.hasPrefix(Gateway.api) else { return try staticFile(r) }
        let name = String(r.path.dropFirst(Gateway.api.count))
        switch name {
        case "login": return try login(r)
        case "logout": return try logout(r)
        case "session":
            guard r.method == "GET" else { throw WebError.methodNotAllowed("GET") }
            let (session, _) = try authenticate(r, csrfChecked: false)
            return .json(200, sessionJSON(session))
        case "offline": return try offlineData(r)
        case "openapi.json":
            guard r.method == "GET" || r.method == "HEAD" else { throw WebError.methodNotAllowed("GET, HEAD") }
            return .json(200, openAPI())
        default:
            return try callMethod(name, r)
        }
    }

    // MARK: - Static pages

    private func staticFile(_ r: HTTPRequest) throws -> HTTPResponse {
        guard r.method == "GET" || r.method == "HEAD" else { throw WebError.methodNotAllowed("GET, HEAD") }
        // The path is percent-decoded: refuse anything that could step out of web/.
        let segments = r.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        if segments.contains(where: { $0 == ".." || $0 == "." || $0.contains("\\") || $0.contains("\0") })
            || (r.path.count > 1 && segments.contains(where: \.isEmpty))
        {
            throw WebError.badRequest("path")
        }
        guard let file = Assets.file(at: r.path) else { throw WebError.notFound }
        var headers = [("Content-Type", file.contentType), ("ETag", file.etag), ("Cache-Control", "no-cache")]
        if file.contentType.hasPrefix("text/html") {
            headers.append(
                (
                    "Content-Security-Policy",
                    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
                ))
        }
        if r.header("if-none-match") == file.etag { return HTTPResponse(status: 304, headers: headers) }
        return HTTPResponse(status: 200, headers: headers, body: r.method == "HEAD" ? [] : file.body)
    }

    // MARK: - The API

    private func callMethod(_ name: String, _ r: HTTPRequest) throws -> HTTPResponse {
        guard let method = Method(rawValue: name), !policy.socketOnly(method), let needed = policy.roleOf(method) else {
            throw WebError(
                name: WireErrorName.methodNotFound.rawValue, parameters: .object([("method", .string(name))]),
                status: 404)
        }
        let isFeed = method == .syncChanges && r.method == "GET"
        guard r.method == "POST" || isFeed else {
            throw WebError.methodNotAllowed(method == .syncChanges ? "GET, POST" : "POST")
        }
        let (session, role) = try authenticate(r, csrfChecked: !isFeed)
        guard policy.allows(role, method) else { throw WebError.permissionDenied(needed) }
        var parameters = isFeed ? try feedParameters(r) : try jsonObject(r, requireJSONType: true)
        if method == .syncChanges, parameters["excludeNode"] != nil || parameters["excludeSince"] != nil {
            // These acknowledge a peer's position for compaction: peers only, over the socket.
            throw WebError.badRequest("excludeNode and excludeSince are for peers syncing over the socket")
        }
        // The actor is the web user, never what the client sends.
        if case .object(var members) = parameters {
            members.removeAll { $0.0 == "actor" }
            members.append(("actor", .string(session.user)))
            parameters = .object(members)
        }
        if isFeed {
            // The feed ends when its session does (logout, idle, a removed user, a new password):
            // asked after every wait, before anything is sent, from the users file itself.
            let token = session.token
            let stamp = session.stamp
            let user = session.user
            let allowed: @Sendable () -> Bool = { [sessions, users, policy] in
                sessions.isOpen(token: token)
                    && users.freshAccount(named: user).map {
                        $0.credentialStamp == stamp && policy.allows($0.role, method)
                    } == true
            }
            return HTTPResponse(
                status: 200,
                headers: [
                    ("Content-Type", "text/event-stream"), ("Cache-Control", "no-store"),
                    ("X-Accel-Buffering", "no"),
                ],
                events: EventStream(
                    source: try asGateway { try link.stream(method.rawValue, parameters) }, allowed: allowed))
        }
        let reply = try asGateway { try link.call(method.rawValue, parameters) }
        // entryd answers its gateway as admin: the web user's own role decides what Status shows.
        if method == .syncStatus, !role.seesLocations { return .json(200, StatusReply.redacted(reply)) }
        // Possible duplicates name stored people: only for a web user who may read entries (not a kiosk).
        if !role.seesEntries, [.entriesAdd, .formsCheck, .entriesImport].contains(method) {
            return .json(200, DuplicatesReply.withheld(reply))
        }
        return .json(200, reply)
    }

    /// Runs a call to entryd; when entryd refuses the actor because it does not
    /// take this process for its gateway, says so (503 `GatewayNotConfigured`,
    /// and what to do in the log) instead of passing on a PermissionDenied
    /// that reads as if the web user's role were wrong.
    func asGateway<T>(_ call: () throws -> T) throws -> T {
        do {
            return try call()
        } catch let error as WireError
            where error.known == .permissionDenied
            && error.parameters["role"]?.stringValue == "gateway"
        {
            let user = ProcessInfo.processInfo.userName
            log.error(
                "entryd refuses to record web users as actors: add 'gateway = \(user)' under [roles] in entryd.conf and reload entryd (systemctl reload entryd)"
            )
            throw WebError(
                name: WebError.Name.gatewayNotConfigured, parameters: .object([("user", .string(user))]), status: 503)
        }
    }

    /// The body as a JSON object (an empty body is `{}`).
    func jsonObject(_ r: HTTPRequest, requireJSONType: Bool = true) throws -> JSON {
        if r.body.isEmpty { return .object([]) }
        if requireJSONType {
            let type = r.header("content-type")?.split(separator: ";").first?.trimmingSpaces.lowercased()
            guard type == "application/json" else {
                throw WebError(
                    name: WebError.Name.unsupportedMediaType,
                    parameters: .object([("expected", .string("application/json"))]), status: 415)
            }
        }
        let value: JSON
        do { value = try JSON.parse(r.body) } catch { throw WebError.badRequest("body: \(error)") }
        guard case .object(let members) = value else { throw WebError.badRequest("body: not a JSON object") }
        // A number beyond a double (1e400) parses as infinity, which JSON cannot carry on to
        // entryd (it would arrive as null, that is absent): refused here, naming the parameter.
        if let (name, _) = members.first(where: { $0.1.holdsNonFiniteNumber }) {
            throw WebError(
                name: WireErrorName.invalidParameter.rawValue, parameters: .object([("parameter", .string(name))]),
                status: 400)
        }
        return value
    }

    /// The most changes in one event of the live feed: a page of the backlog
    /// or of a burst stays small however far behind the client starts.
    static let feedPage: Int64 = 100

    /// `Changes` parameters from the query: where to start, and `limit`, the
    /// page size, at most ``feedPage``. Nothing else: the feed is for
    /// watching, not for peers.
    ///
    /// Where to start is `Last-Event-ID` when the request has one, else
    /// `since`: a browser reconnects to the URL it first opened, `?since=N`
    /// and all, with the id of the last event it got, and must not get the
    /// changes after N again.
    private func feedParameters(_ r: HTTPRequest) throws -> JSON {
        var since: Int64?
        var limit = Gateway.feedPage
        for (key, value) in r.query {
            guard key == "since" || key == "limit" else {
                throw WebError.badRequest("\(key): the live feed takes since and limit only")
            }
            guard value.count <= 19, let n = Int64(value), n >= 0 else {
                throw WebError.badRequest("\(key): not a whole number")
            }
            if key == "since" { since = n } else { limit = max(1, min(n, Gateway.feedPage)) }
        }
        var resume: Int64?
        if let id = r.header("last-event-id") {
            guard id.count <= 19, let n = Int64(id), n >= 0 else {
                throw WebError.badRequest("Last-Event-ID: not a whole number")
            }
            resume = n
        }
        guard let from = resume ?? since else { throw WebError.badRequest("since: required") }
        return .object([("since", .int(from)), ("limit", .int(limit))])
    }
}

extension HTTPResponse {
    /// A streamed response of events.
    init(status: Int, headers: [(String, String)], events: EventStream) {
        self.init(status: status, headers: headers)
        body = .events(events)
    }
}
