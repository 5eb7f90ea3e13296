import CInih

/// The physical lines of an INI text, prepared for libinih's reader callback.
///
/// Debian's libinih (release 55) is built with `INI_MAX_LINE` 200: a longer
/// line would be cut, and the rest read as a line of its own. It also passes no
/// line numbers to the handler. So the text is fed through this type:
/// - every line sent to inih remembers its physical line number;
/// - a line longer than the limit is sent as `key = FIRST` followed by
///   continuation lines ` NEXT` (inih's `INI_ALLOW_MULTILINE`: a line that
///   starts with white space continues the previous key; inih strips that
///   space), marked as glue so the handler re-joins them without a separator.
///   A split never falls inside a UTF-8 sequence, next to white space (inih
///   strips it) or before `;` or `#` (inih would read a comment);
/// - a long line's inline comment (`;` after white space) is dropped first, as
///   inih would drop it; a long comment line is sent as an empty line.
/// Lines that cannot be sent this way are reported as ``problems``.
struct IniLines {
    /// One line as inih receives it.
    struct Line {
        /// The bytes without the line end.
        var bytes: [UInt8]
        /// The line number in the file, from 1.
        var physicalLine: Int
        /// A piece of a split line: appended to the previous value without a separator.
        var isGlue = false
        /// Starts with white space and is neither blank nor a comment: inih reads it
        /// as a continuation if a key came before it in the same section.
        var isIndented = false
    }

    /// A `[section]` header inih accepts.
    struct Header {
        var name: String
        var physicalLine: Int
        /// The index in ``lines`` of the header line.
        var lineIndex: Int
    }

    /// The most bytes a line may have for inih: `INI_MAX_LINE` less room for
    /// `\r`, `\n` and the terminating NUL (ini.h: "must be 3 more than the longest line").
    static let maxLineBytes = Int(INI_MAX_LINE) - 3

    private(set) var lines: [Line] = []
    private(set) var headers: [Header] = []
    /// Lines that could not be passed on: (physical line, message).
    private(set) var problems: [(line: Int, message: String)] = []

    init(_ text: String) {
        var physical = Array(text.utf8).split(separator: 0x0A, omittingEmptySubsequences: false)
        if physical.last?.isEmpty == true { physical.removeLast() }
        for (offset, slice) in physical.enumerated() {
            var bytes = Array(slice)
            if bytes.last == 0x0D { bytes.removeLast() }
            if offset == 0, bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
            add(bytes, physicalLine: offset + 1)
        }
    }

    private mutating func add(_ bytes: [UInt8], physicalLine n: Int) {
        if bytes.contains(0) { return reject(n, "contains a NUL byte") }
        let body = bytes.drop(while: Self.isSpace)
        guard let first = body.first, first != UInt8(ascii: ";"), first != UInt8(ascii: "#") else {
            return lines.append(Line(bytes: [], physicalLine: n))
        }
        if first == UInt8(ascii: "[") {
            guard bytes.count <= Self.maxLineBytes else { return reject(n, "section header is too long") }
            if let name = Self.sectionName(body) {
                headers.append(Header(name: name, physicalLine: n, lineIndex: lines.count))
            }
            return lines.append(Line(bytes: bytes, physicalLine: n))
        }
        let indented = body.startIndex > 0
        if bytes.count <= Self.maxLineBytes {
            return lines.append(Line(bytes: bytes, physicalLine: n, isIndented: indented))
        }
        if indented {
            // A user's continuation line: inih keeps its ` ;` text, so no comment is cut.
            guard let pieces = Self.split(Array(body), firstCapacity: Self.maxLineBytes - 1) else {
                return reject(n, "line is too long to split")
            }
            return append(pieces.map { [UInt8(ascii: " ")] + $0 }, physicalLine: n)
        }
        let uncommented = Self.trimEnd(Self.cutInlineComment(bytes))
        if uncommented.count <= Self.maxLineBytes {
            return lines.append(Line(bytes: uncommented, physicalLine: n))
        }
        guard let separator = uncommented.firstIndex(where: { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: ":") })
        else { return reject(n, "expected 'key = value'") }
        let head = Self.trimEnd(Array(uncommented[..<separator].drop(while: Self.isSpace))) + Array(" = ".utf8)
        let value = Array(uncommented[(separator + 1)...].drop(while: Self.isSpace))
        guard let pieces = Self.split(value, firstCapacity: Self.maxLineBytes - head.count) else {
            return reject(n, "line is too long to split")
        }
        append([head + pieces[0]] + pieces.dropFirst().map { [UInt8(ascii: " ")] + $0 }, physicalLine: n)
    }

    /// Appends the pieces of one physical line: the first as a line, the rest as glue.
    private mutating func append(_ pieces: [[UInt8]], physicalLine n: Int) {
        for (i, piece) in pieces.enumerated() {
            lines.append(
                Line(
                    bytes: piece, physicalLine: n, isGlue: i > 0,
                    isIndented: i > 0 || piece.first.map(Self.isSpace) == true))
        }
    }

    private mutating func reject(_ n: Int, _ message: String) {
        problems.append((n, message))
        lines.append(Line(bytes: [], physicalLine: n))
    }

    /// Splits `bytes` into pieces of at most `firstCapacity` bytes for the first
    /// and `maxLineBytes - 1` for the others (they get a leading space), at
    /// allowed points only; `nil` if some stretch has no allowed point.
    static func split(_ bytes: [UInt8], firstCapacity: Int) -> [[UInt8]]? {
        var pieces: [[UInt8]] = []
        var start = 0
        var capacity = firstCapacity
        while bytes.count - start > capacity {
            var end = start + capacity
            while end > start, !isSplitPoint(bytes, end) { end -= 1 }
            guard end > start else { return nil }
            pieces.append(Array(bytes[start..<end]))
            start = end
            capacity = maxLineBytes - 1
        }
        pieces.append(Array(bytes[start...]))
        return pieces
    }

    /// Whether a piece may start at `i`: not inside a UTF-8 sequence, not at or
    /// after white space, not at `;` or `#`.
    private static func isSplitPoint(_ b: [UInt8], _ i: Int) -> Bool {
        b[i] & 0xC0 != 0x80 && !isSpace(b[i]) && !isSpace(b[i - 1])
            && b[i] != UInt8(ascii: ";") && b[i] != UInt8(ascii: "#")
    }

    /// The text up to the first `;` that follows white space (inih's inline comment).
    private static func cutInlineComment(_ b: [UInt8]) -> [UInt8] {
        guard let i = b.indices.dropFirst().first(where: { b[$0] == UInt8(ascii: ";") && isSpace(b[$0 - 1]) })
        else { return b }
        return Array(b[..<i])
    }

    /// The name of a `[name]` header as inih reads it (up to `]`, unless an
    /// inline comment comes first), or `nil` when inih would reject the line.
    private static func sectionName(_ body: ArraySlice<UInt8>) -> String? {
        var previousWasSpace = false
        for i in body.indices.dropFirst() {
            if body[i] == UInt8(ascii: "]") {
                return String(decoding: body[(body.startIndex + 1)..<i], as: UTF8.self)
            }
            if body[i] == UInt8(ascii: ";") && previousWasSpace { return nil }
            previousWasSpace = isSpace(body[i])
        }
        return nil
    }

    private static func trimEnd(_ b: [UInt8]) -> [UInt8] {
        var b = b
        while let last = b.last, isSpace(last) { b.removeLast() }
        return b
    }

    /// inih's `isspace` on the bytes that can occur here.
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }
}
