@preconcurrency import Glibc
import EntryModel

/// The character encodings `entryctl import` reads: UTF-8 (with or without a
/// byte order mark), UTF-16 with a byte order mark or without one (told by its
/// NUL bytes: ``InputDecoder/utf16WithoutBOM(_:)``), and GB18030 (which GBK and
/// GB2312 are subsets of: what Excel in China saves CSV as). Everything else
/// is converted through glibc's iconv to UTF-8 before it is parsed.
package enum InputEncoding: String, Sendable, Equatable {
    /// UTF-8, with or without `EF BB BF` in front.
    case utf8 = "UTF-8"
    /// UTF-16 little-endian, told by `FF FE` in front (or, without it, by a NUL after ASCII code units).
    case utf16LE = "UTF-16LE"
    /// UTF-16 big-endian, told by `FE FF` in front (or, without it, by a NUL before ASCII code units).
    case utf16BE = "UTF-16BE"
    /// GB18030 (and so GBK and GB2312), when the bytes are not valid UTF-8.
    case gb18030 = "GB18030"

    /// `text` (UTF-8 bytes, all valid) in this encoding, for a report written
    /// back in the input's encoding. A UTF-8 byte order mark in `text` becomes
    /// this encoding's (`FF FE` or `FE FF` for UTF-16).
    package func encode(_ text: [UInt8]) -> [UInt8] {
        guard self != .utf8, !text.isEmpty, let converter = Iconv(from: "UTF-8", to: rawValue) else { return text }
        let result = converter.convert(text[...])
        return result.output
    }
}

/// An input that is not text in an encoding `entryctl import` reads, or not in
/// the one it must be in (JSON is UTF-8): where, and how to convert it.
package struct InputEncodingError: Error, Sendable, Equatable {
    /// What is wrong.
    package enum Kind: Sendable, Equatable {
        /// The bytes at ``InputEncodingError/byteOffset`` are neither UTF-8 nor GB18030.
        case unknown
        /// The input was read as this encoding and the bytes at the offset are not valid in it
        /// (or end in the middle of a character).
        case invalid(InputEncoding)
        /// The input is in this encoding, and its format (JSON) must be UTF-8.
        case notUTF8(InputEncoding)
        /// Read as GB18030 the bytes at the offset are a private-use character
        /// (U+E000–U+F8FF: GB18030's user-defined areas), which no text people
        /// type holds: the input is in another encoding, most likely Big5
        /// (Traditional Chinese) or Shift-JIS (Japanese), whose bytes GB18030
        /// mostly decodes as other, wrong characters.
        case privateUse
    }

    /// What is wrong.
    package var kind: Kind
    /// The 1-based line (counted in the decoded text) holding the bad bytes.
    package var line: Int
    /// The 0-based offset in the input of the first bad byte (as `iconv` and `cmp` count).
    package var byteOffset: Int64

    /// An encoding error of `kind` at `line` and `byteOffset`.
    package init(_ kind: Kind, line: Int, byteOffset: Int64) {
        self.kind = kind
        self.line = line
        self.byteOffset = byteOffset
    }

    /// The words for people about input `file` (`-` is standard input), in
    /// `locale`: the problem, where, and the `iconv` command that converts it.
    package func message(file: String, locale: EntryLocale) -> String {
        let name = file == "-" ? (locale == .zh ? "标准输入" : "standard input") : "'\(file)'"
        let source: String = {
            switch kind {
            case .unknown, .invalid(.utf8), .invalid(.gb18030): "GB18030"
            case .privateUse: "BIG5"
            case .invalid(let encoding), .notUTF8(let encoding): encoding.rawValue
            }
        }()
        let convert = "iconv -f \(source) -t UTF-8 \(file == "-" ? "FILE" : file) > converted.csv"
        switch (kind, locale) {
        case (.unknown, .zh):
            return "\(name) 第 \(line) 行（字节偏移 \(byteOffset)）既不是 UTF-8 也不是 GB18030 编码，未导入之后的内容。"
                + "请先将文件转换为 UTF-8，例如：\(convert)（把 -f 换成文件实际的编码）"
        case (.unknown, _):
            return
                "\(name) line \(line) (byte offset \(byteOffset)) is neither UTF-8 nor GB18030 text; nothing after it was read. "
                + "Convert the file to UTF-8 first, e.g. \(convert) (with -f the file's real encoding)"
        case (.invalid(let encoding), .zh):
            return
                "\(name) 按 \(encoding.rawValue) 读取，第 \(line) 行（字节偏移 \(byteOffset)）的字节不是有效的 \(encoding.rawValue)，未导入之后的内容。"
                + "请检查文件的编码并转换为 UTF-8，例如：\(convert)"
        case (.invalid(let encoding), _):
            return
                "\(name) was read as \(encoding.rawValue), and the bytes at line \(line) (byte offset \(byteOffset)) are not valid \(encoding.rawValue); "
                + "nothing after them was read. Check the file's encoding and convert it to UTF-8, e.g. \(convert)"
        case (.privateUse, .zh):
            return "\(name) 按 GB18030 读取时，第 \(line) 行（字节偏移 \(byteOffset)）是私用区字符，不是真实的文字：文件很可能是 Big5"
                + "（繁体中文，台湾、香港）或 Shift-JIS（日文）编码，未导入任何内容。请先转换为 UTF-8，例如：\(convert)（日文文件用 -f SHIFT_JIS）"
        case (.privateUse, _):
            return
                "\(name) read as GB18030 has a private-use character at line \(line) (byte offset \(byteOffset)), not real text: "
                + "the file is most likely Big5 (Traditional Chinese: Taiwan, Hong Kong) or Shift-JIS (Japanese); nothing was imported. "
                + "Convert it to UTF-8 first, e.g. \(convert) (-f SHIFT_JIS for a Japanese file)"
        case (.notUTF8(let encoding), .zh):
            return
                "\(name) 是 \(encoding.rawValue) 编码，JSON 必须是 UTF-8。请先转换：\(convert.replacingOccurrences(of: ".csv", with: ".jsonl"))"
        case (.notUTF8(let encoding), _):
            return
                "\(name) is \(encoding.rawValue) text, and JSON must be UTF-8. Convert it first: \(convert.replacingOccurrences(of: ".csv", with: ".jsonl"))"
        }
    }
}

