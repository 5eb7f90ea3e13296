import CInih
import Foundation

/// An INI file parsed with libinih (Debian's libinih-dev, release 55): sections
/// in file order, each with its `key = value` items and their line numbers.
///
/// Syntax (inih's): `[section]` headers; `key = value` or `key: value`, with
/// white space around key and value stripped; lines starting with `;` or `#`
/// are comments; after a value, `;` preceded by white space starts a comment.
/// Lines may be of any length (``IniLines`` works around inih's 200-byte line
/// limit). A UTF-8 byte order mark is ignored.
///
/// Debian's libinih is built with `INI_ALLOW_MULTILINE`: an indented line
/// after a key is more of that key's value. Form files may use that (the lines
/// are joined with `\n`); entryd.conf may not (`continuationLines: false`),
/// because there an indented line is a mistake (`socket = /run/x.sock` then
/// `  this is not ini` would give a path with a newline). A value with a
/// control character (U+0000–U+001F, U+007F) is refused in both.
///
/// Keys before the first header belong to a section named `""`. A header with
/// no items is still listed, so that an empty section can be reported.
package struct IniFile: Sendable {
    /// One `key = value` line (with its continuation lines).
    package struct Item: Sendable, Equatable {
        /// The key, white space stripped.
        package var key: String
        /// The value, white space stripped; continuation lines (where allowed) joined with `\n`.
        package var value: String
        /// The physical line of the key, from 1.
        package var line: Int
    }

    /// A `[name]` section and its items in file order.
    package struct Section: Sendable, Equatable {
        /// The text between the brackets, as written.
        package var name: String
        /// The physical line of the header, from 1 (0 for the unnamed leading section).
        package var line: Int
        /// The section's `key = value` items, in file order (keys may repeat).
        package var items: [Item]
    }

    /// The path the text was read from, for messages (may be a descriptive name).
    package let path: String
    /// The sections in file order.
    package let sections: [Section]

    /// Parses `text`.
    ///
    /// - Parameters:
    ///   - text: The file's content.
    ///   - path: Names the source in errors.
    ///   - continuationLines: Whether an indented line continues the key before
    ///     it (form files) or is refused (entryd.conf).
    /// - Throws: ``IniError`` for the first malformed line (no `=` or `:`, a
    ///   header without `]`, a NUL byte, a line too long to split, an indented
    ///   continuation, a control character), with every later one in ``IniError/more``.
    package init(text: String, path: String, continuationLines: Bool = true) throws {
        let prepared = IniLines(text)
        let state = ParseState(prepared, continuationLines: continuationLines)
        let status = withExtendedLifetime(state) {
            ini_parse_stream(
                feedLine, Unmanaged.passUnretained(state).toOpaque(),
                receiveItem, Unmanaged.passUnretained(state).toOpaque())
        }
        var problems = prepared.problems + state.problems
        if status > 0 {
            problems.append((prepared.lines[Int(status) - 1].physicalLine, "expected '[section]' or 'key = value'"))
        }
        let sorted = problems.sorted { $0.line < $1.line }.map {
            IniError(path: path, line: $0.line, message: $0.message)
        }
        if var first = sorted.first {
            first.more = Array(sorted.dropFirst())
            throw first
        }
        self.path = path
        sections = state.sections.filter { $0.line > 0 || !$0.items.isEmpty }
    }

    /// Reads and parses the UTF-8 file at `path`.
    ///
    /// - Throws: ``IniError`` (line 0) if the file cannot be read or is not
    ///   UTF-8; otherwise as ``init(text:path:)``.
    package init(contentsOfFile path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw IniError(path: path, line: 0, message: "cannot read the file")
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw IniError(path: path, line: 0, message: "the file is not valid UTF-8")
        }
        try self.init(text: text, path: path)
    }
}

/// A malformed INI file: where, and what is wrong.
package struct IniError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file, as given to ``IniFile``.
    package var path: String
    /// The physical line, from 1; 0 for the file as a whole.
    package var line: Int
    /// What is wrong.
    package var message: String
    /// The file's later problems, in line order (every problem is reported, not only the first).
    package var more: [IniError] = []

    /// `path:line: message`, one line per problem.
    package var description: String {
        ([self] + more).map { "\($0.path):\($0.line): \($0.message)" }.joined(separator: "\n")
    }
}

