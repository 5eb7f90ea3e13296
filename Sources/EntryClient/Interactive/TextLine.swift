import EntryModel
import EntryProtocol

/// A one-line text editor for the form's text fields (name, phone, email).
///
/// The text is a sequence of grapheme clusters (Swift `Character`s) with a
/// cursor between them, so a Chinese character, an emoji flag or `e` plus a
/// combining accent is moved over and deleted as one. Columns are counted
/// with ``DisplayWidth`` (wide characters take two).
package struct TextLine: Sendable, Equatable {
    /// The characters.
    package private(set) var characters: [Character]
    /// The cursor: the number of characters before it, 0…`characters.count`.
    package private(set) var cursor: Int
    /// The most characters kept (`nil`: no limit); longer input is cut.
    package let maxLength: Int?

    /// An editor holding `text`, the cursor at its end.
    package init(_ text: String = "", maxLength: Int? = nil) {
        characters = Array(text)
        cursor = characters.count
        self.maxLength = maxLength
    }

    /// The text.
    package var text: String { String(characters) }

    /// Inserts `text` at the cursor. Line breaks and tabs become spaces, other
    /// control characters are dropped (pasted text is one line). A scalar that
    /// joins the character before the cursor (a combining mark, the second
    /// half of a flag) joins it.
    package mutating func insert(_ text: String) {
        var clean = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\r" || scalar == "\n" || scalar == "\t" {
                if clean.last != " " { clean.append(" ") }
            } else if scalar.properties.generalCategory != .control {
                clean.append(scalar)
            }
        }
        let before = Array(String(characters[..<cursor]) + String(clean))
        let after = characters[cursor...]
        var joined = before
        if let maxLength, joined.count + after.count > maxLength {
            joined = Array(joined.prefix(max(cursor, maxLength - after.count)))
        }
        characters = joined + after
        cursor = joined.count
    }

    /// Deletes the character before the cursor (Backspace).
    mutating func deleteBackward() {
        guard cursor > 0 else { return }
        characters.remove(at: cursor - 1)
        cursor -= 1
    }

    /// Deletes the character after the cursor (Delete).
    mutating func deleteForward() {
        guard cursor < characters.count else { return }
        characters.remove(at: cursor)
    }

    /// Deletes everything before the cursor (Ctrl-U, as in readline).
    mutating func deleteToStart() {
        characters.removeFirst(cursor)
        cursor = 0
    }

    /// Moves the cursor by `delta` characters, stopping at the ends.
    package mutating func move(by delta: Int) {
        cursor = min(max(0, cursor + delta), characters.count)
    }

    /// Moves the cursor to the start (Home) or end (End).
    mutating func moveToEnd(_ end: Bool) {
        cursor = end ? characters.count : 0
    }

    /// The columns before the cursor.
    var cursorColumn: Int {
        characters[..<cursor].reduce(0) { $0 + DisplayWidth.of(String($1)) }
    }

    /// The part of the text to show in `width` columns (≥ 2) with the cursor
    /// visible, and the cursor's column within it. Scrolls so the cursor stays
    /// in view; a wide character is never cut in half.
    package func window(width: Int) -> (text: String, cursorColumn: Int) {
        let widths = characters.map { DisplayWidth.of(String($0)) }
        var start = 0
        // Leave one column for the cursor after the last character.
        while widths[start..<cursor].reduce(0, +) > width - 1 { start += 1 }
        var shown = ""
        var used = 0
        for index in start..<characters.count {
            if used + widths[index] > width { break }
            shown.append(characters[index])
            used += widths[index]
        }
        return (shown, widths[start..<cursor].reduce(0, +))
    }
}
