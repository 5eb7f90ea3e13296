/// A map from match keys (``MatchKey``) to the rows of one reference list,
/// with a strength per key so that a stronger kind of name wins over a weaker
/// one (a province's English name `Shanxi` over the pinyin `shanxi` that 山西
/// and 陕西 share).
///
/// Built once when ``ReferenceData`` loads; immutable afterwards.
struct NameIndex: Sendable {
    /// How strongly a key identifies its row; lower wins.
    enum Tier: Int, Sendable, CaseIterable {
        /// Codes: alpha-2/-3, numeric, flag, GB/T 2260 code, ISO 3166-2.
        case code
        /// Official names: Chinese and English names, `short_zh`.
        case name
        /// Aliases and former names.
        case alias
        /// Toneless pinyin, which different characters share.
        case pinyin
    }

    private struct Hit: Sendable {
        let tier: Tier
        let row: Int
    }

    private var hits: [MatchKey: [Hit]] = [:]
    /// Every distinct key once, in the order first added (for near-match search).
    private var keysInOrder: [MatchKey] = []

    /// Adds `text` (normalised to its key) as a name of `row`. Empty keys are ignored.
    mutating func add(_ text: String, tier: Tier, row: Int) {
        let key = MatchKey(text)
        guard !key.isEmpty else { return }
        if hits[key] == nil { keysInOrder.append(key) }
        hits[key, default: []].append(Hit(tier: tier, row: row))
    }

    /// Adds a name and, for a name with a parenthesised part such as
    /// `Tibet (Xizang)` or `刚果（布）`, also the part outside and the part inside
    /// the brackets (`Tibet`, `Xizang`; `刚果`, which 刚果（金） shares, so it is ambiguous).
    mutating func addName(_ text: String, tier: Tier, row: Int) {
        add(text, tier: tier, row: row)
        let folded = MatchKey.foldFullWidth(text)
        guard let open = folded.firstIndex(of: "("), let close = folded[open...].firstIndex(of: ")") else { return }
        add(String(folded[folded.index(after: open)..<close]), tier: tier, row: row)
        add(String(folded[..<open] + folded[folded.index(after: close)...]), tier: tier, row: row)
    }

    /// The rows named by `key`, grouped by tier, strongest first; a row appears
    /// only in its strongest group and at most once.
    func matches(_ key: MatchKey) -> [[Int]] {
        guard let found = hits[key] else { return [] }
        var seen = Set<Int>()
        return Tier.allCases.compactMap { tier in
            let rows = found.filter { $0.tier == tier && seen.insert($0.row).inserted }.map(\.row)
            return rows.isEmpty ? nil : rows
        }
    }

    /// Rows with a key near `key`, closest first, for "did you mean" suggestions.
    ///
    /// A key is near when its Levenshtein distance is at most 1 (for inputs of
    /// up to 4 characters, e.g. `Chna`, `广洲`) or 2 (longer, e.g. `Guangzou`),
    /// or when it starts with `key` (inputs of 2 characters or more). Ties go
    /// to the longer common prefix, then to list order. Inputs shorter than 2
    /// characters get no suggestions.
    func nearMatches(_ key: MatchKey) -> [Int] {
        let length = key.text.unicodeScalars.count
        guard length >= 2 else { return [] }
        let limit = length <= 4 ? 1 : 2
        var best: [Int: (score: Int, prefix: Int)] = [:]
        for candidate in keysInOrder {
            let score: Int
            if let d = candidate.distance(to: key, limit: limit) {
                score = d
            } else if candidate.text.hasPrefix(key.text) {
                score = limit + 1
            } else {
                continue
            }
            let prefix = zip(candidate.text.unicodeScalars, key.text.unicodeScalars).prefix(while: { $0 == $1 }).count
            for hit in hits[candidate] ?? [] {
                if let old = best[hit.row], (old.score, -old.prefix) <= (score, -prefix) { continue }
                best[hit.row] = (score, prefix)
            }
        }
        return best.sorted { a, b in
            (a.value.score, -a.value.prefix, a.key) < (b.value.score, -b.value.prefix, b.key)
        }.map(\.key)
    }
}
