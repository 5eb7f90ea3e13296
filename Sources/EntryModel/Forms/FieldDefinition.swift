/// The type of a form field: how its input is parsed and what its canonical
/// value looks like (doc/protocol.md, `io.entryd.Forms.FieldType`; doc/design.md,
/// "Forms and values").
package enum FieldType: String, Sendable, CaseIterable, Codable {
    /// Free text: NFC-normalised, trimmed, no control characters.
    case text
    /// A calendar date, `YYYY-MM-DD`.
    case date
    /// A wall-clock date and time, `YYYY-MM-DD HH:mm`, never zone-converted.
    case datetime
    /// ISO 3166-1 alpha-2 (`CN`).
    case country
    /// GB/T 2260 province code (`440000`).
    case province
    /// GB/T 2260 city code (`440100`), belonging to its parent province field.
    case city
    /// One of the field's option values.
    case choice
    /// An E.164 telephone number (`+8613800138000`), valid by libphonenumber.
    case phone
    /// An e-mail address (RFC 5321/5322 shape), its domain in IDNA2008 A-labels (lower case).
    case email
}

/// A condition on another field's canonical value, written `field=value`
/// (`contact_method=phone`).
package struct FieldCondition: Sendable, Hashable, CustomStringConvertible {
    /// The field whose value is tested.
    package var field: String
    /// The canonical value that makes the condition true.
    package var value: String

    /// The condition `field=value`.
    package init(field: String, value: String) {
        self.field = field
        self.value = value
    }

    /// `field=value`, as in form files and on the wire (`Field.requiredWhen`).
    package var description: String { "\(field)=\(value)" }

    /// Whether `fields` (canonical values by field name) satisfy the condition.
    package func holds(in fields: [String: String]) -> Bool {
        fields[field] == value
    }
}

/// One option of a `choice` field.
package struct ChoiceOption: Sendable, Hashable {
    /// The canonical value (`phone`).
    package var value: String
    /// The label per locale (`Phone`, `电话`).
    package var labels: [EntryLocale: String]
    /// Other words, in any language, that select this option as input and in
    /// search (`手机`, `mobile`, `tel`; the form file's `option.VALUE.aliases`);
    /// never shown as its label.
    package var aliases: [String]

    /// An option with its labels (missing locales fall back, see ``label(in:)``)
    /// and the other words that select it.
    package init(value: String, labels: [EntryLocale: String], aliases: [String] = []) {
        self.value = value
        self.labels = labels
        self.aliases = aliases
    }

    /// Every text that selects this option as input: its value, its labels
    /// in every locale, its aliases.
    var names: [String] {
        [value] + labels.values.sorted() + aliases
    }

    /// The label in `locale`, else the English one, else the value.
    package func label(in locale: EntryLocale) -> String {
        labels[locale] ?? labels[.en] ?? value
    }
}

