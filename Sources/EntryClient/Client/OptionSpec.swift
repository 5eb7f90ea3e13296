import EntryArguments

/// An option an entryctl command accepts: the option as the scanner reads it
/// (``ArgumentOption``, EntryArguments) and its help line.
package struct OptionSpec: Sendable, Equatable {
    /// Its spellings, its value's placeholder and whether it repeats.
    package var option: ArgumentOption
    /// One line for `--help`, in both languages.
    package var help: Localized

    /// An option spelled `names` (each starting with `-`); `value` names its
    /// placeholder, or is `nil` for a flag; a `repeatable` option with a value may be given many times.
    package init(_ names: [String], value: String? = nil, help: Localized, repeatable: Bool = false) {
        self.option = ArgumentOption(names, value: value, repeatable: repeatable)
        self.help = help
    }

    /// Every spelling, the canonical (long) one first: `["--help", "-h"]`.
    package var names: [String] { option.names }
    /// The placeholder of the value (`N`, `PATH`), or `nil` for a flag.
    package var valueName: String? { option.valueName }
    /// Whether the option may be given more than once (``ScannedArguments/values(_:)`` has every value).
    package var repeatable: Bool { option.repeatable }
    /// The canonical spelling, e.g. `--limit`.
    package var name: String { option.name }
    /// The spellings and placeholder as help shows them: `-h, --help`, `--limit N`.
    package var synopsis: String { option.synopsis }
}

extension UsageError {
    /// The scanner's error, in both languages.
    package init(_ error: ArgumentError) {
        self.init(zh: error.zh, en: error.en)
    }
}

extension ArgumentScanner {
    /// ``ArgumentScanner/scan(_:options:stopAtPositional:)`` for entryctl's
    /// options, throwing its ``UsageError`` (exit 64, with the command's usage line).
    package static func scan(
        _ arguments: [String], options: [OptionSpec],
        stopAtPositional: Bool = false
    ) throws(UsageError) -> (ScannedArguments, consumed: Int) {
        do {
            return try scan(arguments, options: options.map(\.option), stopAtPositional: stopAtPositional)
        } catch {
            throw UsageError(error)
        }
    }
}
