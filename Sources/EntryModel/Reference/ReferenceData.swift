/// The reference lists behind the country, province and city pickers:
/// ISO 3166-1 countries and the GB/T 2260 divisions of China, compiled into the
/// binary from `data/` (``EmbeddedTables``), with lookup and search indexes.
///
/// Immutable and safe to share between threads. ``shared`` is parsed and
/// indexed once, on first use (a few milliseconds).
package final class ReferenceData: Sendable {
    /// The tables compiled into this binary.
    package static let shared = ReferenceData(
        countries: EmbeddedTables.countries, divisions: EmbeddedTables.cnDivisions,
        retired: EmbeddedTables.cnDivisionsRetired, dataVersion: EmbeddedTables.dataVersion)

    /// The source releases of the tables and a SHA-256 prefix of their text,
    /// e.g. `countries 2026-12-01 (iso-codes 4.15.0, CLDR 42.0/ICU 72.1, …); divisions …;
    /// sha256:2fade60adb09` (reported by Status and `entryd --version`).
    package let dataVersion: String
    /// All 250 countries, sorted by alpha-2 as in the table: the picker order.
    package let countries: [Country]
    /// The 34 provinces, in table (code) order.
    let provinces: [Division]
    /// The 450 cities, in table (code) order.
    package let cities: [Division]

    private let countryByAlpha2: [String: Int]
    /// `flag name` of each country (same order as ``countries``), English and Chinese.
    private let countryLabels: (en: [String], zh: [String])
    private let divisionByCode: [String: Division]
    private let retiredByCode: [String: RetiredDivision]
    private let citiesByProvince: [String: [Division]]

    let countryIndex: NameIndex
    let provinceIndex: NameIndex
    let cityIndex: NameIndex
    /// Normalised keys per row for ``searchCountries(matching:)`` and friends.
    let countrySearchKeys: [[NameKey]]
    let provinceSearchKeys: [[NameKey]]
    let citySearchKeys: [[NameKey]]
    /// Row indices of ``countries``, ``provinces`` and ``cities`` in the `zh`
    /// picker order (``PinyinOrder``: by the tables' pinyin, the name's reading
    /// for countries); `en` keeps table order.
    let countryPinyinOrder: [Int]
    let provincePinyinOrder: [Int]
    let cityPinyinOrder: [Int]

    /// Parses the three tables (the text of `countries.tsv`, `cn_divisions.tsv`,
    /// `cn_divisions_retired.tsv`) and builds the indexes.
    init(
        countries countriesText: String, divisions divisionsText: String, retired retiredText: String,
        dataVersion: String
    ) {
        self.dataVersion = dataVersion
        countries = TSVTable(countriesText).rows.map(Country.init(row:))
        let divisions = TSVTable(divisionsText).rows.map(Division.init(row:))
        provinces = divisions.filter { $0.level == .province }
        cities = divisions.filter { $0.level == .city }
        countryByAlpha2 = Dictionary(uniqueKeysWithValues: countries.enumerated().map { ($1.alpha2, $0) })
        countryLabels = (countries.map { "\($0.flag) \($0.nameEN)" }, countries.map { "\($0.flag) \($0.nameZH)" })
        divisionByCode = Dictionary(uniqueKeysWithValues: divisions.map { ($0.code, $0) })
        retiredByCode = Dictionary(
            uniqueKeysWithValues: TSVTable(retiredText).rows.map {
                let row = RetiredDivision(row: $0)
                return (row.code, row)
            })
        citiesByProvince = Dictionary(grouping: cities, by: { $0.parentCode ?? "" })

        var countryIndex = NameIndex()
        var provinceIndex = NameIndex()
        var cityIndex = NameIndex()
        for (row, country) in countries.enumerated() {
            for code in [country.alpha2, country.alpha3, country.numeric, country.flag] {
                countryIndex.add(code, tier: .code, row: row)
            }
            countryIndex.addName(country.nameEN, tier: .name, row: row)
            countryIndex.addName(country.nameZH, tier: .name, row: row)
            country.aliases.forEach { countryIndex.addName($0, tier: .alias, row: row) }
            for (pinyin, initials) in zip(country.pinyin, country.initials) {
                countryIndex.add(NameKey(pinyin: pinyin, initials: initials), tier: .pinyin, row: row)
            }
        }
        ReferenceData.index(provinces, into: &provinceIndex)
        ReferenceData.index(cities, into: &cityIndex)
        self.countryIndex = countryIndex
        self.provinceIndex = provinceIndex
        self.cityIndex = cityIndex

        countrySearchKeys = countries.map { c in
            ([c.alpha2, c.alpha3, c.numeric, c.nameEN, c.nameZH] + c.aliases).map { NameKey($0) }
                + zip(c.pinyin, c.initials).flatMap { [NameKey(pinyin: $0, initials: $1), NameKey(initials: $1)] }
        }
        provinceSearchKeys = provinces.map(ReferenceData.searchKeys(of:))
        citySearchKeys = cities.map(ReferenceData.searchKeys(of:))
        countryPinyinOrder = PinyinOrder.indices(
            pinyin: countries.map { $0.pinyin.first ?? "" }, initials: countries.map { $0.initials.first ?? "" },
            code: countries.map(\.alpha2))
        provincePinyinOrder = ReferenceData.pinyinOrder(of: provinces)
        cityPinyinOrder = ReferenceData.pinyinOrder(of: cities)
    }

    private static func pinyinOrder(of rows: [Division]) -> [Int] {
        PinyinOrder.indices(pinyin: rows.map(\.pinyin), initials: rows.map(\.initials), code: rows.map(\.code))
    }

    private static func index(_ rows: [Division], into index: inout NameIndex) {
        for (row, division) in rows.enumerated() {
            index.add(division.code, tier: .code, row: row)
            if let iso = division.isoCode { index.add(iso, tier: .code, row: row) }
            for name in [division.nameZH, division.shortZH, division.nameEN] {
                index.addName(name, tier: .name, row: row)
            }
            (division.aliases + division.formerNames).forEach { index.addName($0, tier: .alias, row: row) }
            index.add(NameKey(pinyin: division.pinyin, initials: division.initials), tier: .pinyin, row: row)
        }
    }

    private static func searchKeys(of d: Division) -> [NameKey] {
        ([d.code, d.nameZH, d.nameEN, d.shortZH, d.isoCode ?? ""] + d.aliases + d.formerNames).map { NameKey($0) }
            + [NameKey(pinyin: d.pinyin, initials: d.initials), NameKey(initials: d.initials)]
    }

    /// The search keys of the country with this alpha-2 code; empty for an unknown code.
    func countrySearchKeys(alpha2: String) -> [NameKey] {
        countryByAlpha2[alpha2].map { countrySearchKeys[$0] } ?? []
    }

    /// The search keys of the current province or city with this code; empty for an unknown code.
    func divisionSearchKeys(code: String) -> [NameKey] {
        if let i = provinces.firstIndex(where: { $0.code == code }) { return provinceSearchKeys[i] }
        if let i = cities.firstIndex(where: { $0.code == code }) { return citySearchKeys[i] }
        return []
    }

    /// The country with this alpha-2 code (exact, upper case), or `nil`.
    package func country(alpha2: String) -> Country? {
        countryByAlpha2[alpha2].map { countries[$0] }
    }

    /// The picker label of a country, its flag and name in `locale`
    /// (`🇨🇳 China`, `🇨🇳 中国`), built once; `nil` for an unknown code.
    package func countryLabel(alpha2: String, locale: EntryLocale) -> String? {
        countryByAlpha2[alpha2].map { locale == .zh ? countryLabels.zh[$0] : countryLabels.en[$0] }
    }

    /// The current province or city with this 6-digit code, or `nil` (also for
    /// retired codes; see ``retiredDivision(code:)``).
    package func division(code: String) -> Division? {
        divisionByCode[code]
    }

    /// The retired division with this code, or `nil` if the code is current or unknown.
    package func retiredDivision(code: String) -> RetiredDivision? {
        retiredByCode[code]
    }

    /// The cities of the province with this code, in table order; empty for
    /// Taiwan, Hong Kong and Macau (710000, 810000, 820000), which the list does
    /// not divide, and for codes that are not provinces.
    package func cities(ofProvince code: String) -> [Division] {
        citiesByProvince[code] ?? []
    }
}