/// A field of a form, as a form file's `[field NAME]` section defines it
/// (the file format is documented in config/forms/registration.conf).
///
/// A value type whose members live in one shared box until a copy is changed
/// (copy on write): validation and display copy a form's fields about 70
/// times per Add, and a copy is then one reference count instead of one per
/// member (about 60 k instructions per Add before, by callgrind).
package struct FieldDefinition: Sendable, Hashable {
    /// The members, compared and hashed as the value is (every one of them).
    private struct Members: Sendable, Hashable {
        var name: String
        var type: FieldType
        var labels: [EntryLocale: String]
        var required: Bool
        var requiredWhen: FieldCondition?
        var parent: String?
        var minuteInterval: Int?
        var min: String?
        var max: String?
        var notBefore: String?
        var maxLength: Int?
        var options: [ChoiceOption]
        var headerAliases: [EntryLocale: [String]]
        var phoneTypes: Set<PhoneNumberType>?
    }

    /// The members' box, shared by copies; never changed: a change makes a new one.
    private final class Box: Sendable {
        let members: Members
        init(_ members: Members) { self.members = members }
    }

    private var box: Box

    /// The members; a change puts them in a new box (values sharing the old one keep it).
    private var members: Members {
        get { box.members }
        set { box = Box(newValue) }
    }

    /// The field name: a lower-case letter, then lower-case letters, digits or `_`.
    package var name: String {
        get { box.members.name }
        set { members.name = newValue }
    }
    /// How input is parsed and what the canonical value looks like.
    package var type: FieldType {
        get { box.members.type }
        set { members.type = newValue }
    }
    /// The label per locale.
    package var labels: [EntryLocale: String] {
        get { box.members.labels }
        set { members.labels = newValue }
    }
    /// Always required.
    package var required: Bool {
        get { box.members.required }
        set { members.required = newValue }
    }
    /// Required when this condition holds (and ``required`` is false).
    package var requiredWhen: FieldCondition? {
        get { box.members.requiredWhen }
        set { members.requiredWhen = newValue }
    }
    /// For `city` fields: the `province` field the city must belong to.
    package var parent: String? {
        get { box.members.parent }
        set { members.parent = newValue }
    }
    /// For `datetime` fields: minutes must be a multiple of this (a divisor of 60).
    package var minuteInterval: Int? {
        get { box.members.minuteInterval }
        set { members.minuteInterval = newValue }
    }
    /// Inclusive lower bound: `YYYY-MM-DD` or `today` for dates, `YYYY-MM-DD HH:mm` for date-times.
    package var min: String? {
        get { box.members.min }
        set { members.min = newValue }
    }
    /// Inclusive upper bound, as ``min``.
    package var max: String? {
        get { box.members.max }
        set { members.max = newValue }
    }
    /// For `datetime` fields: `now` when a new value may not lie in the past
    /// (the form file's `not-before = now`): on Add, and on Update when the
    /// value changes, it must not be before now in UTC−12, the zone that
    /// reaches each moment last, since a date-time carries no zone. `nil`: no such rule.
    package var notBefore: String? {
        get { box.members.notBefore }
        set { members.notBefore = newValue }
    }
    /// For `text` fields: the most characters (grapheme clusters) allowed.
    package var maxLength: Int? {
        get { box.members.maxLength }
        set { members.maxLength = newValue }
    }
    /// For `choice` fields: the options, in list order.
    package var options: [ChoiceOption] {
        get { box.members.options }
        set { members.options = newValue }
    }
    /// Other column headers that name this field in an import, by the
    /// language they are in (the form file's `aliases.zh`, `aliases.en`):
    /// a spreadsheet's `电话` or `手机` for the field `phone`. They do not
    /// change what a value means, so they are no part of the form's version.
    package var headerAliases: [EntryLocale: [String]] {
        get { box.members.headerAliases }
        set { members.headerAliases = newValue }
    }
    /// For `phone` fields: the number types taken (`phone-types`); `nil` for any valid number.
    package var phoneTypes: Set<PhoneNumberType>? {
        get { box.members.phoneTypes }
        set { members.phoneTypes = newValue }
    }

    /// A field; the defaults make an optional field without bounds. References
    /// (`parent`, `requiredWhen`) are not checked here; ``FormDefinition/init(ini:)`` checks them in files.
    package init(
        name: String, type: FieldType, labels: [EntryLocale: String] = [:], required: Bool = false,
        requiredWhen: FieldCondition? = nil, parent: String? = nil, minuteInterval: Int? = nil,
        min: String? = nil, max: String? = nil, maxLength: Int? = nil, options: [ChoiceOption] = [],
        phoneTypes: Set<PhoneNumberType>? = nil
    ) {
        box = Box(
            Members(
                name: name, type: type, labels: labels, required: required, requiredWhen: requiredWhen,
                parent: parent, minuteInterval: minuteInterval, min: min, max: max, notBefore: nil,
                maxLength: maxLength,
                options: options, headerAliases: [:], phoneTypes: phoneTypes))
    }

    /// Equal when every member is, as the synthesized `==` of the members says.
    package static func == (a: FieldDefinition, b: FieldDefinition) -> Bool {
        a.box === b.box || a.box.members == b.box.members
    }

    /// Hashes every member that ``==`` compares.
    package func hash(into hasher: inout Hasher) { hasher.combine(box.members) }

    /// The label in `locale`, else the English one, else the field name.
    package func label(in locale: EntryLocale) -> String {
        labels[locale] ?? labels[.en] ?? name
    }
}
