import EntryClient
import EntryProtocol

/// A failure entryctl detects itself that is not a usage error (exit 1), in both languages.
struct Refusal: LocalizedFailure, CustomStringConvertible {
    let text: Localized
    init(_ text: Localized) { self.text = text }
    init(zh: String, en: String) { self.text = Localized(zh: zh, en: en) }
    var lines: [Localized] { [text] }
    var exitCode: ExitCode { .failure }
    var description: String { text.en }
}
