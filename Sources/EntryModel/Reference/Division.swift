/// A current Chinese administrative division of GB/T 2260 at one of the two
/// picker levels, a row of `data/cn_divisions.tsv`.
///
/// Provinces are the 34 province-level units; "cities" are what the second
/// picker column shows: prefecture-level units, the districts and counties of
/// the four municipalities, and county-level units administered directly by a
/// province (data/README.md, "What sits at the city level").
package struct Division: Sendable, Hashable {
    /// The picker level of a division.
    package enum Level: String, Sendable {
        case province
        case city
    }

    /// The 6-digit GB/T 2260 code (`440000`, `440100`); the canonical value.
    package let code: String
    /// The province's code for a city; `nil` for a province.
    package let parentCode: String?
    /// Province or city.
    package let level: Level
    /// The full official name (`广东省`, `广州市`, `恩施土家族苗族自治州`).
    package let nameZH: String
    /// Hanyu Pinyin of ``shortZH`` or the established English form
    /// (`Guangzhou`, `Xi'an`, `Hohhot`, `Inner Mongolia`, `Tibet (Xizang)`).
    package let nameEN: String
    /// ISO 3166-2 code of a province (`CN-GD`; column `iso3166_2`); `nil` for cities.
    let isoCode: String?
    /// The name without its administrative suffix (`广东`, `广州`, `延边`).
    let shortZH: String
    /// Toneless pinyin of ``shortZH``, lower-case ASCII, `ü` as `v` (`lvliang`).
    package let pinyin: String
    /// First letter of each pinyin syllable (`gz`); for search ranking only.
    let initials: String
    /// Other established names accepted as input (`Harbin`, `Nei Mongol`, `Macao`).
    package let aliases: [String]
    /// Earlier names under the same code and spelling variants of the lists
    /// (`襄樊市`, `襄樊` for 420600), accepted as input; never shown.
    let formerNames: [String]

    /// The name in `locale`: ``nameZH`` for `zh`, ``nameEN`` for `en`.
    package func name(in locale: EntryLocale) -> String {
        locale == .zh ? nameZH : nameEN
    }
}

/// A GB/T 2260 code that the current list no longer has, a row of
/// `data/cn_divisions_retired.tsv`. Shown for stored entries (marked retired),
/// never offered or accepted as new input.
package struct RetiredDivision: Sendable, Hashable {
    /// The 6-digit code.
    package let code: String
    /// The current province the unit belonged to.
    package let parentCode: String
    /// The last known Chinese name (`莱芜市`).
    package let nameZH: String
    /// Its pinyin (`Laiwu`).
    package let nameEN: String
    /// Codes of the current cities that now hold its territory, largest share first.
    let replacedBy: [String]
    /// Free text: kind of unit, years listed, what became of it.
    package let note: String

    /// The name in `locale`: ``nameZH`` for `zh`, ``nameEN`` for `en`.
    package func name(in locale: EntryLocale) -> String {
        locale == .zh ? nameZH : nameEN
    }
}

extension Division {
    /// Reads a row of `cn_divisions.tsv`, adding the former names of its code.
    init(row: TSVTable.Row) {
        let code = row["code"]
        self.init(
            code: code, parentCode: row.optional("parent_code"),
            level: row["level"] == "province" ? .province : .city,
            nameZH: row["name_zh"], nameEN: row["name_en"], isoCode: row.optional("iso3166_2"),
            shortZH: row["short_zh"], pinyin: row["pinyin"], initials: row["initials"],
            aliases: row.list("aliases"), formerNames: Division.formerNames[code] ?? [])
    }

    /// Old names of units that kept their code, from data/README.md ("Renamed
    /// units that kept their code", its spelling variants, and "Merged, code
    /// kept"), each with its short form where the README gives one. The tables
    /// have no column for them, so they are listed here; keep in step with the README.
    static let formerNames: [String: [String]] = [
        "120110": ["东郊区", "东郊"],
        "120111": ["西郊区", "西郊"],
        "120112": ["南郊区", "南郊"],
        "120113": ["北郊区", "北郊"],
        "210200": ["旅大市", "旅大"],
        "211400": ["锦西市", "锦西"],
        "220600": ["浑江市", "浑江"],
        "320800": ["淮阴市", "淮阴"],
        "371700": ["荷泽市", "荷泽"],  // spelling variant of 菏泽市 (revs 200212–200506)
        "420600": ["襄樊市", "襄樊"],
        "421000": ["荆沙市", "荆沙"],
        "422800": ["恩施地区", "鄂西土家族苗族自治州", "鄂西"],
        "430800": ["大庸市", "大庸"],
        "500101": ["万县区"],
        "500110": ["万盛区", "万盛"],  // merged into 綦江区, code kept (rev 201110)
        "500111": ["双桥区", "双桥"],  // merged into 大足区, code kept (rev 201110)
        "510400": ["渡口市", "渡口"],
        "513200": ["阿坝藏族自治州"],
        "522300": ["兴义地区"],
        "530800": ["思茅市", "思茅"],
        "540400": ["林芝地区"],
        "640200": ["石咀山市", "石咀山"],  // spelling variant of 石嘴山市 (to rev 198612)
    ]
}

extension RetiredDivision {
    /// Reads a row of `cn_divisions_retired.tsv`.
    init(row: TSVTable.Row) {
        self.init(
            code: row["code"], parentCode: row["parent_code"], nameZH: row["name_zh"],
            nameEN: row["name_en"], replacedBy: row.list("replaced_by"), note: row["note"])
    }
}
