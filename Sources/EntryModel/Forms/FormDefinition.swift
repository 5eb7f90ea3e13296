/// A named, ordered list of fields (the order is the navigation order).
///
/// Read from `config/forms/NAME.conf` (``init(ini:)``) or built in code.
package struct FormDefinition: Sendable, Hashable {
    /// The form's name (`registration`).
    package let name: String
    /// The title per locale.
    let titles: [EntryLocale: String]
    /// The fields in navigation order; names are unique.
    package let fields: [FieldDefinition]
    /// 16 lowercase hex digits: FNV-1a (64-bit) of a canonical text of the
    /// definition (not of the file, so comments and layout do not count).
    /// Peers compare it to notice different definitions (Status `forms`);
    /// it detects changes, it is not a security checksum.
    package let definitionHash: String
    /// How the form maps onto storage (see ``makeLayout(fields:)``), built once.
    package let layout: FieldLayout
    /// Position in ``fields`` by field name.
    private let positions: [String: Int]

    /// A form of these fields; the caller guarantees unique field names and
    /// valid references (``init(ini:)`` checks them for files).
    package init(name: String, titles: [EntryLocale: String], fields: [FieldDefinition]) {
        self.name = name
        self.titles = titles
        self.fields = fields
        definitionHash = FormDefinition.fnv1a64Hex(
            FormDefinition.canonicalText(name: name, titles: titles, fields: fields))
        layout = FormDefinition.makeLayout(fields: fields)
        var positions: [String: Int] = [:]
        for (i, f) in fields.enumerated() where positions[f.name] == nil { positions[f.name] = i }
        self.positions = positions
    }

    /// Equal when name, titles and fields are (the rest is derived from them).
    package static func == (a: FormDefinition, b: FormDefinition) -> Bool {
        a.name == b.name && a.titles == b.titles && a.fields == b.fields
    }

    /// Hashes name, titles and fields.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(titles)
        hasher.combine(fields)
    }

    /// The title in `locale`, else the English one, else the name.
    package func title(in locale: EntryLocale) -> String {
        titles[locale] ?? titles[.en] ?? name
    }

    /// The field with this name, or `nil`.
    package func field(named name: String) -> FieldDefinition? {
        positions[name].map { fields[$0] }
    }

    /// One record per property, `key US value RS` (ASCII unit and record
    /// separators, which no value contains), in a fixed order.
    private static func canonicalText(name: String, titles: [EntryLocale: String], fields: [FieldDefinition]) -> String
    {
        var records: [(String, String)] = [("form", name)]
        let localized = { (key: String, map: [EntryLocale: String]) in
            EntryLocale.allCases.compactMap { l in map[l].map { ("\(key).\(l.rawValue)", $0) } }
        }
        records += localized("title", titles)
        for f in fields {
            records += [("field", f.name), ("type", f.type.rawValue)] + localized("label", f.labels)
            records.append(("required", f.required ? "yes" : "no"))
            let optional: [(String, String?)] = [
                ("required-when", f.requiredWhen?.description), ("parent", f.parent),
                ("minute-interval", f.minuteInterval.map(String.init)), ("min", f.min), ("max", f.max),
                ("not-before", f.notBefore), ("max-length", f.maxLength.map(String.init)),
            ]
            records += optional.compactMap { key, value in value.map { (key, $0) } }
            for option in f.options {
                records += [("option", option.value)] + localized("option-label", option.labels)
                records += option.aliases.map { ("option-alias", $0) }
            }
        }
        return records.map { "\($0)\u{1F}\($1)\u{1E}" }.joined()
    }

    /// FNV-1a 64-bit hash of the UTF-8 bytes, as 16 lowercase hex digits.
    private static func fnv1a64Hex(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
