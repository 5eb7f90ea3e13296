import EntryModel
import EntryProtocol

/// One line of the interactive screen: text runs with a style each, exactly
/// as wide as the screen. Styles only become escape sequences in
/// ``rendered(colour:)``, so tests read the ``plain`` text, and without
/// colour (`NO_COLOR`) nothing but the text is written — every state is also
/// marked in the text itself (`>`, `*`, `!`, parentheses).
package struct ScreenLine: Sendable, Equatable {
    /// A text style (SGR attributes, ECMA-48).
    package enum Style: Sendable, Equatable {
        /// Plain text; bold (keys, the focused label); dim (placeholders,
        /// disabled keys); inverse (the highlighted row); problem (red
        /// markers); title (the title bar); accent (cyan: the focus, values).
        case plain, bold, dim, inverse, problem, title, accent

        /// The SGR parameters of the style.
        var sgr: String {
            switch self {
            case .plain: return "0"
            case .bold: return "1"
            case .dim: return "2"
            case .inverse: return "7"
            case .problem: return "1;31"
            case .title: return "1;7"
            case .accent: return "36"
            }
        }
    }

    /// The runs, left to right.
    package private(set) var runs: [(text: String, style: Style)] = []

    /// An empty line.
    package init() {}

    /// A line of one run.
    package init(_ text: String, _ style: Style = .plain) { append(text, style) }

    /// Appends `text` (sanitised: no control characters) in `style`.
    package mutating func append(_ text: String, _ style: Style = .plain) {
        guard !text.isEmpty else { return }
        runs.append((DisplayWidth.sanitized(text), style))
    }

    /// The text without styles.
    package var plain: String { runs.map(\.text).joined() }

    /// Columns taken.
    package var width: Int { DisplayWidth.of(plain) }

    /// The line cut or padded with spaces to exactly `width` columns (cut at a
    /// character boundary, wide characters never split; a cut is marked `…`).
    func fitted(to width: Int) -> ScreenLine {
        var out = ScreenLine()
        var used = 0
        let total = self.width
        for run in runs {
            if used >= width { break }
            let runWidth = DisplayWidth.of(run.text)
            if used + runWidth <= width && (total <= width || used + runWidth < width) {
                out.runs.append(run)
                used += runWidth
            } else {
                let cut = DisplayWidth.truncated(run.text, to: max(1, width - used))
                out.runs.append((cut, run.style))
                used += DisplayWidth.of(cut)
                break
            }
        }
        if used < width { out.runs.append((String(repeating: " ", count: width - used), .plain)) }
        return out
    }

    /// The line as terminal output: with `colour`, each styled run wrapped in
    /// SGR sequences; without, the plain text.
    package func rendered(colour: Bool) -> String {
        guard colour else { return plain }
        return runs.map { $0.style == .plain ? $0.text : "\u{1B}[\($0.style.sgr)m\($0.text)\u{1B}[0m" }.joined()
    }

    /// Equal text and styles.
    package static func == (a: ScreenLine, b: ScreenLine) -> Bool {
        a.runs.count == b.runs.count && zip(a.runs, b.runs).allSatisfy { $0.text == $1.text && $0.style == $1.style }
    }
}
