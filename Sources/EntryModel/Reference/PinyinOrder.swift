/// The order of the picker lists in `zh`: by pinyin, as Chinese readers look
/// names up (安徽, 澳门, 北京, 重庆, 福建 …).
///
/// Rows sort by the tables' `pinyin` column, the curated reading (data/README.md:
/// polyphonic place names read as places are read, 长沙 changsha, 厦门 xiamen,
/// 六安 lu'an, 重庆 chongqing, which ICU's character-by-character readings get
/// wrong; for countries the reading of the Chinese name), syllable by syllable
/// (西安 xi|an before 厦门 xia|men), ties by code.
enum PinyinOrder {
    /// The indices of the rows in pinyin order; `pinyin[i]`, `initials[i]`
    /// and `code[i]` are row `i`'s pinyin, syllable initials and code.
    static func indices(pinyin: [String], initials: [String], code: [String]) -> [Int] {
        // Syllables joined by a space, which sorts before every letter: xi an < xia men.
        let keys = pinyin.indices.map { i -> String in
            guard let starts = PinyinSyllables.starts(of: pinyin[i], initials: initials[i]) else { return pinyin[i] }
            let letters = Array(pinyin[i].unicodeScalars)
            let ends = Array(starts.dropFirst()) + [letters.count]
            return zip(starts, ends).map { String(String.UnicodeScalarView(letters[$0..<$1])) }.joined(separator: " ")
        }
        return pinyin.indices.sorted { (keys[$0], code[$0]) < (keys[$1], code[$1]) }
    }
}
