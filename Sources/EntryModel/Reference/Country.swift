/// A country or territory of ISO 3166-1, a row of `data/countries.tsv`.
///
/// Codes and English names come from iso-codes, Chinese names follow GB/T 2659,
/// calling codes come from libphonenumber (data/PROVENANCE.md).
public struct Country: Sendable, Hashable {
    /// ISO 3166-1 alpha-2, upper case (`CN`); the canonical value of a country field.
    public let alpha2: String
    /// ISO 3166-1 alpha-3 (`CHN`); `XKX` for Kosovo is the World Bank's, not ISO's.
    let alpha3: String
    /// ISO 3166-1 numeric, 3 digits with leading zeros (`156`, `004`); empty for Kosovo.
    let numeric: String
    /// The English (iso-codes common) name, e.g. `China`, `Türkiye`.
    public let nameEN: String
    /// The Simplified Chinese name, e.g. `中国`.
    public let nameZH: String
    /// The flag emoji, the two regional indicator symbols of ``alpha2`` (`🇨🇳`).
    public let flag: String
    /// Other English names accepted as input (`Turkey`, `UK`), in table order.
    public let aliases: [String]
    /// Toneless pinyin, lower-case ASCII, of ``nameZH`` first, then of its
    /// Chinese aliases (`zhongguo`, `zhonghuarenmingongheguo`), when
    /// `countries.tsv` has a `pinyin` column (a `;`-separated list); else
    /// empty (the zh picker order then comes from ICU's zh collation of ``nameZH``).
    let pinyin: [String]
    /// The first letters of the syllables of each of ``pinyin`` (`zg`, `zhrmghg`), in the same order.
    let initials: [String]
    /// The ITU-T E.164 country calling code, digits only (`86`, `1`); empty for
    /// the 7 territories without one. Several countries share a code.
    let callingCode: String
    /// True for codes outside ISO 3166-1 proper (only `XK`, Kosovo).
    let isUserAssigned: Bool

    /// The name in `locale`: ``nameZH`` for `zh`, ``nameEN`` for `en`.
    public func name(in locale: EntryLocale) -> String {
        locale == .zh ? nameZH : nameEN
    }
}

extension Country {
    /// Reads a row of `countries.tsv`.
    init(row: TSVTable.Row) {
        self.init(
            alpha2: row["alpha2"], alpha3: row["alpha3"], numeric: row["numeric"],
            nameEN: row["name_en"], nameZH: row["name_zh"], flag: row["flag"],
            aliases: row.list("aliases") + (Country.chineseAliases[row["alpha2"]] ?? []),
            pinyin: row.listIfPresent("pinyin"), initials: row.listIfPresent("initials"), callingCode: row["calling_code"],
            isUserAssigned: row["iso_status"] == "user-assigned")
    }

    /// Other Chinese names people type for a country or region, beside the
    /// GB/T 2659 short name in `name_zh` (data/countries.tsv has English aliases
    /// only): full official names and the plain names of the special
    /// administrative regions and Taiwan (`香港`, `澳门`, `台湾`), whose `name_zh`
    /// is the `中国香港` form. A hand list, kept small; Simplified only, since
    /// match keys fold Traditional characters (``ChineseVariants``).
    static let chineseAliases: [String: [String]] = [
        "CN": ["中华人民共和国", "中国大陆"],
        "HK": ["香港", "香港特别行政区"],
        "MO": ["澳门", "澳门特别行政区"],
        "TW": ["台湾"],
        "US": ["美利坚合众国"],
        "GB": ["大不列颠及北爱尔兰联合王国"],
        "KR": ["南韩", "大韩民国"],
        "KP": ["北韩"],
        "RU": ["俄国", "俄罗斯联邦"],
        "JP": ["日本国"],
        "AE": ["阿拉伯联合酋长国"],
        "VN": ["越南社会主义共和国"],
    ]
}
