/// A locale for labels, option names and problem messages.
///
/// doc/protocol.md: `locale` is `zh` or `en`; the daemon's default is `zh`.
package enum EntryLocale: String, Sendable, CaseIterable, Codable {
    case zh
    case en

    /// Parses a wire or command-line locale: `zh`, `en`, and common longer tags
    /// (`zh_CN`, `zh-Hans`, `en_US.UTF-8`) by their language part. `nil` otherwise.
    package init?(tag: String) {
        // The leading ASCII letters, taken by scalar (`en` and an emoji modifier are one
        // Character) and lowered after (`İ` lowers to `i` and a combining dot), so the
        // rule is the OpenAPI document's pattern (ParameterRules.localePattern).
        let letters = tag.unicodeScalars.prefix { $0.isASCII && $0.properties.isAlphabetic }
        let lang = String(String.UnicodeScalarView(letters)).lowercased()
        switch lang {
        case "zh": self = .zh
        case "en": self = .en
        default: return nil
        }
    }
}
