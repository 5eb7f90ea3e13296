import EntryModel

/// A command line's arguments are wrong: what is wrong, in one sentence, in
/// both languages (``Localized``).
///
/// The exit code is 64 (`EX_USAGE`); the reporter adds the command's usage line
/// (see ``FailureReport``).
package struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. "missing ID" / "缺少 ID".
    package var text: Localized

    /// A usage error saying `text`.
    package init(_ text: Localized) {
        self.text = text
    }

    /// A usage error in both languages.
    package init(zh: String, en: String) {
        self.text = Localized(zh: zh, en: en)
    }

    /// The English message (tests, logs).
    package var message: String { text.en }

    /// The English message.
    package var description: String { text.en }
}
