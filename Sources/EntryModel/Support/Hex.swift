/// Lower-case hexadecimal digits as ASCII bytes, the one table behind every
/// hex text entryd writes: UUIDs (RFC 9562 §4), HLCs (16 digits) and JSON
/// `\u00XX` escapes (RFC 8259 §7).
enum Hex {
    /// `0`–`9`, `a`–`f` as ASCII bytes; index by a value 0…15.
    static let digits: [UInt8] = Array("0123456789abcdef".utf8)
}
