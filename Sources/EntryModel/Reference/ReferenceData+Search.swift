// Search-as-you-type over the picker lists (io.entryd.Forms.Options `query`).

extension ReferenceData {
    /// Countries whose alpha-2, alpha-3, numeric code, English or Chinese name
    /// or alias matches `query` (see ``SearchRanking``); all countries for an
    /// empty query.
    func searchCountries(matching query: String) -> [Country] {
        SearchRanking.filter(countries, keys: countrySearchKeys, query: query)
    }

    /// Provinces whose code, names, short name, pinyin, initials, ISO 3166-2
    /// code or aliases match `query` (see ``SearchRanking``).
    func searchProvinces(matching query: String) -> [Division] {
        SearchRanking.filter(provinces, keys: provinceSearchKeys, query: query)
    }

    /// Cities matching `query` like ``searchProvinces(matching:)`` (former
    /// names included), within the province with code `province` when given.
    func searchCities(matching query: String, province: String?) -> [Division] {
        guard let province else { return SearchRanking.filter(cities, keys: citySearchKeys, query: query) }
        let indices = cities.indices.filter { cities[$0].parentCode == province }
        return SearchRanking.filter(indices.map { cities[$0] }, keys: indices.map { citySearchKeys[$0] }, query: query)
    }
}

/// How picker rows are filtered and ordered by a search query.
///
/// The query and each row's keys are compared as ``MatchKey``s (case-insensitive,
/// accents and full-width forms folded, separators ignored). A row matches when
/// one of its keys equals the query (rank 0), starts with it (rank 1) or
/// contains it (rank 2); rows are ordered by their best rank, and keep list
/// order within a rank. An empty query matches every row in list order.
enum SearchRanking {
    /// The rows of `rows` that match `query`, best first; `keys[i]` are the keys of `rows[i]`.
    static func filter<Row>(_ rows: [Row], keys: [[MatchKey]], query: String) -> [Row] {
        let q = MatchKey(query)
        guard !q.isEmpty else { return rows }
        var ranked: [(rank: Int, index: Int)] = []
        for (index, rowKeys) in keys.enumerated() {
            if let rank = rowKeys.compactMap({ rank(of: $0, for: q) }).min() {
                ranked.append((rank, index))
            }
        }
        return ranked.sorted { ($0.rank, $0.index) < ($1.rank, $1.index) }.map { rows[$0.index] }
    }

    private static func rank(of key: MatchKey, for query: MatchKey) -> Int? {
        if key == query { return 0 }
        if key.text.hasPrefix(query.text) { return 1 }
        if key.text.contains(query.text) { return 2 }
        return nil
    }
}
