import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// Terminal bytes to keys (Interactive/KeyDecoder.swift), fed all at once and byte by byte.
@Suite struct InteractiveKeyDecoderTests {
    /// Decodes `bytes` in one feed, then flushes.
    func whole(_ bytes: [UInt8]) -> [Key] {
        var d = KeyDecoder()
        return d.feed(bytes) + d.flush()
    }

    /// Decodes `bytes` one byte per feed, then flushes.
    func oneByOne(_ bytes: [UInt8]) -> [Key] {
        var d = KeyDecoder()
        return bytes.flatMap { d.feed([$0]) } + d.flush()
    }

    static let cases: [(String, [Key])] = [
        ("\u{1B}[A\u{1B}[B\u{1B}[C\u{1B}[D", [.up, .down, .right, .left]),
        ("\u{1B}OA\u{1B}OB\u{1B}OH\u{1B}OF", [.up, .down, .home, .end]),
        ("\u{1B}[H\u{1B}[F\u{1B}[1~\u{1B}[4~\u{1B}[7~\u{1B}[8~", [.home, .end, .home, .end, .home, .end]),
        ("\u{1B}[5~\u{1B}[6~\u{1B}[3~\u{1B}[Z", [.pageUp, .pageDown, .delete, .backTab]),
        ("\u{1B}[1;5C\u{1B}[3;2~", [.right, .delete]),
        ("\t\r\n\u{7F}\u{8}", [.tab, .enter, .enter, .backspace, .backspace]),
        ("\u{13}\u{15}\u{3}", [.control("s"), .control("u"), .control("c")]),
        ("a 李🇨🇳", [.text("a"), .text(" "), .text("李"), .text("🇨"), .text("🇳")]),
        ("\u{1B}[200~李雷\r\nx\u{1B}[201~q", [.paste("李雷\r\nx"), .text("q")]),
        ("\u{1B}[15~x", [.unknown, .text("x")]),
        ("\u{1B}y", [.escape, .text("y")]),
        ("\u{1B}\u{1B}[A", [.escape, .up]),
    ]

    @Test("decodes sequences the same whole and byte by byte", arguments: cases)
    func decodes(input: String, expected: [Key]) {
        let bytes = Array(input.utf8)
        #expect(whole(bytes) == expected)
        #expect(oneByOne(bytes) == expected)
    }

    @Test("a lone ESC waits for the flush")
    func loneEscape() {
        var d = KeyDecoder()
        #expect(d.feed([0x1B]).isEmpty)
        #expect(d.hasPending)
        #expect(d.flush() == [.escape])
        #expect(!d.hasPending)
        #expect(d.feed(Array("\u{1B}[".utf8)).isEmpty)
        #expect(d.flush() == [.escape])
    }

    @Test("invalid UTF-8 becomes U+FFFD and decoding goes on")
    func invalidUTF8() {
        #expect(whole([0xFF, 0x61]) == [.text("\u{FFFD}"), .text("a")])
        #expect(whole([0xE6, 0x61]) == [.text("\u{FFFD}"), .text("a")])
        #expect(whole([0xE6, 0x9D]) == [.text("\u{FFFD}")])
    }

    @Test("a paste split across feeds is one key; flush does not end it")
    func pasteAcrossFeeds() {
        var d = KeyDecoder()
        #expect(d.feed(Array("\u{1B}[200~ab".utf8)).isEmpty)
        #expect(d.flush().isEmpty)
        #expect(d.feed(Array("c\u{1B}[20".utf8)).isEmpty)
        #expect(d.feed(Array("1~".utf8)) == [.paste("abc")])
    }
}
