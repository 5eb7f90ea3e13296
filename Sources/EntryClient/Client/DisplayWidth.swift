import CSystem
import EntryModel
import EntryProtocol

/// How many terminal columns text takes, as glibc's `wcwidth(3)` counts them.
///
/// A terminal draws most scalars in one column, East Asian wide and fullwidth
/// characters (`李`, `ａ`) and most emoji in two, and combining marks, variation
/// selectors and zero-width joiners in none. Rather than carry its own tables,
/// entryd asks glibc, whose tables follow each Unicode release, after switching
/// `LC_CTYPE` to `C.UTF-8` (built into glibc ≥ 2.35, so no locale needs installing).
///
/// A grapheme cluster is measured by summing its scalars, which is what terminals
/// do: a flag (`🇨🇳`, two regional indicators of width 1) is 2 columns, `é` written
/// as `e` + U+0301 is 1. Controls and unassigned scalars (`wcwidth` = -1) count 0;
/// use ``sanitized(_:)`` before printing text that may hold them.
///
/// Switching `LC_CTYPE` is process-wide and happens once, on first use; it only
/// changes what the C library thinks characters are, never how Swift strings work.
/// Where `C.UTF-8` is missing, every printable non-ASCII scalar counts 1.
package enum DisplayWidth {
    /// Whether `C.UTF-8` could be selected (computed once, thread-safely, on first use).
    static let unicodeAware: Bool = csystem_use_utf8_ctype() == 1

    /// How text is placed in a wider cell.
    package enum Alignment: Sendable {
        /// Text first, spaces after (names, labels).
        case left
        /// Spaces first, text after (numbers).
        case right
    }

    /// Columns of one scalar: 0, 1 or 2 (never negative).
    package static func of(_ scalar: Unicode.Scalar) -> Int {
        let v = scalar.value
        if v >= 0x20 && v < 0x7F { return 1 }  // printable ASCII, the common case
        if unicodeAware { return max(0, Int(csystem_wcwidth(v))) }
        return scalar.properties.generalCategory == .control ? 0 : 1
    }

    /// Columns of `text`: the sum over its scalars (see the type's notes).
    /// E.g. `李雷` → 4, `🇨🇳 中国` → 7, `abc` → 3, `e\u{301}` → 1.
    package static func of<S: StringProtocol>(_ text: S) -> Int {
        var total = 0
        for scalar in text.unicodeScalars { total += of(scalar) }
        return total
    }

    /// `text` with spaces added to fill `width` columns; text already as wide or
    /// wider is returned unchanged (use ``truncated(_:to:)`` first to bound it).
    package static func padded(_ text: String, to width: Int, alignment: Alignment = .left) -> String {
        let missing = width - of(text)
        guard missing > 0 else { return text }
        let fill = String(repeating: " ", count: missing)
        return alignment == .left ? text + fill : fill + text
    }

    /// `text` cut at a grapheme-cluster boundary so that it takes at most `width`
    /// columns, ending in `…` (1 column) when something was cut. `width` ≥ 1.
    static func truncated(_ text: String, to width: Int) -> String {
        precondition(width >= 1, "a cell is at least one column wide")
        guard of(text) > width else { return text }
        var kept = ""
        var used = 0
        for character in text {
            let w = character.unicodeScalars.reduce(0) { $0 + of($1) }
            if used + w > width - 1 { break }
            kept.append(character)
            used += w
        }
        return kept + "…"
    }

    /// `text` made safe to print in one terminal cell: tab, line feed and carriage
    /// return become spaces, other control scalars (C0, DEL, C1 — including ESC,
    /// which would start a terminal escape sequence) become U+FFFD `�`.
    package static func sanitized(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\t", "\n", "\r": out.append(" ")
            case _ where scalar.properties.generalCategory == .control: out.append("\u{FFFD}")
            default: out.append(scalar)
            }
        }
        return String(out)
    }
}
