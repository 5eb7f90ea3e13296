/// Field values rendered for people (the `display` map of doc/protocol.md's `Entry`
/// and of Check).
package enum Display {
    /// Renders every non-empty value of `fields` in `locale`.
    ///
    /// - country: flag and name (`🇨🇳 中国`, `🇨🇳 China`);
    /// - province, city: the name (`广东省` / `Guangdong`, `广州市` / `Guangzhou`);
    ///   a retired code marked so (`莱芜市（已撤销）` / `Laiwu (retired)`), an
    ///   unknown one as it is;
    /// - choice: the option's label;
    /// - phone: libphonenumber's INTERNATIONAL format (`+86 138 0013 8000`),
    ///   whatever the entry's country (doc/design.md "Phone numbers"); a
    ///   stored value it cannot read, as it is;
    /// - email: the domain's A-labels in Unicode (`李雷@例子.中国`,
    ///   ``EmailAddress/display(_:)``);
    /// - others (text, dates, date-times): the canonical value, the same in
    ///   every locale.
    ///
    /// - a field the form does not define (schema drift: a peer's form has it,
    ///   or this node's form file dropped it): its value as it is, so no output
    ///   loses it (``unknown(form:fields:reference:)`` names such fields).
    ///
    /// Also `"region"` for the form's first province field and the city field
    /// below it (see ``region(province:city:locale:reference:)``) when either
    /// has a value; it takes the place of a field named `region`, if any.
    package static func render(
        form: FormDefinition, fields: [String: String], locale: EntryLocale,
        reference: ReferenceData = .shared
    ) -> [String: String] {
        var display: [String: String] = [:]
        display.reserveCapacity(fields.count + 1)
        for field in form.fields {
            guard let value = fields[field.name], !value.isEmpty else { continue }
            switch field.type {
            case .country:
                display[field.name] = reference.countryLabel(alpha2: value, locale: locale) ?? value
            case .province, .city:
                display[field.name] = reference.displayName(forDivisionCode: value, locale: locale)
            case .choice:
                display[field.name] = field.options.first { $0.value == value }?.label(in: locale) ?? value
            case .phone:
                display[field.name] = PhoneNumber.format(value) ?? value
            case .email:
                display[field.name] = EmailAddress.display(value)
            case .text, .date, .datetime:
                display[field.name] = value
            }
        }
        for (name, value) in fields where !value.isEmpty && form.field(named: name) == nil { display[name] = value }
        if let province = form.fields.first(where: { $0.type == .province }) {
            let city = form.fields.first { $0.type == .city && $0.parent == province.name }
            let (p, c) = (fields[province.name], city.flatMap { fields[$0.name] })
            if p != nil || c != nil {
                display["region"] = region(province: p, city: c, locale: locale, reference: reference)
            }
        }
        return display
    }

    /// What this node's form and lists do not know of an entry's `fields`
    /// (schema drift between nodes, doc/design.md "Forms and values"): the
    /// names of fields the form does not define, and the names of its fields
    /// whose value is no row of this node's lists (a choice option, country
    /// or division code the form or reference data does not have; a retired
    /// division code is known). Both sorted; empty values are not looked at.
    /// The wire `Entry` carries them as `unknownFields` and `unknownValues`.
    package static func unknown(
        form: FormDefinition, fields: [String: String],
        reference: ReferenceData = .shared
    ) -> (fields: [String], values: [String]) {
        var names: [String] = []
        var values: [String] = []
        for (name, value) in fields where !value.isEmpty {
            guard let field = form.field(named: name) else {
                names.append(name)
                continue
            }
            let known: Bool =
                switch field.type {
                case .country: reference.country(alpha2: value) != nil
                case .province, .city:
                    reference.division(code: value) != nil || reference.retiredDivision(code: value) != nil
                case .choice: field.options.contains { $0.value == value }
                case .text, .date, .datetime, .phone, .email: true
                }
            if !known { values.append(name) }
        }
        return (names.sorted(), values.sorted())
    }

    /// A province and city together: zh `广东省-广州市`, en `Guangzhou, Guangdong`;
    /// just one of them when the other is `nil` or empty. Names as in
    /// ``ReferenceData/displayName(forDivisionCode:locale:)``.
    package static func region(
        province: String?, city: String?, locale: EntryLocale,
        reference: ReferenceData = .shared
    ) -> String {
        let name = { (code: String?) in
            code.flatMap { $0.isEmpty ? nil : reference.displayName(forDivisionCode: $0, locale: locale) }
        }
        switch (name(province), name(city)) {
        case (let p?, let c?): return locale == .zh ? p + "-" + c : c + ", " + p
        case (let p?, nil): return p
        case (nil, let c?): return c
        case (nil, nil): return ""
        }
    }
}
