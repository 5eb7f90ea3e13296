/// UUID version 7 (RFC 9562 §5.7): 48-bit Unix milliseconds, version, 74 random bits.
public enum UUIDv7 {
    /// A new UUIDv7 in canonical lower-case text (`xxxxxxxx-xxxx-7xxx-yxxx-xxxxxxxxxxxx`).
    /// - Parameter milliseconds: Unix time in ms for the 48-bit prefix.
    public static func generate(milliseconds: UInt64 = HybridClock.systemMilliseconds()) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        // Two 64-bit draws from the system CSPRNG (one getrandom(2) each), not one per byte.
        var rng = SystemRandomNumberGenerator()
        let high = rng.next(), low = rng.next()
        for i in 0..<6 { bytes[i] = UInt8(truncatingIfNeeded: milliseconds >> (40 - 8 * UInt64(i))) }
        for i in 6..<8 { bytes[i] = UInt8(truncatingIfNeeded: high >> (8 * UInt64(i - 6))) }
        for i in 8..<16 { bytes[i] = UInt8(truncatingIfNeeded: low >> (8 * UInt64(i - 8))) }
        bytes[6] = 0x70 | (bytes[6] & 0x0F)
        bytes[8] = 0x80 | (bytes[8] & 0x3F)
        return format(bytes)
    }

    /// Formats 16 bytes as UUID text: lower-case hex in 8-4-4-4-12 groups (RFC 9562 §4).
    public static func format(_ bytes: [UInt8]) -> String {
        precondition(bytes.count == 16, "a UUID is 16 bytes")
        return String(unsafeUninitializedCapacity: 36) { out in
            var n = 0
            for (i, b) in bytes.enumerated() {
                if i == 4 || i == 6 || i == 8 || i == 10 { out[n] = UInt8(ascii: "-"); n += 1 }
                out[n] = Hex.digits[Int(b >> 4)]
                out[n + 1] = Hex.digits[Int(b & 0xF)]
                n += 2
            }
            return n
        }
    }

    /// The canonical lower-case form of any UUID text (RFC 9562 §4), or `nil`
    /// when `text` is not 32 hex digits in the 8-4-4-4-12 layout.
    public static func canonical(_ text: String) -> String? {
        let chars = Array(text.lowercased().utf8)
        guard chars.count == 36 else { return nil }
        for (i, c) in chars.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard c == UInt8(ascii: "-") else { return nil }
            } else {
                guard (c >= 48 && c <= 57) || (c >= 97 && c <= 102) else { return nil }
            }
        }
        return String(decoding: chars, as: UTF8.self)
    }
}
