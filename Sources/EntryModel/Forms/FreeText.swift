/// The characters entryd refuses in free text on its way to storage, in one
/// place so that every door (Add, Update, Delete, Restore, Erase, Sync.Apply)
/// holds text to the same rule (doc/protocol.md, "Free text").
///
/// The sets are fixed by Unicode's stability policy: Cc is exactly
/// U+0000–U+001F and U+007F–U+009F, Zl is U+2028 alone and Zp U+2029 alone, so
/// no character property tables are consulted.
package enum FreeText {
    /// True for a control character (Cc: U+0000–U+001F, U+007F–U+009F) or a
    /// line or paragraph separator (U+2028, U+2029). A NUL would cut the text
    /// short in SQLite's and PostgreSQL's C interfaces; the others break the
    /// lines of a log, a ledger or a terminal.
    package static func isBreaking(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: true
        default: false
        }
    }

    /// True for a character no text value Add takes may hold (``Validator``'s
    /// text rule, in place since the first release): a control character or a
    /// separator (``isBreaking(_:)``), or one of the invisible formatting
    /// characters that can disguise text — the bidirectional embeddings,
    /// overrides and isolates (U+202A–U+202E, U+2066–U+2069), zero-width space
    /// U+200B, BOM U+FEFF and the interlinear annotation marks U+FFF9–U+FFFB.
    /// A value of any other field type with one of them is no valid input
    /// either. (Tag characters, refused in Add only since 2026-12-07, are not
    /// here: a value stored before may hold them.)
    package static func isRefusedInValue(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x200B, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF,
            0xFFF9...0xFFFB:
            true
        default: false
        }
    }

    /// True when `text` has no character ``isRefusedInValue(_:)`` names: what
    /// Sync.Apply holds a peer's value to. ASCII text is read byte by byte
    /// without decoding (this runs for every value of every pulled change).
    package static func isAcceptableValue(_ text: String) -> Bool {
        var text = text
        // true or false for ASCII text; nil when a byte starts or continues a longer scalar.
        let ascii: Bool? = text.withUTF8 { bytes in
            for b in bytes {
                if b >= 0x80 { return nil }
                if b < 0x20 || b == 0x7F { return false }
            }
            return true
        }
        return ascii ?? !text.unicodeScalars.contains(where: isRefusedInValue)
    }

    /// True when `text` has no character ``isBreaking(_:)`` names: the rule of an
    /// audit `reason` (Update, Delete, Restore; Erase adds its own bounds) and of
    /// a `unix:` address given to SyncPeer. `""` passes.
    package static func isLineSafe(_ text: String) -> Bool {
        !text.unicodeScalars.contains(where: isBreaking)
    }

    /// The JSON Schema `pattern` (ECMA 262, as the OpenAPI document states it)
    /// of a text without a character ``isBreaking(_:)`` names.
    package static let reasonPattern = "^[^\\x00-\\x1F\\x7F-\\x9F\\u2028\\u2029]*$"

    /// The problem a `reason` ``isLineSafe(_:)`` refuses is answered
    /// with (in `ValidationFailed`, as a `search` filter with a control character
    /// is): field `reason`, code `invalid-format`, the message in `locale`.
    package static func reasonProblem(locale: EntryLocale) -> Problem {
        Problem(
            field: "reason", code: .invalidFormat,
            message: locale == .zh
                ? "原因（reason）不能包含换行、制表符、NUL 等控制字符或行、段分隔符（U+2028、U+2029），请删去。"
                : "The reason must not contain control characters (such as a line break, a tab or NUL) "
                    + "or line and paragraph separators (U+2028, U+2029); remove them.")
    }
}
