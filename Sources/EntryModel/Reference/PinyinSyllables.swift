// Splitting toneless pinyin into its syllables, so that search and "did you
// mean" can tell a syllable's start (`zhou` in guang|zhou) from letters inside
// one (`gz` inside ton|g|zhou).

enum PinyinSyllables {
    /// The offsets (in letters) where the syllables of `pinyin` begin, the
    /// first always 0, when `pinyin` splits into exactly `initials.count`
    /// syllables whose first letters are `initials` (the tables' `pinyin` and
    /// `initials` columns: `guangzhou`, `gz` → `[0, 5]`; `xian`, `xa` → `[0, 2]`).
    /// Each syllable must have the shape of one: an initial (`b` … `zh`, `y`,
    /// `w`, or none) and a final (`a` … `uang`, `v` for ü). Longer syllables are
    /// tried first, so `guangan`, `ga` is `guang|an`. `nil` when no split fits.
    static func starts(of pinyin: String, initials: String) -> [Int]? {
        let letters = Array(pinyin.unicodeScalars)
        let firsts = Array(initials.unicodeScalars)
        guard !firsts.isEmpty, letters.allSatisfy(\.isASCII) else { return nil }
        func split(from position: Int, syllable: Int) -> [Int]? {
            if syllable == firsts.count { return position == letters.count ? [] : nil }
            guard position < letters.count, letters[position] == firsts[syllable] else { return nil }
            for length in stride(from: min(6, letters.count - position), through: 1, by: -1) {
                let text = String(String.UnicodeScalarView(letters[position..<position + length]))
                guard isSyllable(text), let rest = split(from: position + length, syllable: syllable + 1) else {
                    continue
                }
                return [position] + rest
            }
            return nil
        }
        return split(from: 0, syllable: 0)
    }

    /// Whether `text` has the shape of a pinyin syllable: an initial, then a final.
    static func isSyllable(_ text: String) -> Bool {
        for initial in initials where text.hasPrefix(initial) {
            let final = String(text.dropFirst(initial.count))
            if initial.isEmpty ? zeroInitialFinals.contains(final) : finals.contains(final) { return true }
        }
        return false
    }

    /// The initials, `y` and `w` (which begin the syllables of the `i`, `u`
    /// and `ü` finals) and the empty initial.
    private static let initials = [
        "zh", "ch", "sh", "b", "p", "m", "f", "d", "t", "n", "l", "g", "k", "h",
        "j", "q", "x", "r", "z", "c", "s", "y", "w", "",
    ]

    /// The finals as written after an initial (`ü` written `v`; after j, q, x, y written `u`).
    private static let finals: Set<String> = [
        "a", "o", "e", "ai", "ei", "ao", "ou", "an", "en", "ang", "eng", "ong", "er",
        "i", "ia", "ie", "iao", "iu", "ian", "in", "iang", "ing", "iong",
        "u", "ua", "uo", "uai", "ui", "uan", "un", "uang", "v", "ve", "ue",
    ]

    /// The finals that stand alone as a syllable (`an` in xi|an, `er` in ha|er|bin).
    private static let zeroInitialFinals: Set<String> = [
        "a", "o", "e", "ai", "ei", "ao", "ou", "an", "en", "ang", "eng", "er",
    ]
}
