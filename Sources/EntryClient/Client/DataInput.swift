@preconcurrency import Glibc
import EntryModel
import EntryProtocol

/// A file (or standard input) read in chunks, never whole: what `entryctl import`
/// reads rows from, with the counts a progress bar needs.
///
/// What it hands out is always valid UTF-8: the input's encoding is detected
/// and converted (``InputEncoding``; UTF-8, UTF-16 with a byte order mark,
/// GB18030), and bytes that do not decode throw ``InputEncodingError`` with
/// their line and offset, never becoming U+FFFD.
///
/// Not thread-safe: one reader at a time.
package final class ByteInput {
    /// Bytes per `read(2)`: 64 KiB.
    static let chunkBytes = 64 << 10

    private let fd: Int32
    private let ownsDescriptor: Bool
    /// Size of the input in bytes when it is a regular file (for ETA), else `nil`.
    package let totalBytes: Int64?
    /// Bytes of the input read so far (before decoding).
    package private(set) var bytesRead: Int64 = 0
    private var atEnd = false
    private let decoder = InputDecoder()

    /// The input's encoding, detected at its first byte that is not ASCII (or a
    /// byte order mark); `nil` while all of it read so far is ASCII.
    package var encoding: InputEncoding? { decoder.encoding }

    /// Whether only UTF-8 is accepted (JSON): input in another encoding throws
    /// ``InputEncodingError`` (``InputEncodingError/Kind/notUTF8(_:)``).
    package var acceptsOnlyUTF8: Bool {
        get { decoder.utf8Only }
        set { decoder.utf8Only = newValue }
    }

    /// Opens `path` for reading; `-` is standard input.
    /// - Throws: ``SystemError`` (`open`) when the file cannot be opened, or
    ///   is a directory (`EISDIR`).
    package init(path: String) throws(SystemError) {
        if path == "-" {
            fd = 0
            ownsDescriptor = false
        } else {
            let opened = open(path, O_RDONLY | O_CLOEXEC)
            guard opened >= 0 else { throw SystemError("open", detail: path) }
            fd = opened
            ownsDescriptor = true
        }
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            if ownsDescriptor { close(fd) }
            throw SystemError("open", errno: EISDIR, detail: path)
        }
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
            totalBytes = Int64(info.st_size)
        } else {
            totalBytes = nil
        }
    }

    /// Wraps bytes already in memory (tests).
    package init(bytes: [UInt8]) {
        fd = -1
        ownsDescriptor = false
        totalBytes = Int64(bytes.count)
        pending = bytes
    }
    private var pending: [UInt8]?

    deinit { if ownsDescriptor { close(fd) } }

    /// Bytes read ahead by ``peekFirstLine(limit:)``, handed out again by ``read()``.
    private var lookahead: [UInt8] = []
    /// Whether ``peekFirstLine(limit:)`` reached the end of the input.
    private var lookaheadReachedEnd = false

    /// The next chunk of at most ``chunkBytes`` bytes (more when it holds what
    /// ``peekFirstLine(limit:)`` read ahead), as UTF-8; empty at the end.
    /// - Throws: ``SystemError`` (`read`), ``InputEncodingError``.
    package func read() throws -> [UInt8] {
        if !lookahead.isEmpty {
            defer { lookahead = [] }
            return lookahead
        }
        if lookaheadReachedEnd { return [] }
        return try readChunk()
    }

    /// The start of the input without consuming it: whether it begins with a
    /// UTF-8 byte order mark, and its first line that is not blank (without the
    /// line end; a line end inside double quotes does not end it, as in a CSV
    /// header). Looks at no more than `limit` bytes: a longer line is cut there.
    /// Everything read here is handed out again by ``read()``.
    /// - Throws: ``SystemError`` (`read`), ``InputEncodingError``.
    package func peekFirstLine(limit: Int = 1 << 20) throws -> (byteOrderMark: Bool, line: [UInt8]) {
        while !lookaheadReachedEnd && lookahead.count < limit {
            let bom = lookahead.starts(with: utf8ByteOrderMark)
            if let line = Self.firstLine(lookahead.dropFirst(bom ? 3 : 0), complete: false) { return (bom, line) }
            let chunk = try readChunk()
            if chunk.isEmpty { lookaheadReachedEnd = true } else { lookahead += chunk }
        }
        let bom = lookahead.starts(with: utf8ByteOrderMark)
        let line = Self.firstLine(lookahead.prefix(limit).dropFirst(bom ? 3 : 0), complete: true) ?? []
        return (bom, line)
    }

    /// The first non-blank line of `bytes` ended by LF outside double quotes,
    /// without CR LF; with `complete`, an unended last line counts too. `nil`
    /// when no such line is there yet.
    static func firstLine(_ bytes: ArraySlice<UInt8>, complete: Bool) -> [UInt8]? {
        var start = bytes.startIndex
        var quoted = false
        var i = bytes.startIndex
        func line(_ end: Int) -> [UInt8]? {
            var text = bytes[start..<end]
            if text.last == UInt8(ascii: "\r") { text = text.dropLast() }
            return text.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) ? nil : Array(text)
        }
        while i < bytes.endIndex {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                quoted.toggle()
            } else if b == UInt8(ascii: "\n") && !quoted {
                if let found = line(i) { return found }
                start = i + 1
            }
            i += 1
        }
        return complete ? line(bytes.endIndex) : nil
    }

    /// The next decoded chunk (UTF-8); empty at the end.
    private func readChunk() throws -> [UInt8] {
        while true {
            let raw = try readRaw()
            let text = try decoder.decode(raw, final: raw.isEmpty)
            if !text.isEmpty || raw.isEmpty { return text }
        }
    }

    /// One chunk from the descriptor (or the bytes given to ``init(bytes:)``), as it is.
    private func readRaw() throws(SystemError) -> [UInt8] {
        if let bytes = pending {
            pending = nil
            atEnd = true
            bytesRead += Int64(bytes.count)
            return bytes
        }
        if atEnd || fd < 0 { return [] }
        var chunk = [UInt8](repeating: 0, count: Self.chunkBytes)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError("read", detail: "input")
            }
            if n == 0 {
                atEnd = true
                return []
            }
            bytesRead += Int64(n)
            return Array(chunk[0..<n])
        }
    }
}

