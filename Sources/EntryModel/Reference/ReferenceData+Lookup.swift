import Foundation

// Resolving lenient input to one row of a reference list.
//
// Input is compared by its MatchKey (case, accents, full-width forms and
// separators folded). Each list has an index of names in tiers (NameIndex.Tier):
// the strongest tier that names any row decides; one row there is `.found`,
// several are `.ambiguous`. Unmatched input gets near matches as suggestions,
// ranked by how people write (NameIndex.nearMatches: cut short, a later word,
// an abbreviation, then typos by edit distance).

extension ReferenceData {
    /// Resolves a country from ISO 3166-1 alpha-2 (`cn`), alpha-3 (`CHN`),
    /// numeric (`156`, or unpadded `4` for `004`; a padded `04` is refused),
    /// English or Chinese name, alias (`Turkey`, `UK`, `大韩民国`), pinyin
    /// (`zhongguo`) or flag emoji, in any case and with or without accents
    /// (`Turkiye`). A name two countries share (`Korea`, `Congo`, `刚果`;
    /// data/COUNTRY-NAMES.md) is `.ambiguous` with both.
    package func resolveCountry(_ input: String) -> LookupResult<Country> {
        // What a picker sends, the canonical code itself, needs no index.
        if input.utf8.count == 2, let country = country(alpha2: input) { return .found(country) }
        return resolveCountryByIndex(input)
    }

    /// ``resolveCountry(_:)`` through the name index alone (no exact-code shortcut).
    func resolveCountryByIndex(_ input: String) -> LookupResult<Country> {
        let padded = input.first?.isWhitespace == true || input.last?.isWhitespace == true
        var text = padded ? input.trimmingCharacters(in: .whitespacesAndNewlines) : input
        if (1...2).contains(text.count), text.allSatisfy(\.isASCIIDigit), text.first != "0" {
            text = String(repeating: "0", count: 3 - text.count) + text
        }
        return resolve(MatchKey(text), in: countryIndex, rows: countries)
    }

    /// Resolves a province from its GB/T 2260 code (`440000`), full name
    /// (`广东省`), short name (`广东`), English name (`Guangdong`, `Tibet`,
    /// `Xizang`), ISO 3166-2 code (`CN-GD`), alias (`Nei Mongol`, `Macao`) or
    /// pinyin. English names win over pinyin: `Shanxi` is 山西 (140000) and
    /// `Shaanxi` 陕西 (610000), although both have the pinyin `shanxi`.
    package func resolveProvince(_ input: String) -> LookupResult<Division> {
        if input.utf8.count == 6, let province = division(code: input), province.level == .province {
            return .found(province)
        }
        return resolveProvinceByIndex(input)
    }

    /// ``resolveProvince(_:)`` through the name index alone (no exact-code shortcut).
    func resolveProvinceByIndex(_ input: String) -> LookupResult<Division> {
        resolve(MatchKey(input), in: provinceIndex, rows: provinces)
    }

    /// Resolves a city from its code, full name (`广州市`), short name (`广州`),
    /// English name (`Guangzhou`), pinyin, alias (`Harbin`) or former name
    /// (`襄樊`).
    ///
    /// - Parameters:
    ///   - input: The lenient input.
    ///   - province: A province code to search within, or `nil` for all cities.
    /// - Returns: Within `province`: the city, or `.ambiguous`; `.wrongParent`
    ///   with the matching cities of other provinces when there are only those
    ///   (`杭州` within 440000). Without `province`: the city (whose
    ///   ``Division/parentCode`` tells the province) or `.ambiguous` with every
    ///   match (`朝阳` → 110105 and 211300; `Suzhou` → 苏州 and 宿州).
    ///   `.notFound` carries near matches; for a retired code (`371200`), its
    ///   current successors (``RetiredDivision/replacedBy``).
    package func resolveCity(_ input: String, province: String?) -> LookupResult<Division> {
        if input.utf8.count == 6, let city = division(code: input), city.level == .city,
            province == nil || city.parentCode == province
        {
            return .found(city)
        }
        return resolveCityByIndex(input, province: province)
    }

    /// ``resolveCity(_:province:)`` through the name index alone (no exact-code shortcut).
    func resolveCityByIndex(_ input: String, province: String?) -> LookupResult<Division> {
        let key = MatchKey(input)
        let result = resolve(key, in: cityIndex, rows: cities, accept: { province == nil || $0.parentCode == province })
        if case .notFound = result, let retired = retiredDivision(code: key.text) {
            return .notFound(suggestions: retired.replacedBy.compactMap(division(code:)))
        }
        return result
    }

    /// Resolves `key` in `index`, preferring rows that `accept` allows.
    private func resolve<Row>(
        _ key: MatchKey, in index: NameIndex, rows: [Row], accept: (Row) -> Bool = { _ in true }
    ) -> LookupResult<Row> {
        var elsewhere: [Row] = []
        for tier in index.matches(key) {
            let matched = tier.map { rows[$0] }
            let accepted = matched.filter(accept)
            if accepted.count == 1 { return .found(accepted[0]) }
            if accepted.count > 1 { return .ambiguous(accepted) }
            if elsewhere.isEmpty { elsewhere = matched }
        }
        if !elsewhere.isEmpty { return .wrongParent(elsewhere) }
        let near = index.nearMatches(key).lazy.map { rows[$0] }.filter(accept)
        return .notFound(suggestions: Array(near.prefix(5)))
    }
}

extension Character {
    /// True for the ASCII digits 0–9 only (not other Unicode digits).
    var isASCIIDigit: Bool {
        guard let a = asciiValue else { return false }
        return a >= 0x30 && a <= 0x39
    }

    /// True for the ASCII letters A–Z and a–z only.
    var isASCIILetter: Bool {
        guard let a = asciiValue else { return false }
        return (a >= 0x41 && a <= 0x5A) || (a >= 0x61 && a <= 0x7A)
    }
}
