/// The kind of a validation problem, as named on the wire (doc/protocol.md, `Problem.code`).
package enum ProblemCode: String, Sendable, CaseIterable, Codable {
    /// A required field is missing or empty.
    case required
    /// The field is not part of the form.
    case unknownField = "unknown-field"
    /// The text cannot be read as the field's type (e.g. `1990-13-45` for a date).
    case invalidFormat = "invalid-format"
    /// The value is well-formed but not a row of the field's picker list.
    case notInList = "not-in-list"
    /// The value lies outside the field's `min`/`max`.
    case outOfRange = "out-of-range"
    /// A date-time's minutes are not a multiple of the field's `minute-interval`.
    case notOnInterval = "not-on-interval"
    /// A cascading value (city) does not belong to its parent (province).
    case parentMismatch = "parent-mismatch"
    /// The value is longer than the field's `max-length`.
    case tooLong = "too-long"
    /// The input matches more than one row; `suggestions` lists them.
    case ambiguous
    /// An Import row's id names an entry that exists with other values or is
    /// deleted (field `id`; added to the contract's list).
    case exists
    /// An Import row's id names an entry erased on this node, which never comes
    /// back (field `id`; added to the contract's list after `exists`).
    case erased
}

/// One thing wrong with a submitted value (doc/protocol.md, `io.entryd.Entries.Problem`).
package struct Problem: Sendable, Equatable, Codable {
    /// The field name, or `""` for the whole entry.
    package var field: String
    /// What kind of problem it is (clients branch on this, not on `message`).
    package var code: ProblemCode
    /// One sentence in the requested locale, naming the field and what to do.
    package var message: String
    /// Canonical values the input may have meant (may be empty).
    package var suggestions: [String]

    /// A problem with every member given; see the properties.
    package init(field: String, code: ProblemCode, message: String, suggestions: [String] = []) {
        self.field = field
        self.code = code
        self.message = message
        self.suggestions = suggestions
    }
}
