import Foundation
import EntryArguments

/// The normalised form of a name or code used for matching (lookups, search,
/// choice labels).
///
/// Two inputs match when their keys are equal. The key is built in this order:
/// 1. full-width ASCII (U+FF01–U+FF5E) becomes ASCII and the ideographic space
///    (U+3000) a space, so `ＣＮ` and `（布）` read as `CN` and `(布)`;
/// 2. canonical decomposition, then every nonspacing mark (Unicode category Mn)
///    is dropped, which folds Latin accents: `Türkiye` → `turkiye`,
///    `Côte d'Ivoire` → `cotedivoire` (Chinese text has no such marks); so is
///    every format character (category Cf: BOM U+FEFF, zero-width space and
///    joiners), which pasted text carries unseen;
/// 3. lower-casing (locale-independent);
/// 4. separators are dropped: white space, `-` and other dashes, apostrophes,
///    `.`, `,`, `_`, `(`, `)`. So `Xi'an` = `xian`, `CN-GD` = `cngd`,
///    `Hong Kong` = `hongkong`, `刚果（布）` = `刚果布`;
/// 5. Traditional and variant Chinese characters become Simplified
///    (``ChineseVariants``, ICU's `Traditional-Simplified`): `廣州` = `广州`,
///    `臺灣` = `台灣` = `台湾`, `內蒙古` = `内蒙古`. Only text with a Han
///    character goes to ICU; ASCII input never does.
///
/// Keys are for comparison only; they are never shown or stored.
package struct MatchKey: Hashable, Sendable {
    /// The folded text.
    let text: String

    /// The key of `input` (see the type's description for the steps). Clients
    /// match spreadsheet headers with it (`國家` finds the label 国家). All-ASCII
    /// input takes ``NearestName/asciiKey(_:)``, without Unicode tables: ASCII has
    /// no full-width forms, decompositions, marks or Han characters, so steps 1,
    /// 2 and 5 change nothing.
    package init(_ input: String) {
        text = NearestName.asciiKey(input) ?? MatchKey.unicodeKey(input)
    }

    /// The key of any `input`, by the five steps with Unicode's tables and ICU.
    static func unicodeKey(_ input: String) -> String {
        let decomposed = MatchKey.foldFullWidth(input).decomposedStringWithCanonicalMapping
        var scalars = String.UnicodeScalarView()
        for scalar in decomposed.unicodeScalars {
            let category = scalar.properties.generalCategory
            if category == .nonspacingMark || category == .format || MatchKey.isSeparator(scalar) { continue }
            scalars.append(scalar)
        }
        return ChineseVariants.simplified(String(scalars).lowercased())
    }

    var isEmpty: Bool { text.isEmpty }

    /// Full-width ASCII forms (U+FF01–U+FF5E) mapped to ASCII, and the
    /// ideographic space (U+3000) to a space; everything else unchanged.
    /// Used for keys and for the lenient input of non-text fields.
    package static func foldFullWidth(_ input: String) -> String {
        guard input.unicodeScalars.contains(where: { $0.value == 0x3000 || (0xFF01...0xFF5E).contains($0.value) })
        else { return input }
        var out = String.UnicodeScalarView()
        for scalar in input.unicodeScalars {
            switch scalar.value {
            case 0x3000: out.append(" ")
            case 0xFF01...0xFF5E: out.append(Unicode.Scalar(scalar.value - 0xFEE0)!)
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    /// Whether `scalar` is one of the separators that keys drop (step 4).
    static func isSeparator(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isWhitespace { return true }
        switch scalar {
        case "-", "\u{2010}", "\u{2011}", "\u{2012}", "\u{2013}", "\u{2014}",
            "'", "\u{2018}", "\u{2019}", "`", ".", ",", "_", "(", ")":
            return true
        default:
            return false
        }
    }

    /// The Levenshtein distance (insertions, deletions, substitutions of Unicode
    /// scalars) between two keys, or `nil` as soon as it must exceed `limit`
    /// (``NearestName/distance(_:_:limit:)``).
    func distance(to other: MatchKey, limit: Int) -> Int? {
        NearestName.distance(Array(text.unicodeScalars), Array(other.text.unicodeScalars), limit: limit)
    }
}

extension MatchKey {
    /// The one of `names` nearest to `typed` within `limit` edits, for "did you
    /// mean" (a misspelt configuration key, command or option). Keys are
    /// compared, so case, dashes and spaces cost nothing (`MAX_conections` →
    /// `max-connections`); among equally near names, one with the same letters
    /// wins (two swapped letters: `lsit` → `list`, not `edit`). `nil` for input
    /// of fewer than three letters (any name is "near" `-x`), when none is that
    /// close, or when two are equally close.
    package static func nearest(_ typed: String, among names: [String], limit: Int = 2) -> String? {
        NearestName.nearest(typed, among: names, limit: limit) { MatchKey($0).text }
    }
}
