#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import EntryModel
import EntryProtocol

/// A file (or standard input) read in chunks, never whole: what `entryctl import`
/// reads rows from, with the counts a progress bar needs.
///
/// Not thread-safe: one reader at a time.
public final class ByteInput {
    /// Bytes per `read(2)`: 64 KiB.
    static let chunkBytes = 64 << 10

    private let fd: Int32
    private let ownsDescriptor: Bool
    /// Size of the input in bytes when it is a regular file (for ETA), else `nil`.
    public let totalBytes: Int64?
    /// Bytes handed out so far.
    public private(set) var bytesRead: Int64 = 0
    private var atEnd = false

    /// Opens `path` for reading; `-` is standard input.
    /// - Throws: ``SystemError`` (`open`) when the file cannot be opened.
    public init(path: String) throws(SystemError) {
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
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
            totalBytes = Int64(info.st_size)
        } else {
            totalBytes = nil
        }
    }

    /// Wraps bytes already in memory (tests).
    public init(bytes: [UInt8]) {
        fd = -1
        ownsDescriptor = false
        totalBytes = Int64(bytes.count)
        pending = bytes
    }
    private var pending: [UInt8]?

    deinit { if ownsDescriptor { close(fd) } }

    /// The next chunk of at most ``chunkBytes`` bytes; empty at the end.
    /// - Throws: ``SystemError`` (`read`).
    public func read() throws(SystemError) -> [UInt8] {
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
            if n == 0 { atEnd = true; return [] }
            bytesRead += Int64(n)
            return Array(chunk[0..<n])
        }
    }
}

/// The UTF-8 byte order mark, `EF BB BF`: spreadsheet programs write it in front
/// of CSV; readers here skip it at the start of an input.
public let utf8ByteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

/// Splits an input into lines (LF or CRLF), skipping a leading byte order mark
/// and blank lines: the records of JSON lines.
public final class LineReader {
    private let input: ByteInput
    private var buffer: [UInt8] = []
    private var position = 0
    private var started = false
    private var physicalLine = 0

    /// Reads lines of `input`.
    public init(_ input: ByteInput) { self.input = input }

    /// The next non-blank line without its line end, and its 1-based line number;
    /// `nil` at the end.
    /// - Throws: ``SystemError`` from reading.
    public func next() throws(SystemError) -> (bytes: ArraySlice<UInt8>, line: Int)? {
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
