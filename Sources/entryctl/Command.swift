import EntryModel
import EntryProtocol
import EntryClient
import EntryArguments

/// One `entryctl` command: what help shows, and how its arguments become an action.
///
/// A command runs in three steps, as swift-argument-parser's do: the scanner
/// parses the arguments, ``prepare`` validates them into an ``Action`` (no
/// connection yet, so a usage error never waits for the daemon), and the
/// action runs against a ``DaemonConnection``.
struct Command: Sendable {
    /// Runs a validated command.
    typealias Action = (DaemonConnection) throws -> Void

    let name: String
    /// One line for the command list, a sentence ending in a period, in both languages.
    let summary: Localized
    /// The positional part of the usage line, e.g. `ID [FIELD=VALUE...]`; may be empty.
    let arguments: String
    let options: [OptionSpec]
    /// Paragraph lines shown between usage and options, each in both languages.
    let details: [Localized]
    /// Complete command lines, shown under "Examples".
    let examples: [String]
    /// Validates the arguments. Throws ``UsageError`` (exit 64).
    let prepare: @Sendable (CommandInput) throws -> Action

    /// The usage line: `entryctl get ID`, `entryctl list [OPTIONS]`.
    var usageLine: String {
        var parts = ["entryctl", name]
        if !arguments.isEmpty { parts.append(arguments) }
        if options.count > 3 {
            parts.append("[OPTIONS]")
        } else {
            parts += options.map { option in "[\(option.valueName.map { "\(option.name) \($0)" } ?? option.name)]" }
        }
        return parts.joined(separator: " ")
    }

    /// The usage context handed to ``FailureReport``.
    var usage: FailureReport.Usage {
        FailureReport.Usage(line: usageLine, helpCommand: "entryctl \(name) --help")
    }
}

/// The validated arguments of one command, with typed accessors that throw ``UsageError``.
struct CommandInput {
    let scanned: ScannedArguments
    let globals: GlobalOptions
    /// The process environment (`ENTRYD_WEB_USERS` for `web-user`).
    var environment: [String: String] = [:]

    /// The value of `option`, or `nil`.
    func value(_ option: String) -> String? { scanned.value(option) }
    /// Whether flag `option` was given.
    func has(_ option: String) -> Bool { scanned.has(option) }

    /// The positional arguments, exactly as many as `names` (e.g. `["ID"]`).
    func exactly(_ names: String...) throws -> [String] {
        let given = scanned.positionals
        if given.count < names.count {
            throw UsageError(zh: "缺少 \(names[given.count])", en: "missing \(names[given.count])")
        }
        if given.count > names.count {
            throw UsageError(zh: "多余的参数“\(given[names.count])”", en: "unexpected argument '\(given[names.count])'")
        }
        return given
    }

    /// The first `leading` positionals by name, then at least one `FIELD=VALUE`.
    func fields(after leading: String...) throws -> ([String], [String: String]) {
        let given = scanned.positionals
        if given.count < leading.count {
            throw UsageError(zh: "缺少 \(leading[given.count])", en: "missing \(leading[given.count])")
        }
        let rest = Array(given.dropFirst(leading.count))
        if rest.isEmpty {
            throw UsageError(zh: "缺少 FIELD=VALUE（至少一个字段）", en: "missing FIELD=VALUE (at least one field)")
        }
        return (Array(given.prefix(leading.count)), try FieldAssignment.parseAll(rest))
    }

    /// An integer option in `range`, or `nil` when not given.
    func integer(_ option: String, in range: ClosedRange<Int64> = 1...Int64(Int32.max)) throws -> Int64? {
        guard let text = value(option) else { return nil }
        guard let n = Int64(text), range.contains(n) else {
            throw UsageError(
                zh: "\(option) 取 \(range.lowerBound) 到 \(range.upperBound) 之间的整数，不是“\(text)”",
                en: "\(option) takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return n
    }

    /// An option whose value must be one of `choices`, or `nil` when not given.
    func choice(_ option: String, of choices: [String]) throws -> String? {
        guard let text = value(option) else { return nil }
        guard choices.contains(text) else {
            throw UsageError(
                zh: "\(option) 取 \(choices.joined(separator: "、")) 之一，不是“\(text)”",
                en: "\(option) is one of \(choices.joined(separator: ", ")), not '\(text)'")
        }
        return text
    }
}

/// The object of present members: `params(("id", .string(x)), ("form", nil))` → `{"id": x}`.
func params(_ members: (String, JSON?)...) -> JSON {
    .object(members.compactMap { key, value in value.map { (key, $0) } })
}

extension Optional where Wrapped == String {
    /// `.string(value)` when present.
    var json: JSON? { map(JSON.string) }
}
