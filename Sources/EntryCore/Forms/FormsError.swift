/// A request about forms that names something that does not exist or does not fit.
/// The integrator maps these to the wire errors of doc/protocol.md
/// (`io.entryd.Forms.FormNotFound`, `FieldNotFound`, `InvalidParameter`).
public enum FormsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No form of this name (`FormNotFound (form)`).
    case formNotFound(String)
    /// The form has no such field (`FieldNotFound (form, field)`).
    case fieldNotFound(form: String, field: String)
    /// The field exists but has no option list (text, date, datetime, phone,
    /// email): Options is only for country, province, city and choice fields.
    case notAPickerField(form: String, field: String)
    /// The `parent` given for a city list resolves to no single province.
    case parentNotFound(form: String, field: String, parent: String)

    /// A one-line English description for logs.
    public var description: String {
        switch self {
        case .formNotFound(let form): return "no form '\(form)'"
        case .fieldNotFound(let form, let field): return "form '\(form)' has no field '\(field)'"
        case .notAPickerField(let form, let field): return "field '\(field)' of form '\(form)' has no option list"
        case .parentNotFound(let form, let field, let parent):
            return "parent '\(parent)' of field '\(field)' of form '\(form)' is not a province"
        }
    }
}
