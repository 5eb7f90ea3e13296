import EntryModel
import EntryProtocol

/// A message entryctl prints, in both languages it speaks: the one catalog
/// type for its own words (usage errors, refusals, hints, help). Both texts
/// are required, so a message cannot exist in one language only; the
/// locale (`--locale`, else `ENTRYCTL_LOCALE`, else `zh`) picks one when it
/// is printed. Tests/UnitTests/MessageCatalogTests.swift checks that every
/// `zh` text is Chinese and that entryctl's sources print no English-only
/// literal.
package struct Localized: Sendable, Equatable, CustomStringConvertible {
    /// The Chinese text.
    package let zh: String
    /// The English text.
    package let en: String

    /// A message in Chinese and in English.
    package init(zh: String, en: String) {
        self.zh = zh
        self.en = en
    }

    /// The text in `locale`.
    package func callAsFunction(_ locale: EntryLocale) -> String { locale == .zh ? zh : en }

    /// The English text (logs, `String(describing:)`).
    package var description: String { en }
}

/// A failure whose words come in both languages: ``FailureReport`` prints
/// them in the chosen locale with exit code ``exitCode``.
package protocol LocalizedFailure: Error {
    /// What went wrong and what to do, first line first.
    var lines: [Localized] { get }
    /// The exit status.
    var exitCode: ExitCode { get }
}
