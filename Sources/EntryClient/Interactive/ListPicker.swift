import EntryModel
import EntryProtocol

/// The list picker of a country, province, city or choice field: rows from the
/// daemon's `io.entryd.Forms.Options`, one highlighted, a search query.
///
/// Moving the highlight never changes the field: only ``FormEditor`` commits
/// the highlighted row (Enter), and Esc leaves the earlier value in place.
package struct ListPicker: Sendable, Equatable {
    /// The field the picker belongs to.
    package let field: String
    /// The parent value the rows were asked with (a city's province), or `nil`.
    package let parent: String?
    /// The value the field held when the picker opened ("" when empty).
    let earlierValue: String
    /// The search text typed so far.
    package private(set) var query: String = ""
    /// The rows, in the daemon's order (for a query: exact matches first).
    package private(set) var rows: [OptionRow] = []
    /// Whether rows for the current query are still awaited.
    package private(set) var loading = true
    /// The highlighted row's index, or `nil` when there are no rows.
    package private(set) var highlighted: Int?
    /// The first row shown (the list scrolls to keep the highlight visible).
    package private(set) var top = 0
    /// Rows moved by PgUp/PgDn: the rows the screen shows (≥ 1).
    package var pageSize = 8

    /// A picker for `field` that waits for its rows.
    package init(field: String, parent: String?, earlierValue: String) {
        self.field = field
        self.parent = parent
        self.earlierValue = earlierValue
    }

    /// The request for the current rows.
    package var request: OptionRequest { OptionRequest(field: field, parent: parent, query: query) }

    /// The highlighted row, if any.
    var highlightedRow: OptionRow? { highlighted.map { rows[$0] } }

    /// Takes the daemon's answer to `request`; an answer to an earlier query is
    /// ignored. Highlights the row of the field's current value when the list
    /// has it and no query is typed, else the first row.
    package mutating func receive(_ rows: [OptionRow], for request: OptionRequest) {
        guard request == self.request else { return }
        self.rows = rows
        loading = false
        top = 0
        let current = query.isEmpty ? rows.firstIndex(where: { $0.value == earlierValue }) : nil
        highlighted = rows.isEmpty ? nil : (current ?? 0)
        scrollToHighlight()
    }

    /// Changes the query (typing, Backspace, Ctrl-U); the rows must be asked again.
    mutating func setQuery(_ text: String) {
        query = text
        loading = true
    }

    /// Moves the highlight by `delta` rows, stopping at the ends.
    package mutating func move(by delta: Int) {
        guard let h = highlighted else { return }
        highlighted = min(max(0, h + delta), rows.count - 1)
        scrollToHighlight()
    }

    /// Moves the highlight one page (PgUp: `-1`, PgDn: `1`).
    package mutating func page(_ direction: Int) { move(by: direction * max(1, pageSize)) }

    /// Highlights the first (Home) or last (End) row.
    mutating func jump(last: Bool) {
        guard !rows.isEmpty else { return }
        highlighted = last ? rows.count - 1 : 0
        scrollToHighlight()
    }

    /// Keeps `top` so the highlighted row is among the `pageSize` rows shown.
    mutating func scrollToHighlight() {
        guard let h = highlighted else {
            top = 0
            return
        }
        let size = max(1, pageSize)
        if h < top { top = h }
        if h >= top + size { top = h - size + 1 }
        top = max(0, min(top, max(0, rows.count - size)))
    }
}

/// What the form asks `io.entryd.Forms.Options` for: a field's rows, for a
/// cascading field under `parent`, filtered by `query` ("" for all).
package struct OptionRequest: Sendable, Hashable {
    /// The field name.
    package var field: String
    /// The parent field's value (a city's province code), or `nil` for all rows.
    package var parent: String?
    /// The search text (by value, names, pinyin, initials or aliases).
    package var query: String

    /// A request for `field`'s rows.
    package init(field: String, parent: String? = nil, query: String = "") {
        self.field = field
        self.parent = parent
        self.query = query
    }
}
