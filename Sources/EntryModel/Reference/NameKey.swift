/// A name's ``MatchKey`` with the places where its words begin: after a
/// separator (`United Kingdom` → `united|kingdom`, `Côte d'Ivoire` →
/// `cote|d|ivoire`), or at a pinyin syllable (`guang|zhou`). Search and "did
/// you mean" rank matches at the start of a word above matches inside one
/// (``SearchRanking``, ``NameIndex/nearMatches(_:)``).
struct NameKey: Sendable {
    /// The key of the whole name.
    let key: MatchKey
    /// The offsets, in Unicode scalars of `key.text`, where a word begins;
    /// ascending, the first is 0.
    private(set) var wordStarts: [Int]
    /// True for the initials of a name's syllables (`gz` for 广州): matched
    /// whole or as a prefix only, never inside.
    let isInitials: Bool

    /// The key of `text`, its words split at the separators ``MatchKey`` drops.
    init(_ text: String) {
        key = MatchKey(text)
        isInitials = false
        var starts: [Int] = []
        var length = 0
        var rebuilt = ""
        var piece = String.UnicodeScalarView()
        func close() {
            let part = MatchKey(String(piece)).text
            piece = String.UnicodeScalarView()
            guard !part.isEmpty else { return }
            starts.append(length)
            length += part.unicodeScalars.count
            rebuilt += part
        }
        for scalar in MatchKey.foldFullWidth(text).unicodeScalars {
            if MatchKey.isSeparator(scalar) { close() } else { piece.append(scalar) }
        }
        close()
        // Keys are built per scalar, so the words' keys make the whole key; if not, one word.
        wordStarts = rebuilt == key.text && !starts.isEmpty ? starts : [0]
    }

    /// The key of a toneless pinyin name, one word per syllable
    /// (``PinyinSyllables/starts(of:initials:)``; one word if it does not split).
    init(pinyin: String, initials: String) {
        key = MatchKey(pinyin)
        isInitials = false
        wordStarts = PinyinSyllables.starts(of: key.text, initials: MatchKey(initials).text) ?? [0]
    }

    /// The key of a name's syllable initials (`gz`).
    init(initials: String) {
        key = MatchKey(initials)
        isInitials = true
        wordStarts = [0]
    }

    /// Adds the word starts of `other`, a name with the same key.
    mutating func merge(_ other: NameKey) {
        wordStarts = Array(Set(wordStarts + other.wordStarts)).sorted()
    }

    /// Whether `query` begins a word other than the first (`kingdom` in
    /// `unitedkingdom`, `zhou` in `guangzhou`).
    func laterWordStarts(with query: MatchKey) -> Bool {
        let scalars = key.text.unicodeScalars
        return wordStarts.dropFirst().contains { scalars.dropFirst($0).starts(with: query.text.unicodeScalars) }
    }

    /// Whether `query` is written like an abbreviation of this name: its
    /// letters occur in the name in order, the first at the name's start, and
    /// each letter either follows the previous one within the same word or
    /// begins a later word. So initials (`usa`: United States of America),
    /// clipped words (`skorea`: South Korea; `prcc`: People's Republic of
    /// China) and words with letters left out (`stlucia`: Saint Lucia,
    /// `germny`: Germany) qualify; `untiedstates` does not.
    func isAbbreviated(by query: MatchKey) -> Bool {
        let k = Array(key.text.unicodeScalars)
        let q = Array(query.text.unicodeScalars)
        guard let first = q.first, q.count <= k.count, k.first == first else { return false }
        // word[p]: the index of the word holding position p; isStart[p]: a word begins at p.
        var word = [Int](repeating: 0, count: k.count)
        var isStart = [Bool](repeating: false, count: k.count)
        for (index, start) in wordStarts.enumerated() where start < k.count {
            isStart[start] = true
            for p in start..<k.count { word[p] = index }
        }
        // reached: the positions where q[i] can be matched; kept as the
        // earliest such position per word, which leaves the most choice.
        var earliestInWord: [Int: Int] = [0: 0]
        for letter in q.dropFirst() {
            let earliest = earliestInWord.values.min()!
            var next: [Int: Int] = [:]
            for p in (earliest + 1)..<max(earliest + 1, k.count) where k[p] == letter {
                let sameWord = earliestInWord[word[p]].map { $0 < p } ?? false
                if (isStart[p] || sameWord) && next[word[p]] == nil { next[word[p]] = p }
            }
            guard !next.isEmpty else { return false }
            earliestInWord = next
        }
        return true
    }
}
