// Search-as-you-type over the picker lists (io.entryd.Forms.Options `query`).

extension ReferenceData {
    /// Countries whose alpha-2, alpha-3, numeric code, English or Chinese name,
    /// alias, pinyin or initials (`zhongguo`, `zg`) matches `query` (see
    /// ``SearchRanking``), in the list order of `locale` within a rank; all
    /// countries for an empty query.
    func searchCountries(matching query: String, locale: EntryLocale = .en) -> [Country] {
        let order = listOrder(countries.indices, zh: countryPinyinOrder, locale: locale)
        return SearchRanking.filter(
            order.map { countries[$0] }, keys: order.map { countrySearchKeys[$0] }, query: query)
    }

    /// Provinces whose code, names, short name, pinyin, initials, ISO 3166-2
    /// code or aliases match `query` (see ``SearchRanking``), in the list
    /// order of `locale` within a rank.
    func searchProvinces(matching query: String, locale: EntryLocale = .en) -> [Division] {
        let order = listOrder(provinces.indices, zh: provincePinyinOrder, locale: locale)
        return SearchRanking.filter(
            order.map { provinces[$0] }, keys: order.map { provinceSearchKeys[$0] }, query: query)
    }

    /// Cities matching `query` like ``searchProvinces(matching:locale:)``
    /// (former names included), within the province with code `province` when given.
    func searchCities(matching query: String, province: String?, locale: EntryLocale = .en) -> [Division] {
        let order = listOrder(cities.indices, zh: cityPinyinOrder, locale: locale)
            .filter { province == nil || cities[$0].parentCode == province }
        return SearchRanking.filter(order.map { cities[$0] }, keys: order.map { citySearchKeys[$0] }, query: query)
    }

    /// The list order of a picker in `locale`: `zh` by pinyin (``PinyinOrder``),
    /// `en` in table order (alpha-2 for countries, GB/T 2260 code for divisions).
    private func listOrder(_ all: Range<Int>, zh: [Int], locale: EntryLocale) -> [Int] {
        locale == .zh ? zh : Array(all)
    }
}

/// How picker rows are filtered and ordered by a search query.
///
/// The query and each row's keys are compared as ``MatchKey``s (case-insensitive,
/// accents and full-width forms folded, separators ignored); each key knows
/// where its words begin (``NameKey``: English words, pinyin syllables). A row
/// takes the best rank of its keys, and rows keep list order within a rank:
///
/// 0. ``Rank/exact``: a name or code equals the query (`cn`, `广州`, `guangzhou`);
/// 1. ``Rank/prefix``: a name or code starts with the query (`guang`, `4401`),
///    or the query is a row's syllable initials (`gz` → 广州, 赣州, 甘孜);
/// 2. ``Rank/wordStart``: the query begins a later word or pinyin syllable
///    (`kingdom` → United Kingdom, `zhou` → 广州), or begins the initials;
/// 3. ``Rank/inside``: the query is inside a word (`州` → 广州市, `0100` →
///    440100), only for queries of 3 letters or more or with other characters
///    than ASCII letters: two letters inside a word (`gz` in ton*gz*hou, `gd`
///    in Kin*gd*om) match too much to be worth showing.
///
/// An empty query matches every row in list order.
enum SearchRanking {
    /// How well a key matches a query; lower is better.
    enum Rank: Int, Comparable {
        case exact, prefix, wordStart, inside

        static func < (a: Rank, b: Rank) -> Bool { a.rawValue < b.rawValue }
    }

    /// The rows of `rows` that match `query`, best first; `keys[i]` are the keys of `rows[i]`.
    static func filter<Row>(_ rows: [Row], keys: [[NameKey]], query: String) -> [Row] {
        let q = MatchKey(query)
        guard !q.isEmpty else { return rows }
        let insideAllowed =
            q.text.unicodeScalars.count >= 3 || !q.text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) }
        var ranked: [(rank: Rank, index: Int)] = []
        for (index, rowKeys) in keys.enumerated() {
            if let rank = rowKeys.compactMap({ rank(of: $0, for: q, insideAllowed: insideAllowed) }).min() {
                ranked.append((rank, index))
            }
        }
        return ranked.sorted { ($0.rank, $0.index) < ($1.rank, $1.index) }.map { rows[$0.index] }
    }

    /// The rank of `key` for `query`, or `nil` when it does not match.
    static func rank(of key: NameKey, for query: MatchKey, insideAllowed: Bool) -> Rank? {
        if key.isInitials {
            if key.key == query { return .prefix }
            return key.key.text.hasPrefix(query.text) ? .wordStart : nil
        }
        if key.key == query { return .exact }
        if key.key.text.hasPrefix(query.text) { return .prefix }
        if key.laterWordStarts(with: query) { return .wordStart }
        if insideAllowed, key.key.text.contains(query.text) { return .inside }
        return nil
    }
}
