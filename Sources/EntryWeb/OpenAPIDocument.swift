import EntryModel
import EntryProtocol

/// The OpenAPI 3.1.0 description of entryd-web's HTTP API
/// (`/api/v1/openapi.json`; doc/design.md "The HTTP door: entryd-web"),
/// generated from the varlink interface descriptions entryd serves
/// (``VarlinkIDL/served``), never from a hand-kept list of methods.
///
/// The API: `POST /api/v1/<interface>.<Method>` for every exposed method (the
/// body is the method's parameters as a JSON object, the 200 reply its reply
/// parameters); errors are `{"error": "<qualified varlink error name>",
/// "parameters": {…}}` with the status of ``WebError/status(for:)``;
/// `GET /api/v1/io.entryd.Sync.Changes?since=N&limit=L` streams changes as
/// Server-Sent Events; `POST /api/v1/login`, `POST /api/v1/logout`,
/// `GET /api/v1/session`, `GET /api/v1/offline`, `GET /healthz`. A caller
/// authenticates with `Authorization: Bearer TOKEN`, or with the
/// `entryd_session` cookie plus the `X-CSRF-Token` header.
package enum OpenAPIDocument {
    /// Whether entryd-web exposes the qualified method `name` (`io.entryd.Entries.Add`):
    /// the ``Method``s ``Method/isServedOverHTTP``; `false` for a name no
    /// interface declares.
    package static func isExposed(_ name: String) -> Bool { Method(rawValue: name)?.isServedOverHTTP ?? false }

    /// What each error status means, for the responses of every method.
    static let statusMeanings: [(Int, String)] = [
        (
            400,
            "The parameters were not accepted (ValidationFailed lists every problem), a parameter is invalid, or the body is not a JSON object."
        ),
        (401, "Not logged in (io.entryd.web.AuthenticationRequired)."),
        (
            403,
            "The user's role does not allow the method (PermissionDenied names the role needed), or the CSRF check failed (io.entryd.web.CSRFRejected)."
        ),
        (404, "No such entry, form, field, conflict, interface or method."),
        (405, "The path takes other HTTP methods (MethodNotAllowed; the Allow header lists them)."),
        (409, "The entry exists with other values, was changed since the given version, or was erased."),
        (413, "A limit was hit (LimitExceeded names it), or the body is too large."),
        (415, "The body is not application/json (UnsupportedMediaType)."),
        (431, "The request line and headers are too large (HeaderTooLarge)."),
        (
            429,
            "Too many failed logins (io.entryd.web.TooManyAttempts); the Retry-After header gives the seconds to wait."
        ),
        (500, "An unexpected error; error names it."),
        (501, "The method is declared but not implemented (MethodNotImplemented)."),
        (
            503,
            "entryd could not store (StorageFailed: nothing of the call was stored) or cannot be reached (io.entryd.web.DaemonUnreachable), or this address has too many connections open (TooManyConnections, with Retry-After); try again."
        ),
    ]

    /// The document, for the methods of ``VarlinkIDL/served`` that `exposed`
    /// accepts (given qualified names; default ``isExposed(_:)``).
    ///
    /// Shape: `openapi` 3.1.0, `info`, `tags` (one per interface, with its doc
    /// comment), `paths` (login, logout, session, the methods in interface and
    /// file order, the SSE feed, healthz, the document itself), `components`
    /// (`schemas` named `INTERFACE.TYPE` for the varlink types,
    /// `INTERFACE.METHOD.Parameters` / `.Reply`, `INTERFACE.ERROR` for each error
    /// reply; `responses` by status; `securitySchemes` `bearer`, `cookie` and
    /// `csrf`), and the default `security`. Objects keep their keys in the
    /// order written, so the same interfaces give the same bytes.
    package static func generate(exposed: (String) -> Bool = isExposed) -> JSON {
        generate(interfaces: VarlinkIDL.served, exposed: exposed)
    }

    /// The document for `interfaces` (see ``generate(exposed:)``).
    static func generate(interfaces: [VarlinkIDL], exposed: (String) -> Bool) -> JSON {
        var schemas: [(String, JSON)] = [("Error", errorSchema)]
        var paths: [(String, JSON)] = []
        let exposedMethods = interfaces.flatMap { i in
            i.methods.compactMap { m in exposed("\(i.name).\(m.name)") ? Method(rawValue: "\(i.name).\(m.name)") : nil }
        }
        let answered = Set((exposedMethods.flatMap(\.errors) + WireErrorName.anyCall).map(\.rawValue))
        let security = JSON.array([
            .object([("bearer", .array([]))]), .object([("cookie", .array([])), ("csrf", .array([]))]),
        ])

        paths.append(
            (
                "/api/v1/login",
                .object([
                    (
                        "post",
                        .object([
                            ("operationId", .string("login")), ("tags", .array([.string("session")])),
                            ("summary", .string("Log in with a web user's name and password.")),
                            (
                                "description",
                                .string(
                                    "Answers a bearer token and sets the entryd_session cookie (HttpOnly); csrf is the value to send as X-CSRF-Token with the cookie. Failed logins are rate-limited (429)."
                                )
                            ),
                            ("security", .array([])),
                            ("requestBody", jsonBody(ref("Login"), required: true)),
                            (
                                "responses",
                                .object([
                                    ("200", jsonResponse("Logged in.", ref("Session"))),
                                    ("400", responseRef(400)), ("401", responseRef(401)), ("429", responseRef(429)),
                                    ("503", responseRef(503)),
                                    ("default", responseRef(nil)),
                                ])
                            ),
                        ])
                    )
                ])
            ))
        paths.append(
            (
                "/api/v1/logout",
                .object([
                    (
                        "post",
                        .object([
                            ("operationId", .string("logout")), ("tags", .array([.string("session")])),
                            ("summary", .string("End the session of the token or cookie given.")),
                            (
                                "responses",
                                .object([
                                    ("200", jsonResponse("Logged out.", .object([("type", .string("object"))]))),
                                    ("401", responseRef(401)), ("403", responseRef(403)), ("default", responseRef(nil)),
                                ])
                            ),
                        ])
                    )
                ])
            ))
        paths.append(
            (
                "/api/v1/session",
                .object([
                    (
                        "get",
                        .object([
                            ("operationId", .string("session")), ("tags", .array([.string("session")])),
                            ("summary", .string("The logged-in user, their role and the session's CSRF value.")),
                            (
                                "responses",
                                .object([
                                    ("200", jsonResponse("The session.", ref("SessionInfo"))),
                                    ("401", responseRef(401)), ("default", responseRef(nil)),
                                ])
                            ),
                        ])
                    )
                ])
            ))

        let offlineProperties: [(String, JSON)] = [
            ("version", .object([("type", .string("string"))])), ("default", .object([("type", .string("string"))])),
            ("forms", .object([("type", .string("object"))])), ("options", .object([("type", .string("object"))])),
            ("keys", .object([("type", .string("object"))])), ("fold", .object([("type", .string("object"))])),
        ]
        paths.append(
            (
                "/api/v1/offline",
                .object([
                    (
                        "get",
                        .object([
                            ("operationId", .string("offline")), ("tags", .array([.string("session")])),
                            (
                                "summary",
                                .string(
                                    "The form's data for the page offline (issue 32): per locale every form and every picker's rows, the keys Options ranks them by ([text, word starts, initials] per row value), Traditional to Simplified folds. version, a hash of the rest, is also the ETag (If-None-Match: 304)."
                                )
                            ),
                            (
                                "responses",
                                .object([
                                    (
                                        "200",
                                        jsonResponse(
                                            "The data.",
                                            .object([
                                                ("type", .string("object")),
                                                ("required", .array(offlineProperties.map { .string($0.0) })),
                                                ("properties", .object(offlineProperties)),
                                            ]))
                                    ),
                                    (
                                        "304",
                                        .object([("description", .string("Unchanged: the ETag given is current."))])
                                    ),
                                    ("401", responseRef(401)), ("403", responseRef(403)), ("503", responseRef(503)),
                                    ("default", responseRef(nil)),
                                ])
                            ),
                        ])
                    )
                ])
            ))

        // A named type is the interface's own; one it uses without declaring (io.entryd.Forms
        // uses Problem, declared in io.entryd.Entries) is the first served interface's that declares it.
        let resolve = { (interface: String, name: String) -> String in
            if interfaces.first(where: { $0.name == interface })?.type(name) != nil { return "\(interface).\(name)" }
            if let owner = interfaces.first(where: { $0.type(name) != nil }) { return "\(owner.name).\(name)" }
            return "\(interface).\(name)"
        }
        func schema(_ type: VarlinkIDL.VarlinkType, in interface: String) -> JSON {
            Self.schema(type, in: interface, resolve: resolve)
        }
        var tags: [JSON] = [.object([("name", .string("session")), ("description", .string("Logging in and out."))])]
        for interface in interfaces {
            let q = interface.name
            tags.append(.object([("name", .string(q)), ("description", .string(interface.doc))]))
            for t in interface.types {
                var s = schema(t.type, in: q)
                if !t.doc.isEmpty { s = with(s, "description", .string(t.doc)) }
                schemas.append(("\(q).\(t.name)", s))
            }
            for e in interface.errors {
                let name = "\(q).\(e.name)"
                // An error no exposed method answers (BackupUnsupported: Backup stays on the socket) is left out.
                guard answered.contains(name) else { continue }
                var members: [(String, JSON)] = [("type", .string("object"))]
                if !e.doc.isEmpty { members.append(("description", .string(e.doc))) }
                members.append(("required", .array([.string("error"), .string("parameters")])))
                members.append(
                    (
                        "properties",
                        .object([
                            ("error", .object([("const", .string(name))])),
                            ("parameters", schema(.structure(e.parameters), in: q)),
                        ])
                    ))
                schemas.append((name, .object(members)))
            }
            for m in interface.methods where exposed("\(q).\(m.name)") {
                let name = "\(q).\(m.name)"
                let method = Method(rawValue: name)
                let parameters = m.parameters.filter { p in
                    method.map { ParameterRules.isServed(p.name, of: $0) } ?? true
                }
                var parametersSchema = schema(.structure(parameters), in: q)
                if let method { parametersSchema = ParameterRules.refine(parametersSchema, of: method) }
                schemas.append(("\(name).Parameters", parametersSchema))
                schemas.append(("\(name).Reply", schema(.structure(m.reply), in: q)))
                var responses: [(String, JSON)] = [("200", jsonResponse("The reply parameters.", ref("\(name).Reply")))]
                responses += errorResponses(method.map { $0.errors + WireErrorName.anyCall } ?? WireErrorName.anyCall)
                var operation: [(String, JSON)] = [
                    ("operationId", .string(name)), ("tags", .array([.string(q)])),
                    ("summary", .string(summary(of: m.doc, name: name))),
                ]
                if !m.doc.isEmpty { operation.append(("description", .string(m.doc))) }
                let required = m.parameters.contains {
                    if case .optional = $0.type { return false } else { return true }
                }
                operation.append(("requestBody", jsonBody(ref("\(name).Parameters"), required: required)))
                operation.append(("responses", .object(responses)))
                var item: [(String, JSON)] = [("post", .object(operation))]
                if Method(rawValue: name) == .syncChanges { item.append(("get", changesStream)) }
                paths.append(("/api/v1/\(name)", .object(item)))
            }
        }
        for e in WebError.own {
            schemas.append(
                (
                    e.name,
                    .object([
                        ("type", .string("object")), ("description", .string(e.doc)),
                        ("required", .array([.string("error"), .string("parameters")])),
                        (
                            "properties",
                            .object([
                                ("error", .object([("const", .string(e.name))])),
                                ("parameters", .object([("type", .string("object"))])),
                            ])
                        ),
                    ])
                ))
        }
        schemas += sessionSchemas

        paths.append(
            (
                "/healthz",
                .object([
                    (
                        "get",
                        .object([
                            ("operationId", .string("healthz")), ("tags", .array([.string("session")])),
                            ("summary", .string("Whether entryd-web is up (no login needed).")),
                            ("security", .array([])),
                            ("responses", .object([("200", .object([("description", .string("entryd-web is up."))]))])),
                        ])
                    )
                ])
            ))
        paths.append(
            (
                "/api/v1/openapi.json",
                .object([
                    (
                        "get",
                        .object([
                            ("operationId", .string("openapi")), ("tags", .array([.string("session")])),
                            ("summary", .string("This document.")),
                            ("security", .array([])),
                            (
                                "responses",
                                .object([
                                    (
                                        "200",
                                        jsonResponse(
                                            "The OpenAPI 3.1 description of the API.",
                                            .object([("type", .string("object"))]))
                                    )
                                ])
                            ),
                        ])
                    )
                ])
            ))

        // The responses the session paths and the feed share: the gateway's own errors of each status.
        var responses: [(String, JSON)] = []
        for (status, meaning) in statusMeanings {
            let names = WebError.own.filter { $0.status == status }.map(\.name)
            responses.append((String(status), errorResponse(meaning, names)))
        }
        responses.append(("Default", jsonResponse("Any other error.", ref("Error"))))

        return .object([
            ("openapi", .string("3.1.0")),
            (
                "info",
                .object([
                    ("title", .string("entryd HTTP API (entryd-web)")),
                    ("version", .string(EntrydVersion.string)),
                    (
                        "description",
                        .string(
                            "The varlink methods of entryd over HTTP: POST /api/v1/<interface>.<Method> with the method's parameters as a JSON object answers its reply parameters; an error is {\"error\": \"<qualified varlink error name>\", \"parameters\": {...}} with a fitting status. Generated from the interface descriptions entryd serves."
                        )
                    ),
                ])
            ),
            // Relative: the document is served by the entryd-web it describes.
            ("servers", .array([.object([("url", .string("/")), ("description", .string("This entryd-web."))])])),
            ("tags", .array(tags)),
            ("paths", .object(paths)),
            (
                "components",
                .object([
                    ("schemas", .object(schemas)),
                    ("responses", .object(responses)),
                    (
                        "securitySchemes",
                        .object([
                            (
                                "bearer",
                                .object([
                                    ("type", .string("http")), ("scheme", .string("bearer")),
                                    ("description", .string("The token answered by POST /api/v1/login.")),
                                ])
                            ),
                            (
                                "cookie",
                                .object([
                                    ("type", .string("apiKey")), ("in", .string("cookie")),
                                    ("name", .string("entryd_session")),
                                    (
                                        "description",
                                        .string("The session cookie set by POST /api/v1/login; needs csrf as well.")
                                    ),
                                ])
                            ),
                            (
                                "csrf",
                                .object([
                                    ("type", .string("apiKey")), ("in", .string("header")),
                                    ("name", .string("X-CSRF-Token")),
                                    (
                                        "description",
                                        .string(
                                            "The csrf value of the login reply or GET /api/v1/session, sent with the cookie."
                                        )
                                    ),
                                ])
                            ),
                        ])
                    ),
                ])
            ),
            ("security", security),
        ])
    }

    // MARK: - Pieces

    /// The error responses of a method's `POST`: for each status, the method's
    /// own errors (``Method/errors`` and ``WireErrorName/anyCall``) and the
    /// gateway's that any `POST` can meet (a bad body, no login, a CSRF
    /// failure, a wrong HTTP method, a body too large or not JSON, entryd
    /// unreachable); `default` for the rest (500).
    static func errorResponses(_ errors: [WireErrorName]) -> [(String, JSON)] {
        var byStatus: [Int: [String]] = [:]
        for e in errors { byStatus[WebError.status(for: e), default: []].append(e.rawValue) }
        for e in WebError.own
        where e.name != WebError.Name.notFound && e.name != WebError.Name.tooManyAttempts
            && e.name != WebError.Name.loginFailed
        {
            byStatus[e.status, default: []].append(e.name)
        }
        var out: [(String, JSON)] = []
        for (status, meaning) in statusMeanings {
            guard let names = byStatus[status] else { continue }
            out.append((String(status), errorResponse(meaning, names)))
        }
        out.append(("default", responseRef(nil)))
        return out
    }

    /// A JSON error response whose body is one of the errors `names` (each a
    /// component schema), or any ``errorSchema`` when none is named.
    static func errorResponse(_ meaning: String, _ names: [String]) -> JSON {
        guard !names.isEmpty else { return jsonResponse(meaning, ref("Error")) }
        let text = meaning + " Errors: " + names.joined(separator: ", ") + "."
        return jsonResponse(text, names.count == 1 ? ref(names[0]) : .object([("oneOf", .array(names.map(ref)))]))
    }

    /// `{"$ref": "#/components/schemas/NAME"}`.
    static func ref(_ name: String) -> JSON { .object([("$ref", .string("#/components/schemas/\(name)"))]) }

    /// The shared response of `status`, or the default one for nil.
    static func responseRef(_ status: Int?) -> JSON {
        .object([("$ref", .string("#/components/responses/\(status.map(String.init) ?? "Default")"))])
    }

    static func jsonResponse(_ description: String, _ schema: JSON) -> JSON {
        .object([
            ("description", .string(description)),
            ("content", .object([("application/json", .object([("schema", schema)]))])),
        ])
    }

    static func jsonBody(_ schema: JSON, required: Bool) -> JSON {
        .object([
            ("required", .bool(required)), ("content", .object([("application/json", .object([("schema", schema)]))])),
        ])
    }

    /// The first sentence of `doc` (up to its first period, or its first line), else the method's name.
    static func summary(of doc: String, name: String) -> String {
        let flat = doc.split(separator: "\n").joined(separator: " ")
        if let end = flat.range(of: ". ") { return String(flat[..<end.lowerBound]) + "." }
        if !flat.isEmpty { return flat }
        return name
    }

    /// `object` with `key` added (or replaced) at the end.
    static func with(_ object: JSON, _ key: String, _ value: JSON) -> JSON {
        guard case .object(let members) = object else { return object }
        return .object(members.filter { $0.0 != key } + [(key, value)])
    }

    /// The JSON Schema of a varlink type; a named type becomes a `$ref` to the
    /// component `resolve(interface, name)` names (by default `INTERFACE.NAME`).
    static func schema(
        _ type: VarlinkIDL.VarlinkType, in interface: String, resolve: (String, String) -> String = { "\($0).\($1)" }
    ) -> JSON {
        func schema(_ type: VarlinkIDL.VarlinkType, in interface: String) -> JSON {
            Self.schema(type, in: interface, resolve: resolve)
        }
        switch type {
        case .string: return .object([("type", .string("string"))])
        case .int: return .object([("type", .string("integer")), ("format", .string("int64"))])
        case .float: return .object([("type", .string("number"))])
        case .bool: return .object([("type", .string("boolean"))])
        case .object: return .object([("type", .string("object"))])
        case .optional(let inner):
            // Absent (not in required) or null, as varlink's ?T.
            let s = schema(inner, in: interface)
            if case .object(let members) = s, members.count >= 1, let t = s["type"]?.stringValue, s["enum"] == nil {
                return .object(members.map { $0.0 == "type" ? ("type", .array([.string(t), .string("null")])) : $0 })
            }
            return .object([("anyOf", .array([s, .object([("type", .string("null"))])]))])
        case .array(let inner): return .object([("type", .string("array")), ("items", schema(inner, in: interface))])
        case .map(let inner):
            return .object([("type", .string("object")), ("additionalProperties", schema(inner, in: interface))])
        case .named(let name): return ref(resolve(interface, name))
        case .enumeration(let names):
            return .object([("type", .string("string")), ("enum", .array(names.map(JSON.string)))])
        case .structure(let fields):
            var properties: [(String, JSON)] = []
            var required: [JSON] = []
            for f in fields {
                var s = schema(f.type, in: interface)
                if !f.doc.isEmpty {
                    // A $ref takes no siblings in older readers: wrap it.
                    if s["$ref"] != nil { s = .object([("allOf", .array([s]))]) }
                    s = with(s, "description", .string(f.doc))
                }
                properties.append((f.name, s))
                if case .optional = f.type {} else { required.append(.string(f.name)) }
            }
            var members: [(String, JSON)] = [("type", .string("object"))]
            if !required.isEmpty { members.append(("required", .array(required))) }
            members.append(("properties", .object(properties)))
            return .object(members)
        }
    }

    /// Any error reply: its qualified name and its parameters.
    static let errorSchema = JSON.object([
        ("type", .string("object")),
        (
            "description",
            .string("An error reply: error is the qualified varlink error name, parameters its parameters.")
        ),
        ("required", .array([.string("error"), .string("parameters")])),
        (
            "properties",
            .object([
                ("error", .object([("type", .string("string"))])),
                ("parameters", .object([("type", .string("object"))])),
            ])
        ),
    ])

    /// The login request and the session replies.
    static let sessionSchemas: [(String, JSON)] = {
        let string = JSON.object([("type", .string("string"))])
        let role = JSON.object([
            ("type", .string("string")), ("enum", .array(Role.grantable.map { .string($0.name) })),
        ])
        func object(_ properties: [(String, JSON)]) -> JSON {
            .object([
                ("type", .string("object")), ("required", .array(properties.map { .string($0.0) })),
                ("properties", .object(properties)),
            ])
        }
        return [
            // Gateway.login: a user name of 1 to 256 bytes (at most 256 characters of
            // any kind stays within 1,024 bytes: the schema counts characters, so it
            // says 64, which no character can push past 256 bytes), a password of up to 4,096 bytes.
            (
                "Login",
                object([
                    ("user", .object([("type", .string("string")), ("minLength", .int(1)), ("maxLength", .int(64))])),
                    ("password", .object([("type", .string("string")), ("maxLength", .int(1024))])),
                ])
            ),
            ("Session", object([("token", string), ("user", string), ("role", role), ("csrf", string)])),
            ("SessionInfo", object([("user", string), ("role", role), ("csrf", string)])),
        ]
    }()

    /// One event of the live feed (HTML's Server-Sent Events: each event's
    /// fields): `changes` with a Changes reply as JSON and the last seq as its
    /// `id`, or a last `error` with an error body (the session ended, entryd
    /// went away).
    static let feedEvent = JSON.object([
        ("type", .string("object")), ("required", .array([.string("event"), .string("data")])),
        (
            "properties",
            .object([
                (
                    "event",
                    .object([("type", .string("string")), ("enum", .array([.string("changes"), .string("error")]))])
                ),
                (
                    "id",
                    .object([
                        ("type", .string("string")), ("pattern", .string("^[0-9]+$")),
                        (
                            "description",
                            .string("The last seq of a changes event: send it as Last-Event-ID to resume.")
                        ),
                    ])
                ),
                (
                    "data",
                    .object([
                        ("type", .string("string")), ("contentMediaType", .string("application/json")),
                        (
                            "contentSchema",
                            .object([("anyOf", .array([ref(Method.syncChanges.rawValue + ".Reply"), ref("Error")]))])
                        ),
                    ])
                ),
            ])
        ),
    ])

    /// `GET /api/v1/io.entryd.Sync.Changes`: the live feed as Server-Sent Events.
    static let changesStream = JSON.object([
        ("operationId", .string(Method.syncChanges.rawValue + ".stream")),
        ("tags", .array([.string(WireInterface.sync.rawValue)])),
        ("summary", .string("The change feed as Server-Sent Events.")),
        (
            "description",
            .string(
                "The changes after since, then each committed batch as it comes, until the client hangs up. Each event's data is a Changes reply (changes, last, incarnation) as JSON."
            )
        ),
        (
            "parameters",
            .array([
                .object([
                    ("name", .string("since")), ("in", .string("query")), ("required", .bool(true)),
                    ("description", .string("Changes after this seq (exclusive).")),
                    (
                        "schema",
                        .object([("type", .string("integer")), ("format", .string("int64")), ("minimum", .int(0))])
                    ),
                ]),
                .object([
                    ("name", .string("limit")), ("in", .string("query")), ("required", .bool(false)),
                    ("description", .string("At most this many changes per event.")),
                    (
                        "schema",
                        .object([("type", .string("integer")), ("format", .string("int64")), ("minimum", .int(1))])
                    ),
                ]),
            ])
        ),
        (
            "responses",
            .object([
                (
                    "200",
                    .object([
                        (
                            "description",
                            .string("An event stream; each event's data is an \(Method.syncChanges.rawValue).Reply.")
                        ),
                        (
                            "content",
                            .object([
                                ("text/event-stream", .object([("schema", feedEvent)]))
                            ])
                        ),
                    ])
                ),
                ("400", responseRef(400)), ("401", responseRef(401)), ("403", responseRef(403)),
                ("503", responseRef(503)),
                ("default", responseRef(nil)),
            ])
        ),
    ])
}
