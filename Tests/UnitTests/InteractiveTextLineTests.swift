import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// The text field editor (Interactive/TextLine.swift): editing keys, wide characters, paste.
@Suite struct InteractiveTextLineTests {
    @Test("inserts and moves over wide characters as whole characters")
    func wide() {
        var line = TextLine()
        line.insert("李")
        line.insert("雷")
        #expect(line.text == "李雷")
        #expect(line.cursorColumn == 4)
        line.move(by: -1)
        #expect(line.cursorColumn == 2)
        line.insert("小")
        #expect(line.text == "李小雷")
        line.deleteBackward()
        #expect(line.text == "李雷")
        line.deleteForward()
        #expect(line.text == "李")
        line.moveToEnd(false)
        #expect(line.cursor == 0)
        line.moveToEnd(true)
        #expect(line.cursor == 1)
    }

    @Test("a flag typed as two scalars and a combining accent join their characters")
    func joining() {
        var line = TextLine()
        line.insert("🇨")
        line.insert("🇳")
        #expect(line.characters.count == 1)
        #expect(line.cursorColumn == 2)
        line.insert("e")
        line.insert("\u{301}")
        #expect(line.characters.count == 2)
        line.deleteBackward()
        #expect(line.text == "🇨🇳")
    }

    @Test("Ctrl-U deletes before the cursor; paste is one line; maxLength cuts")
    func killPasteLimit() {
        var line = TextLine("abcdef")
        line.move(by: -2)
        line.deleteToStart()
        #expect(line.text == "ef")
        #expect(line.cursor == 0)
        var pasted = TextLine()
        pasted.insert("李雷\r\n韩\t梅\u{7}梅")
        #expect(pasted.text == "李雷 韩 梅梅")
        var limited = TextLine("", maxLength: 3)
        limited.insert("abcdef")
        #expect(limited.text == "abc")
        limited.move(by: -1)
        limited.insert("x")
        #expect(limited.text == "abc")
    }

    @Test("the window keeps the cursor in view and never splits a wide character")
    func window() {
        let line = TextLine("李雷韩梅梅abc")
        let w = line.window(width: 6)
        #expect(DisplayWidth.of(w.text) <= 6)
        #expect(w.cursorColumn <= 5)
        #expect(w.text.hasSuffix("abc"))
        var start = line
        start.moveToEnd(false)
        #expect(start.window(width: 5).text == "李雷")
        #expect(start.window(width: 5).cursorColumn == 0)
    }
}