/// What the reader and handler callbacks share during one `ini_parse_stream` call.
private final class ParseState {
    let prepared: IniLines
    /// Index in `prepared.lines` of the next line to hand to inih.
    var next = 0
    var sections: [IniFile.Section] = [IniFile.Section(name: "", line: 0, items: [])]
    /// Index in `prepared.lines` of the line of the last item's key.
    var lastItemLine = -1
    /// Index in `prepared.headers` of the next header not yet opened.
    var nextHeader = 0
    /// Lines refused while handling items: (physical line, message).
    var problems: [(line: Int, message: String)] = []

    /// Whether an indented line may continue the key before it.
    let continuationLines: Bool

    init(_ prepared: IniLines, continuationLines: Bool) {
        self.prepared = prepared
        self.continuationLines = continuationLines
    }

    /// The line inih is processing (the last one handed out).
    var current: IniLines.Line { prepared.lines[next - 1] }

    /// Records one handler call for the current line.
    func handle(key: String, value: String) {
        let index = next - 1
        while nextHeader < prepared.headers.count, prepared.headers[nextHeader].lineIndex < index {
            let header = prepared.headers[nextHeader]
            sections.append(IniFile.Section(name: header.name, line: header.physicalLine, items: []))
            nextHeader += 1
        }
        let line = current
        let headerLine = nextHeader > 0 ? prepared.headers[nextHeader - 1].lineIndex : -1
        let last = sections.count - 1
        let continues = line.isIndented && lastItemLine > headerLine && !sections[last].items.isEmpty
        if let bad = value.unicodeScalars.first(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            problems.append(
                (
                    line.physicalLine,
                    "'\(key)': the value contains a control character (U+\(String(format: "%04X", bad.value))); remove it"
                ))
        }
        if continues {
            let item = sections[last].items.count - 1
            if line.isGlue || continuationLines {
                sections[last].items[item].value += (line.isGlue ? "" : "\n") + value
            } else {
                let owner = sections[last].items[item]
                problems.append(
                    (
                        line.physicalLine,
                        "an indented line would continue '\(owner.key)' of line \(owner.line); "
                            + "remove the indentation, make it a comment with '#', or put the text on line \(owner.line)"
                    ))
            }
        } else {
            sections[last].items.append(IniFile.Item(key: key, value: value, line: line.physicalLine))
            lastItemLine = index
        }
    }

    /// Opens the headers after the last item, so that trailing empty sections are listed.
    func finish() {
        for header in prepared.headers[nextHeader...] {
            sections.append(IniFile.Section(name: header.name, line: header.physicalLine, items: []))
        }
        nextHeader = prepared.headers.count
    }
}

/// inih's reader: copies the next prepared line, with `\n` and a NUL, into `buffer`.
private func feedLine(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int32, _ stream: UnsafeMutableRawPointer?)
    -> UnsafeMutablePointer<CChar>?
{
    guard let buffer, let stream else { return nil }
    let state = Unmanaged<ParseState>.fromOpaque(stream).takeUnretainedValue()
    guard state.next < state.prepared.lines.count else {
        state.finish()
        return nil
    }
    let bytes = state.prepared.lines[state.next].bytes
    precondition(bytes.count + 2 <= Int(size), "IniLines.maxLineBytes exceeds inih's buffer")
    let target = UnsafeMutableRawPointer(buffer)
    bytes.withUnsafeBytes { source in
        if let base = source.baseAddress { target.copyMemory(from: base, byteCount: source.count) }
    }
    target.storeBytes(of: 0x0A, toByteOffset: bytes.count, as: UInt8.self)
    target.storeBytes(of: 0, toByteOffset: bytes.count + 1, as: UInt8.self)
    state.next += 1
    return buffer
}

/// inih's handler: called once per `key = value` and per continuation line.
private func receiveItem(
    _ user: UnsafeMutableRawPointer?, _ section: UnsafePointer<CChar>?, _ name: UnsafePointer<CChar>?,
    _ value: UnsafePointer<CChar>?
) -> Int32 {
    guard let user, let name, let value else { return 1 }
    let state = Unmanaged<ParseState>.fromOpaque(user).takeUnretainedValue()
    state.handle(key: String(cString: name), value: String(cString: value))
    return 1
}
