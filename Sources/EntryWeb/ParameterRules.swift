import EntryModel
import EntryProtocol

/// What entryd checks of a method's parameters beyond their varlink types, as
/// JSON Schema for the OpenAPI document: the varlink description says
/// `limit: ?int`, the handler refuses 0. Each rule names the check it mirrors;
/// schemathesis (Tests/web/test_schemathesis.py) sends schema-valid and
/// schema-invalid calls and fails when the two disagree.
package enum ParameterRules {
    /// Whether the HTTP API takes `parameter` of `method`: `excludeNode` and
    /// `excludeSince` of `Sync.Changes` acknowledge a peer's position for
    /// compaction and are refused over HTTP (``Gateway``), so the document
    /// leaves them out.
    package static func isServed(_ parameter: String, of method: Method) -> Bool {
        switch method {
        case .syncChanges: parameter != "excludeNode" && parameter != "excludeSince"
        default: true
        }
    }

    /// A locale tag: `zh` or `en` in either case, then anything that does not
    /// start with an ASCII letter (`zh-CN`, `en_US`); ``EntryLocale/init(tag:)``.
    static let localePattern = "^([zZ][hH]|[eE][nN])([^A-Za-z][\\s\\S]*)?$"

    /// An HLC as a version: 16 hex digits (``HLC/init(_:)``).
    static let versionPattern = "^[0-9A-Fa-f]{16}$"

    /// A UUID in its canonical 8-4-4-4-12 form, either case (``UUIDv7/canonical(_:)``).
    static let uuidPattern = "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$"

    /// `schema` (the method's parameters object) with each property narrowed
    /// to what the handler accepts, and the parameters it requires although
    /// varlink marks them optional added to `required`.
    package static func refine(_ schema: JSON, of method: Method) -> JSON {
        guard case .object(var members) = schema, let properties = schema["properties"]?.objectValue else {
            return schema
        }
        var required = schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? []
        var narrowed: [(String, JSON)] = []
        for (name, property) in properties {
            var p = property
            switch (method, name) {
            case (_, "locale"): p = adding(p, [("pattern", .string(localePattern))])
            case (_, "limit"): p = adding(p, [("minimum", .int(1))])
            case (_, "since"): p = adding(p, [("minimum", .int(0))])
            case (_, "ifVersion"): p = adding(p, [("pattern", .string(versionPattern))])
            case (.entriesAdd, "id"), (.formsCheck, "id"): p = adding(p, [("pattern", .string(uuidPattern))])
            case (.entriesUpdate, "reason"), (.entriesDelete, "reason"), (.entriesRestore, "reason"):
                // FreeText.isLineSafe: no control characters or line separators
                // (else ValidationFailed naming reason).
                p = adding(p, [("pattern", .string(FreeText.reasonPattern))])
            case (.entriesErase, "reason"):
                // ErasureRecord.isValidReason: not blank, no control characters or line
                // separators, at most 500 characters (counted here in code points, which
                // are never fewer).
                let allowed = "[^\\x00-\\x1F\\x7F-\\x9F\\u2028\\u2029]"
                p = .object([
                    ("type", .string("string")), ("maxLength", .int(500)),
                    ("pattern", .string("^\(allowed)*[^\\s\\x00-\\x1F\\x7F-\\x9F]\(allowed)*$")),
                ])
                required.append(name)
            case (.entriesVerifyErasure, "values"):
                p = .object([
                    ("type", .string("array")), ("minItems", .int(1)),
                    ("items", .object([("type", .string("string")), ("minLength", .int(1))])),
                ])
            default: break
            }
            narrowed.append((name, p))
        }
        members = members.filter { $0.0 != "properties" && $0.0 != "required" }
        if !required.isEmpty { members.append(("required", .array(required.map(JSON.string)))) }
        members.append(("properties", .object(narrowed)))
        if method == .entriesAdd {
            members.append(
                (
                    "examples",
                    .array([
                        .object([
                            (
                                "fields",
                                .object([
                                    ("name", .string("张三")), ("birthday", .string("1990-05-17")),
                                    ("country", .string("CN")),
                                    ("province", .string("440000")), ("city", .string("440300")),
                                    ("contact_method", .string("phone")), ("phone", .string("13812345678")),
                                ])
                            )
                        ])
                    ])
                ))
        }
        if method == .entriesFindSubject {
            // Something to look for: a phone, an e-mail, or a name with a birthday (EntryService+Erase).
            members.append(
                (
                    "anyOf",
                    .array([
                        .object([("required", .array([.string("phone")]))]),
                        .object([("required", .array([.string("email")]))]),
                        .object([("required", .array([.string("name"), .string("birthday")]))]),
                    ])
                ))
            members.append(
                (
                    "dependentRequired",
                    .object([("name", .array([.string("birthday")])), ("birthday", .array([.string("name")]))])
                ))
        }
        return .object(members)
    }

    /// `property` with `extra` added; an optional property (`type: [T, "null"]`) keeps
    /// null, which the server takes as absent.
    static func adding(_ property: JSON, _ extra: [(String, JSON)]) -> JSON {
        guard case .object(let members) = property else { return property }
        return .object(members.filter { m in !extra.contains { $0.0 == m.0 } } + extra)
    }
}
