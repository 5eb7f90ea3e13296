import Synchronization

/// UUID version 7 (RFC 9562 §5.7): 48-bit Unix milliseconds, version, 74 random bits.
///
/// Monotonic within the process (RFC 9562 §6.2, method 2 "monotonic random"):
/// an id for a millisecond the process made one for lately is that id's
/// 74-bit value plus one, so ids made one after the other sort in the order
/// they were made (List orders entries created in the same millisecond by id),
/// also when ids for other milliseconds (a caller's own time, a clock ahead)
/// are made in between. The first id of a millisecond draws its bits afresh,
/// the top one clear so that 2^73 more fit in that millisecond.
package enum UUIDv7 {
    /// The last value (`rand_a` in `high`, `rand_b` in `low`) of each of the
    /// milliseconds ids were made for most recently, least recently used first.
    private static let recent = Mutex<[(milliseconds: UInt64, high: UInt64, low: UInt64)]>([])
    /// How many milliseconds ``recent`` remembers.
    private static let remembered = 16

    /// A new UUIDv7 in canonical lower-case text (`xxxxxxxx-xxxx-7xxx-yxxx-xxxxxxxxxxxx`).
    /// - Parameter milliseconds: Unix time in ms for the 48-bit prefix.
    package static func generate(milliseconds: UInt64 = HybridClock.systemMilliseconds()) -> String {
        let (high, low): (UInt64, UInt64) = recent.withLock { recent in
            var next: (milliseconds: UInt64, high: UInt64, low: UInt64)
            if let index = recent.firstIndex(where: { $0.milliseconds == milliseconds }),
                recent[index].high < 0xFFF || recent[index].low < (1 << 62) - 1
            {
                next = recent.remove(at: index)
                if next.low == (1 << 62) - 1 {
                    next.low = 0
                    next.high += 1
                } else {
                    next.low += 1
                }
            } else {
                recent.removeAll { $0.milliseconds == milliseconds }
                // Two 64-bit draws from the system CSPRNG (one getrandom(2) each), not one per byte.
                var rng = SystemRandomNumberGenerator()
                next = (milliseconds, rng.next() & 0x7FF, rng.next() & ((1 << 62) - 1))
                if recent.count == remembered { recent.removeFirst() }
            }
            recent.append(next)
            return (next.high, next.low)
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<6 { bytes[i] = UInt8(truncatingIfNeeded: milliseconds >> (40 - 8 * UInt64(i))) }
        bytes[6] = 0x70 | UInt8(truncatingIfNeeded: high >> 8)
        bytes[7] = UInt8(truncatingIfNeeded: high)
        bytes[8] = 0x80 | UInt8(truncatingIfNeeded: low >> 56)
        for i in 9..<16 { bytes[i] = UInt8(truncatingIfNeeded: low >> (8 * UInt64(15 - i))) }
        return format(bytes)
    }

    /// Formats 16 bytes as UUID text: lower-case hex in 8-4-4-4-12 groups (RFC 9562 §4).
    package static func format(_ bytes: [UInt8]) -> String {
        precondition(bytes.count == 16, "a UUID is 16 bytes")
        return String(unsafeUninitializedCapacity: 36) { out in
            var n = 0
            for (i, b) in bytes.enumerated() {
                if i == 4 || i == 6 || i == 8 || i == 10 {
                    out[n] = UInt8(ascii: "-")
                    n += 1
                }
                out[n] = Hex.digits[Int(b >> 4)]
                out[n + 1] = Hex.digits[Int(b & 0xF)]
                n += 2
            }
            return n
        }
    }

    /// The canonical lower-case form of any UUID text (RFC 9562 §4), or `nil`
    /// when `text` is not 32 hex digits in the 8-4-4-4-12 layout.
    package static func canonical(_ text: String) -> String? {
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
