import EntryModel
import EntryProtocol

/// Turns the bytes a terminal sends in raw mode into ``Key``s.
///
/// Understood, after ECMA-48 and xterm's "ctlseqs":
/// - CSI sequences `ESC [ params final` (arrows `A B C D`, `H F` home/end,
///   `Z` Shift-Tab, `N ~` for 1/7 home, 4/8 end, 3 delete, 5/6 page up/down,
///   and modifiers such as `1;5C`, which are ignored);
/// - SS3 sequences `ESC O A…D, H, F` (application cursor keys);
/// - bracketed paste `ESC [200~ … ESC [201~` as one ``Key/paste(_:)``;
/// - UTF-8 text, one ``Key/text(_:)`` per scalar (invalid bytes become U+FFFD);
/// - C0 controls: CR/LF Enter, HT Tab, DEL/BS Backspace, the others Ctrl-letter.
///
/// A lone ESC cannot be told from the start of a sequence until time passes:
/// the caller waits briefly (the shell uses 40 ms) while ``hasPending`` is
/// true and then calls ``flush()``. Feeding bytes one at a time or all at
/// once gives the same keys.
package struct KeyDecoder: Sendable {
    /// Longest paste kept, in bytes (1 MiB); the rest is dropped.
    static let maxPasteBytes = 1 << 20

    private var pending: [UInt8] = []
    private var paste: [UInt8]?

    /// A decoder with nothing pending.
    package init() {}

    /// Whether bytes are held back waiting for the rest of a sequence (or paste).
    package var hasPending: Bool { !pending.isEmpty || paste != nil }

    /// Decodes `bytes` after what was pending and returns the complete keys.
    package mutating func feed<S: Sequence>(_ bytes: S) -> [Key] where S.Element == UInt8 {
        var keys: [Key] = []
        for byte in bytes {
            pending.append(byte)
            decodePending(into: &keys)
        }
        return keys
    }

    /// Gives up waiting: a pending lone ESC becomes ``Key/escape``, an unfinished
    /// sequence is dropped (as ``Key/escape``), a partial UTF-8 scalar becomes
    /// U+FFFD. An unfinished paste is kept (its end may still come).
    package mutating func flush() -> [Key] {
        guard paste == nil, let first = pending.first else { return [] }
        defer { pending.removeAll() }
        return first == 0x1B ? [.escape] : [.text("\u{FFFD}")]
    }

    private mutating func decodePending(into keys: inout [Key]) {
        if paste != nil { return collectPaste(into: &keys) }
        guard let first = pending.first else { return }
        if first == 0x1B { return decodeEscape(into: &keys) }
        if first < 0x80 {
            pending.removeAll()
            keys.append(Self.control(first))
            return
        }
        decodeUTF8(into: &keys)
    }

    /// A single byte below 0x80.
    private static func control(_ byte: UInt8) -> Key {
        switch byte {
        case 0x0D, 0x0A: return .enter
        case 0x09: return .tab
        case 0x7F, 0x08: return .backspace
        case 0x20...0x7E: return .text(String(UnicodeScalar(byte)))
        case 0x01...0x1A: return .control(Character(UnicodeScalar(byte + 0x60)))
        default: return .unknown
        }
    }

    private mutating func decodeEscape(into keys: inout [Key]) {
        guard pending.count >= 2 else { return }
        switch pending[1] {
        case UInt8(ascii: "["):
            // Parameters and intermediates are 0x20–0x3F; the final byte is 0x40–0x7E.
            guard let last = pending.last, pending.count > 2, (0x40...0x7E).contains(last) else {
                if pending.count > 2, let last = pending.last, !(0x20...0x3F).contains(last) {
                    pending.removeAll()
                    keys.append(.unknown)
                }
                return
            }
            let params = String(decoding: pending[2..<(pending.count - 1)], as: UTF8.self)
            pending.removeAll()
            if last == UInt8(ascii: "~") && params == "200" {
                paste = []
                return
            }
            keys.append(Self.csi(params: params, final: last))
        case UInt8(ascii: "O"):
            guard pending.count >= 3 else { return }
            let final = pending[2]
            pending.removeAll()
            keys.append(Self.csi(params: "", final: final))
        case 0x1B:
            // ESC ESC: the first is a lone Escape; the second may start a sequence.
            pending.removeFirst()
            keys.append(.escape)
            decodeEscape(into: &keys)
        default:
            // ESC then a plain byte (Alt-key or a quick Esc, key): Escape, then the byte.
            pending.removeFirst()
            keys.append(.escape)
            decodePending(into: &keys)
        }
    }

    private static func csi(params: String, final: UInt8) -> Key {
        switch final {
        case UInt8(ascii: "A"): return .up
        case UInt8(ascii: "B"): return .down
        case UInt8(ascii: "C"): return .right
        case UInt8(ascii: "D"): return .left
        case UInt8(ascii: "H"): return .home
        case UInt8(ascii: "F"): return .end
        case UInt8(ascii: "Z"): return .backTab
        case UInt8(ascii: "~"):
            switch params.split(separator: ";").first.map(String.init) ?? "" {
            case "1", "7": return .home
            case "4", "8": return .end
            case "3": return .delete
            case "5": return .pageUp
            case "6": return .pageDown
            default: return .unknown
            }
        default: return .unknown
        }
    }

    private mutating func collectPaste(into keys: inout [Key]) {
        let end: [UInt8] = [0x1B, 0x5B, 0x32, 0x30, 0x31, 0x7E]  // ESC [201~
        paste!.append(contentsOf: pending)
        pending.removeAll()
        if paste!.count >= end.count, Array(paste!.suffix(end.count)) == end {
            let body = paste!.dropLast(end.count)
            keys.append(.paste(String(decoding: body.prefix(Self.maxPasteBytes), as: UTF8.self)))
            paste = nil
        } else if paste!.count > Self.maxPasteBytes + end.count {
            // Keep the tail only, so the end marker is still found.
            paste!.removeSubrange(Self.maxPasteBytes..<(paste!.count - end.count))
        }
    }

    private mutating func decodeUTF8(into keys: inout [Key]) {
        let first = pending[0]
        let length: Int
        switch first {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default:
            pending.removeAll()
            keys.append(.text("\u{FFFD}"))
            return
        }
        if let last = pending.last, pending.count > 1, last & 0xC0 != 0x80 {
            // A scalar cut short: replace it, then decode the new byte on its own.
            pending.removeLast()
            pending.removeAll()
            keys.append(.text("\u{FFFD}"))
            pending.append(last)
            decodePending(into: &keys)
            return
        }
        guard pending.count == length else { return }
        let text = String(decoding: pending, as: UTF8.self)
        pending.removeAll()
        keys.append(.text(text))
    }
}