/// One iconv conversion descriptor (glibc), closed with the value.
final class Iconv {
    private let descriptor: iconv_t

    /// A converter from `from` to `to` (iconv names); `nil` when iconv has no such conversion.
    init?(from: String, to: String) {
        let cd = iconv_open(to, from)
        guard Int(bitPattern: cd) != -1, let cd else { return nil }
        descriptor = cd
    }

    deinit { iconv_close(descriptor) }

    /// Converts as much of `bytes` as converts: the output, how many input bytes
    /// were used, and why it stopped: 0 (all of them), `EILSEQ` (an invalid
    /// sequence at `consumed`) or `EINVAL` (the input ends inside a character).
    func convert(_ bytes: ArraySlice<UInt8>) -> (output: [UInt8], consumed: Int, stop: Int32) {
        var output: [UInt8] = []
        var consumed = 0
        var stop: Int32 = 0
        var scratch = [UInt8](repeating: 0, count: max(64, bytes.count * 2 + 16))
        bytes.withUnsafeBufferPointer { source in
            guard let base = source.baseAddress else { return }
            while consumed < source.count {
                var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(mutating: base + consumed)
                    .assumingMemoryBound(to: CChar.self)
                var inLeft = source.count - consumed
                let (written, failed, code): (Int, Bool, Int32) = scratch.withUnsafeMutableBytes { target in
                    var outPointer: UnsafeMutablePointer<CChar>? = target.baseAddress!.assumingMemoryBound(
                        to: CChar.self)
                    var outLeft = target.count
                    let r = iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft)
                    return (target.count - outLeft, r == -1, errno)
                }
                output += scratch[0..<written]
                consumed = source.count - inLeft
                if failed && code != E2BIG {
                    stop = code
                    break
                }
            }
        }
        return (output, consumed, stop)
    }
}

/// Turns an input's bytes, chunk by chunk, into valid UTF-8: detects the
/// encoding (a byte order mark; else UTF-8 when the bytes are valid UTF-8, or
/// when a whole line of CJK in UTF-8 comes before the first bytes that are not;
/// else GB18030 when they decode cleanly as it) at the first byte that is not ASCII,
/// then validates (UTF-8) or converts (iconv) everything. Bytes that do not
/// decode are an ``InputEncodingError``: nothing is ever replaced by U+FFFD.
final class InputDecoder {
    /// The encoding detected; `nil` while every byte so far was ASCII.
    private(set) var encoding: InputEncoding?
    /// Refuse any encoding but UTF-8 (JSON).
    var utf8Only = false
    private var converter: Iconv?
    /// Bytes of a character left incomplete at the end of the last chunk.
    private var carry: [UInt8] = []
    /// Input offset of `carry`'s first byte (of the next chunk when `carry` is empty).
    private var offset: Int64 = 0
    /// Line feeds handed out so far.
    private var newlines = 0

