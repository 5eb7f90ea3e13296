/// A picker row (doc/protocol.md, `io.entryd.Forms.Option`).
package struct OptionRow: Sendable, Equatable {
    /// The canonical value (`CN`, `440000`, `440100`, `phone`).
    package var value: String
    /// The name in the requested locale.
    package var label: String
    /// The flag emoji, for countries only.
    package var flag: String?
    /// The parent value, for cities (their province code).
    package var parent: String?
    /// Other inputs that select this row: codes, the name in the other locale,
    /// short name, pinyin, aliases, former names.
    package var aliases: [String]

    /// A row; `flag` and `parent` only where they apply.
    package init(value: String, label: String, flag: String? = nil, parent: String? = nil, aliases: [String] = []) {
        self.value = value
        self.label = label
        self.flag = flag
        self.parent = parent
        self.aliases = aliases
    }
}

/// The rows of a form's pickers (io.entryd.Forms.Options).
package enum OptionRows {
    /// The rows of `field`'s picker, in list order, filtered and ranked by `query`.
    ///
    /// - Parameters:
    ///   - form: The form.
    ///   - field: A country, province, city or choice field of `form`.
    ///   - parent: For a city field, the province to list the cities of, as
    ///     lenient input (`440000`, `广东`, `Guangdong`); `nil` or empty for all
    ///     cities. Ignored for other fields.
    ///   - query: Search text (``SearchRanking``: exact, then prefix or
    ///     initials, then word or syllable starts, then matches inside a word
    ///     of 3 letters or more, of value, names, pinyin, initials or aliases).
    ///   - limit: The most rows to return; `nil` for all.
    ///   - locale: The language of the labels.
    /// - Throws: ``EntryError/fieldNotFound(form:field:)`` for a field the form
    ///   lacks or one without an option list (text, date, datetime, phone,
    ///   email: Options is for country, province, city and choice fields), or
    ///   ``EntryError/invalidParameter(_:)`` (`parent`) when `parent` does
    ///   not name exactly one province.
    package static func options(
        form: FormDefinition, field name: String, parent: String? = nil, query: String? = nil, limit: Int? = nil,
        locale: EntryLocale, reference: ReferenceData = .shared
    ) throws -> [OptionRow] {
        guard let field = form.field(named: name) else { throw EntryError.fieldNotFound(form: form.name, field: name) }
        let query = query ?? ""
        let rows: [OptionRow]
        switch field.type {
        case .country:
            rows = reference.searchCountries(matching: query, locale: locale).map { c in
                OptionRow(
                    value: c.alpha2, label: c.name(in: locale), flag: c.flag,
                    aliases: [c.alpha3, c.numeric, c.name(in: locale == .zh ? .en : .zh)].filter { !$0.isEmpty }
                        + c.pinyin + c.aliases)
            }
        case .province:
            rows = reference.searchProvinces(matching: query, locale: locale).map { row($0, locale: locale) }
        case .city:
            var province: String?
            if let parent, !parent.isEmpty {
                guard case .found(let found) = reference.resolveProvince(parent) else {
                    throw EntryError.invalidParameter("parent")
                }
                province = found.code
            }
            rows = reference.searchCities(matching: query, province: province, locale: locale).map {
                row($0, locale: locale)
            }
        case .choice:
            let keys = field.options.map { option in option.names.map { NameKey($0) } }
            rows = SearchRanking.filter(field.options, keys: keys, query: query).map { option in
                OptionRow(
                    value: option.value, label: option.label(in: locale),
                    aliases: EntryLocale.allCases.filter { $0 != locale }.map { option.label(in: $0) } + option.aliases)
            }
        case .text, .date, .datetime, .phone, .email:
            throw EntryError.fieldNotFound(form: form.name, field: name)
        }
        return limit.map { Array(rows.prefix(max(0, $0))) } ?? rows
    }

    private static func row(_ d: Division, locale: EntryLocale) -> OptionRow {
        let other = d.name(in: locale == .zh ? .en : .zh)
        let aliases = [d.isoCode, other, d.shortZH, d.pinyin].compactMap { $0 } + d.aliases + d.formerNames
        return OptionRow(value: d.code, label: d.name(in: locale), parent: d.parentCode, aliases: aliases)
    }
}
