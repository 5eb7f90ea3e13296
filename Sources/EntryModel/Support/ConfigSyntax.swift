import Foundation

/// The value syntax shared by entryd.conf and entryd-web.conf: sizes with
/// `K`/`M`, times with `s`/`min`/`h`/`d`, plain counts, each within bounds.
package enum ConfigSyntax {
    /// A value outside its syntax or bounds; ``message`` says what to write instead.
    package struct Invalid: Error, Sendable, Equatable {
        /// "give a whole number from 1 to 10 (or with a unit, e.g. 4M), not 'x'".
        package var message: String
    }

    /// A whole number of bytes, optionally with `K` or `M` (KiB, MiB), within `range`.
    package static func bytes(_ text: String, _ range: ClosedRange<Int>) throws(Invalid) -> Int {
        try scaled(
            text, range, unit: "bytes", example: "4M",
            suffixes: [("K", 1024), ("KiB", 1024), ("M", 1 << 20), ("MiB", 1 << 20)])
    }

    /// A whole number of seconds, optionally with `s`, `min`, `h` or `d` (days), within `range`.
    package static func seconds(_ text: String, _ range: ClosedRange<Int>) throws(Invalid) -> Int {
        try scaled(
            text, range, unit: "seconds", example: "5min",
            suffixes: [("s", 1), ("min", 60), ("m", 60), ("h", 3600), ("d", 86_400)])
    }

    /// A plain whole number within `range`.
    package static func count(_ text: String, _ range: ClosedRange<Int>) throws(Invalid) -> Int {
        try scaled(text, range, unit: "", example: String(range.upperBound / 2), suffixes: [])
    }

    private static func scaled(
        _ text: String, _ range: ClosedRange<Int>, unit: String, example: String,
        suffixes: [(String, Int)]
    ) throws(Invalid) -> Int {
        var digits = Substring(text)
        var factor = 1
        for (suffix, f) in suffixes.sorted(by: { $0.0.count > $1.0.count }) where digits.hasSuffix(suffix) {
            digits = digits.dropLast(suffix.count)
            factor = f
            break
        }
        digits = Substring(digits.trimmingCharacters(in: .whitespaces))
        let bounds =
            unit.isEmpty
            ? "\(range.lowerBound) to \(range.upperBound)"
            : "\(range.lowerBound) to \(range.upperBound) \(unit)"
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
            let n = Int(digits), n <= Int.max / factor, range.contains(n * factor)
        else {
            let forms = suffixes.isEmpty ? "" : " (or with a unit, e.g. \(example))"
            throw Invalid(message: "give a whole number from \(bounds)\(forms), not '\(text)'")
        }
        return n * factor
    }
}
