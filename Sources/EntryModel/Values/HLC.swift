/// A hybrid logical clock stamp (Kulkarni et al., "Logical Physical Clocks", 2014).
///
/// Shape (doc/design.md "Sync"): 48-bit milliseconds since the Unix epoch, then a
/// 16-bit counter, written as 16 lowercase hex digits so that text order is
/// time order. Ties between nodes are broken by node id (see ``Stamp``).
package struct HLC: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z (48 bits).
    package let milliseconds: UInt64
    /// Logical counter within one millisecond (16 bits).
    package let counter: UInt16

    /// The smallest stamp, `0000000000000000`: a new clock, an entry before any change.
    package static let zero = HLC(milliseconds: 0, counter: 0)

    /// A stamp from its parts; `milliseconds` is truncated to its low 48 bits.
    package init(milliseconds: UInt64, counter: UInt16) {
        self.milliseconds = milliseconds & 0xFFFF_FFFF_FFFF
        self.counter = counter
    }

    /// The stamp whose packed value (``rawValue``) is `rawValue`: the high 48
    /// bits are the milliseconds, the low 16 the counter.
    package init(rawValue: UInt64) {
        self.init(milliseconds: rawValue >> 16, counter: UInt16(truncatingIfNeeded: rawValue))
    }

    /// Parses 16 hex digits (either case). `nil` for anything else.
    package init?(_ text: String) {
        // Read from the UTF-8 bytes: every change-log row read holds one or more.
        guard text.utf8.count == 16 else { return nil }
        var v: UInt64 = 0
        for b in text.utf8 {
            switch b {
            case 0x30...0x39: v = v << 4 | UInt64(b - 0x30)
            case 0x61...0x66: v = v << 4 | UInt64(b - 0x57)
            case 0x41...0x46: v = v << 4 | UInt64(b - 0x37)
            default: return nil
            }
        }
        self.init(milliseconds: v >> 16, counter: UInt16(v & 0xFFFF))
    }

    /// The packed 64-bit value (milliseconds << 16 | counter).
    package var rawValue: UInt64 { milliseconds << 16 | UInt64(counter) }

    /// 16 lowercase hex digits.
    package var description: String {
        String(unsafeUninitializedCapacity: 16) { out in
            for k in 0..<16 { out[k] = Hex.digits[Int(truncatingIfNeeded: rawValue >> (60 - 4 * UInt64(k))) & 0xF] }
            return 16
        }
    }

    /// Time order: by milliseconds, then counter (the packed 64-bit value).
    package static func < (a: HLC, b: HLC) -> Bool { a.rawValue < b.rawValue }
}

/// An HLC with the node that made it: the total order of writes, (HLC, node).
package struct Stamp: Sendable, Hashable, Comparable {
    /// When the write was made.
    package let hlc: HLC
    /// The id of the node that made it (UUID text); breaks HLC ties.
    package let node: String

    /// The stamp of a write made at `hlc` on `node`.
    package init(hlc: HLC, node: String) {
        self.hlc = hlc
        self.node = node
    }

    /// By HLC, then by node id as text (doc/design.md "Sync"): the same order on every node.
    package static func < (a: Stamp, b: Stamp) -> Bool {
        a.hlc != b.hlc ? a.hlc < b.hlc : a.node < b.node
    }
}

/// The node's hybrid logical clock: never goes backwards, even when the wall
/// clock does, and moves past every stamp it receives.
///
/// Not thread-safe: owned by the store's writer thread. The last issued stamp is
/// persisted with each write transaction, so it survives restarts.
package struct HybridClock: Sendable {
    /// The last stamp issued or received.
    package private(set) var last: HLC
    /// The wall clock in milliseconds since the epoch (injectable for tests).
    package var wallClock: @Sendable () -> UInt64

    /// - Parameters:
    ///   - last: the last stamp persisted before the restart (`.zero` when new).
    ///   - wallClock: milliseconds since the epoch.
    package init(last: HLC = .zero, wallClock: @escaping @Sendable () -> UInt64 = HybridClock.systemMilliseconds) {
        self.last = last
        self.wallClock = wallClock
    }

    /// The system wall clock (CLOCK_REALTIME) in milliseconds since the epoch.
    @Sendable package static func systemMilliseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1000 + UInt64(ts.tv_nsec) / 1_000_000
    }

    /// Issues a stamp for a local event: greater than every stamp before it.
    package mutating func tick() -> HLC {
        last = HybridClock.successor(of: last, wall: wallClock())
        return last
    }

    /// The stamp ``tick()`` issues after `last` when the wall clock reads
    /// `wall` milliseconds: `HLC(wall, 0)` when the wall clock is past `last`'s
    /// millisecond, otherwise the next packed value after `last` (the counter
    /// plus one, or the next millisecond at counter 0 when the counter is
    /// full). In packed values: `max(last.rawValue + 1, wall << 16)`.
    ///
    /// For a clock kept outside this type: the PostgreSQL store keeps the
    /// node's last stamp in the database, shared by all its instances, and
    /// hands stamps out in SQL. A clock that has observed a remote stamp `r`
    /// (``observe(_:)``) issues `successor(of: max(last, r), wall:)`, which is
    /// `max(last.rawValue + 1, successor(of: r, wall: wall).rawValue)`: the
    /// caller computes the second operand here, the database the first.
    package static func successor(of last: HLC, wall: UInt64) -> HLC {
        if wall > last.milliseconds {
            return HLC(milliseconds: wall, counter: 0)
        } else if last.counter == UInt16.max {
            return HLC(milliseconds: last.milliseconds + 1, counter: 0)
        } else {
            return HLC(milliseconds: last.milliseconds, counter: last.counter + 1)
        }
    }

    /// Moves the clock past a stamp received from another node.
    package mutating func observe(_ remote: HLC) {
        if remote > last { last = remote }
    }
}

import Glibc