    /// The UTF-8 text of `chunk` (with what was left of the one before); with
    /// `final`, the input ends after it.
    func decode(_ chunk: [UInt8], final: Bool) throws(InputEncodingError) -> [UInt8] {
        let bytes = carry.isEmpty ? chunk : carry + chunk
        carry = []
        let base = offset
        if encoding == nil {
            if bytes.count < 2 && !final && !bytes.isEmpty {
                carry = bytes
                return []
            }
            if bytes.starts(with: [0xFF, 0xFE]) {
                try choose(.utf16LE, at: base)
            } else if bytes.starts(with: [0xFE, 0xFF]) {
                try choose(.utf16BE, at: base)
            } else if base == 0, let guessed = Self.utf16WithoutBOM(bytes[...]) {
                try choose(guessed, at: base)
            } else if base == 0, let nul = bytes.prefix(Self.sniffBytes).firstIndex(of: 0) {
                // NUL bytes, but not in the pattern of UTF-16 text: no text encoding read here.
                throw InputEncodingError(.unknown, line: line(bytes[..<nul]), byteOffset: Int64(nul))
            } else {
                let check = Self.validateUTF8(bytes[...])
                if check.invalid == nil && check.firstNonASCII >= check.validEnd && !final {
                    // ASCII so far (perhaps a character cut at the end): not decided yet.
                    return take(bytes, validEnd: check.validEnd, base: base)
                }
                if let bad = check.invalid, !Self.hasUTF8Lines(bytes[..<bad]) {
                    if let gb = Iconv(from: InputEncoding.gb18030.rawValue, to: "UTF-8"),
                        case let trial = gb.convert(bytes[...]), trial.stop == 0 || (trial.stop == EINVAL && !final)
                    {
                        try choose(.gb18030, at: base, converter: gb)
                        return try converted(bytes, trial, base: base, final: final)
                    }
                    throw InputEncodingError(.unknown, line: line(bytes[..<bad]), byteOffset: base + Int64(bad))
                }
                if check.invalid != nil || check.firstNonASCII < check.validEnd || final { try choose(.utf8, at: base) }
            }
        }
        switch encoding {
        case nil, .utf8?:
            let check = Self.validateUTF8(bytes[...])
            if let bad = check.invalid ?? (final && check.validEnd < bytes.count ? check.validEnd : nil) {
                throw InputEncodingError(.invalid(.utf8), line: line(bytes[..<bad]), byteOffset: base + Int64(bad))
            }
            return take(bytes, validEnd: check.validEnd, base: base)
        case let other?:
            guard let converter else { throw InputEncodingError(.invalid(other), line: newlines + 1, byteOffset: base) }
            return try converted(bytes, converter.convert(bytes[...]), base: base, final: final)
        }
    }

    /// Bytes at the start of an input looked at for UTF-16 without a byte order mark.
    static let sniffBytes = 4096

    /// UTF-16 without a byte order mark (Windows "Unicode text" saved without
    /// one), told by its NUL bytes: in the first ``sniffBytes`` bytes, a NUL in
    /// every other byte — the high byte of ASCII code units (commas, digits, line
    /// ends, Latin letters), after it in little-endian, before it in big-endian —
    /// in at least a quarter of the code units, and over four times as often as
    /// in the other position (where only a character like U+4E00 puts one).
    /// Text in UTF-8 or GB18030 has no NUL bytes at all. `nil`: not UTF-16.
    static func utf16WithoutBOM(_ bytes: ArraySlice<UInt8>) -> InputEncoding? {
        let sample = bytes.prefix(sniffBytes)
        let units = sample.count / 2
        guard units >= 2 else { return nil }
        var highFirst = 0
        var highSecond = 0
        var i = sample.startIndex
        for _ in 0..<units {
            let a = sample[i]
            let b = sample[i + 1]
            if a == 0 && b != 0 { highFirst += 1 } else if b == 0 && a != 0 { highSecond += 1 }
            i += 2
        }
        if highSecond * 4 >= units && highSecond > highFirst * 4 { return .utf16LE }
        if highFirst * 4 >= units && highFirst > highSecond * 4 { return .utf16BE }
        return nil
    }

    /// Decides the input is in `encoding`.
    private func choose(_ chosen: InputEncoding, at base: Int64, converter given: Iconv? = nil)
        throws(InputEncodingError)
    {
        if utf8Only && chosen != .utf8 {
            throw InputEncodingError(.notUTF8(chosen), line: newlines + 1, byteOffset: base)
        }
        encoding = chosen
        if chosen != .utf8 { converter = given ?? Iconv(from: chosen.rawValue, to: "UTF-8") }
    }

    /// Hands out `bytes[..<validEnd]` (valid UTF-8) and keeps the rest for the next chunk.
    private func take(_ bytes: [UInt8], validEnd: Int, base: Int64) -> [UInt8] {
        carry = Array(bytes[validEnd...])
        offset = base + Int64(validEnd)
        let out = validEnd == bytes.count ? bytes : Array(bytes[..<validEnd])
        newlines += Self.lineFeeds(out[...])
        return out
    }

