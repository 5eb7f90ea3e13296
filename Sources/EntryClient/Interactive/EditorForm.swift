import EntryModel
import EntryProtocol

/// A form as the interactive editor uses it: the wire `Form` of
/// `io.entryd.Forms.GetForm` (doc/protocol.md), labels already in the locale and
/// `min`/`max` resolved to dates by the daemon.
package struct EditorForm: Sendable, Equatable {
    /// A wire `Field`.
    package struct Field: Sendable, Equatable {
        /// The field name.
        package var name: String
        /// The field type.
        package var type: FieldType
        /// The label in the requested locale.
        package var label: String
        /// Always required.
        package var required: Bool
        /// Required (and, when it names a `choice` field, shown) only when this holds.
        package var requiredWhen: FieldCondition?
        /// The field whose value filters this one's rows (a city's province).
        package var parent: String?
        /// Minutes per step of a datetime field.
        package var minuteInterval: Int?
        /// The earliest value (canonical date or date-time).
        package var min: String?
        /// The latest value (canonical date or date-time).
        package var max: String?
        /// The most characters of a text field.
        package var maxLength: Int?

        /// A field; defaults make an optional field without bounds.
        package init(
            name: String, type: FieldType, label: String? = nil, required: Bool = false,
            requiredWhen: FieldCondition? = nil, parent: String? = nil, minuteInterval: Int? = nil,
            min: String? = nil, max: String? = nil, maxLength: Int? = nil
        ) {
            self.name = name
            self.type = type
            self.label = label ?? name
            self.required = required
            self.requiredWhen = requiredWhen
            self.parent = parent
            self.minuteInterval = minuteInterval
            self.min = min
            self.max = max
            self.maxLength = maxLength
        }

        /// Whether the field is filled from a list of rows (``ListPicker``).
        var isList: Bool { [.country, .province, .city, .choice].contains(type) }
        /// Whether the field is filled with the date wheel (``DateWheel``).
        var isDate: Bool { type == .date || type == .datetime }
        /// Whether the field is typed (``TextLine``).
        var isText: Bool { !isList && !isDate }
    }

    /// The form name.
    package var name: String
    /// The title in the requested locale.
    package var title: String
    /// The fields, in navigation order.
    package var fields: [Field]

    /// A form of `fields`.
    package init(name: String, title: String, fields: [Field]) {
        self.name = name
        self.title = title
        self.fields = fields
    }

    /// Reads a wire `Form` object; fields of an unknown type are read as text.
    /// - Returns: `nil` when `json` has no name or no fields array.
    package init?(json: JSON) {
        guard let name = json["name"]?.stringValue, let fields = json["fields"]?.arrayValue else { return nil }
        self.name = name
        title = json["title"]?.stringValue ?? name
        self.fields = fields.compactMap { f in
            guard let fieldName = f["name"]?.stringValue else { return nil }
            var condition: FieldCondition?
            if let when = f["requiredWhen"]?.stringValue, let eq = when.firstIndex(of: "=") {
                condition = FieldCondition(field: String(when[..<eq]), value: String(when[when.index(after: eq)...]))
            }
            return Field(
                name: fieldName, type: FieldType(rawValue: f["type"]?.stringValue ?? "") ?? .text,
                label: f["label"]?.stringValue, required: f["required"]?.boolValue ?? false,
                requiredWhen: condition, parent: f["parent"]?.stringValue,
                minuteInterval: f["minuteInterval"]?.intValue.map { Int($0) },
                min: f["min"]?.stringValue, max: f["max"]?.stringValue,
                maxLength: f["maxLength"]?.intValue.map { Int($0) })
        }
    }

    /// The field named `name`.
    package func field(_ name: String) -> Field? { fields.first { $0.name == name } }
}

extension OptionRow {
    /// Reads a wire `Option` object; `nil` without a value.
    package init?(json: JSON) {
        guard let value = json["value"]?.stringValue else { return nil }
        self.init(
            value: value, label: json["label"]?.stringValue ?? value, flag: json["flag"]?.stringValue,
            parent: json["parent"]?.stringValue,
            aliases: json["aliases"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }

    /// The row as the form shows a chosen value: `🇨🇳 中国`, `广州市`.
    package var shown: String { flag.map { "\($0) \(label)" } ?? label }
}
