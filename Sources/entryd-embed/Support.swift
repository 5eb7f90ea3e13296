import Foundation

/// Why the tool stops: the message names the file and what is wrong with it.
struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The text of the file at `path`, which must be UTF-8 with LF line ends
/// (what the generated literals hold is the file byte for byte).
func readText(_ path: String) throws -> String {
    guard let data = FileManager.default.contents(atPath: path) else { throw Failure("\(path): cannot read") }
    guard let text = String(validating: data, as: UTF8.self) else { throw Failure("\(path): not UTF-8") }
    if text.utf8.contains(13) { throw Failure("\(path): CR found (LF line ends only)") }
    return text
}

/// Writes `lines` joined by LF with a final LF, only when the file differs,
/// so an edit that does not change the generated text recompiles nothing.
func write(_ lines: [String], to path: String) throws {
    let text = lines.joined(separator: "\n") + "\n"
    if let old = FileManager.default.contents(atPath: path), old == Data(text.utf8) { return }
    guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
        throw Failure("\(path): cannot write")
    }
}

/// A Swift multi-line raw string literal whose value is exactly `text`, with
/// as many `#` as it takes (at least one).
func rawLiteral(_ text: String) -> String {
    var hashes = "#"
    while text.contains("\"\"\"" + hashes) || text.contains("\\" + hashes) { hashes += "#" }
    // The newline right before the closing delimiter is not part of the value.
    return "\(hashes)\"\"\"\n\(text)\n\"\"\"\(hashes)"
}

/// `path` under `root`.
func join(_ root: String, _ path: String) -> String {
    root.hasSuffix("/") ? root + path : root + "/" + path
}

extension String {
    /// Without white space at either end (Python's `str.strip()` for these texts).
    var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }

    /// Without white space at the end (`str.rstrip()`).
    var trimmedAtEnd: String {
        var s = Substring(self)
        while let last = s.last, last.isWhitespace { s.removeLast() }
        return String(s)
    }

    /// Lexicographic by UTF-8 bytes (the order of the generated entries).
    func byteOrder(before other: String) -> Bool { utf8.lexicographicallyPrecedes(other.utf8) }
}
