/// A JSON value as the varlink wire carries it (RFC 8259).
///
/// entryd parses and writes JSON itself rather than through `JSONSerialization`:
/// it must bound nesting depth, reject invalid UTF-8 and keep object key order
/// for deterministic replies, and encoding is on every reply's hot path.
/// Numbers keep their kind: integers that fit in `Int64` are `.int`, everything
/// else with a fraction or exponent is `.double`.
package enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    /// Members in wire order. Duplicate keys are refused by the parser.
    case object([(String, JSON)])
    /// A value already in the compact encoding, written out as it is: made only
    /// by entryd for what it sends (a `Changes` page's changes, copied from the
    /// change log), never by the parser. Opaque to the accessors (`objectValue`
    /// and the others answer `nil`); equal to another `.raw` of the same bytes.
    case raw([UInt8])

    /// Whether a number in this value (at any depth) is infinite or NaN: what a
    /// number beyond a double (`1e400`) parses as; RFC 8259 §6 lets a parser
    /// limit the range, and JSON has no way to write such a number back.
    package var holdsNonFiniteNumber: Bool {
        switch self {
        case .double(let d): !d.isFinite
        case .array(let items): items.contains(where: \.holdsNonFiniteNumber)
        case .object(let members): members.contains(where: { $0.1.holdsNonFiniteNumber })
        case .null, .bool, .int, .string, .raw: false
        }
    }

    /// Structural equality; objects compare as sets of members (key order ignored),
    /// `.int` and `.double` never equal each other.
    package static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.raw(let a), .raw(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            let bd = Dictionary(b, uniquingKeysWith: { x, _ in x })
            return a.allSatisfy { bd[$0.0] == $0.1 }
        default: return false
        }
    }

    /// The member `key` of an object, or `nil` for a missing key or a non-object.
    package subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        return members.first(where: { $0.0 == key })?.1
    }

    /// The string payload, or `nil` for other kinds.
    package var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    /// The integer payload (a `.double` with no fraction counts), or `nil`.
    package var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d == d.rounded() && abs(d) < 9.0e15: return Int64(d)
        default: return nil
        }
    }
    /// The boolean payload, or `nil`.
    package var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    /// The elements of an array, or `nil`.
    package var arrayValue: [JSON]? { if case .array(let a) = self { return a } else { return nil } }
    /// The members of an object, or `nil`.
    package var objectValue: [(String, JSON)]? { if case .object(let o) = self { return o } else { return nil } }
    /// False when a number anywhere inside is infinite (it encodes as `null`).
    package var isFinite: Bool {
        switch self {
        case .double(let d): return d.isFinite
        case .array(let a): return a.allSatisfy(\.isFinite)
        case .object(let o): return o.allSatisfy { $0.1.isFinite }
        default: return true
        }
    }

    /// True for `.null`.
    package var isNull: Bool { if case .null = self { return true } else { return false } }

    /// An object of string values, keys sorted for a stable wire form.
    package static func stringMap(_ map: [String: String]) -> JSON {
        var members: [(String, JSON)] = []
        members.reserveCapacity(map.count)
        for (key, value) in map { members.append((key, .string(value))) }
        members.sort { $0.0 < $1.0 }
        return .object(members)
    }
}

/// Why a byte sequence is not acceptable JSON, with the byte offset where the
/// parser stopped. Messages name the problem, never the content (it may be personal).
package struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Byte offset into the input (0-based).
    package let offset: Int
    /// What is wrong, e.g. "nesting deeper than 64 levels".
    package let reason: String
    /// `invalid JSON at byte OFFSET: REASON`.
    package var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

extension JSON {
    /// Deepest nesting of arrays and objects the parser accepts. Varlink messages
    /// are shallow (entryd's deepest is 4); the bound stops stack exhaustion.
    static let maxDepth = 64

    /// Parses one JSON text (RFC 8259) from UTF-8 bytes.
    ///
    /// - Parameter bytes: the whole text; leading and trailing white space allowed.
    /// - Throws: ``JSONParseError`` for invalid UTF-8, syntax errors, duplicate
    ///   object keys, nesting deeper than ``maxDepth``, or trailing bytes.
    package static func parse<C: Collection>(_ bytes: C) throws(JSONParseError) -> JSON where C.Element == UInt8 {
        let array = Array(bytes)
        var parser = JSONParser(bytes: array)
        return try parser.parseDocument()
    }

