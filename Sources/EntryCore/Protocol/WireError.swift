/// An error as it travels on the wire: a fully qualified varlink error name and
/// its parameters object (doc/protocol.md lists every name and its parameters).
///
/// Clients branch on ``name``, never on text. Every error the daemon can send
/// is built through one of the constructors below, so names stay in one place.
public struct WireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// E.g. `io.entryd.Entries.EntryNotFound`.
    public var name: String
    /// The error's parameters (an `.object`).
    public var parameters: JSON

    /// An error named `name` (fully qualified) with its parameters object.
    public init(name: String, parameters: JSON = .object([])) {
        self.name = name
        self.parameters = parameters
    }

    /// The unqualified part of ``name`` (`EntryNotFound`).
    public var shortName: String { name.split(separator: ".").last.map(String.init) ?? name }

    /// The name and the parameters as JSON text (for logs and messages).
    public var description: String { "\(name) \(parameters.text)" }

    // MARK: - org.varlink.service (varlink.org "Service"; PermissionDenied is systemd's addition)

    /// The call names an interface this service does not have (varlink.org "Service").
    public static func interfaceNotFound(_ interface: String) -> WireError {
        WireError(name: "org.varlink.service.InterfaceNotFound", parameters: .object([("interface", .string(interface))]))
    }
    /// The interface exists but has no method of that name (`method` fully qualified).
    public static func methodNotFound(_ method: String) -> WireError {
        WireError(name: "org.varlink.service.MethodNotFound", parameters: .object([("method", .string(method))]))
    }
    /// The method is declared but not implemented by this service (varlink.org "Service").
    public static func methodNotImplemented(_ method: String) -> WireError {
        WireError(name: "org.varlink.service.MethodNotImplemented", parameters: .object([("method", .string(method))]))
    }
    /// A parameter is missing, has the wrong type or an unusable value.
    public static func invalidParameter(_ parameter: String) -> WireError {
        WireError(name: "org.varlink.service.InvalidParameter", parameters: .object([("parameter", .string(parameter))]))
    }
    /// The caller's role is below `role` (`read`, `write` or `admin`).
    public static func permissionDenied(role: String) -> WireError {
        WireError(name: "org.varlink.service.PermissionDenied", parameters: .object([("role", .string(role))]))
    }

    // MARK: - io.entryd.Entries

    /// Submitted values were refused; `problems` lists each (doc/protocol.md `Problem`).
    public static func validationFailed(_ problems: [Problem]) -> WireError {
        WireError(name: "io.entryd.Entries.ValidationFailed", parameters: .object([("problems", .array(problems.map(\.json)))]))
    }
    /// No entry has id `id`, or `id` is not UUID text (deleted entries still exist).
    public static func entryNotFound(_ id: String) -> WireError {
        WireError(name: "io.entryd.Entries.EntryNotFound", parameters: .object([("id", .string(id))]))
    }
    /// An Add gave an `id` already used with other values, or by a deleted entry.
    public static func entryExists(_ id: String) -> WireError {
        WireError(name: "io.entryd.Entries.EntryExists", parameters: .object([("id", .string(id))]))
    }
    /// `version` is the entry's current version (the caller's is stale).
    public static func versionMismatch(id: String, version: String) -> WireError {
        WireError(name: "io.entryd.Entries.VersionMismatch", parameters: .object([("id", .string(id)), ("version", .string(version))]))
    }
    /// `io.entryd.Entries` names no form `form`.
    public static func formNotFound(_ form: String) -> WireError {
        WireError(name: "io.entryd.Entries.FormNotFound", parameters: .object([("form", .string(form))]))
    }
    /// `limit` is the configuration key (`max-message-size`), `maximum` its value.
    public static func limitExceeded(_ limit: String, maximum: Int) -> WireError {
        WireError(name: "io.entryd.Entries.LimitExceeded", parameters: .object([("limit", .string(limit)), ("maximum", .int(Int64(maximum)))]))
    }
    /// `reason` says what is wrong in words safe to show (no field values).
    public static func storageFailed(_ reason: String) -> WireError {
        WireError(name: "io.entryd.Entries.StorageFailed", parameters: .object([("reason", .string(reason))]))
    }

    // MARK: - io.entryd.Forms

    /// The `io.entryd.Forms` twin of ``formNotFound(_:)``: no form `form`.
    public static func formsFormNotFound(_ form: String) -> WireError {
        WireError(name: "io.entryd.Forms.FormNotFound", parameters: .object([("form", .string(form))]))
    }
    /// Form `form` has no field `field` (`io.entryd.Forms`).
    public static func fieldNotFound(form: String, field: String) -> WireError {
        WireError(name: "io.entryd.Forms.FieldNotFound", parameters: .object([("form", .string(form)), ("field", .string(field))]))
    }
}

extension Problem {
    /// The wire form (doc/protocol.md `Problem`).
    public var json: JSON {
        .object([
            ("field", .string(field)), ("code", .string(code.rawValue)),
            ("message", .string(message)), ("suggestions", .array(suggestions.map { .string($0) })),
        ])
    }

    /// Reads a wire `Problem`; unknown codes and missing members give `nil`.
    public init?(json: JSON) {
        guard let field = json["field"]?.stringValue, let code = json["code"]?.stringValue.flatMap(ProblemCode.init(rawValue:)) else {
            return nil
        }
        self.init(field: field, code: code, message: json["message"]?.stringValue ?? "",
                  suggestions: json["suggestions"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }
}
