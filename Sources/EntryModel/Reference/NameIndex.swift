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
    /// Every distinct key once, in the order first added, with the word starts
    /// of every name that gave it (for near-match search).
    private var keysInOrder: [NameKey] = []
    private var positionOfKey: [MatchKey: Int] = [:]

    /// Adds `text` (normalised to its key) as a name of `row`. Empty keys are ignored.
    mutating func add(_ text: String, tier: Tier, row: Int) {
        add(NameKey(text), tier: tier, row: row)
    }

    /// Adds `name` as a name of `row`. Empty keys are ignored.
    mutating func add(_ name: NameKey, tier: Tier, row: Int) {
        let key = name.key
        guard !key.isEmpty else { return }
        if let position = positionOfKey[key] {
            keysInOrder[position].merge(name)
        } else {
            positionOfKey[key] = keysInOrder.count
            keysInOrder.append(name)
        }
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

    /// Rows with a key near `key`, most likely first, for "did you mean"
    /// suggestions: ranked by how people write a name short or wrong, not by
    /// edit distance alone (``Likeness``).
    ///
    /// A key is a candidate when it starts with `key` (inputs of 2 characters
    /// or more), when `key` begins one of its later words or is written like
    /// its abbreviation (3 characters or more), or when their Levenshtein
    /// distance is at most 1 (inputs of up to 4 characters: `Chna`, `广洲`) or
    /// 2 (longer: `Guangzou`, `Untied States`). Candidates are ordered by
    /// their best likeness; then by edit distance; then by the fewest letters
    /// of the name the input leaves out (`Korea` → `Korea, Republic of` before
    /// `Korea, Democratic People's Republic of`); then by the longer common
    /// prefix; then by list order. A row counts with its best key. Inputs
    /// shorter than 2 characters get no suggestions.
    func nearMatches(_ key: MatchKey) -> [Int] {
        let length = key.text.unicodeScalars.count
        guard length >= 2 else { return [] }
        let limit = length <= 4 ? 1 : 2
        var best: [Int: Score] = [:]
        for candidate in keysInOrder {
            guard let likeness = Likeness(of: candidate, for: key, limit: limit) else { continue }
            let text = candidate.key.text.unicodeScalars
            let score = Score(
                likeness: likeness, distance: candidate.key.distance(to: key, limit: limit) ?? limit + 1,
                leftOut: abs(text.count - length),
                commonPrefix: zip(text, key.text.unicodeScalars).prefix(while: { $0 == $1 }).count)
            for hit in hits[candidate.key] ?? [] where best[hit.row].map({ score < $0 }) ?? true {
                best[hit.row] = score
            }
        }
        return best.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.map(\.key)
    }

    /// How a candidate name relates to input that named no row, most likely first.
    enum Likeness: Int, Comparable {
        /// The name starts with the input: it was cut short (`guangz` → `guangzhou`, before 广安 `guangan`).
        case prefix
        /// The input begins a later word or pinyin syllable of the name (`Kingdom` → `United Kingdom`).
        case laterWord
        /// The input is written like an abbreviation of the name
        /// (``NameKey/isAbbreviated(by:)``: `PRCC` → `People's Republic of China`,
        /// `S Korea` → `South Korea`, `germny` → `Germany`).
        case abbreviation
        /// Only within the edit limit: a letter wrong, swapped or missing (`广洲` → `广州`).
        case edit

        /// The likeness of `name` for `input`, or `nil` when it is no candidate.
        init?(of name: NameKey, for input: MatchKey, limit: Int) {
            let length = input.text.unicodeScalars.count
            if name.key.text.hasPrefix(input.text) {
                self = .prefix
            } else if length >= 3, name.laterWordStarts(with: input) {
                self = .laterWord
            } else if length >= 3, name.isAbbreviated(by: input) {
                self = .abbreviation
            } else if name.key.distance(to: input, limit: limit) != nil {
                self = .edit
            } else {
                return nil
            }
        }

        static func < (a: Likeness, b: Likeness) -> Bool { a.rawValue < b.rawValue }
    }

    /// A candidate's standing; compared field by field, lower first.
    private struct Score: Comparable {
        let likeness: Likeness
        /// The edit distance, or the limit + 1 when beyond it.
        let distance: Int
        /// How many letters longer (or shorter) the name is than the input.
        let leftOut: Int
        let commonPrefix: Int

        static func < (a: Score, b: Score) -> Bool {
            (a.likeness.rawValue, a.distance, a.leftOut, -a.commonPrefix)
                < (b.likeness.rawValue, b.distance, b.leftOut, -b.commonPrefix)
        }
    }
}