    /// Parses a JSON text given as a Swift string.
    /// - Throws: ``JSONParseError``, as ``parse(_:)-(C)``.
    package static func parse(_ text: String) throws(JSONParseError) -> JSON {
        try parse(Array(text.utf8))
    }
}

struct JSONParser {
    /// Objects with fewer members than this are checked for duplicate keys by a linear look.
    static let linearKeyCheck = 16
    let bytes: [UInt8]
    var i = 0
    var depth = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: i, reason: reason) }

    mutating func parseDocument() throws(JSONParseError) -> JSON {
        skipSpace()
        let v = try parseValue()
        skipSpace()
        if i != bytes.count { throw fail("unexpected bytes after the value") }
        return v
    }

    mutating func skipSpace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws(JSONParseError) -> JSON {
        guard i < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character")
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let n = word.utf8CodeUnitCount
        guard i + n <= bytes.count else { throw fail("unexpected end of input") }
        let p = word.utf8Start
        for k in 0..<n where bytes[i + k] != p[k] { throw fail("unexpected character") }
        i += n
    }

    mutating func enter() throws(JSONParseError) {
        depth += 1
        if depth > JSON.maxDepth { throw fail("nesting deeper than \(JSON.maxDepth) levels") }
    }

    mutating func parseObject() throws(JSONParseError) -> JSON {
        try enter()
        i += 1
        var members: [(String, JSON)] = []
        // Varlink objects are small: a linear look for a duplicate key costs less
        // than hashing every key; a set takes over for large objects.
        var seen: Set<String>?
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
            i += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let key = try parseString()
            if members.count < JSONParser.linearKeyCheck {
                if members.contains(where: { $0.0 == key }) { throw fail("duplicate member name") }
            } else {
                if seen == nil { seen = Set(members.map(\.0)) }
                if !seen!.insert(key).inserted { throw fail("duplicate member name") }
            }
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            i += 1
            skipSpace()
            members.append((key, try parseValue()))
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of input") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if bytes[i] == UInt8(ascii: "}") {
                i += 1
                break
            }
            throw fail("expected ',' or '}'")
        }
        depth -= 1
        return .object(members)
    }

    mutating func parseArray() throws(JSONParseError) -> JSON {
        try enter()
        i += 1
        var items: [JSON] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
            i += 1
            depth -= 1
            return .array(items)
        }
        while true {
            skipSpace()
            items.append(try parseValue())
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of input") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            if bytes[i] == UInt8(ascii: "]") {
                i += 1
                break
            }
            throw fail("expected ',' or ']'")
        }
        depth -= 1
        return .array(items)
    }

    mutating func parseNumber() throws(JSONParseError) -> JSON {
        let start = i
        var isInteger = true
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid number") }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
        } else {
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid number") }
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            isInteger = false
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count, isDigit(bytes[i]) else { throw fail("invalid number") }
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        if isInteger, let v = Int64(text) { return .int(v) }
        // RFC 8259 §6 lets a parser limit the range: a number beyond Double becomes
        // ±infinity, which no parameter accepts, so the call is refused as an invalid parameter
        // naming it instead of the whole message being refused.
        guard let d = Double(text) else { throw JSONParseError(offset: start, reason: "invalid number") }
        return .double(d)
    }

    func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    mutating func parseString() throws(JSONParseError) -> String {
        i += 1  // opening quote
        var out: [UInt8] = []
        var runStart = i
        var escaped = false
        while true {
            guard i < bytes.count else { throw fail("unterminated string") }
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                // Most strings have no escapes: one copy, straight from the input.
                if !escaped {
                    i += 1
                    return String(decoding: bytes[runStart..<(i - 1)], as: UTF8.self)
                }
                out.append(contentsOf: bytes[runStart..<i])
                i += 1
                break
            }
            if b < 0x20 { throw fail("control character in string") }
            if b == UInt8(ascii: "\\") {
                escaped = true
                out.append(contentsOf: bytes[runStart..<i])
                i += 1
                guard i < bytes.count else { throw fail("unterminated string") }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u")
                        else {
                            throw fail("unpaired surrogate in string")
                        }
                        i += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate in string") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw fail("unpaired surrogate in string")
                    }
                    guard let u = Unicode.Scalar(scalar) else { throw fail("invalid escape") }
                    out.append(contentsOf: Array(String(Character(u)).utf8))
                default: throw fail("invalid escape")
                }
                runStart = i
                continue
            }
            if b < 0x80 {
                i += 1
                continue
            }
            try skipUTF8Sequence()
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Advances over one well-formed multi-byte UTF-8 sequence (RFC 3629 §4).
    mutating func skipUTF8Sequence() throws(JSONParseError) {
        let b0 = bytes[i]
        let need: Int
        var lo: UInt8 = 0x80
        var hi: UInt8 = 0xBF
        switch b0 {
        case 0xC2...0xDF: need = 1
        case 0xE0:
            need = 2
            lo = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: need = 2
        case 0xED:
            need = 2
            hi = 0x9F
        case 0xF0:
            need = 3
            lo = 0x90
        case 0xF1...0xF3: need = 3
        case 0xF4:
            need = 3
            hi = 0x8F
        default: throw fail("invalid UTF-8")
        }
        guard i + need < bytes.count else { throw fail("invalid UTF-8") }
        let b1 = bytes[i + 1]
        guard b1 >= lo && b1 <= hi else { throw fail("invalid UTF-8") }
        if need >= 2 { guard bytes[i + 2] & 0xC0 == 0x80 else { throw fail("invalid UTF-8") } }
        if need >= 3 { guard bytes[i + 3] & 0xC0 == 0x80 else { throw fail("invalid UTF-8") } }
        i += need + 1
    }

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard i + 4 <= bytes.count else { throw fail("invalid escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[i]
            let d: UInt32
            switch b {
            case 0x30...0x39: d = UInt32(b - 0x30)
            case 0x41...0x46: d = UInt32(b - 0x41 + 10)
            case 0x61...0x66: d = UInt32(b - 0x61 + 10)
            default: throw fail("invalid escape")
            }
            v = v * 16 + d
            i += 1
        }
        return v
    }
}

