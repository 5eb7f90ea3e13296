// Names for stored division codes, including retired ones.

extension ReferenceData {
    /// The name to show for a stored province or city code in `locale`.
    ///
    /// A current code shows its name (`广州市` / `Guangzhou`); a retired code its
    /// last known name marked retired (`莱芜市（已撤销）` / `Laiwu (retired)`), as
    /// data/README.md asks; an unknown code shows as it is.
    package func displayName(forDivisionCode code: String, locale: EntryLocale) -> String {
        if let division = division(code: code) { return division.name(in: locale) }
        guard let retired = retiredDivision(code: code) else { return code }
        switch locale {
        case .zh: return "\(retired.nameZH)（已撤销）"
        case .en: return "\(retired.nameEN) (retired)"
        }
    }

    /// The province code of a stored city code, current or retired; `nil` if unknown.
    func provinceCode(ofCity code: String) -> String? {
        division(code: code)?.parentCode ?? retiredDivision(code: code)?.parentCode
    }
}
