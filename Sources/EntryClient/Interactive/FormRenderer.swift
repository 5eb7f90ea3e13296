import EntryModel
import EntryProtocol

/// What the terminal shows: lines exactly `width` columns wide, and where the
/// cursor goes (`nil`: hidden).
package struct Screen: Sendable, Equatable {
    /// One line per terminal row, top to bottom.
    package var lines: [ScreenLine]
    /// The cursor's row and column (0-based), shown while text is typed.
    package var cursor: (row: Int, column: Int)?

    /// Equal lines and cursor.
    package static func == (a: Screen, b: Screen) -> Bool {
        a.lines == b.lines && a.cursor?.row == b.cursor?.row && a.cursor?.column == b.cursor?.column
    }
}

/// Draws a ``FormEditor`` into a ``Screen`` of a given size, as plain data, so
/// that layout is tested without a terminal.
///
/// Layout, top to bottom: the title; the fields (scrolled to keep the focus in
/// view); the open picker's panel; a message line (status, or the focused
/// field's problem) at the foot; the footer with the keys that work now — disabled ones
/// in parentheses (and dim). Each field line reads `>*! label  value`: `>`
/// the focus, `*` required, `!` a problem.
package struct FormRenderer: Sendable {
    /// The smallest screen drawn: 30 columns, 8 rows.
    static let minimumSize = (width: 30, height: 8)

    /// The screen width in columns.
    package let width: Int
    /// The screen height in rows.
    package let height: Int

    /// A renderer for a `width`×`height` screen.
    package init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Rows a list picker gets on this screen for `editor` (its page size).
    package func listRows(for editor: FormEditor) -> Int {
        max(1, panelHeight(for: editor, listOpen: true) - 1)
    }

    /// The screen for `editor`.
    package func screen(_ editor: FormEditor) -> Screen {
        let w = editor.words
        guard width >= Self.minimumSize.width, height >= Self.minimumSize.height else {
            let note = ScreenLine("\(w.tooSmall) (\(Self.minimumSize.width)×\(Self.minimumSize.height))")
            return Screen(
                lines: (0..<max(1, height)).map {
                    $0 == 0 ? note.fitted(to: max(1, width)) : ScreenLine().fitted(to: max(1, width))
                },
                cursor: nil)
        }
        var lines: [ScreenLine] = []
        var cursor: (row: Int, column: Int)?
        let mode =
            editor.isEditing ? ([w.editing] + [editor.entryID].compactMap { $0 }).joined(separator: " ") : w.newEntry
        lines.append(ScreenLine(DisplayWidth.padded(" \(editor.form.title) · \(mode)", to: width), .title))

        let body = height - 3
        let panel = panelHeight(for: editor, listOpen: false)
        let fieldRows = body - panel
        let (fieldLines, fieldCursor) = fieldArea(editor, rows: fieldRows)
        if let fieldCursor { cursor = (fieldCursor.row + lines.count, fieldCursor.column) }
        lines += fieldLines
        let panelTop = lines.count
        let (panelLines, panelCursor) = panelArea(editor, rows: panel)
        if let panelCursor { cursor = (panelCursor.row + panelTop, panelCursor.column) }
        lines += panelLines
        while lines.count < 1 + body { lines.append(ScreenLine()) }
        lines.append(messageLine(editor))
        lines.append(footer(editor))
        return Screen(lines: lines.map { $0.fitted(to: width) }, cursor: cursor)
    }

    /// Rows of the picker panel (0 when none is open).
    private func panelHeight(for editor: FormEditor, listOpen: Bool) -> Int {
        let body = height - 3
        switch editor.mode {
        case .date: return min(5, body - 1)
        case .list: return min(body - 3, max(6, body - editor.shownIndices.count))
        default: return listOpen ? min(body - 3, max(6, body - editor.shownIndices.count)) : 0
        }
    }

    // MARK: - Fields

    private func fieldArea(_ editor: FormEditor, rows: Int) -> ([ScreenLine], (row: Int, column: Int)?) {
        let shown = editor.shownIndices
        let labelWidth = min(20, editor.form.fields.map { DisplayWidth.of($0.label) }.max() ?? 0)
        let focusAt = shown.firstIndex(of: editor.focus) ?? 0
        let first = max(0, min(focusAt - rows / 2, shown.count - rows))
        var lines: [ScreenLine] = []
        var cursor: (row: Int, column: Int)?
        for index in shown.dropFirst(first).prefix(rows) {
            let field = editor.form.fields[index]
            let focused = index == editor.focus
            let problem = !editor.shownProblems(field).isEmpty
            var line = ScreenLine(focused ? ">" : " ", .accent)
            line.append(editor.isRequired(field) ? "*" : " ", .bold)
            line.append(problem ? "!" : " ", .problem)
            line.append(" ")
            let label = DisplayWidth.padded(DisplayWidth.truncated(field.label, to: max(1, labelWidth)), to: labelWidth)
            line.append(label, focused ? .bold : .plain)
            line.append("  ")
            let valueColumn = 4 + labelWidth + 2
            if focused, editor.mode == .form, let text = editor.textLine {
                let window = text.window(width: max(2, width - valueColumn - 1))
                line.append(window.text, .accent)
                cursor = (lines.count, valueColumn + window.cursorColumn)
            } else {
                let value = editor.value(field.name)
                if value.isEmpty {
                    line.append("(\(editor.words.empty))", .dim)
                } else {
                    line.append(editor.display[field.name] ?? value, focused ? .accent : .plain)
                }
            }
            lines.append(line)
        }
        return (lines, cursor)
    }

    private func messageLine(_ editor: FormEditor) -> ScreenLine {
        if let status = editor.status { return ScreenLine(status, editor.mode == .confirmDiscard ? .bold : .problem) }
        if let problem = editor.shownProblems(editor.focusedField).first {
            return ScreenLine("! " + problem.message, .problem)
        }
        return ScreenLine()
    }

    // MARK: - Footer

    private func footer(_ editor: FormEditor) -> ScreenLine {
        let w = editor.words
        var items: [(keys: String, word: String, enabled: Bool)] = []
        switch editor.mode {
        case .form, .submitting:
            let field = editor.focusedField
            items.append(("↑/S-Tab", w.previous, editor.canGoPrevious))
            items.append(("↓/Tab", w.next, editor.canGoNext))
            if !field.isText { items.append(("Enter/Space", w.choose, true)) }
            items.append(("Ctrl-S", w.done, true))
            items.append(("Esc", w.discard, true))
        case .list:
            items = [("↑↓ PgUp/PgDn Home/End", "", true), ("Enter", w.commit, true), ("Esc", w.cancel, true)]
        case .date:
            items = [
                ("←/→", w.columns, true), ("↑/↓", w.adjust, true), ("0-9", "", true),
                ("Enter", w.commit, true), ("Esc", w.cancel, true),
            ]
        case .confirmDiscard:
            items = [("y", w.discard, true), ("n", w.keepEditing, true)]
        }
        var line = ScreenLine()
        for (k, item) in items.enumerated() {
            if k > 0 { line.append("  ") }
            let text = item.word.isEmpty ? item.keys : "\(item.keys) \(item.word)"
            if item.enabled {
                line.append(item.keys, .bold)
                if !item.word.isEmpty { line.append(" " + item.word) }
            } else {
                line.append("(\(text))", .dim)
            }
        }
        return line
    }
}
