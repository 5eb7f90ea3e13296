import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// Terminal column widths through glibc wcwidth (Client/DisplayWidth.swift).
@Suite struct ClientDisplayWidthTests {
    @Test(
        "measures ASCII, Chinese, flags and mixed text",
        arguments: [
            ("abc", 3), ("李雷", 4), ("🇨🇳 中国", 7), ("🇨🇳", 2), ("", 0),
            ("广东省-广州市", 13), ("ａｂ", 4), ("+8613800138000", 14),
        ])
    func widths(text: String, expected: Int) {
        #expect(DisplayWidth.of(text) == expected)
    }

    /// `é` as e + U+0301 is one grapheme of one column; so is the precomposed form.
    @Test("combining marks take no column")
    func combining() {
        let decomposed = "Jose\u{301}"
        #expect(decomposed.count == 4)
        #expect(DisplayWidth.of(decomposed) == 4)
        #expect(DisplayWidth.of("José") == 4)
        #expect(DisplayWidth.of("a\u{300}\u{301}\u{302}") == 1)
        #expect(DisplayWidth.of("Z\u{200D}\u{FE0F}") == 1)
    }

    @Test("controls count zero columns and are sanitized")
    func controls() {
        #expect(DisplayWidth.of("\u{7}\u{1B}") == 0)
        #expect(DisplayWidth.sanitized("a\tb\nc") == "a b c")
        #expect(DisplayWidth.sanitized("\u{1B}[31mred") == "\u{FFFD}[31mred")
        #expect(DisplayWidth.sanitized("李雷") == "李雷")
    }

    @Test("pads and truncates by display width, at cluster boundaries")
    func padTruncate() {
        #expect(DisplayWidth.padded("李雷", to: 6) == "李雷  ")
        #expect(DisplayWidth.padded("7", to: 3, alignment: .right) == "  7")
        #expect(DisplayWidth.padded("李雷", to: 2) == "李雷")
        #expect(DisplayWidth.truncated("李雷韩梅梅", to: 6) == "李雷…")
        #expect(DisplayWidth.of(DisplayWidth.truncated("李雷韩梅梅", to: 6)) == 5)
        #expect(DisplayWidth.truncated("🇨🇳🇨🇳🇨🇳", to: 5) == "🇨🇳🇨🇳…")
        #expect(DisplayWidth.truncated("abc", to: 3) == "abc")
    }
}
