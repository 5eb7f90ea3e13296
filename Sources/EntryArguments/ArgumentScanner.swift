/// An option a program accepts: its spellings, and whether it takes a value.
package struct ArgumentOption: Sendable, Equatable {
    /// Every spelling, the canonical (long) one first: `["--help", "-h"]`.
    package var names: [String]
    /// The placeholder of the value (`N`, `PATH`), or `nil` for a flag.
    package var valueName: String?
    /// Whether the option may be given more than once; otherwise a second one is refused.
    package var repeatable: Bool

    /// An option spelled `names` (each starting with `-`); `value` names its
    /// placeholder, or is `nil` for a flag; a `repeatable` option may be given many times.
    package init(_ names: [String], value: String? = nil, repeatable: Bool = false) {
        precondition(!names.isEmpty && names.allSatisfy { $0.hasPrefix("-") }, "options are spelled with '-'")
        self.names = names
        self.valueName = value
        self.repeatable = repeatable
    }

    /// The canonical spelling, e.g. `--limit`.
    package var name: String { names[0] }

    /// The spellings and placeholder as help shows them: `-h, --help`, `--limit N`.
    package var synopsis: String {
        let spelled = names.sorted { $0.count < $1.count }.joined(separator: ", ")
        return valueName.map { spelled + " " + $0 } ?? spelled
    }
}

/// A command line that breaks the scanner's rules, in Chinese and English
/// (entryctl prints the one of its locale; entryd, entryd-web and entryd-bench the English).
package struct ArgumentError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    package enum Kind: Sendable, Equatable {
        /// An argument starting with `-` that is no option, and the nearest option's spelling.
        case unknownOption(String, suggestion: String?)
        /// An option with a value given last (its canonical name and synopsis).
        case missingValue(String, synopsis: String)
        /// A flag given `--flag=value`.
        case unexpectedValue(String)
        /// A non-repeatable option given twice.
        case repeated(String)
        /// A positional argument where a program takes none.
        case unexpectedArgument(String)
    }

    /// What is wrong.
    package let kind: Kind

    /// The error of `kind`.
    package init(_ kind: Kind) { self.kind = kind }

    /// The English message, e.g. `unknown option '--contry'; did you mean '--country'?`.
    package var en: String {
        switch kind {
        case .unknownOption(let spelled, let near):
            "unknown option '\(spelled)'" + (near.map { "; did you mean '\($0)'?" } ?? "")
        case .missingValue(let name, let synopsis): "option '\(name)' needs a value (\(synopsis))"
        case .unexpectedValue(let name): "option '\(name)' takes no value"
        case .repeated(let name): "option '\(name)' is given twice"
        case .unexpectedArgument(let argument): "unexpected argument '\(argument)'"
        }
    }

    /// The Chinese message.
    package var zh: String {
        switch kind {
        case .unknownOption(let spelled, let near): "未知的选项 '\(spelled)'" + (near.map { "；是否指 '\($0)'？" } ?? "")
        case .missingValue(let name, let synopsis): "选项 '\(name)' 需要一个值（\(synopsis)）"
        case .unexpectedValue(let name): "选项 '\(name)' 不带值"
        case .repeated(let name): "选项 '\(name)' 给了两次"
        case .unexpectedArgument(let argument): "多余的参数“\(argument)”"
        }
    }

    /// The English message.
    package var description: String { en }
}

/// Options and positional arguments read from a whole command line (``ArgumentScanner/scan(_:options:stopAtPositional:)``).
package struct ScannedArguments: Sendable, Equatable {
    /// Values by canonical option name (`--limit` → `"20"`); the last one of a repeatable option.
    package var values: [String: String] = [:]
    /// Every value of a repeatable option, in order, by canonical name.
    package var repeated: [String: [String]] = [:]
    /// Canonical names of the flags given.
    package var flags: Set<String> = []
    /// The other arguments, in order.
    package var positionals: [String] = []

    /// Nothing given.
    package init() {}

    /// The value of `option`, or `nil` when it was not given.
    package func value(_ option: String) -> String? { values[option] }
    /// Whether the flag `option` was given.
    package func has(_ option: String) -> Bool { flags.contains(option) }
    /// Every value of the repeatable `option`, in the order given; empty when it was not given.
    package func values(_ option: String) -> [String] { repeated[option] ?? [] }
}

