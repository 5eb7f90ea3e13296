import CICU
import Synchronization

/// Traditional and variant Chinese characters folded to Simplified, by ICU's
/// `Traditional-Simplified` transform (CLDR's Hant-Hans rules, through
/// ``CICU``): `廣東` → `广东`, `臺灣` → `台湾`, `內蒙古` → `内蒙古`,
/// `香港特別行政區` → `香港特别行政区`. Match keys (``MatchKey``) use it so
/// that a name typed in Traditional characters finds the row of its Simplified
/// form; nothing shown or stored is folded.
///
/// Safe from any thread. The transform is compiled once per process, when the
/// first text with a Han character is folded (about 0.1 s; ``ReferenceData``
/// does it while building its indexes); a fold costs some microseconds.
enum ChineseVariants {
    /// The ICU release entryd is built against, e.g. `72.1`.
    static let icuVersion = String(cString: cicu_version())

    /// `text` with Traditional and variant characters replaced by Simplified
    /// ones; text without a Han character is returned as it is, without
    /// calling ICU. If ICU fails (its data missing), `text` unchanged.
    static func simplified(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.properties.isIdeographic }) else { return text }
        return transformed(text, by: cicu_fold_simplified)
    }

    /// The toneless pinyin syllables of `text` by ICU's `Han-Latin` transform
    /// (each Han character its most common reading: 黄志明 → `huang zhi ming`;
    /// Latin letters lower-cased and without accents), split at white space.
    /// A character ICU has no reading for (or all of them, when ICU fails)
    /// stays as it is. Used for search keys (``SearchKeys``).
    static func pinyinSyllables(_ text: String) -> [String] {
        if let syllables = pinyinByCharacter(text) { return syllables }
        return wholePinyinSyllables(text)
    }

    /// ``pinyinSyllables(_:)`` by ICU over the whole text, without the per-character readings.
    static func wholePinyinSyllables(_ text: String) -> [String] {
        transformed(text, by: cicu_pinyin).split(whereSeparator: { $0 == " " }).map(String.init)
    }

    /// The readings of single Han characters by ``wholePinyinSyllables(_:)``,
    /// kept as they are asked for (at most one per character the process has
    /// seen in a name: a few thousand). ICU's `Han-Latin` tests a character
    /// against each of its some 1,400 rules of sets: 20–50 µs for a name,
    /// which was the dearest part of an Add.
    private static let readings = Mutex<[Unicode.Scalar: String]>([:])

    /// The syllables of a text made of Han characters that Han-Latin reads
    /// alone (``cicu_pinyin_is_contextual(_:)``) and ASCII digits, one cached
    /// reading per character: what ICU gives for the whole text, since it
    /// reads each such character by itself, separates two characters' readings
    /// by a space and writes digits next to them without one (`用户12` →
    /// `yong hu12`). `nil` for any other text (a letter, a separator, a
    /// contextual character, no Han character at all), and when a character's
    /// reading is not one syllable.
    static func pinyinByCharacter(_ text: String) -> [String]? {
        var syllables: [String] = []
        var current = ""
        var afterHan = false
        var sawHan = false
        for scalar in text.unicodeScalars {
            if scalar.properties.numericType == .decimal, scalar.isASCII {
                current.unicodeScalars.append(scalar)
                afterHan = false
                continue
            }
            guard scalar.properties.isIdeographic, cicu_pinyin_is_contextual(Int32(bitPattern: scalar.value)) == 0
            else {
                return nil
            }
            var reading = readings.withLock { $0[scalar] }
            if reading == nil {
                let read = wholePinyinSyllables(String(scalar))
                guard read.count == 1 else { return nil }
                readings.withLock { $0[scalar] = read[0] }
                reading = read[0]
            }
            if afterHan {
                syllables.append(current)
                current = ""
            }
            current += reading!
            afterHan = true
            sawHan = true
        }
        guard sawHan else { return nil }
        syllables.append(current)
        return syllables
    }

    /// `text` through one of CICU's UTF-8 transforms (`cicu_fold_simplified`,
    /// `cicu_pinyin`), or unchanged when ICU fails.
    private static func transformed(
        _ text: String, by transform: (UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<CChar>?, Int32) -> Int32
    ) -> String {
        var input = text
        return input.withUTF8 { bytes -> String in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                let length = Int32(chars.count)
                var capacity = chars.count * 2 + 16
                while true {
                    var out = [CChar](repeating: 0, count: capacity)
                    let written = transform(chars.baseAddress, length, &out, Int32(capacity))
                    if written < 0 { return text }
                    if Int(written) <= capacity {
                        return String(decoding: out.prefix(Int(written)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    }
                    capacity = Int(written)
                }
            }
        }
    }
}
