import EntryModel
import EntryProtocol

// MARK: - The daemon's answers

extension FormEditor {
    /// Takes the rows `io.entryd.Forms.Options` returned for `request`; rows
    /// for a picker that has closed, or for an older query, are ignored.
    package mutating func receive(_ rows: [OptionRow], for request: OptionRequest) {
        guard case .list(var picker) = mode else { return }
        picker.receive(rows, for: request)
        mode = .list(picker)
    }

    /// Takes the answer of `io.entryd.Forms.Check` for the current values: its
    /// problems replace the earlier ones, and its display values are shown
    /// for list fields (`🇨🇳 中国`, `广东省`).
    package mutating func receiveCheck(display checked: [String: String], problems: [Problem]) {
        self.problems = problems
        learn(problems)
        for field in form.fields where field.isList {
            if let shown = checked[field.name], !shown.isEmpty, !value(field.name).isEmpty {
                display[field.name] = shown
            }
        }
    }

    /// The daemon refused the submission with `ValidationFailed`: back to the
    /// form, the problems marked, the focus on the first shown field with one.
    package mutating func submitFailed(problems: [Problem]) {
        self.problems = problems
        learn(problems)
        mode = .form
        submitAttempted = true
        status = "\(problems.count) \(words.problems)"
        let names = Set(problems.map(\.field))
        if let first = shownIndices.first(where: { names.contains(form.fields[$0].name) }), first != focus {
            leaveFocus()
            focus = first
            enterFocus()
        }
    }

    /// The submission failed for another reason (the entry changed meanwhile,
    /// the daemon went away): back to the form with `message` in the status line.
    package mutating func submitFailed(message: String) {
        mode = .form
        status = message
    }

    /// Updates ``learnedRequired`` for the empty fields from `problems`.
    private mutating func learn(_ problems: [Problem]) {
        for field in form.fields where value(field.name).isEmpty {
            if problems.contains(where: { $0.field == field.name && $0.code == .required }) {
                learnedRequired.insert(field.name)
            } else {
                learnedRequired.remove(field.name)
            }
        }
    }

    /// Shows `message` in the status line (e.g. a Check or Options call failed).
    package mutating func show(message: String) {
        status = message
    }
}
