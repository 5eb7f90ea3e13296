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

/// One of the keys Options ranks a row by (``SearchRanking``), for a client
/// that searches without entryd (the offline form of entryd-web, issue 32):
/// the folded text, where its words begin (Unicode scalar offsets) and
/// whether it is a name's syllable initials.
package struct SearchKey: Sendable, Equatable {
    /// The ``MatchKey`` text.
    package var text: String
    /// The word starts, ascending, the first 0.
    package var starts: [Int]
    /// Initials: matched whole or as a prefix only.
    package var initials: Bool
}

extension OptionRows {
    /// The keys that ``options(form:field:parent:query:limit:locale:reference:)``
    /// ranks the row `value` of a `type` field by: for countries, provinces and
    /// cities those of `reference` (empty for a value it lacks); for a choice
    /// row, the keys of `names` (its value, labels in every locale and aliases,
    /// as an Options reply carries them).
    package static func searchKeys(
        type: FieldType, value: String, names: [String], reference: ReferenceData = .shared
    ) -> [SearchKey] {
        let keys: [NameKey]
        switch type {
        case .country: keys = reference.countrySearchKeys(alpha2: value)
        case .province, .city: keys = reference.divisionSearchKeys(code: value)
        case .choice: keys = names.map { NameKey($0) }
        case .text, .date, .datetime, .phone, .email: keys = []
        }
        return keys.filter { !$0.key.isEmpty }.map {
            SearchKey(text: $0.key.text, starts: $0.wordStarts, initials: $0.isInitials)
        }
    }

    /// Traditional and variant Han characters that ``MatchKey`` folds, each
    /// with its Simplified text, for a client without ICU: every character of
    /// the CJK Unified Ideographs, Extension A and the compatibility block that
    /// ``ChineseVariants`` changes, folded one at a time. Built once (some
    /// tenths of a second).
    package static let simplifiedFolds: [(String, String)] = {
        var out: [(String, String)] = []
        for range in [0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF] {
            for v in range {
                guard let scalar = Unicode.Scalar(v) else { continue }
                let char = String(scalar)
                let folded = ChineseVariants.simplified(char)
                if folded != char { out.append((char, folded)) }
            }
        }
        return out
    }()
}
