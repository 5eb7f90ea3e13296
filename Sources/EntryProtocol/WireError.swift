import EntryModel

/// An error as it travels on the wire: a fully qualified varlink error name and
/// its parameters object (doc/protocol.md lists every name and its parameters).
///
/// Clients branch on ``known`` (the ``WireErrorName`` case, an exhaustive
/// switch), never on text. ``name`` stays a string: an error from a peer or a
/// newer entryd may carry a name this build does not declare, and it is passed
/// on and shown as it came. Every error the daemon sends is built with a
/// ``WireErrorName`` (the constructors below, EntryServer
/// `WireError(mapping:interface:)`), so names live only in interfaces/*.varlink
/// and the enum generated from them.
package struct WireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// E.g. `io.entryd.Entries.EntryNotFound`.
    package var name: String
    /// The error's parameters (an `.object`).
    package var parameters: JSON

    /// An error named `name` (fully qualified) with its parameters object.
    package init(name: String, parameters: JSON = .object([])) {
        self.name = name
        self.parameters = parameters
    }

    /// The error `name` declared in interfaces/*.varlink, with its parameters object.
    package init(_ name: WireErrorName, parameters: JSON = .object([])) {
        self.init(name: name.rawValue, parameters: parameters)
    }

    /// ``name`` as a declared error, or `nil` for a name no interface of this
    /// build declares (a peer's or a newer entryd's): switch over it, with
    /// `case nil` for the rest, never a `default:`.
    package var known: WireErrorName? { WireErrorName(rawValue: name) }

    /// The unqualified part of ``name`` (`EntryNotFound`).
    var shortName: String { name.split(separator: ".").last.map(String.init) ?? name }

    /// The name and the parameters as JSON text (for logs and messages).
    package var description: String { "\(name) \(parameters.text)" }

    // MARK: - org.varlink.service (varlink.org "Service"; PermissionDenied is systemd's addition)

    /// The call names an interface this service does not have (varlink.org "Service").
    package static func interfaceNotFound(_ interface: String) -> WireError {
        WireError(.interfaceNotFound, parameters: .object([("interface", .string(interface))]))
    }
    /// The interface exists but has no method of that name (`method` fully qualified).
    package static func methodNotFound(_ method: String) -> WireError {
        WireError(.methodNotFound, parameters: .object([("method", .string(method))]))
    }
    /// The method is declared but not implemented by this service (varlink.org "Service").
    package static func methodNotImplemented(_ method: String) -> WireError {
        WireError(.methodNotImplemented, parameters: .object([("method", .string(method))]))
    }
    /// A parameter is missing, has the wrong type or an unusable value (the
    /// message layer's own check; the service's are `EntryError.invalidParameter`).
    package static func invalidParameter(_ parameter: String) -> WireError {
        WireError(.invalidParameter, parameters: .object([("parameter", .string(parameter))]))
    }
}

extension Problem {
    /// The wire form (doc/protocol.md `Problem`).
    package var json: JSON {
        .object([
            ("field", .string(field)), ("code", .string(code.rawValue)),
            ("message", .string(message)), ("suggestions", .array(suggestions.map { .string($0) })),
        ])
    }

    /// Reads a wire `Problem`; unknown codes and missing members give `nil`.
    package init?(json: JSON) {
        guard let field = json["field"]?.stringValue,
            let code = json["code"]?.stringValue.flatMap(ProblemCode.init(rawValue:))
        else {
            return nil
        }
        self.init(
            field: field, code: code, message: json["message"]?.stringValue ?? "",
            suggestions: json["suggestions"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }
}
