import EntryModel
import EntryProtocol

/// The interactive form as a state machine: fields, values, focus, the open
/// picker and the daemon's problems. No terminal, no socket: ``handle(_:)``
/// takes a ``Key`` and returns the ``Action``s the shell must carry out
/// (ask the daemon, submit, quit); the shell hands the daemon's answers back
/// through ``receive(_:for:)``, ``receiveCheck(display:problems:)`` and
/// ``submitFailed(problems:)``. Drawing is ``FormRenderer``'s.
///
/// The behaviours follow the picker designs (doc/design.md, first table):
/// - navigation in field order, previous disabled on the first shown field
///   and next on the last; Enter on the last field or Ctrl-S submits;
/// - a list or date field opens its picker with Enter or Space; opening an
///   empty field highlights the first row (today for dates) without committing;
///   Enter commits, Esc restores the earlier value;
/// - committing a field resets the fields whose `parent` it is (province → city);
/// - a field whose `requiredWhen` names a `choice` field is shown only while
///   the condition holds (contact_method=phone shows phone, hides email);
///   other conditions (province when country=CN) only make the field required.
package struct FormEditor: Sendable {
    /// What the shell must do after a key.
    package enum Action: Sendable, Equatable {
        /// Ask `io.entryd.Forms.Check` about these values, then ``receiveCheck(display:problems:)``.
        case check([String: String])
        /// Ask `io.entryd.Forms.Options`, then ``receive(_:for:)``.
        case fetchOptions(OptionRequest)
        /// Store: `Entries.Add` of these fields, or `Entries.Update` (with ifVersion)
        /// when editing; an empty map when editing changed nothing.
        case submit([String: String])
        /// Leave without storing (the person chose to discard).
        case quit
    }

    /// What has the keyboard.
    package enum Mode: Sendable, Equatable {
        /// The field list (a focused text field takes typing).
        case form
        /// A list picker is open.
        case list(ListPicker)
        /// The date wheel of `field` is open.
        case date(DateWheel, field: String)
        /// "Discard your changes?" is asked.
        case confirmDiscard
        /// A submission is with the daemon.
        case submitting
    }

    /// The form.
    package let form: EditorForm
    /// The editor's own words, in the form's locale.
    package let words: EditorWords
    /// Whether an existing entry is edited (submit is an Update).
    let isEditing: Bool
    /// The edited entry's id, shown in the title (`nil` for a new entry).
    package let entryID: String?
    /// The current values by field name ("" or missing: empty). Hidden fields keep theirs.
    package internal(set) var values: [String: String]
    /// The values when the editor opened.
    package let original: [String: String]
    /// Values as shown (`🇨🇳 中国`), from picked rows and the daemon's Check.
    package internal(set) var display: [String: String]
    /// The focused field's index in `form.fields` (always a shown field).
    package internal(set) var focus = 0
    /// What has the keyboard.
    package internal(set) var mode: Mode = .form
    /// The line editor of the focused text field, `nil` on other fields.
    package internal(set) var textLine: TextLine?
    /// The daemon's problems with the current values (from Check or a refused submit).
    package internal(set) var problems: [Problem] = []
    /// Fields left at least once or committed: their "required" problems show.
    package internal(set) var touched: Set<String> = []
    /// Fields the daemon's Check last reported missing ("required") while empty;
    /// kept once they are filled, so the marker does not vanish with the problem.
    package internal(set) var learnedRequired: Set<String> = []
    /// Whether Done was pressed once: every problem shows from then on.
    package internal(set) var submitAttempted = false
    /// A one-line message for the status line (a failure, the discard question).
    package internal(set) var status: String?
    /// "Now" for empty date pickers: today (and the time, for date-times).
    package let now: PickerDate
    /// Rows a list picker moves on PgUp/PgDn; the shell sets it from the layout.
    package var pageSize = 8 {
        didSet {
            if case .list(var picker) = mode {
                picker.pageSize = pageSize
                picker.scrollToHighlight()
                mode = .list(picker)
            }
        }
    }

    /// An editor of `form`, focused on its first shown field.
    ///
    /// - Parameters:
    ///   - values: the entry's canonical values when editing; empty for a new entry.
    ///   - display: the entry's display values (`Entry.display`), if known.
    ///   - editing: whether Done updates an existing entry.
    ///   - entryID: that entry's id, for the title.
    ///   - locale: the language of the editor's own words.
    ///   - now: today's date and the time, local wall clock.
    package init(
        form: EditorForm, values: [String: String] = [:], display: [String: String] = [:],
        editing: Bool = false, entryID: String? = nil, locale: EntryLocale = .zh, now: PickerDate
    ) {
        self.form = form
        self.values = values
        self.original = values
        self.display = display
        self.isEditing = editing
        self.entryID = entryID
        self.words = EditorWords.for(locale)
        self.now = now
        touched = Set(values.filter { !$0.value.isEmpty }.keys)
        focus = shownIndices.first ?? 0
        enterFocus()
    }

    /// The first actions: check the initial values.
    package func start() -> [Action] { [.check(checkedValues)] }

    // MARK: - Shown and required

    /// Whether `field` is shown: a field required when another has a value
    /// (`required-when`: the phone for contact_method=phone, the province for
    /// country=CN) is shown only while it has that value, and a field below a
    /// hidden one (`parent`: the city) is hidden with it; every other field is
    /// shown. Hidden fields are cleared on save, as the validator clears them.
    func isShown(_ field: EditorForm.Field) -> Bool {
        if let parent = field.parent.flatMap(form.field), !isShown(parent) { return false }
        guard let when = field.requiredWhen else { return true }
        return when.holds(in: values)
    }

    /// Indices of the shown fields, in order.
    var shownIndices: [Int] { form.fields.indices.filter { isShown(form.fields[$0]) } }

    /// Whether `field` must be filled now: always-required, its condition holds,
    /// a city whose province has cities (the validator's rule, from the same
    /// reference data, so a filled city in `edit` is marked too), or the
    /// daemon's Check says it is missing.
    func isRequired(_ field: EditorForm.Field) -> Bool {
        field.required || (field.requiredWhen?.holds(in: values) ?? false)
            || learnedRequired.contains(field.name)
            || (field.type == .city
                && field.parent.flatMap { values[$0] }.map {
                    !$0.isEmpty && !ReferenceData.shared.cities(ofProvince: $0).isEmpty
                } ?? false)
    }

    /// The problems to show for `field`: all once Done was pressed; before,
    /// "required" only for fields already left or committed.
    func shownProblems(_ field: EditorForm.Field) -> [Problem] {
        problems.filter { p in
            p.field == field.name && (p.code != .required || submitAttempted || touched.contains(field.name))
        }
    }

    /// The focused field.
    var focusedField: EditorForm.Field { form.fields[focus] }
    /// Whether "previous" is enabled (the focus is not on the first shown field).
    var canGoPrevious: Bool { shownIndices.first.map { focus > $0 } ?? false }
    /// Whether "next" is enabled (the focus is not on the last shown field).
    var canGoNext: Bool { shownIndices.last.map { focus < $0 } ?? false }

    /// The value of `name`, "" when empty.
    package func value(_ name: String) -> String { values[name] ?? "" }

    // MARK: - What is sent

    /// The values Check is asked about: the shown, non-empty ones.
    var checkedValues: [String: String] {
        var fields: [String: String] = [:]
        for field in form.fields where isShown(field) && !value(field.name).isEmpty {
            fields[field.name] = value(field.name)
        }
        return fields
    }

    /// What Done stores. New entry: the shown, non-empty values. Editing: the
    /// fields whose value changed, a hidden field that had a value as "" (cleared).
    var submission: [String: String] {
        guard isEditing else { return checkedValues }
        var changes: [String: String] = [:]
        for field in form.fields {
            let now = isShown(field) ? value(field.name) : ""
            if now != (original[field.name] ?? "") { changes[field.name] = now }
        }
        return changes
    }

    /// Whether discarding would lose something.
    var hasChanges: Bool { isEditing ? !submission.isEmpty : !checkedValues.isEmpty }

    // MARK: - Focus

    /// Moves the focus to the next (`1`) or previous (`-1`) shown field; does
    /// nothing at the ends.
    mutating func moveFocus(_ direction: Int) {
        let shown = shownIndices
        guard let at = shown.firstIndex(of: focus) else {
            focus = shown.first ?? 0
            enterFocus()
            return
        }
        let target = at + direction
        guard shown.indices.contains(target) else { return }
        leaveFocus()
        focus = shown[target]
        enterFocus()
    }

    mutating func leaveFocus() {
        touched.insert(focusedField.name)
    }

    mutating func enterFocus() {
        let field = focusedField
        textLine = field.isText ? TextLine(value(field.name), maxLength: field.maxLength) : nil
    }
}
