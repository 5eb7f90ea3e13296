import EntryModel
import EntryProtocol

/// One `FIELD=VALUE` argument (`name=李雷`, `phone=`).
///
/// The text is split at the first `=`: the value may itself hold `=`
/// (`note=a=b` sets `note` to `a=b`) and may be empty (`email=`), which on
/// update clears an optional field. Field names start with an ASCII letter or
/// `_` and go on with ASCII letters, digits, `_`, `-` or `.`; whether the form
/// has such a field is for the daemon to say.
public struct FieldAssignment: Sendable, Equatable {
    /// The field name, e.g. `name`.
    public var name: String
    /// Everything after the first `=` (may be empty or hold `=`).
    public var value: String

    /// Sets field `name` to `value`.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Parses one argument.
    /// - Throws: ``UsageError`` when there is no `=`, the name is empty, or the
    ///   name holds characters a field name cannot.
    public static func parse(_ argument: String) throws(UsageError) -> FieldAssignment {
        guard let eq = argument.firstIndex(of: "=") else {
            throw UsageError("'\(argument)' is not FIELD=VALUE (a field name, '=', then the value, e.g. name=李雷)")
        }
        let name = String(argument[..<eq])
        let value = String(argument[argument.index(after: eq)...])
        guard !name.isEmpty else { throw UsageError("'\(argument)' has no field name before '='") }
        guard isFieldName(name) else {
            throw UsageError("'\(name)' is not a field name: it starts with a letter or '_' and holds only letters, digits, '_', '-' and '.'")
        }
        return FieldAssignment(name: name, value: value)
    }

    /// Parses every argument into a field map.
    /// - Throws: ``UsageError`` for the first malformed argument, or when a field is given twice.
    public static func parseAll(_ arguments: [String]) throws(UsageError) -> [String: String] {
        var fields: [String: String] = [:]
        for argument in arguments {
            let assignment = try parse(argument)
            guard fields[assignment.name] == nil else { throw UsageError("field '\(assignment.name)' is given twice") }
            fields[assignment.name] = assignment.value
        }
        return fields
    }

    /// Whether `name` has the shape of a field name (see the type's notes).
    public static func isFieldName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic || first == "_" else {
            return false
        }
        return name.unicodeScalars.allSatisfy { s in
            s.isASCII && (s.properties.isAlphabetic || ("0"..."9").contains(s) || s == "_" || s == "-" || s == ".")
        }
    }
}
