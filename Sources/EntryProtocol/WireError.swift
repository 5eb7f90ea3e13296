import EntryModel

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
    var shortName: String { name.split(separator: ".").last.map(String.init) ?? name }

    /// The name and the parameters as JSON text (for logs and messages).
    public var description: String { "\(name) \(parameters.text)" }

    // MARK: - org.varlink.service (varlink.org "Service"; PermissionDenied is systemd's addition)

    /// The call names an interface this service does not have (varlink.org "Service").
    public static func interfaceNotFound(_ interface: String) -> WireError {
        WireError(name: WireErrorName.interfaceNotFound, parameters: .object([("interface", .string(interface))]))
    }
    /// The interface exists but has no method of that name (`method` fully qualified).
    public static func methodNotFound(_ method: String) -> WireError {
        WireError(name: WireErrorName.methodNotFound, parameters: .object([("method", .string(method))]))
    }
    /// The method is declared but not implemented by this service (varlink.org "Service").
    public static func methodNotImplemented(_ method: String) -> WireError {
        WireError(name: WireErrorName.methodNotImplemented, parameters: .object([("method", .string(method))]))
    }
    /// A parameter is missing, has the wrong type or an unusable value (the
    /// message layer's own check; the service's are `EntryError.invalidParameter`).
    public static func invalidParameter(_ parameter: String) -> WireError {
        WireError(name: WireErrorName.invalidParameter, parameters: .object([("parameter", .string(parameter))]))
    }
}

/// Every varlink error name entryd sends or a client branches on, declared
/// once (doc/protocol.md, interfaces/*.varlink). The server builds its errors
/// with these (EntryServer `WireError(mapping:interface:)`); clients compare
/// ``WireError/name`` with them (``ExitCode/init(wireError:)``).
public enum WireErrorName {
    // org.varlink.service (varlink.org "Service"; PermissionDenied is systemd's addition)
    /// The call names an interface this service does not have.
    public static let interfaceNotFound = "org.varlink.service.InterfaceNotFound"
    /// The interface has no method of that name.
    public static let methodNotFound = "org.varlink.service.MethodNotFound"
    /// The method is declared but not implemented.
    public static let methodNotImplemented = "org.varlink.service.MethodNotImplemented"
    /// A parameter is missing, has the wrong type or an unusable value.
    public static let invalidParameter = "org.varlink.service.InvalidParameter"
    /// The caller's role is below the method's.
    public static let permissionDenied = "org.varlink.service.PermissionDenied"
    // io.entryd.Entries
    /// `ValidationFailed(problems)`.
    public static let validationFailed = "io.entryd.Entries.ValidationFailed"
    /// `EntryNotFound(id)`.
    public static let entryNotFound = "io.entryd.Entries.EntryNotFound"
    /// `EntryExists(id)`.
    public static let entryExists = "io.entryd.Entries.EntryExists"
    /// `VersionMismatch(id, version)`.
    public static let versionMismatch = "io.entryd.Entries.VersionMismatch"
    /// `FormNotFound(form)` of io.entryd.Entries.
    public static let entriesFormNotFound = "io.entryd.Entries.FormNotFound"
    /// `LimitExceeded(limit, maximum)`.
    public static let limitExceeded = "io.entryd.Entries.LimitExceeded"
    /// `StorageFailed(reason)`.
    public static let storageFailed = "io.entryd.Entries.StorageFailed"
    /// `EntryErased(id, at)`: the entry was erased (issue 17); nothing can bring it back.
    public static let entryErased = "io.entryd.Entries.EntryErased"
    /// `BackupUnsupported(database, tool)`: the node's entries are in a database
    /// server; `tool` (`pg_dump`) backs them up, not Backup.
    public static let backupUnsupported = "io.entryd.Entries.BackupUnsupported"
    // io.entryd.Forms
    /// `FormNotFound(form)` of io.entryd.Forms.
    public static let formsFormNotFound = "io.entryd.Forms.FormNotFound"
    /// `FieldNotFound(form, field)`.
    public static let fieldNotFound = "io.entryd.Forms.FieldNotFound"
    // io.entryd.Sync
    /// `ClockSkew(node, aheadMs)`.
    public static let clockSkew = "io.entryd.Sync.ClockSkew"
    /// `PeerUnreachable(peer, reason)`.
    public static let peerUnreachable = "io.entryd.Sync.PeerUnreachable"
    /// `PeerNotFound(peer)`.
    public static let peerNotFound = "io.entryd.Sync.PeerNotFound"
    /// `ConflictNotFound(id)`.
    public static let conflictNotFound = "io.entryd.Sync.ConflictNotFound"
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
