/// A locale for labels, option names and problem messages.
///
/// doc/protocol.md: `locale` is `zh` or `en`; the daemon's default is `zh`.
package enum EntryLocale: String, Sendable, CaseIterable, Codable {
    case zh
    case en

    /// Parses a wire or command-line locale: `zh`, `en`, and common longer tags
    /// (`zh_CN`, `zh-Hans`, `en_US.UTF-8`) by their language part. `nil` otherwise.
    package init?(tag: String) {
        let lang = tag.lowercased().prefix(while: { $0.isLetter })
        switch lang {
        case "zh": self = .zh
        case "en": self = .en
        default: return nil
        }
    }
}
