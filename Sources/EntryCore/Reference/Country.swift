/// A country or territory of ISO 3166-1, a row of `data/countries.tsv`.
///
/// Codes and English names come from iso-codes, Chinese names follow GB/T 2659,
/// calling codes come from libphonenumber (data/PROVENANCE.md).
public struct Country: Sendable, Hashable {
    /// ISO 3166-1 alpha-2, upper case (`CN`); the canonical value of a country field.
    public let alpha2: String
    /// ISO 3166-1 alpha-3 (`CHN`); `XKX` for Kosovo is the World Bank's, not ISO's.
    public let alpha3: String
    /// ISO 3166-1 numeric, 3 digits with leading zeros (`156`, `004`); empty for Kosovo.
    public let numeric: String
    /// The English (iso-codes common) name, e.g. `China`, `Türkiye`.
    public let nameEN: String
    /// The Simplified Chinese name, e.g. `中国`.
    public let nameZH: String
    /// The flag emoji, the two regional indicator symbols of ``alpha2`` (`🇨🇳`).
    public let flag: String
    /// Other English names accepted as input (`Turkey`, `UK`), in table order.
    public let aliases: [String]
    /// The ITU-T E.164 country calling code, digits only (`86`, `1`); empty for
    /// the 7 territories without one. Several countries share a code.
    public let callingCode: String
    /// True for codes outside ISO 3166-1 proper (only `XK`, Kosovo).
    public let isUserAssigned: Bool

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
            aliases: row.list("aliases"), callingCode: row["calling_code"],
            isUserAssigned: row["iso_status"] == "user-assigned")
    }
}
