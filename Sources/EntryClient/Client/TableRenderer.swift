import EntryModel
import EntryProtocol

/// One column of a ``TableRenderer``.
package struct TableColumn: Sendable, Equatable {
    /// The header text.
    package var title: String
    /// How cells sit in the column; default left.
    var alignment: DisplayWidth.Alignment
    /// The widest a cell may be, in terminal columns; longer cells are cut with
    /// `…`. `nil` (the default) means no bound.
    package var maxWidth: Int?

    /// A column titled `title`; `maxWidth` (terminal columns, ≥ 1) bounds its cells.
    package init(_ title: String, alignment: DisplayWidth.Alignment = .left, maxWidth: Int? = nil) {
        precondition(maxWidth.map { $0 >= 1 } ?? true, "maxWidth is at least 1 column")
        self.title = title
        self.alignment = alignment
        self.maxWidth = maxWidth
    }
}

/// Lays out rows of text as aligned columns for a terminal, measuring with
/// ``DisplayWidth`` so that Chinese characters and flag emoji line up.
///
/// Output shape: a header line of titles, then one line per row; cells are
/// padded to their column's widest cell (header included) and separated by
/// ``separator``. Every cell is padded, the last one too, so every line of a
/// table has the same display width. Cells are passed through
/// ``DisplayWidth/sanitized(_:)``, so values cannot break the layout or send
/// escape sequences to the terminal.
///
/// ```
/// ID  姓名  国家
/// 1   李雷  🇨🇳 中国
/// ```
package struct TableRenderer: Sendable {
    /// The columns, left to right (at least one).
    package var columns: [TableColumn]
    /// Text between two cells; default two spaces.
    package var separator: String
    /// Whether the first line is the titles; default true.
    var showsHeader: Bool

    /// A table of `columns`; `separator` goes between cells (default two spaces).
    package init(columns: [TableColumn], separator: String = "  ", showsHeader: Bool = true) {
        precondition(!columns.isEmpty, "a table has at least one column")
        self.columns = columns
        self.separator = separator
        self.showsHeader = showsHeader
    }

    /// The table's lines, without line terminators or trailing spaces.
    ///
    /// - Parameter rows: one array of cells per row; a row with fewer cells than
    ///   there are columns is filled with empty cells. More cells than columns
    ///   is a programmer error.
    package func render(_ rows: [[String]]) -> [String] {
        var cells: [[String]] = []
        cells.reserveCapacity(rows.count + 1)
        if showsHeader { cells.append(columns.map { cell($0.title, in: $0) }) }
        for row in rows {
            precondition(row.count <= columns.count, "a row has more cells than the table has columns")
            var line = zip(row, columns).map { cell($0, in: $1) }
            line += Array(repeating: "", count: columns.count - row.count)
            cells.append(line)
        }
        var widths = [Int](repeating: 0, count: columns.count)
        for line in cells {
            for (k, text) in line.enumerated() { widths[k] = max(widths[k], DisplayWidth.of(text)) }
        }
        return cells.map { line in
            var text = line.enumerated().map { k, text in
                DisplayWidth.padded(text, to: widths[k], alignment: columns[k].alignment)
            }.joined(separator: separator)
            // No trailing blanks: padding only lines up the columns after a cell.
            while text.last == " " { text.removeLast() }
            return text
        }
    }

    /// The table as one string, each line ended by `\n` (empty for no lines).
    func renderText(_ rows: [[String]]) -> String {
        render(rows).map { $0 + "\n" }.joined()
    }

    private func cell(_ text: String, in column: TableColumn) -> String {
        let clean = DisplayWidth.sanitized(text)
        guard let limit = column.maxWidth else { return clean }
        return DisplayWidth.truncated(clean, to: limit)
    }
}
