import EntryModel

/// A command line's arguments are wrong: what is wrong, in one sentence, in
/// both languages (``Localized``).
///
/// The exit code is 64 (`EX_USAGE`); the reporter adds the command's usage line
/// (see ``FailureReport``).
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. "missing ID" / "缺少 ID".
    public var text: Localized

    /// A usage error saying `text`.
    public init(_ text: Localized) {
        self.text = text
    }

    /// A usage error in both languages.
    public init(zh: String, en: String) {
        self.text = Localized(zh: zh, en: en)
    }

    /// The English message (tests, logs).
    public var message: String { text.en }

    /// The English message.
    public var description: String { text.en }
}