// MARK: - Writing

extension JSON {
    /// The compact UTF-8 encoding of this value: no insignificant white space,
    /// object members in stored order, non-ASCII written as UTF-8 (not escaped),
    /// control characters escaped as `\uXXXX`.
    package var encoded: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        write(to: &out)
        return out
    }

    /// The compact encoding as a `String`.
    package var text: String { String(decoding: encoded, as: UTF8.self) }

    /// Appends the compact encoding to `out`.
    package func write(to out: inout [UInt8]) {
        switch self {
        case .null: JSON.append("null", to: &out)
        case .bool(let b): JSON.append(b ? "true" : "false", to: &out)
        case .int(let v): out.append(contentsOf: String(v).utf8)
        case .double(let d):
            if d.isFinite {
                out.append(contentsOf: Array("\(d)".utf8))
            } else {
                out.append(contentsOf: Array("null".utf8))
            }
        case .string(let s): JSON.writeString(s, to: &out)
        case .raw(let bytes): out.append(contentsOf: bytes)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (k, item) in items.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (k, member) in members.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                JSON.writeString(member.0, to: &out)
                out.append(UInt8(ascii: ":"))
                member.1.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Appends the bytes of a literal without building an array.
    package static func append(_ literal: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends `s` as a JSON string literal (`"`, `\\` and control characters escaped).
    package static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escape: copy them whole.
        let copied = s.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                return false
            }
            out.append(contentsOf: bytes)
            return true
        }
        if copied == true {
            out.append(UInt8(ascii: "\""))
            return
        }
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""):
                out.append(0x5C)
                out.append(0x22)
            case UInt8(ascii: "\\"):
                out.append(0x5C)
                out.append(0x5C)
            case 0x0A:
                out.append(0x5C)
                out.append(UInt8(ascii: "n"))
            case 0x0D:
                out.append(0x5C)
                out.append(UInt8(ascii: "r"))
            case 0x09:
                out.append(0x5C)
                out.append(UInt8(ascii: "t"))
            case 0..<0x20:
                out.append(contentsOf: Array("\\u00".utf8))
                out.append(Hex.digits[Int(b >> 4)])
                out.append(Hex.digits[Int(b & 0xF)])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
