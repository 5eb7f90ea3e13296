import EntryModel
import EntryProtocol

// MARK: - Picker panels

extension FormRenderer {
    /// The open picker's panel, `rows` lines (none when no picker is open).
    func panelArea(_ editor: FormEditor, rows: Int) -> ([ScreenLine], (row: Int, column: Int)?) {
        guard rows > 0 else { return ([], nil) }
        switch editor.mode {
        case .list(let picker): return listPanel(editor, picker, rows: rows)
        case .date(let wheel, let field): return (datePanel(editor, wheel, field: field, rows: rows), nil)
        default: return ([], nil)
        }
    }

    /// `-- 城市 (1/21) -- 搜索: 广州`, then the rows, the highlighted one marked `>`.
    private func listPanel(_ editor: FormEditor, _ picker: ListPicker, rows: Int) -> (
        [ScreenLine], (row: Int, column: Int)?
    ) {
        let w = editor.words
        let label = editor.form.field(picker.field)?.label ?? picker.field
        let position = picker.highlighted.map { "\($0 + 1)/\(picker.rows.count)" } ?? "0/\(picker.rows.count)"
        var header = ScreenLine("-- \(label) (\(position)) -- ", .accent)
        header.append("\(w.search): ", .bold)
        header.append(picker.query)
        let cursor = (row: 0, column: min(width - 1, header.width))
        var lines = [header]
        let listRows = rows - 1
        if picker.loading && picker.rows.isEmpty {
            lines.append(ScreenLine("   " + w.loading, .dim))
        } else if picker.rows.isEmpty {
            lines.append(ScreenLine("   " + w.noRows, .dim))
        } else {
            let valueWidth = min(12, picker.rows.map { DisplayWidth.of($0.value) }.max() ?? 0)
            var top = picker.top
            if let h = picker.highlighted {
                if h < top { top = h }
                if h >= top + listRows { top = h - listRows + 1 }
            }
            for index in picker.rows.indices.dropFirst(top).prefix(listRows) {
                let row = picker.rows[index]
                let chosen = index == picker.highlighted
                var line = ScreenLine(chosen ? " > " : "   ", .accent)
                line.append(DisplayWidth.padded(row.value, to: valueWidth), chosen ? .inverse : .dim)
                line.append("  ")
                line.append(row.shown, chosen ? .inverse : .plain)
                if row.value == picker.earlierValue { line.append("  ✓", .accent) }
                lines.append(line)
            }
        }
        while lines.count < rows { lines.append(ScreenLine()) }
        return (Array(lines.prefix(rows)), cursor)
    }

    /// `-- 生日 --`, the column headings, then the wheel: the values before,
    /// the selected value (its column in brackets), the values after.
    private func datePanel(_ editor: FormEditor, _ wheel: DateWheel, field: String, rows: Int) -> [ScreenLine] {
        let label = editor.form.field(field)?.label ?? field
        var lines = [ScreenLine("-- \(label) -- \(wheel.canonical)", .accent)]
        let columns = wheel.columns
        func cellWidth(_ c: DateWheel.Column) -> Int { c == .year ? 4 : 2 }
        var headings = ScreenLine("   ")
        for c in columns {
            headings.append(DisplayWidth.padded(" " + editor.words.wheel[c.rawValue], to: cellWidth(c) + 3), .dim)
        }
        lines.append(headings)
        for offset in -1...1 {
            var line = ScreenLine(offset == 0 ? " > " : "   ", .accent)
            for c in columns {
                let width = cellWidth(c)
                guard let n = wheel.neighbour(c, offset: offset) else {
                    line.append(String(repeating: " ", count: width + 3))
                    continue
                }
                let digits = PickerDate.pad(n, width)
                if offset == 0 && c == wheel.column {
                    line.append("[" + digits + "]", .inverse)
                    line.append(" ")
                } else {
                    line.append(" " + digits + "  ", offset == 0 ? .bold : .dim)
                }
            }
            lines.append(line)
        }
        while lines.count < rows { lines.append(ScreenLine()) }
        return Array(lines.prefix(rows))
    }
}
