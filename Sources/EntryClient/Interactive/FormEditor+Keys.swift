import EntryModel
import EntryProtocol

// MARK: - Keys

extension FormEditor {
    /// Handles one key and returns what the shell must do (see ``Action``).
    package mutating func handle(_ key: Key) -> [Action] {
        switch mode {
        case .form: return handleForm(key)
        case .list(let picker): return handleList(key, picker)
        case .date(let wheel, let field): return handleDate(key, wheel, field: field)
        case .confirmDiscard:
            if key == .text("y") || key == .text("Y") || key == .control("c") { return [.quit] }
            mode = .form
            status = nil
            return []
        case .submitting: return []
        }
    }

    private mutating func handleForm(_ key: Key) -> [Action] {
        let field = focusedField
        status = nil
        switch key {
        case .tab, .down:
            moveFocus(1)
            return []
        case .backTab, .up:
            moveFocus(-1)
            return []
        case .control("s"): return submit()
        case .escape, .control("c"):
            if hasChanges {
                mode = .confirmDiscard
                status = words.discardPrompt
                return []
            }
            return [.quit]
        case .enter:
            // One rule on every field, the last one too: Enter opens a picker field's
            // picker and moves on from a text field; only Done (Ctrl-S) submits, so
            // Enter on the last picker never sends the form (and the digits typed
            // next to the shell).
            if field.isText {
                moveFocus(1)
                return []
            }
            return openPicker()
        case .text(" ") where !field.isText: return openPicker()
        case .text(let s) where field.isList: return openPicker(query: s)
        case .paste(let s) where field.isList: return openPicker(query: s)
        case .text(let s) where field.isDate:
            guard Int(s) != nil else { return [] }
            let opened = openPicker()
            return opened + handle(key)
        case .backspace where !field.isText, .delete where !field.isText:
            return commit(field.name, value: "", shown: "")
        default:
            guard field.isText, var line = textLine else { return [] }
            let before = line
            switch key {
            case .text(let s), .paste(let s): line.insert(s)
            case .backspace: line.deleteBackward()
            case .delete, .control("d"): line.deleteForward()
            case .control("u"): line.deleteToStart()
            case .left, .control("b"): line.move(by: -1)
            case .right, .control("f"): line.move(by: 1)
            case .home, .control("a"): line.moveToEnd(false)
            case .end, .control("e"): line.moveToEnd(true)
            default: return []
            }
            textLine = line
            guard line.text != before.text else { return [] }
            values[field.name] = line.text
            display[field.name] = line.text
            return [.check(checkedValues)]
        }
    }

    private mutating func handleList(_ key: Key, _ picker: ListPicker) -> [Action] {
        var picker = picker
        var query: String?
        switch key {
        case .up: picker.move(by: -1)
        case .down: picker.move(by: 1)
        case .pageUp: picker.page(-1)
        case .pageDown: picker.page(1)
        case .home: picker.jump(last: false)
        case .end: picker.jump(last: true)
        case .escape, .control("c"):
            mode = .form  // the field still holds picker.earlierValue: nothing to restore
            return []
        case .enter, .control("s"):
            guard !picker.loading, let row = picker.highlightedRow else { return [] }
            mode = .form
            let actions = commit(picker.field, value: row.value, shown: row.shown, parentValue: row.parent)
            if key == .control("s") { return actions + submit() }
            moveFocus(1)
            return actions
        case .text(let s), .paste(let s): query = picker.query + TextLine(s).text
        case .backspace: query = String(picker.query.dropLast())
        case .control("u"): query = ""
        default: break
        }
        if let query, query != picker.query {
            picker.setQuery(query)
            mode = .list(picker)
            return [.fetchOptions(picker.request)]
        }
        mode = .list(picker)
        return []
    }

    private mutating func handleDate(_ key: Key, _ wheel: DateWheel, field: String) -> [Action] {
        var wheel = wheel
        switch key {
        case .left, .backTab: wheel.moveColumn(by: -1)
        case .right, .tab: wheel.moveColumn(by: 1)
        case .up: wheel.turn(by: -1)
        case .down: wheel.turn(by: 1)
        case .pageUp: wheel.turn(by: -10)
        case .pageDown: wheel.turn(by: 10)
        case .home: wheel.jump(last: false)
        case .end: wheel.jump(last: true)
        case .text(let s) where s.count == 1 && s.first!.isASCII && s.first!.isNumber: wheel.type(digit: Int(s)!)
        case .escape, .control("c"):
            mode = .form
            return []
        case .enter, .control("s"):
            mode = .form
            let actions = commit(field, value: wheel.canonical, shown: wheel.canonical)
            if key == .control("s") { return actions + submit() }
            moveFocus(1)
            return actions
        default: break
        }
        mode = .date(wheel, field: field)
        return []
    }

    // MARK: - Pickers

    /// Opens the focused field's picker (list or date wheel), optionally with a first query.
    mutating func openPicker(query: String? = nil) -> [Action] {
        let field = focusedField
        if field.isDate {
            let bound = { (text: String?) in text.flatMap { PickerDate(canonical: $0) } }
            let initial = PickerDate(canonical: value(field.name)) ?? now
            mode = .date(
                DateWheel(
                    initial: initial, withTime: field.type == .datetime, minuteInterval: field.minuteInterval,
                    minimum: bound(field.min), maximum: bound(field.max)), field: field.name)
            return []
        }
        guard field.isList else { return [] }
        let parent = field.parent.map(value).flatMap { $0.isEmpty ? nil : $0 }
        var picker = ListPicker(field: field.name, parent: parent, earlierValue: value(field.name))
        picker.pageSize = pageSize
        if let query { picker.setQuery(TextLine(query).text) }
        mode = .list(picker)
        return [.fetchOptions(picker.request)]
    }

    /// Sets `name` to `value`. A changed value resets the fields whose parent
    /// `name` is (province → city); a row picked from an unfiltered cascading
    /// list fills its parent field when that is empty (city → province).
    mutating func commit(_ name: String, value newValue: String, shown: String, parentValue: String? = nil) -> [Action]
    {
        touched.insert(name)
        if let field = form.field(name), let parentName = field.parent, value(parentName).isEmpty,
            let parentValue, !parentValue.isEmpty
        {
            values[parentName] = parentValue
            display[parentName] = nil
        }
        guard value(name) != newValue else { return [] }
        values[name] = newValue
        display[name] = shown.isEmpty ? nil : shown
        for child in form.fields where child.parent == name && !value(child.name).isEmpty {
            values[child.name] = ""
            display[child.name] = nil
        }
        return [.check(checkedValues)]
    }

    /// Done: submits what ``submission`` holds.
    mutating func submit() -> [Action] {
        leaveFocus()
        submitAttempted = true
        mode = .submitting
        status = words.submitting
        return [.submit(submission)]
    }
}
