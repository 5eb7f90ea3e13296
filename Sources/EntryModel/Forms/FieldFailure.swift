/// Why a field's value was refused: the wire code, the reason (which picks the
/// message) and the canonical values the input may have meant.
package struct FieldFailure: Error, Sendable {
    var code: ProblemCode
    var reason: ProblemReason
    var suggestions: [String] = []

    /// The wire problem for `field`, with the message in `locale`.
    func problem(field: FieldDefinition, locale: EntryLocale) -> Problem {
        Problem(
            field: field.name, code: code, message: reason.message(label: field.label(in: locale), locale: locale),
            suggestions: suggestions)
    }
}
