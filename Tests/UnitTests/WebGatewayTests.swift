import Foundation
import Testing
@testable import EntryModel
@testable import EntryProtocol
@testable import EntryWeb

/// entryd-web's handling without sockets: login, sessions, CSRF, roles, the
/// actor, statuses, static paths and settings (issue 18).
@Suite struct WebGatewayTests {
    /// Records calls and answers from a script.
    final class FakeLink: DaemonLink, @unchecked Sendable {
        let lock = NSLock()
        var calls: [(String, JSON)] = []
        var answer: @Sendable (String, JSON) throws -> JSON = { _, _ in .object([]) }
        func call(_ method: String, _ parameters: JSON) throws -> JSON {
            lock.withLock { calls.append((method, parameters)) }
            return try answer(method, parameters)
        }
        func stream(_ method: String, _ parameters: JSON) throws -> any ReplySource {
            lock.withLock { calls.append((method, parameters)) }
            return Replies([try answer(method, parameters)])
        }
    }

    final class Replies: ReplySource, @unchecked Sendable {
        var replies: [JSON]
        init(_ replies: [JSON]) { self.replies = replies }
        func next() throws -> JSON? {
            if replies.isEmpty { throw DaemonLinkError(reason: "closed") }
            return replies.removeFirst()
        }
        func close() {}
    }

    final class FakeUsers: WebUserStore, @unchecked Sendable {
        var users: [String: (Role, String)]
        init(users: [String: (Role, String)]) { self.users = users }
        func verify(name: String, password: String) -> WebUser? {
            guard let (role, p) = users[name], p == password else { return nil }
            return WebUser(name: name, role: role, passwordHash: p)
        }
        func account(named name: String) -> WebUser? {
            users[name].map { WebUser(name: name, role: $0.0, passwordHash: $0.1) }
        }
    }

    static let policy = MethodPolicy(
        roleOf: { method in
            switch method.rawValue {
            case "io.entryd.Entries.Add": return .write
            case "io.entryd.Entries.Erase": return .admin
            case "io.entryd.Entries.Get", "io.entryd.Sync.Changes", "io.entryd.Sync.Apply": return .read
            default: return nil
            }
        }, allows: { $0.allows($1) }, socketOnly: { $0.rawValue == "io.entryd.Sync.Apply" })

    final class Clock: @unchecked Sendable {
        var now = 1000.0
    }

    static func gateway(
        link: FakeLink = FakeLink(), clock: Clock = Clock(), secure: Bool = false,
        users: [String: (Role, String)] = ["ada": (.write, "pw-ada-123"), "rita": (.read, "pw-rita-123")]
    ) -> Gateway {
        gateway(link: link, clock: clock, secure: secure, directory: FakeUsers(users: users))
    }

    static func gateway(link: FakeLink = FakeLink(), clock: Clock = Clock(), secure: Bool = false, directory: FakeUsers)
        -> Gateway
    {
        Gateway(
            link: link, users: directory, policy: policy,
            sessions: SessionStore(idleSeconds: 60, clock: { clock.now }),
            limiter: LoginLimiter(limit: 3, clock: { clock.now }),
            settings: .init(secure: secure, behindProxy: false, maxBody: 1024),
            openAPI: { .object([("openapi", .string("3.1.0"))]) }, log: Log(threshold: .error, environment: [:]))
    }

    static func post(_ path: String, _ body: String, headers: [String: String] = [:], address: String = "10.0.0.1")
        -> HTTPRequest
    {
        HTTPRequest(
            method: "POST", path: path, headers: ["Content-Type": "application/json"].merging(headers) { $1 },
            body: Array(body.utf8), clientAddress: address)
    }

    static func json(_ r: HTTPResponse) throws -> JSON { try JSON.parse(r.bytes) }

