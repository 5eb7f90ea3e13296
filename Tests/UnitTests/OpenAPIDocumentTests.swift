import EntryModel
import EntryProtocol
@testable import EntryWeb
import Testing
import Foundation

/// Issue 18 part 2: the varlink IDL parser and the OpenAPI description generated from it (EntryWeb).
@Suite struct OpenAPIDocumentTests {
    /// The `method NAME` declarations of a description, by a plain text scan (independent of the parser).
    static func declaredMethods(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("method ") else { return nil }
            return String(line.dropFirst(7).prefix { $0.isLetter || $0.isNumber || $0 == "_" })
        }
    }

    @Test("every served interface parses, and every method declared in its text is found with its name")
    func parsesServedInterfaces() throws {
        #expect(VarlinkIDL.served.count == InterfaceDescriptions.all.count)
        for (entry, idl) in zip(InterfaceDescriptions.all, VarlinkIDL.served) {
            #expect(idl.name == entry.name)
            let declared = Self.declaredMethods(entry.text)
            #expect(!declared.isEmpty)
            #expect(idl.methods.map(\.name) == declared, "\(entry.name)")
        }
        let entries = try #require(VarlinkIDL.served.first { $0.name == "io.entryd.Entries" })
        #expect(entries.doc == "Filled form records: submit, read, change, delete, history.")
        #expect(
            entries.errors.map(\.name) == [
                "ValidationFailed", "EntryNotFound", "EntryExists", "VersionMismatch", "FormNotFound",
                "LimitExceeded", "StorageFailed", "BackupUnsupported", "EntryErased",
            ])
    }

    @Test(
        "shapes: Add's fields are an object of strings and form is optional; List, Change, Order, History and an error exactly"
    )
    func shapes() throws {
        let entries = try #require(VarlinkIDL.served.first { $0.name == "io.entryd.Entries" })
        let add = try #require(entries.method("Add"))
        #expect(add.parameters.map(\.name) == ["form", "id", "fields", "locale"])
        #expect(add.parameters[0].type == .optional(.string))
        #expect(add.parameters[2].type == .map(.string))
        #expect(
            add.reply == [
                VarlinkIDL.Field(name: "entry", type: .named("Entry"), doc: ""),
                VarlinkIDL.Field(name: "duplicates", type: .optional(.array(.named("Duplicate"))), doc: ""),
            ])
        #expect(
            add.doc.hasPrefix(
                "Validates, normalises and stores a new entry. With id, the call is idempotent:\nthe same id"))
        let list = try #require(entries.method("List"))
        #expect(
            list.parameters.map(\.type) == [
                .optional(.string), .optional(.named("Filter")), .optional(.named("Order")), .optional(.bool),
                .optional(.int), .optional(.string), .optional(.bool), .optional(.string),
            ])
        #expect(list.reply.map(\.type) == [.array(.named("Entry")), .optional(.string), .int])
        #expect(entries.type("Order")?.type == .enumeration(["created", "updated", "birthday", "name", "appointment"]))
        guard case .structure(let change)? = entries.type("Change")?.type else {
            Issue.record("Change is not a struct")
            return
        }
        #expect(
            change.first { $0.name == "op" }?.type == .enumeration(["create", "update", "delete", "restore", "erase"]))
        // A comment inside a struct documents the field below it.
        let superseded = try #require(change.first { $0.name == "superseded" })
        #expect(superseded.type == .optional(.array(.string)))
        #expect(superseded.doc.hasPrefix("Added: fields whose values later writes"))
        #expect(change.first { $0.name == "seq" }?.doc == "")
        #expect(entries.method("Import")?.parameters.first { $0.name == "entries" }?.type == .array(.object))
        #expect(entries.errors.first { $0.name == "VersionMismatch" }?.parameters.map(\.name) == ["id", "version"])
        // A comment block parted from the declaration by a blank line is not its doc.
        #expect(entries.method("Backup")?.doc.hasPrefix("An online backup") == true)
        #expect(entries.method("Get")?.doc == "")
        let sync = try #require(VarlinkIDL.served.first { $0.name == "io.entryd.Sync" })
        #expect(sync.method("Status")?.reply.first { $0.name == "limits" }?.type == .map(.int))
        #expect(sync.method("Compact")?.parameters == [])
        let service = try #require(VarlinkIDL.served.first { $0.name == "org.varlink.service" })
        #expect(service.errors.first { $0.name == "PermissionDenied" }?.parameters.first?.type == .optional(.string))
    }

    @Test("bad descriptions are refused with their line")
    func badDescriptions() {
        #expect(throws: VarlinkIDLError.self) { try VarlinkIDL(parsing: "interface a.b\nmethod X() -> (\n") }
        #expect(throws: VarlinkIDLError(line: 2, message: "expected type, method or error, found 'methd'")) {
            try VarlinkIDL(parsing: "interface a.b\nmethd X() -> ()\n")
        }
        #expect(throws: VarlinkIDLError(line: 3, message: "'X' is declared twice")) {
            try VarlinkIDL(parsing: "interface a.b\nmethod X() -> ()\nerror X ()\n")
        }
        #expect(throws: VarlinkIDLError(line: 2, message: "unexpected character '!'")) {
            try VarlinkIDL(parsing: "interface a.b\n!\n")
        }
        // Inline structs, nested containers.
        let idl = try? VarlinkIDL(parsing: "interface a.b\ntype T (a: ?[]?[string](x: int, y: (p, q)), b: object)\n")
        #expect(
            idl?.types.first?.type
                == .structure([
                    VarlinkIDL.Field(
                        name: "a",
                        type: .optional(
                            .array(
                                .optional(
                                    .map(
                                        .structure([
                                            VarlinkIDL.Field(name: "x", type: .int, doc: ""),
                                            VarlinkIDL.Field(name: "y", type: .enumeration(["p", "q"]), doc: ""),
                                        ]))))), doc: ""),
                    VarlinkIDL.Field(name: "b", type: .object, doc: ""),
                ]))
    }

    /// Every `$ref` string in `json`.
    static func refs(_ json: JSON) -> [String] {
        switch json {
        case .object(let members):
            return members.flatMap { key, value in key == "$ref" ? [value.stringValue ?? "?"] : refs(value) }
        case .array(let items): return items.flatMap(refs)
        default: return []
        }
    }

    @Test(
        "the document: a path per exposed method and none for Apply, SyncPeer, HeldFrom, Backup, Metrics; every $ref resolves; JSON round trip; deterministic"
    )
    func document() throws {
        let doc = OpenAPIDocument.generate()
        #expect(doc["openapi"]?.stringValue == "3.1.0")
        let paths = try #require(doc["paths"]?.objectValue).map(\.0)
        var methods: [String] = []
        for idl in VarlinkIDL.served { for m in idl.methods { methods.append("\(idl.name).\(m.name)") } }
        #expect(methods.count > 25)
        for m in methods {
            #expect(paths.contains("/api/v1/\(m)") == (Method(rawValue: m)?.isServedOverHTTP ?? true), "\(m)")
        }
        for excluded in [
            "io.entryd.Sync.Apply", "io.entryd.Sync.SyncPeer", "io.entryd.Sync.HeldFrom", "io.entryd.Entries.Backup",
            "io.entryd.Sync.Metrics",
        ] {
            #expect(methods.contains(excluded) && !paths.contains("/api/v1/\(excluded)"))
        }
        for fixed in [
            "/api/v1/login", "/api/v1/logout", "/api/v1/session", "/api/v1/offline", "/healthz", "/api/v1/openapi.json",
        ] {
            #expect(paths.contains(fixed))
        }
        #expect(Set(paths).count == paths.count)
        // Add: the body, the reply, the errors, the description from the IDL.
        let add = try #require(doc["paths"]?["/api/v1/io.entryd.Entries.Add"]?["post"])
        #expect(add["description"]?.stringValue?.hasPrefix("Validates, normalises and stores a new entry.") == true)
        #expect(add["summary"]?.stringValue == "Validates, normalises and stores a new entry.")
        #expect(add["requestBody"]?["required"] == .bool(true))
        for status in ["200", "400", "401", "403", "404", "409", "413", "503", "default"] {
            #expect(add["responses"]?[status] != nil, "\(status)")
        }
        let schemas = try #require(doc["components"]?["schemas"])
        let addParameters = try #require(schemas["io.entryd.Entries.Add.Parameters"])
        #expect(addParameters["required"] == .array([.string("fields")]))
        #expect(
            addParameters["properties"]?["fields"]
                == .object([
                    ("type", .string("object")), ("additionalProperties", .object([("type", .string("string"))])),
                ]))
        #expect(
            addParameters["properties"]?["form"] == .object([("type", .array([.string("string"), .string("null")]))]))
        #expect(
            schemas["io.entryd.Entries.Add.Reply"]?["properties"]?["entry"]
                == .object([("$ref", .string("#/components/schemas/io.entryd.Entries.Entry"))]))
        #expect(
            schemas["io.entryd.Entries.Order"]
                == .object([
                    ("type", .string("string")),
                    ("enum", .array(["created", "updated", "birthday", "name", "appointment"].map(JSON.string))),
                    (
                        "description",
                        .string(
                            "Sort order for List. Added: appointment (by the appointment's date and time,\nentries without one first when ascending)."
                        )
                    ),
                ]))
        #expect(
            schemas["io.entryd.Entries.ValidationFailed"]?["properties"]?["error"]
                == .object([("const", .string("io.entryd.Entries.ValidationFailed"))]))
        // Forms.Check uses Problem without declaring it: the one io.entryd.Entries declares.
        #expect(
            schemas["io.entryd.Forms.Check.Reply"]?["properties"]?["problems"]?["items"]
                == .object([("$ref", .string("#/components/schemas/io.entryd.Entries.Problem"))]))
        // Status needs no parameters: its body is optional.
        #expect(doc["paths"]?["/api/v1/io.entryd.Sync.Status"]?["post"]?["requestBody"]?["required"] == .bool(false))
        // The feed: POST as a method, GET as Server-Sent Events.
        let changes = try #require(doc["paths"]?["/api/v1/io.entryd.Sync.Changes"])
        #expect(changes["post"] != nil && changes["get"]?["responses"]?["200"]?["content"]?["text/event-stream"] != nil)
        // Statuses: each operation lists the errors its method answers (Method.errors), under
        // their statuses, and the gateway's own; an error no exposed method answers is absent.
        let get = try #require(doc["paths"]?["/api/v1/io.entryd.Entries.Get"]?["post"]?["responses"])
        #expect(get["404"]?["description"]?.stringValue?.contains("io.entryd.Entries.EntryNotFound") == true)
        #expect(get["409"]?["description"]?.stringValue?.contains("io.entryd.Entries.EntryErased") == true)
        #expect(get["401"]?["description"]?.stringValue?.contains("io.entryd.web.AuthenticationRequired") == true)
        #expect(get["403"]?["description"]?.stringValue?.contains("org.varlink.service.PermissionDenied") == true)
        #expect(get["405"] != nil && get["415"] != nil && get["431"] != nil && get["default"] != nil)
        // Every error of the gateway's own table but the login's and the pages' is listed on each operation.
        let listedNames = get.objectValue?.compactMap { $0.1["description"]?.stringValue }.joined() ?? ""
        for e in WebError.own
        where ![WebError.Name.notFound, WebError.Name.tooManyAttempts, WebError.Name.loginFailed].contains(e.name) {
            #expect(listedNames.contains(e.name), "\(e.name) missing from Get's responses")
        }
        let listForms = try #require(doc["paths"]?["/api/v1/io.entryd.Forms.ListForms"]?["post"]?["responses"])
        #expect(listForms["409"] == nil && listForms["404"] == nil, "ListForms answers no 404 or 409")
        #expect(schemas["io.entryd.Entries.BackupUnsupported"] == nil, "Backup is never served over HTTP")
        #expect(doc["servers"]?.arrayValue?.first?["url"]?.stringValue == "/")
        // Parameters as the handlers check them (ParameterRules).
        let changesParameters = try #require(schemas["io.entryd.Sync.Changes.Parameters"]?["properties"])
        #expect(changesParameters["excludeNode"] == nil && changesParameters["since"]?["minimum"] == .int(0))
        #expect(
            schemas["io.entryd.Entries.Erase.Parameters"]?["required"]?.arrayValue?.contains(.string("reason")) == true)
        #expect(schemas["io.entryd.Entries.VerifyErasure.Parameters"]?["properties"]?["values"]?["minItems"] == .int(1))
        let schemes = try #require(doc["components"]?["securitySchemes"])
        #expect(
            schemes["bearer"]?["scheme"]?.stringValue == "bearer"
                && schemes["cookie"]?["name"]?.stringValue == "entryd_session"
                && schemes["csrf"]?["name"]?.stringValue == "X-CSRF-Token")

        // Every $ref points at a component that exists.
        let refs = Self.refs(doc)
        #expect(refs.count > 100)
        for r in Set(refs) {
            let parts = r.split(separator: "/").map(String.init)
            #expect(parts.count == 4 && parts[0] == "#" && parts[1] == "components", "\(r)")
            #expect(doc["components"]?[parts[2]]?[parts[3]] != nil, "unresolved \(r)")
        }
        // Through its bytes and back; the same bytes every time.
        let text = doc.text
        // OPENAPI_DUMP=FILE writes the document, to check it by hand (e.g. with openapi-spec-validator).
        if let dump = ProcessInfo.processInfo.environment["OPENAPI_DUMP"] {
            try text.write(toFile: dump, atomically: true, encoding: .utf8)
        }
        #expect(try JSON.parse(text) == doc)
        #expect(OpenAPIDocument.generate().text == text)
        // The predicate decides.
        let fewer = OpenAPIDocument.generate { $0.hasPrefix("io.entryd.Forms.") }
        let fewerPaths = try #require(fewer["paths"]?.objectValue).map(\.0).filter { $0.hasPrefix("/api/v1/io.") }
        #expect(
            fewerPaths == [
                "/api/v1/io.entryd.Forms.ListForms", "/api/v1/io.entryd.Forms.GetForm",
                "/api/v1/io.entryd.Forms.Options",
                "/api/v1/io.entryd.Forms.Check", "/api/v1/io.entryd.Forms.CheckStored",
            ])
    }

    @Test(
        "error statuses follow the table of the API",
        arguments: [
            ("io.entryd.Entries.ValidationFailed", 400), ("org.varlink.service.InvalidParameter", 400),
            ("io.entryd.web.AuthenticationRequired", 401), ("io.entryd.web.LoginFailed", 401),
            ("io.entryd.web.PayloadTooLarge", 413), ("org.varlink.service.PermissionDenied", 403),
            ("io.entryd.web.CSRFRejected", 403),
            ("io.entryd.Entries.EntryNotFound", 404), ("io.entryd.Forms.FormNotFound", 404),
            ("io.entryd.Forms.FieldNotFound", 404),
            ("io.entryd.Sync.ConflictNotFound", 404), ("org.varlink.service.MethodNotFound", 404),
            ("org.varlink.service.InterfaceNotFound", 404),
            ("io.entryd.Entries.EntryExists", 409), ("io.entryd.Entries.VersionMismatch", 409),
            ("io.entryd.Entries.EntryErased", 409),
            ("io.entryd.Entries.LimitExceeded", 413), ("io.entryd.web.TooManyAttempts", 429),
            ("io.entryd.Entries.BackupUnsupported", 501),
            ("io.entryd.Entries.StorageFailed", 503), ("io.entryd.web.DaemonUnreachable", 503), ("x.y.Unheard", 500),
        ])
    func statuses(name: String, status: Int) {
        #expect(WebError.status(for: name) == status)
    }

    @Test("every error of interfaces/*.varlink has a status of its own: none falls to 500")
    func everyErrorHasAStatus() {
        for name in WireErrorName.allCases {
            #expect(WebError.status(for: name.rawValue) != 500, "\(name.rawValue)")
        }
    }
}