/// The UTF-8 byte order mark, `EF BB BF`: spreadsheet programs write it in front
/// of CSV; readers here skip it at the start of an input.
package let utf8ByteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

/// Splits an input into lines (LF or CRLF), skipping a leading byte order mark
/// and blank lines: the records of JSON lines.
package final class LineReader {
    private let input: ByteInput
    private var buffer: [UInt8] = []
    private var position = 0
    private var started = false
    private var physicalLine = 0

    /// Reads lines of `input`.
    package init(_ input: ByteInput) { self.input = input }

    /// The next non-blank line without its line end, and its 1-based line number;
    /// `nil` at the end.
    /// - Throws: ``SystemError`` or ``InputEncodingError`` from reading.
    package func next() throws -> (bytes: ArraySlice<UInt8>, line: Int)? {
        while true {
            if let newline = buffer[position...].firstIndex(of: UInt8(ascii: "\n")) {
                var line = buffer[position..<newline]
                position = newline + 1
                physicalLine += 1
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                return (line, physicalLine)
            }
            let chunk = try input.read()
            if chunk.isEmpty {
                guard position < buffer.count else { return nil }
                var line = buffer[position...]
                position = buffer.count
                physicalLine += 1
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
                return (line, physicalLine)
            }
            buffer.removeFirst(position)
            position = 0
            buffer += chunk
            if !started, buffer.count >= 3 || chunk.count < 3 {
                started = true
                if buffer.starts(with: utf8ByteOrderMark) { buffer.removeFirst(3) }
            }
        }
    }
}

/// What the start of an input says about its format, for `entryctl import`
/// without `--format` (a file with no telling extension, or standard input).
package enum InputSniffer {
    /// The formats an input can be in.
    package enum Format: Sendable, Equatable {
        /// One JSON object per line.
        case jsonLines
        /// One JSON array.
        case jsonArray
        /// Comma- (or semicolon-, tab-) separated values with a header line.
        case csv
    }

    /// The format of an input whose first non-blank line is `line`: JSON lines
    /// when it starts with `{`, a JSON array when it starts with `[`, else CSV
    /// (a header). Leading spaces do not count. A byte order mark, which
    /// spreadsheet programs write in front of CSV, is skipped before this
    /// (``ByteInput/peekFirstLine(limit:)``); an empty input is JSON lines
    /// (no rows).
    package static func format(firstLine line: [UInt8]) -> Format {
        switch line.first(where: { $0 != 0x20 && $0 != 0x09 }) {
        case UInt8(ascii: "{"), nil: return .jsonLines
        case UInt8(ascii: "["): return .jsonArray
        default: return .csv
        }
    }

    /// The field separator of a CSV whose header line is `header`: `;` when it
    /// holds more semicolons than commas outside double quotes (what Excel
    /// writes where the comma is the decimal sign), a tab when it holds more
    /// tabs than either, else `,`.
    package static func separator(header: [UInt8]) -> UInt8 {
        var commas = 0
        var semicolons = 0
        var tabs = 0
        var quoted = false
        for b in header {
            switch b {
            case UInt8(ascii: "\""): quoted.toggle()
            case UInt8(ascii: ",") where !quoted: commas += 1
            case UInt8(ascii: ";") where !quoted: semicolons += 1
            case 0x09 where !quoted: tabs += 1
            default: break
            }
        }
        if tabs > commas && tabs > semicolons { return 0x09 }
        return semicolons > commas ? UInt8(ascii: ";") : UInt8(ascii: ",")
    }
}
