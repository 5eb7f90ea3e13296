/// "Did you mean": the one edit distance and nearest-name rule of the package.
///
/// ``nearest(_:among:limit:key:)`` suggests a misspelt option, command or
/// configuration key; EntryModel's `MatchKey` builds its reference-data search
/// and its own `nearest` on ``distance(_:_:limit:)`` and ``nearest(_:among:limit:key:)``
/// with its Unicode keys. This target has no dependencies, so the default key is
/// ``asciiKey(_:)``, which is `MatchKey`'s for ASCII text.
package enum NearestName {
    /// The Levenshtein distance (insertions, deletions, substitutions) between
    /// `a` and `b`, or `nil` as soon as it must exceed `limit`.
    package static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], limit: Int) -> Int? {
        guard abs(a.count - b.count) <= limit else { return nil }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowMinimum = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(substitution, previous[j] + 1, current[j - 1] + 1)
                rowMinimum = min(rowMinimum, current[j])
            }
            if rowMinimum > limit { return nil }
            swap(&previous, &current)
        }
        return previous[b.count] <= limit ? previous[b.count] : nil
    }

    /// The one of `names` nearest to `typed` within `limit` edits, comparing
    /// their `key`s, so what the key folds costs nothing (with the default key:
    /// case, dashes and underscores, `MAX_conections` → `max-connections`);
    /// among equally near names, one with the same letters wins (two swapped
    /// letters: `lsit` → `list`, not `edit`). `nil` for a key of fewer than
    /// three letters (any name is "near" `-x`), when none is that close, or
    /// when two are equally close.
    package static func nearest(
        _ typed: String, among names: [String], limit: Int = 2,
        key: (String) -> String = NearestName.defaultKey
    ) -> String? {
        let typedKey = Array(key(typed).unicodeScalars)
        guard typedKey.count >= 3 else { return nil }
        let letters = typedKey.map(\.value).sorted()
        // (name, distance, 0 for the same letters else 1): lower is nearer.
        let scored = names.compactMap { name -> (String, Int, Int)? in
            let other = Array(key(name).unicodeScalars)
            return distance(typedKey, other, limit: limit).map {
                (name, $0, other.map(\.value).sorted() == letters ? 0 : 1)
            }
        }
        guard let best = scored.min(by: { ($0.1, $0.2) < ($1.1, $1.2) }),
            scored.filter({ $0.1 == best.1 && $0.2 == best.2 }).count == 1
        else { return nil }
        return best.0
    }

    /// ``asciiKey(_:)``, or for text with a non-ASCII letter the text lower-cased
    /// without the ASCII separators ``asciiKey(_:)`` drops (`--límit` → `límit`,
    /// one edit from `limit`): the key of option names, which are ASCII.
    package static func defaultKey(_ text: String) -> String {
        if let key = asciiKey(text) { return key }
        let kept = text.lowercased().unicodeScalars.filter { !$0.isASCII || asciiKey(String($0)) != "" }
        return String(String.UnicodeScalarView(kept))
    }

    /// The matching key of all-ASCII `input` (EntryModel's `MatchKey` for ASCII
    /// text: most codes, pinyin, English names, picker values, option names):
    /// A–Z lower-cased; ASCII white space (U+0009–U+000D, U+0020) and the
    /// separators `-`, `'`, `` ` ``, `.`, `,`, `_`, `(`, `)` dropped. `nil` when
    /// `input` has a non-ASCII byte.
    package static func asciiKey(_ input: String) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(input.utf8.count)
        for b in input.utf8 {
            switch b {
            case 0x80...: return nil
            case 0x09...0x0D, 0x20, UInt8(ascii: "-"), UInt8(ascii: "'"), UInt8(ascii: "`"), UInt8(ascii: "."),
                UInt8(ascii: ","), UInt8(ascii: "_"), UInt8(ascii: "("), UInt8(ascii: ")"):
                continue
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): bytes.append(b + 32)
            default: bytes.append(b)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
