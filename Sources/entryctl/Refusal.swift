import EntryClient
import EntryProtocol

/// A failure entryctl detects itself that is not a usage error (exit 1, or
/// the code given: 66 for an input file that cannot be read), in both languages.
struct Refusal: LocalizedFailure, CustomStringConvertible {
    let text: Localized
    let exitCode: ExitCode
    init(_ text: Localized, exitCode: ExitCode = .failure) {
        self.text = text
        self.exitCode = exitCode
    }
    init(zh: String, en: String, exitCode: ExitCode = .failure) {
        self.init(Localized(zh: zh, en: en), exitCode: exitCode)
    }
    var lines: [Localized] { [text] }
    var description: String { text.en }
}
