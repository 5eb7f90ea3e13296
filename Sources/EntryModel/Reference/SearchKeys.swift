import CICU
import CPhoneNumber

/// The derived search keys of an entry (issue 33, doc/design.md "Search
/// keys"): what `Filter.search` matches by prefix, and the exact keys the
/// duplicate check looks up. The store keeps them in `entry_keys` (one row
/// per key and entry), written in the transaction of every write of the
/// entry's row, and removed by an erasure: they are personal data.
///
/// Each key starts with its kind:
/// - `s:` a name key: the name folded as pickers fold it (``fold(_:)``), and
///   each suffix of it that starts at a Han character or a word (so a given
///   name, or any later part of a name, matches by prefix); for a name with
///   Han characters also its toneless pinyin without spaces
///   (`huangzhiming`), each suffix of that at a syllable (`zhiming`, `ming`),
///   and the syllables' initials (`hzm`).
/// - `t:` a phone key: of each phone field's value (E.164, as validation
///   stores it), the digits without `+` (`8613612345678`) and the national
///   significant number (`13612345678`).
/// - `m:` an e-mail key: each e-mail field's value, lower-cased.
/// - `b:` the duplicate key: the folded name, U+001F and the birthday
///   (only when the entry has both).
///
/// Pure functions of their input and of the ICU and libphonenumber in use
/// (``versions``): the store rebuilds every key when those change. A key is
/// at most ``maxKeyBytes`` bytes, and a name gives at most ``maxSuffixes``
/// suffix keys (and as many of its pinyin).
package enum SearchKeys {
    /// The format of the keys: raised whenever this file derives other keys
    /// from the same values, so that stores rebuild theirs at the next start.
    package static let format = 2

    /// What the keys were made with: the key format, the ICU version (folding
    /// and pinyin) and the libphonenumber version (national numbers), e.g.
    /// `keys 1, icu 72.1, phonenumber 8.12.57`. The store keeps it in its node
    /// table (`search_keys`) and rebuilds every key when it differs.
    package static let versions =
        "keys \(format), icu \(ChineseVariants.icuVersion), phonenumber \(PhoneNumber.libraryVersion)"

    /// The longest search text, in characters, that ``prefixes(forQuery:)`` takes.
    package static let maxQueryLength = 100

    /// The longest key in UTF-8 bytes: longer ones are cut at a character
    /// boundary (an index entry must fit PostgreSQL's B-tree page; a search
    /// text of ``maxQueryLength`` characters is at most 400 bytes, so a prefix
    /// match is never lost).
    package static let maxKeyBytes = 512

    /// The most name keys made from one name's suffixes, and from its pinyin's:
    /// a name of thousands of characters (a form without `max-length`) costs
    /// no more than one of 64.
    static let maxSuffixes = 64

    /// `key` cut to at most ``maxKeyBytes`` bytes at a character boundary.
    static func clipped(_ key: String) -> String {
        guard key.utf8.count > maxKeyBytes else { return key }
        var out = ""
        var bytes = 0
        for c in key {
            let n = c.utf8.count
            if bytes + n > maxKeyBytes { break }
            out.append(c)
            bytes += n
        }
        return out
    }

    /// The separator between the name and the birthday in a `b:` key.
    static let unitSeparator: Character = "\u{1F}"

    /// `text` folded as pickers fold names: compatibility forms to their plain
    /// ones (NFKC: full-width `Ａ１` → `A1`, the ideographic space → a space),
    /// lower case, Traditional and variant Chinese characters to Simplified
    /// (``ChineseVariants``: 黃 → 黄), control and format characters dropped,
    /// and runs of white space as one space, none at either end, and none
    /// beside a Han character (`李 小龙` is `李小龙`: Chinese names are written
    /// without spaces, and a space typed into one is not part of it).
    package static func fold(_ text: String) -> String {
        let lowered = text.precomposedStringWithCompatibilityMapping.lowercased()
        var scalars = String.UnicodeScalarView()
        var pendingSpace = false
        var afterHan = false
        for scalar in lowered.unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !scalars.isEmpty
                continue
            }
            let category = scalar.properties.generalCategory
            if category == .control || category == .format || scalar.value == 0x10FFFF { continue }
            let isHan = scalar.properties.isIdeographic
            if pendingSpace, !afterHan, !isHan { scalars.append(" ") }
            pendingSpace = false
            afterHan = isHan
            scalars.append(scalar)
        }
        return ChineseVariants.simplified(String(scalars))
    }

    /// Whether `c` is a Han character (a name key starts at each).
    static func isHan(_ c: Character) -> Bool {
        c.unicodeScalars.first.map { $0.properties.isIdeographic } ?? false
    }

    /// Separators inside a name after which a name key starts: white space,
    /// `-`, and the middle dots of transcribed names (`阿卜杜拉·买买提`).
    static func isNameSeparator(_ c: Character) -> Bool {
        c == " " || c == "-" || c == "\u{B7}" || c == "\u{30FB}" || c == "\u{2027}" || c == "."
    }

    /// The `s:` keys of `name` (see the type's description); `[]` for a name
    /// that folds to nothing. Sorted, without repeats.
    package static func nameKeys(_ name: String) -> [String] { nameKeys(folded: fold(name)) }

    /// ``nameKeys(_:)`` of a name already folded (``fold(_:)``): the fold, a
    /// transform of ICU's, is the dearer part, done once per entry.
    static func nameKeys(folded: String) -> [String] {
        guard !folded.isEmpty else { return [] }
        let chars = Array(folded)
        var keys = Set<String>()
        var suffixes = 0
        for i in chars.indices where !isNameSeparator(chars[i]) && suffixes < maxSuffixes {
            let starts =
                i == 0 || isHan(chars[i]) || isNameSeparator(chars[i - 1]) || isHan(chars[i - 1])
            if starts {
                keys.insert(clipped("s:" + String(chars[i...])))
                suffixes += 1
            }
        }
        if chars.contains(where: isHan) {
            let read = ChineseVariants.pinyinSyllables(folded)
            // Only when every character found a Latin reading: a half-transcribed name is no pinyin.
            let syllables = read.map { syllable in
                String(syllable.filter { $0.isASCIILetter || $0.isASCIIDigit })
            }.filter { !$0.isEmpty }
            if read.allSatisfy({ $0.allSatisfy(\.isASCII) }), !syllables.isEmpty {
                for i in syllables.indices.prefix(maxSuffixes) { keys.insert(clipped("s:" + syllables[i...].joined())) }
                if syllables.count > 1 { keys.insert(clipped("s:" + String(syllables.compactMap(\.first)))) }
            }
        }
        return keys.sorted()
    }

    /// The `t:` keys of one stored phone value (E.164, `+8613612345678`): its
    /// digits and its national significant number (`13612345678`), by
    /// libphonenumber's calling code of the number's region. `[]` for a value
    /// that is not `+` and digits (stored under older rules).
    package static func phoneKeys(_ e164: String) -> [String] {
        guard let key = phoneDigitsKey(e164) else { return [] }
        let digits = key.dropFirst(2)
        let code = digits.withCString { Int(cphone_calling_code_length($0)) }
        guard code > 0 else { return [key] }
        return [key, "t:" + digits.dropFirst(code)]
    }

    /// The first `t:` key of a stored phone value (``phoneKeys(_:)``): its
    /// E.164 digits without `+`, or `nil` for a value that is not `+` and digits.
    static func phoneDigitsKey(_ e164: String) -> String? {
        guard e164.hasPrefix("+") else { return nil }
        let digits = e164.dropFirst()
        guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit) else { return nil }
        return "t:" + digits
    }

    /// The `m:` key of one stored e-mail value: lower-cased.
    package static func emailKey(_ email: String) -> String? {
        let trimmed = fold(email)
        return trimmed.isEmpty ? nil : clipped("m:" + trimmed)
    }

    /// The `b:` key of a name and a birthday, or `nil` unless both are given.
    package static func duplicateKey(name: String, birthday: String) -> String? {
        duplicateKey(folded: fold(name), birthday: birthday)
    }

    /// ``duplicateKey(name:birthday:)`` of a name already folded (``fold(_:)``).
    static func duplicateKey(folded: String, birthday: String) -> String? {
        guard !folded.isEmpty, !birthday.isEmpty else { return nil }
        return clipped("b:" + folded + String(unitSeparator) + birthday)
    }

    /// The keys of an entry whose stored fields are `fields`, mapped by
    /// `layout`: all of them (``keys(fields:layout:)``) and, among them, the
    /// duplicate keys (``duplicateKeys(fields:layout:)``), derived together so
    /// that the name is folded once. A caller that stores an entry and then
    /// looks for its duplicates (an Add) derives them once, before the write.
    package struct Derived: Equatable, Sendable {
        /// Every key, sorted, without repeats: what `entry_keys` holds for the entry.
        package var all: [String]
        /// The exact keys two entries that may be one person share, sorted, without repeats.
        package var duplicates: [String]
    }

    /// ``Derived`` of an entry whose stored fields are `fields`, mapped by `layout`.
    package static func derive(fields: [String: String], layout: FieldLayout) -> Derived {
        let folded = layout.name.flatMap { fields[$0] }.map(fold)
        var keys = Set(folded.map { nameKeys(folded: $0) } ?? [])
        for field in layout.phones { if let v = fields[field] { keys.formUnion(phoneKeys(v)) } }
        let duplicates = duplicateKeys(folded: folded, fields: fields, layout: layout)
        keys.formUnion(duplicates)
        return Derived(all: keys.sorted(), duplicates: duplicates)
    }

    /// Every key of an entry whose stored fields are `fields`, mapped by
    /// `layout` (its name, birthday, phone and e-mail fields): the `s:`, `t:`,
    /// `m:` and `b:` keys, sorted, without repeats.
    package static func keys(fields: [String: String], layout: FieldLayout) -> [String] {
        derive(fields: fields, layout: layout).all
    }

    /// The fields of `layout` that ``keys(fields:layout:)`` reads: an entry
    /// whose values of these stand keeps its keys.
    package static func sources(of layout: FieldLayout) -> [String] {
        [layout.name, layout.birthday].compactMap { $0 } + layout.phones + layout.emails
    }

    /// The exact keys two entries that may be one person share: the `b:` key
    /// (name and birthday), the `t:` key of each phone's E.164 digits (not
    /// the national number: two countries' numbers can share it), and the
    /// `m:` key of each e-mail. Sorted, without repeats. Look them up with
    /// `EntryStore.entries(withAnyKey:excluding:)`.
    package static func duplicateKeys(fields: [String: String], layout: FieldLayout) -> [String] {
        let birthday = layout.birthday.flatMap { fields[$0] } ?? ""
        // The fold is only needed (and only paid) when there is a birthday to pair the name with.
        let folded = birthday.isEmpty ? nil : layout.name.flatMap { fields[$0] }.map(fold)
        return duplicateKeys(folded: folded, fields: fields, layout: layout)
    }

    /// ``duplicateKeys(fields:layout:)`` with the name already folded (`nil`: no name).
    static func duplicateKeys(folded: String?, fields: [String: String], layout: FieldLayout) -> [String] {
        var keys = Set<String>()
        if let folded, let birthday = layout.birthday.flatMap({ fields[$0] }),
            let key = duplicateKey(folded: folded, birthday: birthday)
        {
            keys.insert(key)
        }
        for field in layout.phones { if let v = fields[field], let digits = phoneDigitsKey(v) { keys.insert(digits) } }
        for field in layout.emails { if let v = fields[field], let key = emailKey(v) { keys.insert(key) } }
        return keys.sorted()
    }

    /// ``duplicateKeys(fields:layout:)`` of an entry of `form`.
    package static func duplicateKeys(form: FormDefinition, fields: [String: String]) -> [String] {
        duplicateKeys(fields: fields, layout: form.layout)
    }

    /// Why a search text is refused (``prefixes(forQuery:)``).
    package enum QueryProblem: Error, Equatable, Sendable {
        /// Nothing left after folding (blank, or only separators).
        case empty
        /// Longer than ``maxQueryLength`` characters.
        case tooLong
        /// A control character (a line end, a NUL, …).
        case controlCharacter
    }

    /// The key prefixes a search text matches (any of them): a phone number
    /// in any format (digits, spaces, dashes, dots, parentheses, `+` or `00`
    /// and the calling code, a national number with or without its trunk
    /// `0`) matches `t:` keys by its digits; a text with `@` matches `m:`
    /// keys; anything else is folded (``fold(_:)``) and matches `s:` keys,
    /// and a Latin text of several words also matches without its spaces
    /// (`huang zhiming` finds the pinyin `huangzhiming`).
    /// - Throws: ``QueryProblem``.
    package static func prefixes(forQuery query: String) throws(QueryProblem) -> [String] {
        if query.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw .controlCharacter
        }
        if query.count > maxQueryLength { throw .tooLong }
        let folded = fold(query)
        guard !folded.isEmpty else { throw .empty }
        // `+44 (0)7911 123456`: the trunk prefix in parentheses is not dialled after a calling code.
        let international = folded.hasPrefix("+") || folded.hasPrefix("00")
        if let digits = phoneDigits(international ? folded.replacingOccurrences(of: "(0)", with: "") : folded) {
            var prefixes = ["t:" + digits]
            if digits.hasPrefix("00"), digits.count > 2 {
                prefixes.append("t:" + digits.dropFirst(2))
            } else if digits.hasPrefix("0"), digits.count > 1 {
                prefixes.append("t:" + digits.dropFirst())
            }
            return prefixes
        }
        if folded.contains("@") { return ["m:" + folded] }
        var prefixes = ["s:" + folded]
        let words = folded.split(separator: " ")
        if words.count > 1, folded.allSatisfy({ $0.isASCII }) {
            prefixes.append("s:" + words.joined())
        }
        return prefixes
    }

    /// The digits of `text` when it is written as a phone number is (digits,
    /// spaces, `-`, `.`, `/`, parentheses, `+` first) with at least one digit.
    static func phoneDigits(_ text: String) -> String? {
        var digits = ""
        var seenPlus = false
        for c in text {
            if c.isASCIIDigit {
                digits.append(c)
            } else if c == "+" {
                if seenPlus || !digits.isEmpty { return nil }
                seenPlus = true
            } else if !(c == " " || c == "-" || c == "." || c == "/" || c == "(" || c == ")") {
                return nil
            }
        }
        return digits.isEmpty ? nil : digits
    }

    /// The forms of `value` that derived data (the keys) may hold besides the
    /// value itself, for erasure checks that look for every trace of a value:
    /// the folded text (Simplified, lower case), the pinyin without spaces of
    /// a text with Han characters, and for a phone number (E.164, or as typed:
    /// read as a Chinese number when it has no calling code) the digits of its
    /// E.164 form and its national significant number. Forms shorter than 4
    /// bytes (initials, one character) are left out: they would be found by
    /// chance anywhere. Never `value` itself.
    package static func derivedForms(of value: String) -> [String] {
        var forms = Set<String>()
        let folded = fold(value)
        forms.insert(folded)
        if folded.contains(where: isHan) {
            let syllables = ChineseVariants.pinyinSyllables(folded)
            if syllables.allSatisfy({ $0.allSatisfy(\.isASCII) }) { forms.insert(syllables.joined()) }
        }
        if phoneDigits(folded) != nil {
            var e164 = folded.filter { $0 == "+" || $0.isASCIIDigit }
            if !e164.hasPrefix("+") {
                let read = PhoneNumber.library(folded, region: "CN")
                e164 = read.outcome == CPHONE_VALID ? read.e164 : ""
            }
            for key in phoneKeys(e164) { forms.insert(String(key.dropFirst(2))) }
        }
        forms.remove(value)
        return forms.filter { $0.utf8.count >= 4 }.sorted()
    }

    /// The exclusive upper bound of the keys that start with `prefix`: the
    /// prefix followed by U+10FFFF, the greatest code point (its UTF-8 bytes
    /// compare above every other character's under SQLite's BINARY and
    /// PostgreSQL's "C" collation). Keys never hold U+10FFFF (a noncharacter).
    package static func upperBound(of prefix: String) -> String { prefix + "\u{10FFFF}" }
}
