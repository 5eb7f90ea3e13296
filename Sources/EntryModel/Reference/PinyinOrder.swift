import CICU

/// The order of the picker lists in `zh`: by pinyin, as Chinese readers look
/// names up (安徽, 澳门, 北京, 重庆, 福建 …).
///
/// Rows with a curated `pinyin` column (data/README.md: polyphonic place names
/// read as places are read, 长沙 changsha, 厦门 xiamen, 六安 lu'an, 重庆
/// chongqing, which ICU's character-by-character readings get wrong) sort by
/// it syllable by syllable (西安 xi|an before 厦门 xia|men), ties by code.
/// Rows without one sort by ICU's `zh` collation of their Chinese name.
enum PinyinOrder {
    /// The indices of `rows` in pinyin order; `pinyin[i]`, `initials[i]` and
    /// `code[i]` are row `i`'s curated pinyin (empty: none), syllable
    /// initials and code; `chinese[i]` its Chinese name. If any row lacks a
    /// pinyin, all sort by ICU's collation of `chinese`.
    static func indices(pinyin: [String], initials: [String], code: [String], chinese: [String]) -> [Int] {
        guard !pinyin.contains(where: \.isEmpty) else { return collated(chinese, code: code) }
        // Syllables joined by a space, which sorts before every letter: xi an < xia men.
        let keys = pinyin.indices.map { i -> String in
            guard let starts = PinyinSyllables.starts(of: pinyin[i], initials: initials[i]) else { return pinyin[i] }
            let letters = Array(pinyin[i].unicodeScalars)
            let ends = Array(starts.dropFirst()) + [letters.count]
            return zip(starts, ends).map { String(String.UnicodeScalarView(letters[$0..<$1])) }.joined(separator: " ")
        }
        return pinyin.indices.sorted { (keys[$0], code[$0]) < (keys[$1], code[$1]) }
    }

    /// The indices of `names` in ICU's `zh` collation order, ties by `code`;
    /// in the given order when ICU has no collator.
    static func collated(_ names: [String], code: [String]) -> [Int] {
        guard let collator = cicu_collator_open_zh() else { return Array(names.indices) }
        defer { cicu_collator_close(collator) }
        func compare(_ a: String, _ b: String) -> Int32 {
            var a = a, b = b
            return a.withUTF8 { x in
                b.withUTF8 { y in
                    cicu_collator_compare(collator, Int32(x.count), x.baseAddress, Int32(y.count), y.baseAddress)
                }
            }
        }
        return names.indices.sorted { i, j in
            let order = compare(names[i], names[j])
            return order != 0 ? order < 0 : code[i] < code[j]
        }
    }
}