    /// Logs in and returns (token, csrf).
    static func login(_ g: Gateway, _ user: String, _ password: String) throws -> (String, String) {
        let r = g.handle(post("/api/v1/login", #"{"user":"\#(user)","password":"\#(password)"}"#))
        #expect(r.status == 200)
        let body = try json(r)
        return (try #require(body["token"]?.stringValue), try #require(body["csrf"]?.stringValue))
    }

    @Test("login answers a token, the CSRF token and an HttpOnly SameSite=Strict cookie; Secure only with TLS")
    func loginCookie() throws {
        for secure in [false, true] {
            let g = Self.gateway(secure: secure)
            let r = g.handle(Self.post("/api/v1/login", #"{"user":"ada","password":"pw-ada-123"}"#))
            #expect(r.status == 200)
            let body = try Self.json(r)
            let token = try #require(body["token"]?.stringValue)
            #expect(token.count == 43)
            #expect(body["user"]?.stringValue == "ada")
            #expect(body["role"]?.stringValue == "write")
            let cookie = try #require(r.header("Set-Cookie"))
            #expect(cookie.hasPrefix("entryd_session=\(token); Path=/; HttpOnly; SameSite=Strict"))
            #expect(cookie.contains("Secure") == secure)
            #expect((r.header("Strict-Transport-Security") != nil) == secure)
        }
    }

    @Test(
        "a wrong password and an unknown user both answer 401 LoginFailed; the fourth failure in a minute answers 429 with Retry-After"
    )
    func loginFailuresAndLimit() throws {
        let clock = Clock()
        let g = Self.gateway(clock: clock)
        for (user, password) in [("ada", "wrong"), ("nobody", "x"), ("ada", "wrong")] {
            let r = g.handle(Self.post("/api/v1/login", #"{"user":"\#(user)","password":"\#(password)"}"#))
            #expect(r.status == 401)
            #expect(try Self.json(r)["error"]?.stringValue == "io.entryd.web.LoginFailed")
        }
        // ada has 2 attempts, the address 3: the address is now locked out, even with the right password.
        let locked = g.handle(Self.post("/api/v1/login", #"{"user":"ada","password":"pw-ada-123"}"#))
        #expect(locked.status == 429)
        #expect(try Self.json(locked)["parameters"]?["retryAfter"]?.intValue == 60)
        #expect(locked.header("Retry-After") == "60")
        // Another address is not locked for rita…
        let other = g.handle(
            Self.post("/api/v1/login", #"{"user":"rita","password":"pw-rita-123"}"#, address: "10.0.0.2"))
        #expect(other.status == 200)
        // …and a minute later the first address may try again.
        clock.now += 61
        #expect(g.handle(Self.post("/api/v1/login", #"{"user":"ada","password":"pw-ada-123"}"#)).status == 200)
    }

    @Test("API calls need a session: 401 without, the bearer token works, a cookie needs X-CSRF-Token")
    func authentication() throws {
        let link = FakeLink()
        link.answer = { _, _ in .object([("entry", .object([("id", .string("E1"))]))]) }
        let g = Self.gateway(link: link)
        let add = #"{"fields":{"name":"李雷"}}"#
        let none = g.handle(Self.post("/api/v1/io.entryd.Entries.Add", add))
        #expect(none.status == 401)
        #expect(try Self.json(none)["error"]?.stringValue == "io.entryd.web.AuthenticationRequired")
        #expect(none.header("WWW-Authenticate") == #"Bearer realm="entryd""#)
        #expect(
            g.handle(
                Self.post(
                    "/api/v1/io.entryd.Entries.Add", add,
                    headers: ["Authorization": "Bearer " + String(repeating: "A", count: 43)])
            ).status == 401)
        #expect(link.calls.isEmpty)

        let (token, csrf) = try Self.login(g, "ada", "pw-ada-123")
        let bearer = g.handle(
            Self.post("/api/v1/io.entryd.Entries.Add", add, headers: ["Authorization": "Bearer \(token)"]))
        #expect(bearer.status == 200)
        #expect(try Self.json(bearer)["entry"]?["id"]?.stringValue == "E1")

        let noCSRF = g.handle(
            Self.post("/api/v1/io.entryd.Entries.Add", add, headers: ["Cookie": "entryd_session=\(token)"]))
        #expect(noCSRF.status == 403)
        #expect(try Self.json(noCSRF)["error"]?.stringValue == "io.entryd.web.CSRFRejected")
        let wrongCSRF = g.handle(
            Self.post(
                "/api/v1/io.entryd.Entries.Add", add,
                headers: ["Cookie": "a=b; entryd_session=\(token)", "X-CSRF-Token": String(csrf.reversed())]))
        #expect(wrongCSRF.status == 403)
        let cookie = g.handle(
            Self.post(
                "/api/v1/io.entryd.Entries.Add", add,
                headers: ["Cookie": "a=b; entryd_session=\(token)", "X-CSRF-Token": csrf]))
        #expect(cookie.status == 200)
        #expect(link.calls.count == 2)
    }

    @Test("the actor is always the web user: a client's own actor parameter is replaced")
    func actorIsTheWebUser() throws {
        let link = FakeLink()
        let g = Self.gateway(link: link)
        let (token, _) = try Self.login(g, "ada", "pw-ada-123")
        _ = g.handle(
            Self.post(
                "/api/v1/io.entryd.Entries.Add", #"{"fields":{},"actor":"mallory"}"#,
                headers: ["Authorization": "Bearer \(token)"]))
        let (method, parameters) = try #require(link.calls.first)
        #expect(method == "io.entryd.Entries.Add")
        #expect(parameters["actor"]?.stringValue == "ada")
        #expect(parameters.objectValue?.filter { $0.0 == "actor" }.count == 1)
    }

    @Test(
        "roles: read may not Add (403 naming write), write may not Erase (403 naming admin); socket-only and unknown methods are 404"
    )
    func roles() throws {
        let link = FakeLink()
        let g = Self.gateway(link: link)
        let (rita, _) = try Self.login(g, "rita", "pw-rita-123")
        let (ada, _) = try Self.login(g, "ada", "pw-ada-123")
        let denied = g.handle(
            Self.post("/api/v1/io.entryd.Entries.Add", "{}", headers: ["Authorization": "Bearer \(rita)"]))
        #expect(denied.status == 403)
        #expect(try Self.json(denied)["parameters"]?["role"]?.stringValue == "write")
        #expect(
            g.handle(Self.post("/api/v1/io.entryd.Entries.Erase", "{}", headers: ["Authorization": "Bearer \(ada)"]))
                .status == 403)
        for method in ["io.entryd.Sync.Apply", "io.entryd.Nope.Nothing", "x"] {
            let r = g.handle(Self.post("/api/v1/" + method, "{}", headers: ["Authorization": "Bearer \(ada)"]))
            #expect(r.status == 404)
            #expect(try Self.json(r)["error"]?.stringValue == "org.varlink.service.MethodNotFound")
        }
        #expect(link.calls.isEmpty)
    }

    @Test("entryd's errors keep their names and parameters with their statuses; a broken link is 503")
    func errorStatuses() throws {
        let cases: [(String, Int)] = [
            ("io.entryd.Entries.ValidationFailed", 400), ("org.varlink.service.InvalidParameter", 400),
            ("io.entryd.Entries.EntryNotFound", 404), ("io.entryd.Forms.FormNotFound", 404),
            ("io.entryd.Entries.EntryExists", 409), ("io.entryd.Entries.VersionMismatch", 409),
            ("io.entryd.Entries.LimitExceeded", 413), ("io.entryd.Entries.StorageFailed", 503),
            ("org.varlink.service.PermissionDenied", 403),
        ]
        let link = FakeLink()
        let g = Self.gateway(link: link)
        let (token, _) = try Self.login(g, "ada", "pw-ada-123")
        for (name, status) in cases {
            link.answer = { _, _ in throw WireError(name: name, parameters: .object([("id", .string("X"))])) }
            let r = g.handle(
                Self.post(
                    "/api/v1/io.entryd.Entries.Get", #"{"id":"X"}"#, headers: ["Authorization": "Bearer \(token)"]))
            #expect(r.status == status, "\(name)")
            let body = try Self.json(r)
            #expect(body["error"]?.stringValue == name)
            #expect(body["parameters"]?["id"]?.stringValue == "X")
        }
        link.answer = { _, _ in
            throw WireError(
                name: WireErrorName.permissionDenied.rawValue, parameters: .object([("role", .string("gateway"))]))
        }
        let unnamed = g.handle(
            Self.post("/api/v1/io.entryd.Entries.Get", #"{"id":"X"}"#, headers: ["Authorization": "Bearer \(token)"]))
        #expect(unnamed.status == 503)
        #expect(try Self.json(unnamed)["error"]?.stringValue == "io.entryd.web.GatewayNotConfigured")
        link.answer = { _, _ in throw DaemonLinkError(reason: "gone") }
        let r = g.handle(
            Self.post("/api/v1/io.entryd.Entries.Get", #"{"id":"X"}"#, headers: ["Authorization": "Bearer \(token)"]))
        #expect(r.status == 503)
        #expect(try Self.json(r)["error"]?.stringValue == "io.entryd.web.DaemonUnreachable")
    }

    @Test(
        "bodies: not JSON 400, not an object 400, not application/json 415, too large 413, GET on a POST method 405 with Allow"
    )
    func badBodies() throws {
        let link = FakeLink()
        let g = Self.gateway(link: link)
        let (token, _) = try Self.login(g, "ada", "pw-ada-123")
        let auth = ["Authorization": "Bearer \(token)"]
        #expect(g.handle(Self.post("/api/v1/io.entryd.Entries.Get", "{", headers: auth)).status == 400)
        #expect(g.handle(Self.post("/api/v1/io.entryd.Entries.Get", "[1]", headers: auth)).status == 400)
        #expect(
            g.handle(
                Self.post(
                    "/api/v1/io.entryd.Entries.Get", "{}", headers: auth.merging(["Content-Type": "text/plain"]) { $1 })
            ).status == 415)
        var big = Self.post("/api/v1/io.entryd.Entries.Get", "", headers: auth)
        big.bodyTooLarge = true
        let tooLarge = g.handle(big)
        #expect(tooLarge.status == 413)
        #expect(try Self.json(tooLarge)["parameters"]?["limit"]?.intValue == 1024)
        let get = g.handle(HTTPRequest(method: "GET", path: "/api/v1/io.entryd.Entries.Get", headers: auth))
        #expect(get.status == 405 && get.header("Allow") == "POST")
        #expect(link.calls.isEmpty)
    }

    @Test("the live feed: GET Changes streams each reply as an event with its seq as id; Last-Event-ID resumes")
    func feed() throws {
        let link = FakeLink()
        link.answer = { _, p in .object([("changes", .array([])), ("last", .int(p["since"]?.intValue ?? -1))]) }
        let g = Self.gateway(link: link)
        let (token, _) = try Self.login(g, "rita", "pw-rita-123")
        let r = g.handle(
            HTTPRequest(
                method: "GET", path: "/api/v1/io.entryd.Sync.Changes", query: [("since", "7")],
                headers: ["Authorization": "Bearer \(token)"]))
        #expect(r.status == 200)
        #expect(r.header("Content-Type") == "text/event-stream")
        guard case .events(let events) = r.body else {
            Issue.record("not a stream")
            return
        }
        let first = String(decoding: try #require(events.next()), as: UTF8.self)
        #expect(first.hasPrefix("id: 7\nevent: changes\ndata: {"))
        #expect(first.hasSuffix("\n\n"))
        let end = String(decoding: try #require(events.next()), as: UTF8.self)
        #expect(end.hasPrefix("event: error\ndata: {\"error\":\"io.entryd.web.DaemonUnreachable\""))
        #expect(events.next() == nil)

        let resumed = g.handle(
            HTTPRequest(
                method: "GET", path: "/api/v1/io.entryd.Sync.Changes",
                headers: ["Authorization": "Bearer \(token)", "Last-Event-ID": "42"]))
        #expect(resumed.status == 200)
        #expect(link.calls.last?.1["since"]?.intValue == 42)
        // A browser reconnects to the URL it opened, ?since=0 and all: Last-Event-ID wins.
        let reconnected = g.handle(
            HTTPRequest(
                method: "GET", path: "/api/v1/io.entryd.Sync.Changes", query: [("since", "0")],
                headers: ["Authorization": "Bearer \(token)", "Last-Event-ID": "3"]))
        #expect(reconnected.status == 200)
        #expect(link.calls.last?.1["since"]?.intValue == 3)
        for id in ["x", "-1", "1" + String(repeating: "0", count: 30)] {
            let refused = g.handle(
                HTTPRequest(
                    method: "GET", path: "/api/v1/io.entryd.Sync.Changes", query: [("since", "0")],
                    headers: ["Authorization": "Bearer \(token)", "Last-Event-ID": id]))
            #expect(refused.status == 400, "Last-Event-ID \(id)")
        }
        let bad = g.handle(
            HTTPRequest(
                method: "GET", path: "/api/v1/io.entryd.Sync.Changes", query: [("since", "x")],
                headers: ["Authorization": "Bearer \(token)"]))
        #expect(bad.status == 400)
    }

    @Test("sessions end when idle too long, on logout, and when the user leaves the users file")
    func sessionEnds() throws {
        let clock = Clock()
        var users: [String: (Role, String)] = ["ada": (.write, "pw-ada-123")]
        let link = FakeLink()
        let g = Self.gateway(link: link, clock: clock, users: users)
        let (token, csrf) = try Self.login(g, "ada", "pw-ada-123")
        let session = HTTPRequest(method: "GET", path: "/api/v1/session", headers: ["Authorization": "Bearer \(token)"])
        #expect(g.handle(session).status == 200)
        clock.now += 61
        #expect(g.handle(session).status == 401)

        let (second, csrf2) = try Self.login(g, "ada", "pw-ada-123")
        #expect(csrf2 != csrf)
        let logout = g.handle(
            Self.post("/api/v1/logout", "", headers: ["Cookie": "entryd_session=\(second)", "X-CSRF-Token": csrf2]))
        #expect(logout.status == 200)
        #expect(logout.header("Set-Cookie")?.contains("Max-Age=0") == true)
        #expect(
            g.handle(
                HTTPRequest(method: "GET", path: "/api/v1/session", headers: ["Authorization": "Bearer \(second)"])
            ).status == 401)

        users = [:]
        let gone = Self.gateway(link: link, clock: clock, users: users)
        #expect(gone.handle(Self.post("/api/v1/login", #"{"user":"ada","password":"pw-ada-123"}"#)).status == 401)
    }

    @Test("static paths: the page at /, 404 for unknown files, 400 for any step out of web/")
    func staticPaths() throws {
        let g = Self.gateway()
        let page = g.handle(HTTPRequest(method: "GET", path: "/"))
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(page.header("Content-Security-Policy")?.contains("default-src 'self'") == true)
        let etag = try #require(page.header("ETag"))
        #expect(g.handle(HTTPRequest(method: "GET", path: "/", headers: ["If-None-Match": etag])).status == 304)
        #expect(g.handle(HTTPRequest(method: "GET", path: "/nope.html")).status == 404)
        for path in ["/../etc/passwd", "/assets/../../x", "/./index.html", "/a\\b", "//etc/passwd", "/assets//x"] {
            #expect(g.handle(HTTPRequest(method: "GET", path: path)).status == 400, "\(path)")
        }
        let post = g.handle(HTTPRequest(method: "POST", path: "/"))
        #expect(post.status == 405 && post.header("Allow") == "GET, HEAD")
        #expect(g.handle(HTTPRequest(method: "GET", path: "/healthz")).bytes == Array("ok\n".utf8))
    }

    @Test("settings: defaults, the file under the command line, and the refusals that name the key")
    func settings() throws {
        let file = "[web]\nlisten = [::1]:9000\nmax-body = 2K\nlogin-attempts = 9\nsession-idle = 2h\n"
        let s = try WebSettings.load(try WebSettings.scan(["--config", "/c", "--users", "/u"])) { _ in file }
        #expect(s.listen == .init(host: "::1", port: 9000))
        #expect(s.maxBody == 2048 && s.loginAttempts == 9 && s.sessionIdle == 7200 && s.users == "/u")
        #expect(!s.secure)
        let d = try WebSettings.load([]) { _ in nil }
        #expect(
            d.listen.description == "127.0.0.1:8080" && d.users == "/etc/entryd/web-users" && d.maxConnections == 512)
        #expect(d.configPath == nil)
        #expect(d.headerTimeout == 10 && d.maxUnauthenticatedConnections == 256)
        let tight = try WebSettings.load(try WebSettings.scan(["--config", "/c"])) { _ in
            "[web]\nheader-timeout = 2\nmax-unauthenticated-connections = 8\n"
        }
        #expect(tight.headerTimeout == 2 && tight.maxUnauthenticatedConnections == 8)
        // $ENTRYD_WEB_USERS under the file's users under --users; the default file when present.
        let env = ["ENTRYD_WEB_USERS": "/env/users"]
        #expect(try WebSettings.load([], environment: env) { _ in nil }.users == "/env/users")
        let withDefault = try WebSettings.load([], environment: env) {
            $0 == WebSettings.defaultConfigPath ? "[web]\nusers = /file/users\n" : nil
        }
        #expect(withDefault.users == "/file/users" && withDefault.configPath == WebSettings.defaultConfigPath)
        #expect(
            try WebSettings.load(try WebSettings.scan(["--users", "/opt/u"]), environment: env) { _ in nil }.users
                == "/opt/u")

        func problem(_ args: [String], file: String? = nil) -> WebSettings.SettingsError? {
            do {
                _ = try WebSettings.load(try WebSettings.scan(args)) { _ in file }
                return nil
            } catch { return error as? WebSettings.SettingsError }
        }
        #expect(problem(["--nope"])?.code == .usage)
        #expect(problem(["--nope"])?.message == "unknown option '--nope'; see entryd-web --help")
        #expect(problem(["--lisen=127.0.0.1:80"])?.message == "unknown option '--lisen'; did you mean '--listen'?")
        #expect(problem(["--listen"])?.message == "option '--listen' needs a value (--listen HOST:PORT)")
        #expect(problem(["--behind-proxy=yes"])?.message == "option '--behind-proxy' takes no value")
        #expect(problem(["8080"])?.message == "unexpected argument '8080'")
        #expect(problem(["--users", "/a", "--users=/b"]) == nil, "the last one counts")
        #expect(problem(["--listen", "example.org:80"])?.message.contains("--listen must be HOST:PORT") == true)
        #expect(problem(["--listen", "localhost"])?.message.hasSuffix("'localhost' has no port") == true)
        #expect(
            problem(["--config", "/c"], file: "[web]\nidle-timeout = soon\n")?.message.contains(
                "idle-timeout: give a whole number from 1 to 3600 seconds") == true)
        #expect(
            problem(["--config", "/c"], file: "[web]\nheader-timeout = 0\n")?.message.contains("header-timeout:")
                == true)
        #expect(
            problem(["--config", "/c"], file: "[web]\nmax-unauthenticated-connections = 0\n")?.message.contains(
                "max-unauthenticated-connections:") == true)
        let open = try #require(problem(["--listen", "0.0.0.0:8080"]))
        #expect(open.message.contains("refusing to listen on 0.0.0.0:8080 without TLS") && open.code == .config)
        #expect(
            problem(["--listen", "0.0.0.0:8080", "--behind-proxy"])?.message.contains(
                "expects the TLS proxy on this host") == true)
        #expect(problem(["--listen", "127.0.0.1:8080", "--behind-proxy"]) == nil)
        #expect(problem(["--listen", "0.0.0.0:8080", "--tls-certificate", "c.pem"])?.message.contains("both") == true)
        #expect(
            problem(["--config", "/c"], file: "[web]\nmax-body = 1\n")?.message.hasPrefix(
                "/c:2: max-body: give a whole number from 1024 to 67108864 bytes") == true)
        #expect(
            problem(["--config", "/c"], file: "[web]\ncolour = red\n")?.message.contains("unknown key 'colour'") == true
        )
        let missing = try #require(problem(["--config", "/missing"]))
        #expect(missing.message.contains("cannot read the configuration file /missing") && missing.code == .noInput)
    }

    @Test("attempts sent all at once meet the limit too: 40 concurrent wrong logins, 3 checked, the rest 429")
    func concurrentAttempts() throws {
        let g = Self.gateway()
        let statuses = LockedStatuses()
        DispatchQueue.concurrentPerform(iterations: 40) { _ in
            statuses.add(g.handle(Self.post("/api/v1/login", #"{"user":"ada","password":"wrong"}"#)).status)
        }
        #expect(statuses.all.filter { $0 == 401 }.count == 3)
        #expect(statuses.all.filter { $0 == 429 }.count == 37)
    }

    final class LockedStatuses: @unchecked Sendable {
        let lock = NSLock()
        var all: [Int] = []
        func add(_ s: Int) { lock.withLock { all.append(s) } }
    }

    @Test("a new password, or a user removed and added again, ends the old sessions and their live feeds")
    func credentialChange() throws {
        let link = FakeLink()
        link.answer = { _, _ in .object([("changes", .array([])), ("last", .int(1))]) }
        let users = FakeUsers(users: ["ada": (.write, "pw-ada-123")])
        let g = Self.gateway(link: link, directory: users)
        let (token, _) = try Self.login(g, "ada", "pw-ada-123")
        let feed = g.handle(
            HTTPRequest(
                method: "GET", path: "/api/v1/io.entryd.Sync.Changes", query: [("since", "0")],
                headers: ["Authorization": "Bearer \(token)"]))
        guard case .events(let events) = feed.body else {
            Issue.record("not a stream")
            return
        }
        #expect(String(decoding: try #require(events.next()), as: UTF8.self).contains("event: changes"))
        users.users["ada"] = (.write, "a new password")
        #expect(
            g.handle(HTTPRequest(method: "GET", path: "/api/v1/session", headers: ["Authorization": "Bearer \(token)"]))
                .status == 401)
        let ended = String(decoding: try #require(events.next()), as: UTF8.self)
        #expect(ended.hasPrefix("event: error\ndata: {\"error\":\"io.entryd.web.AuthenticationRequired\""))
        #expect(events.next() == nil)
    }

    /// A source whose every wait runs `during` first: the session ends while the feed waits.
    final class EndingSource: ReplySource, @unchecked Sendable {
        var during: () -> Void = {}
        var closed = false
        func next() throws -> JSON? {
            during()
            return .object([("changes", .array([.object([("entry", .string("secret-batch"))])])), ("last", .int(9))])
        }
        func close() { closed = true }
    }

    final class EndingLink: DaemonLink, @unchecked Sendable {
        let source = EndingSource()
        func call(_ method: String, _ parameters: JSON) throws -> JSON { .object([]) }
        func stream(_ method: String, _ parameters: JSON) throws -> any ReplySource { source }
    }

    @Test(
        "a batch that arrives after the session ended (logout, new password, removal) is never sent",
        arguments: ["logout", "password", "removal"])
    func feedAfterSessionEnds(ending: String) throws {
        let link = EndingLink()
        let users = FakeUsers(users: ["ada": (.write, "pw-ada-123")])
        let g = Gateway(
            link: link, users: users, policy: Self.policy, sessions: SessionStore(idleSeconds: 60),
            limiter: LoginLimiter(limit: 3), settings: .init(secure: false, behindProxy: false, maxBody: 1024),
            openAPI: { .object([]) }, log: Log(threshold: .error, environment: [:]))
        let (token, csrf) = try Self.login(g, "ada", "pw-ada-123")
        let feed = g.handle(
            HTTPRequest(
                method: "GET", path: "/api/v1/io.entryd.Sync.Changes", query: [("since", "0")],
                headers: ["Authorization": "Bearer \(token)"]))
        guard case .events(let events) = feed.body else {
            Issue.record("not a stream")
            return
        }
        #expect(String(decoding: try #require(events.next()), as: UTF8.self).contains("secret-batch"))
        link.source.during = {
            switch ending {
            case "logout":
                let out = g.handle(
                    Self.post(
                        "/api/v1/logout", "", headers: ["Authorization": "Bearer \(token)", "X-CSRF-Token": csrf]))
                #expect(out.status == 200)
            case "password": users.users["ada"] = (.write, "a new password")
            default: users.users["ada"] = nil
            }
        }
        let ended = String(decoding: try #require(events.next()), as: UTF8.self)
        #expect(!ended.contains("secret-batch"))
        #expect(ended.hasPrefix("event: error\ndata: {\"error\":\"io.entryd.web.AuthenticationRequired\""))
        #expect(link.source.closed)
        #expect(events.next() == nil)
    }

    @Test(
        "the live feed forwards since and a page of at most 100; peer parameters are refused, in the query and in a POST"
    )
    func feedParameters() throws {
        let link = FakeLink()
        link.answer = { _, _ in .object([("changes", .array([])), ("last", .int(0))]) }
        let g = Self.gateway(link: link)
        let (token, _) = try Self.login(g, "rita", "pw-rita-123")
        let auth = ["Authorization": "Bearer \(token)"]
        _ = g.handle(
            HTTPRequest(
                method: "GET", path: "/api/v1/io.entryd.Sync.Changes", query: [("since", "3"), ("limit", "10000")],
                headers: auth))
        #expect(link.calls.last?.1 == .object([("since", .int(3)), ("limit", .int(100)), ("actor", .string("rita"))]))
        for query in [
            [("since", "0"), ("excludeNode", "fake")],
            [("since", "0"), ("limit", "1" + String(repeating: "0", count: 400))],
        ] {
            #expect(
                g.handle(
                    HTTPRequest(method: "GET", path: "/api/v1/io.entryd.Sync.Changes", query: query, headers: auth)
                ).status == 400)
        }
        let post = g.handle(
            Self.post("/api/v1/io.entryd.Sync.Changes", #"{"since":0,"excludeNode":"fake"}"#, headers: auth))
        #expect(post.status == 400)
        #expect(link.calls.count == 1)
    }

    @Test("a request head over 32 KiB or 100 fields is 431 HeaderTooLarge in JSON")
    func headTooLarge() throws {
        let g = Self.gateway()
        for (head, status) in [((40_000, 10), 431), ((1000, 101), 431), ((32 << 10, 100), 200)] {
            let r = g.handle(HTTPRequest(method: "GET", path: "/healthz", head: head))
            #expect(r.status == status, "\(head)")
            if status == 431 {
                #expect(r.header("Content-Type") == "application/json")
                let body = try Self.json(r)
                #expect(body["error"]?.stringValue == "io.entryd.web.HeaderTooLarge")
                #expect(body["parameters"]?["limit"]?.intValue == 32 << 10)
            }
        }
    }

    @Test("log lines show a user name with its control characters escaped")
    func printableNames() {
        #expect(Gateway.printable("ada") == "'ada'")
        #expect(Gateway.printable("x\nentryd-web: forged\u{1B}[2J") == "'x\\nentryd-web: forged\\u{1B}[2J'")
        #expect(Gateway.printable(String(repeating: "a", count: 70)).hasSuffix("a…'"))
    }
}
