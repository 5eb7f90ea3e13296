import EntryModel

/// A malformed CSV input: where and what.
package struct CSVError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The 1-based physical line where the bad record starts.
    package var line: Int
    /// What is wrong, in English.
    package var reason: String
    /// A CSV error at `line`.
    package init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }
    /// The text shown to people (English).
    package var description: String { "CSV line \(line): \(reason)" }
}

/// Reads comma-separated values as RFC 4180 defines them, record by record,
/// from a ``ByteInput`` (so a large file is never held whole).
///
/// The separator may be other than the comma: `;` (Excel where the comma is the
/// decimal sign) or a tab; ``InputSniffer/separator(header:)`` tells it.
///
/// The input's encoding is detected and converted by ``ByteInput`` (UTF-8,
/// UTF-16 with a byte order mark, GB18030); the fields are always valid text.
///
/// Accepted beyond the RFC, as spreadsheet programs write it: a byte order
/// mark at the start (skipped), LF as well as CRLF line ends, a last record
/// without a line end, and a `"` inside an unquoted field (kept as it is). Blank
/// lines are skipped. A quoted field may span lines; one left open at the end of
/// the input is an error.
package final class CSVReader {
    private let input: ByteInput
    private var buffer: [UInt8] = []
    private var position = 0
    private var started = false
    private var finished = false
    private var line = 1
    /// Whether the input began with a UTF-8 byte order mark (skipped); known once a record was read.
    package private(set) var hadByteOrderMark = false
    /// How the first record ended: `"\r\n"`, `"\n"` or `"\r"`; `nil` before it
    /// or when the input is one record without a line end. A report written
    /// for the input (rejects) ends its lines the same way.
    package private(set) var firstLineEnd: String?

    /// The byte between fields: `,` unless given otherwise.
    let separator: UInt8

    /// Reads records of `input`, their fields separated by `separator`.
    package init(_ input: ByteInput, separator: UInt8 = UInt8(ascii: ",")) {
        self.input = input
        self.separator = separator
    }

    /// Ensures at least one unread byte; `false` at the end of the input.
    private func fill() throws -> Bool {
        if position < buffer.count { return true }
        if finished { return false }
        let chunk = try input.read()
        buffer = chunk
        position = 0
        if chunk.isEmpty {
            finished = true
            return false
        }
        if !started {
            started = true
            // A BOM split across the first reads is not expected: chunks are 64 KiB.
            if buffer.starts(with: utf8ByteOrderMark) {
                position = 3
                hadByteOrderMark = true
            }
            return try fill()
        }
        return true
    }

    /// The next record's fields and the 1-based line it starts on; `nil` at the end.
    /// - Throws: ``CSVError`` for a quoted field left open, ``SystemError`` or ``InputEncodingError`` from reading.
    package func next() throws -> (fields: [String], line: Int)? {
        while true {
            guard try fill() else { return nil }
            let startLine = line
            var fields: [String] = []
            var field: [UInt8] = []
            var quoted = false  // inside a quoted field
            var wasQuoted = false  // the current field began with a quote
            var endOfRecord = false
            while !endOfRecord {
                guard try fill() else {
                    if quoted {
                        throw CSVError(
                            line: startLine, reason: "a quoted field is not closed before the end of the input")
                    }
                    break
                }
                let b = buffer[position]
                position += 1
                if quoted {
                    if b == UInt8(ascii: "\"") {
                        if try fill(), buffer[position] == UInt8(ascii: "\"") {
                            field.append(b)
                            position += 1
                        } else {
                            quoted = false
                        }
                    } else {
                        if b == UInt8(ascii: "\n") { line += 1 }
                        field.append(b)
                    }
                    continue
                }
                switch b {
                case separator:
                    fields.append(String(decoding: field, as: UTF8.self))
                    field.removeAll(keepingCapacity: true)
                    wasQuoted = false
                case UInt8(ascii: "\r"):
                    if try fill(), buffer[position] == UInt8(ascii: "\n") {
                        position += 1
                        if firstLineEnd == nil { firstLineEnd = "\r\n" }
                    } else if firstLineEnd == nil {
                        firstLineEnd = "\r"
                    }
                    line += 1
                    endOfRecord = true
                case UInt8(ascii: "\n"):
                    if firstLineEnd == nil { firstLineEnd = "\n" }
                    line += 1
                    endOfRecord = true
                case UInt8(ascii: "\"") where field.isEmpty && !wasQuoted:
                    quoted = true
                    wasQuoted = true
                default:
                    field.append(b)
                }
            }
            fields.append(String(decoding: field, as: UTF8.self))
            if fields.count == 1 && fields[0].isEmpty && !wasQuoted { continue }  // a blank line
            return (fields, startLine)
        }
    }
}
