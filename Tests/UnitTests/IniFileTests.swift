import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

// Nested in FormsTests so that `swift test --filter 'Reference|Forms'` runs it.
extension FormsTests {
    /// INI parsing through libinih with line numbers and long lines (Forms/IniFile.swift).
    @Suite struct IniFileTests {
        @Test("sections, items, line numbers, comments and continuation lines")
        func basics() throws {
            let text = """
                ; comment
                top = 1
                [form]
                name = registration ; inline comment
                title=Registration

                [field name]
                # another comment
                label.zh = 姓名
                note = first
                  second ; kept, inih keeps continuation text
                key: colon
                [empty]
                """
            let ini = try IniFile(text: text, path: "t.conf")
            #expect(ini.sections.map(\.name) == ["", "form", "field name", "empty"])
            #expect(ini.sections.map(\.line) == [0, 3, 7, 13])
            #expect(ini.sections[0].items == [IniFile.Item(key: "top", value: "1", line: 2)])
            #expect(
                ini.sections[1].items == [
                    IniFile.Item(key: "name", value: "registration", line: 4),
                    IniFile.Item(key: "title", value: "Registration", line: 5),
                ])
            #expect(
                ini.sections[2].items == [
                    IniFile.Item(key: "label.zh", value: "姓名", line: 9),
                    IniFile.Item(key: "note", value: "first\nsecond ; kept, inih keeps continuation text", line: 10),
                    IniFile.Item(key: "key", value: "colon", line: 12),
                ])
            #expect(ini.sections[3].items.isEmpty)
        }

        @Test("a 600-byte Chinese label parses exactly, with its line number")
        func longChineseLine() throws {
            let label = String(repeating: "中文标签；说明 (a; b) #x ", count: 20)  // 580+ bytes, spaces, ; and #
            let trimmed = label.trimmingCharacters(in: .whitespaces)
            #expect(trimmed.utf8.count > 600)
            let text = "[field name]\ntype = text\nlabel.zh = \(trimmed)\nlabel = Name\n"
            let ini = try IniFile(text: text, path: "long.conf")
            #expect(
                ini.sections[0].items == [
                    IniFile.Item(key: "type", value: "text", line: 2),
                    IniFile.Item(key: "label.zh", value: trimmed, line: 3),
                    IniFile.Item(key: "label", value: "Name", line: 4),
                ])
        }

        @Test("long values split at any byte position still parse exactly", arguments: 0..<12)
        func longValueOffsets(shift: Int) throws {
            let value = String(repeating: "x", count: shift) + String(repeating: "é字🇨🇳;#[ab", count: 40)
            let continuation = String(repeating: "续", count: 90)
            let text = "[s]\nk = \(value) ; comment to drop\n  \(continuation)\nnext = 1\n"
            let ini = try IniFile(text: text, path: "s.conf")
            #expect(ini.sections[0].items.map(\.key) == ["k", "next"])
            #expect(ini.sections[0].items[0].value == value + "\n" + continuation)
            #expect(ini.sections[0].items[1].line == 4)
        }

        @Test(
            "malformed lines are reported with their physical line number",
            arguments: [
                ("[form]\nname = x\nthis line has no equals sign\n", 3),
                ("[form]\n[field x\ntype = text\n", 2),
                ("[s]\nk = \(String(repeating: "长", count: 100))\nbad\n", 3),
                ("[s]\nk = v\u{0}\n", 2),
                (
                    "[s]\nk = \(String(repeating: " x", count: 10))\(String(repeating: " ", count: 300))\(String(repeating: "y", count: 10))\n",
                    2
                ),
            ])
        func errors(text: String, line: Int) {
            #expect(throws: IniError(path: "bad.conf", line: line, message: errorMessage(text))) {
                try IniFile(text: text, path: "bad.conf")
            }
        }

        private func errorMessage(_ text: String) -> String {
            if text.contains("\u{0}") { return "contains a NUL byte" }
            if text.contains("   ") { return "line is too long to split" }
            return "expected '[section]' or 'key = value'"
        }
    }
}