    /// Hands out what iconv made of `bytes`, or throws where it stopped.
    private func converted(
        _ bytes: [UInt8], _ result: (output: [UInt8], consumed: Int, stop: Int32),
        base: Int64, final: Bool
    ) throws(InputEncodingError) -> [UInt8] {
        if result.stop == EILSEQ || (result.stop == EINVAL && final) {
            throw InputEncodingError(
                .invalid(encoding ?? .gb18030), line: newlines + Self.lineFeeds(result.output[...]) + 1,
                byteOffset: base + Int64(result.consumed))
        }
        if encoding == .gb18030, let at = Self.firstPrivateUse(result.output[...]) {
            let before = InputEncoding.gb18030.encode(Array(result.output[..<at])).count
            throw InputEncodingError(
                .privateUse, line: newlines + Self.lineFeeds(result.output[..<at]) + 1,
                byteOffset: base + Int64(before))
        }
        carry = Array(bytes[result.consumed...])
        offset = base + Int64(result.consumed)
        newlines += Self.lineFeeds(result.output[...])
        return result.output
    }

    /// The index in `utf8` of the first character of the Private Use Area
    /// U+E000–U+F8FF (UTF-8 `EE 80 80` … `EF A3 BF`), or `nil`.
    static func firstPrivateUse(_ utf8: ArraySlice<UInt8>) -> Int? {
        var i = utf8.startIndex
        while let lead = utf8[i...].firstIndex(where: { $0 == 0xEE || $0 == 0xEF }) {
            if utf8[lead] == 0xEE { return lead }
            if lead + 1 < utf8.endIndex, (0x80...0xA3).contains(utf8[lead + 1]) { return lead }
            i = lead + 1
        }
        return nil
    }

    /// Whether `prefix` (valid UTF-8, before the first byte that is not) holds a
    /// whole line with a character of three or four bytes (CJK, emoji): then the
    /// input is UTF-8 with bad bytes later, not GB18030 — which decodes almost
    /// any byte pair, UTF-8 Chinese included, as mojibake.
    private static func hasUTF8Lines(_ prefix: ArraySlice<UInt8>) -> Bool {
        guard let lastLineEnd = prefix.lastIndex(of: 0x0A) else { return false }
        return prefix[..<lastLineEnd].contains { $0 >= 0xE0 }
    }

    /// The 1-based line of the byte after `prefix` (UTF-8 text about to be handed out).
    private func line(_ prefix: ArraySlice<UInt8>) -> Int { newlines + Self.lineFeeds(prefix) + 1 }

    private static func lineFeeds(_ bytes: ArraySlice<UInt8>) -> Int {
        bytes.withUnsafeBufferPointer { $0.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) } }
    }

    /// Checks `bytes` as UTF-8: the index of the first invalid byte (`nil` when
    /// none), the end of the valid part (before a character cut at the end),
    /// and the index of the first byte that is not ASCII (`count` when none).
    /// Overlong forms, surrogates and values past U+10FFFF are invalid.
    static func validateUTF8(_ bytes: ArraySlice<UInt8>) -> (invalid: Int?, validEnd: Int, firstNonASCII: Int) {
        bytes.withUnsafeBufferPointer { p -> (Int?, Int, Int) in
            let n = p.count
            var i = 0
            var firstNonASCII = n
            while i < n {
                let b = p[i]
                if b < 0x80 {
                    i += 1
                    continue
                }
                if firstNonASCII == n { firstNonASCII = i }
                let length: Int
                let low: UInt8
                let high: UInt8
                switch b {
                case 0xC2...0xDF: (length, low, high) = (2, 0x80, 0xBF)
                case 0xE0: (length, low, high) = (3, 0xA0, 0xBF)
                case 0xED: (length, low, high) = (3, 0x80, 0x9F)
                case 0xE1...0xEF: (length, low, high) = (3, 0x80, 0xBF)
                case 0xF0: (length, low, high) = (4, 0x90, 0xBF)
                case 0xF4: (length, low, high) = (4, 0x80, 0x8F)
                case 0xF1...0xF3: (length, low, high) = (4, 0x80, 0xBF)
                default: return (i, i, firstNonASCII)
                }
                for k in 1..<length {
                    guard i + k < n else { return (nil, i, firstNonASCII) }  // cut at the end
                    let c = p[i + k]
                    let ok = k == 1 ? (low...high).contains(c) : (0x80...0xBF).contains(c)
                    if !ok { return (i, i, firstNonASCII) }
                }
                i += length
            }
            return (nil, n, firstNonASCII)
        }
    }
}