/// The one command-line scanner of entryctl, entryd, entryd-web and entryd-bench.
///
/// Rules (those of getopt_long, minus abbreviations and bundling):
/// - `--name VALUE` and `--name=VALUE` for an option with a value; the next
///   argument is taken as the value even if it starts with `-`;
/// - a flag takes no value (`--json=1` is refused);
/// - any other argument starting with `-` must be a known option (an unknown
///   one is refused with the nearest option's name, ``NearestName``);
/// - giving an option twice is refused rather than letting one silently win,
///   unless it is ``ArgumentOption/repeatable``;
/// - for a program that takes positional arguments, `--` ends the options
///   (everything after it is positional) and `-` alone is positional; for one
///   that takes none, every argument not starting with `-` is refused, and `--`
///   and `-` are unknown options.
///
/// Read it item by item with ``next()`` (the order of options matters to the
/// caller: entryd stops at `--help`), or whole with ``scan(_:options:stopAtPositional:)``.
package struct ArgumentScanner {
    /// One thing read by ``next()``.
    package enum Item: Sendable, Equatable {
        /// An option by its spec, with its value, or `nil` for a flag.
        case option(ArgumentOption, value: String?)
        /// A positional argument (only where positionals are taken).
        case positional(String)
        /// `--` (only where positionals are taken): what follows is positional.
        case endOfOptions
    }

    /// The command line being read (without the program name).
    package let arguments: [String]
    /// How many arguments ``next()`` has consumed.
    package private(set) var index = 0
    private let byName: [String: ArgumentOption]
    private let takesPositionals: Bool
    private var seen: Set<String> = []
    private var afterEndOfOptions = false

    /// A scanner of `arguments` for `options`.
    /// - Parameter positionals: whether the program takes positional arguments
    ///   (and so `--` and `-`); when not, one is an ``ArgumentError/Kind/unexpectedArgument(_:)``.
    package init(_ arguments: [String], options: [ArgumentOption], positionals: Bool = true) {
        self.arguments = arguments
        var byName: [String: ArgumentOption] = [:]
        for option in options { for name in option.names { byName[name] = option } }
        self.byName = byName
        self.takesPositionals = positionals
    }

    /// The next option or positional, or `nil` at the end.
    /// - Throws: ``ArgumentError`` for an unknown option, a missing value, a
    ///   value given to a flag, an option given twice, or a positional where none is taken.
    package mutating func next() throws(ArgumentError) -> Item? {
        guard index < arguments.count else { return nil }
        let argument = arguments[index]
        index += 1
        if afterEndOfOptions { return .positional(argument) }
        if takesPositionals {
            if argument == "--" {
                afterEndOfOptions = true
                return .endOfOptions
            }
            if !argument.hasPrefix("-") || argument == "-" { return .positional(argument) }
        } else if !argument.hasPrefix("-") {
            throw ArgumentError(.unexpectedArgument(argument))
        }
        let (spelled, inline) = Self.split(argument)
        guard let option = byName[spelled] else {
            throw ArgumentError(
                .unknownOption(spelled, suggestion: NearestName.nearest(spelled, among: Array(byName.keys))))
        }
        guard seen.insert(option.name).inserted || option.repeatable else {
            throw ArgumentError(.repeated(option.name))
        }
        guard option.valueName != nil else {
            guard inline == nil else { throw ArgumentError(.unexpectedValue(option.name)) }
            return .option(option, value: nil)
        }
        if let inline { return .option(option, value: inline) }
        guard index < arguments.count else {
            throw ArgumentError(.missingValue(option.name, synopsis: option.synopsis))
        }
        index += 1
        return .option(option, value: arguments[index - 1])
    }

    /// Scans the whole of `arguments` (not including the program or command name).
    ///
    /// - Parameters:
    ///   - options: what may appear.
    ///   - stopAtPositional: stop at the first positional argument, or after
    ///     `--` (entryctl's global options, before the command).
    /// - Returns: what was read, and how many arguments were consumed (equal to
    ///   `arguments.count` unless stopping at a positional).
    /// - Throws: ``ArgumentError`` as ``next()``.
    package static func scan(
        _ arguments: [String], options: [ArgumentOption],
        stopAtPositional: Bool = false
    ) throws(ArgumentError) -> (ScannedArguments, consumed: Int) {
        var scanner = ArgumentScanner(arguments, options: options)
        var result = ScannedArguments()
        while let item = try scanner.next() {
            switch item {
            case .endOfOptions:
                if stopAtPositional { return (result, scanner.index) }
            case .positional(let argument):
                if stopAtPositional { return (result, scanner.index - 1) }
                result.positionals.append(argument)
            case .option(let option, nil):
                result.flags.insert(option.name)
            case .option(let option, let value?):
                result.values[option.name] = value
                if option.repeatable { result.repeated[option.name, default: []].append(value) }
            }
        }
        return (result, arguments.count)
    }

    /// `--name=value` → (`--name`, `value`); anything else → (argument, nil).
    private static func split(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<eq]), String(argument[argument.index(after: eq)...]))
    }
}
