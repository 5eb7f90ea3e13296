import EntryModel
import EntryProtocol

/// One key press (or one paste) of the interactive form, as ``KeyDecoder``
/// reads it from the terminal's bytes.
///
/// Printable input arrives one Unicode scalar at a time as ``text(_:)``, so a
/// sequence decodes to the same keys whether its bytes come together or one
/// by one; ``TextLine`` joins combining scalars into their characters.
package enum Key: Sendable, Equatable {
    /// Printable text: one Unicode scalar, as typed (`a`, `李`, a space).
    case text(String)
    /// Text pasted while bracketed paste was on (`ESC [200~ … ESC [201~`),
    /// with its control characters kept as they came.
    case paste(String)
    /// Return / Enter (CR or LF).
    case enter
    /// Tab.
    case tab
    /// Shift-Tab (`ESC [Z`).
    case backTab
    /// A lone Escape (no sequence followed it in time).
    case escape
    /// Backspace (DEL or BS).
    case backspace
    /// Delete (forward), `ESC [3~`.
    case delete
    /// Arrow keys (also with modifiers, which are ignored).
    case up, down, left, right
    /// Home / End, in their CSI, SS3 and `~` spellings.
    case home, end
    /// Page Up / Page Down.
    case pageUp, pageDown
    /// Ctrl plus a letter, given as the lower-case letter: `.control("s")` is Ctrl-S.
    case control(Character)
    /// A sequence the form does not use (function keys, mouse reports …).
    case unknown
}
