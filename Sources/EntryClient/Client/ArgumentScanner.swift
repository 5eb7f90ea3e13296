import EntryModel
import EntryProtocol

/// An option a command accepts: its spellings, whether it takes a value, and its help line.
public struct OptionSpec: Sendable, Equatable {
    /// Every spelling, the canonical (long) one first: `["--help", "-h"]`.
    public var names: [String]
    /// The placeholder of the value (`N`, `PATH`), or `nil` for a flag.
    public var valueName: String?
    /// One line for `--help`, in both languages.
    public var help: Localized
    /// Whether the option may be given more than once (``ScannedArguments/values(_:)`` has every value).
    public var repeatable: Bool

    /// An option spelled `names` (each starting with `-`); `value` names its
    /// placeholder, or is `nil` for a flag; a `repeatable` option with a value may be given many times.
    public init(_ names: [String], value: String? = nil, help: Localized, repeatable: Bool = false) {
        precondition(!names.isEmpty && names.allSatisfy { $0.hasPrefix("-") }, "options are spelled with '-'")
        self.names = names
        self.valueName = value
        self.help = help
        self.repeatable = repeatable
    }

    /// The canonical spelling, e.g. `--limit`.
    public var name: String { names[0] }

    /// The spellings and placeholder as help shows them: `-h, --help`, `--limit N`.
    public var synopsis: String {
        let spelled = names.sorted { $0.count < $1.count }.joined(separator: ", ")
        return valueName.map { spelled + " " + $0 } ?? spelled
    }
}

/// Options and positional arguments read from a command line.
public struct ScannedArguments: Sendable, Equatable {
    /// Values by canonical option name (`--limit` → `"20"`); the last one of a repeatable option.
    public var values: [String: String] = [:]
    /// Every value of a repeatable option, in order, by canonical name.
    public var repeated: [String: [String]] = [:]
    /// Canonical names of the flags given.
    public var flags: Set<String> = []
    /// The other arguments, in order.
    public var positionals: [String] = []

    /// Nothing given.
    public init() {}

    /// The value of `option`, or `nil` when it was not given.
    public func value(_ option: String) -> String? { values[option] }
    /// Whether the flag `option` was given.
    public func has(_ option: String) -> Bool { flags.contains(option) }
    /// Every value of the repeatable `option`, in the order given; empty when it was not given.
    public func values(_ option: String) -> [String] { repeated[option] ?? [] }
}

/// Splits a command line into options and positional arguments.
///
/// Rules (those of getopt_long, minus abbreviations and bundling):
/// - `--name VALUE` and `--name=VALUE` for an option with a value; the next
///   argument is taken as the value even if it starts with `-`;
/// - a flag takes no value (`--json=1` is refused);
/// - `--` ends the options: everything after it is positional;
/// - `-` alone is positional; any other argument starting with `-` must be a
///   known option;
/// - giving an option twice is refused rather than letting one silently win,
///   unless it is ``OptionSpec/repeatable`` (`import --map`).
public enum ArgumentScanner {
    /// Scans `arguments` (not including the program or command name).
    ///
    /// - Parameters:
    ///   - options: what may appear.
    ///   - stopAtPositional: stop at the first positional argument (used for the
    ///     global options that come before the command).
    /// - Returns: what was read, and how many arguments were consumed (equal to
    ///   `arguments.count` unless stopping at a positional).
    /// - Throws: ``UsageError`` for an unknown option, a missing value, a value
    ///   given to a flag, or an option given twice.
    public static func scan(_ arguments: [String], options: [OptionSpec],
                            stopAtPositional: Bool = false) throws(UsageError) -> (ScannedArguments, consumed: Int) {
        var byName: [String: OptionSpec] = [:]
        for spec in options { for name in spec.names { byName[name] = spec } }
        var result = ScannedArguments()
        var seen: Set<String> = []
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            if argument == "--" {
                if stopAtPositional { return (result, i + 1) }
                result.positionals += arguments[(i + 1)...]
                return (result, arguments.count)
            }
            guard argument.hasPrefix("-"), argument != "-" else {
                if stopAtPositional { return (result, i) }
                result.positionals.append(argument)
                i += 1
                continue
            }
            let (spelled, inline) = split(argument)
            guard let spec = byName[spelled] else {
                let near = MatchKey.nearest(spelled, among: Array(byName.keys))
                let hint = near.map { "; did you mean '\($0)'?" } ?? "", hintZh = near.map { "；是否指 '\($0)'？" } ?? ""
                throw UsageError(zh: "未知的选项 '\(spelled)'\(hintZh)", en: "unknown option '\(spelled)'\(hint)")
            }
            guard seen.insert(spec.name).inserted || spec.repeatable else { throw UsageError(zh: "选项 '\(spec.name)' 给了两次", en: "option '\(spec.name)' is given twice") }
            if spec.valueName == nil {
                guard inline == nil else { throw UsageError(zh: "选项 '\(spec.name)' 不带值", en: "option '\(spec.name)' takes no value") }
                result.flags.insert(spec.name)
            } else {
                let value: String
                if let inline {
                    value = inline
                } else {
                    guard i + 1 < arguments.count else {
                        throw UsageError(zh: "选项 '\(spec.name)' 需要一个值（\(spec.synopsis)）", en: "option '\(spec.name)' needs a value (\(spec.synopsis))")
                    }
                    i += 1
                    value = arguments[i]
                }
                result.values[spec.name] = value
                if spec.repeatable { result.repeated[spec.name, default: []].append(value) }
            }
            i += 1
        }
        return (result, arguments.count)
    }

    /// `--name=value` → (`--name`, `value`); anything else → (argument, nil).
    private static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<eq]), String(argument[argument.index(after: eq)...]))
    }
}
