import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// Aligned tables (Client/TableRenderer.swift).
@Suite struct ClientTableRendererTests {
    static let rows = [
        ["0193a5e2-7c4b-7def-8a12-3456789abcde", "李雷", "🇨🇳 中国", "广东省-广州市", "+8613800138000"],
        ["2", "Jose\u{301} Garcí\u{301}a", "🇪🇸 西班牙", "", "jose@example.com"],
        ["3", "Ann", "🇺🇸 United States", "", ""],
        ["4", "韩梅梅", "🇭🇰 中国香港", "香港", ""],
    ]

    @Test("every column of a mixed Chinese/emoji/ASCII table starts at the same display offset; no trailing blanks")
    func sameWidth() {
        let titles = ["ID", "姓名", "国家/地区", "省市", "联系方式"]
        let lines = TableRenderer(columns: titles.map { TableColumn($0) }).render(Self.rows)
        #expect(lines.count == 5)
        #expect(lines.allSatisfy { $0.last != " " })
        // Every cell starts at its column's display offset: the widths of the
        // widest cells before it plus two spaces each.
        let table = [titles] + Self.rows
        var offset = 0
        for k in titles.indices {
            for (line, cells) in zip(lines, table) {
                #expect(Self.text(line, fromColumn: offset).hasPrefix(cells[k]), "column \(k) of '\(line)'")
            }
            offset += table.map { DisplayWidth.of($0[k]) }.max()! + 2
        }
    }

    /// The part of `line` that starts `column` display columns in.
    static func text(_ line: String, fromColumn column: Int) -> Substring {
        var used = 0
        var index = line.startIndex
        while used < column, index < line.endIndex {
            used += DisplayWidth.of(String(line[index]))
            index = line.index(after: index)
        }
        return line[index...]
    }

    @Test("bounds cells, aligns right, fills short rows and sanitizes")
    func options() {
        let table = TableRenderer(columns: [
            TableColumn("n", alignment: .right), TableColumn("name", maxWidth: 5), TableColumn("z"),
        ])
        let lines = table.render([["7", "李雷韩梅梅"], ["12", "a\nb", "q"]])
        #expect(lines == [" n  name   z", " 7  李雷…", "12  a b    q"])
    }

    @Test("renders text with a newline per line and can leave out the header")
    func text() {
        let table = TableRenderer(columns: [TableColumn("h")], showsHeader: false)
        #expect(table.renderText([["x"], ["李"]]) == "x\n李\n")
        #expect(table.renderText([]) == "")
    }
}
