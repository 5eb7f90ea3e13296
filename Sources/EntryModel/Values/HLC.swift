/// A hybrid logical clock stamp (Kulkarni et al., "Logical Physical Clocks", 2014).
///
/// Shape (doc/design.md "Sync"): 48-bit milliseconds since the Unix epoch, then a
/// 16-bit counter, written as 16 lowercase hex digits so that text order is
/// time order. Ties between nodes are broken by node id (see ``Stamp``).
public struct HLC: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z (48 bits).
    public let milliseconds: UInt64
    /// Logical counter within one millisecond (16 bits).
    public let counter: UInt16

    /// The smallest stamp, `0000000000000000`: a new clock, an entry before any change.
    public static let zero = HLC(milliseconds: 0, counter: 0)

    /// A stamp from its parts; `milliseconds` is truncated to its low 48 bits.
    public init(milliseconds: UInt64, counter: UInt16) {
        self.milliseconds = milliseconds & 0xFFFF_FFFF_FFFF
        self.counter = counter
    }

    /// Parses 16 hex digits (either case). `nil` for anything else.
    public init?(_ text: String) {
        guard text.utf8.count == 16, let v = UInt64(text, radix: 16) else { return nil }
        self.init(milliseconds: v >> 16, counter: UInt16(v & 0xFFFF))
    }

    /// The packed 64-bit value (milliseconds << 16 | counter).
    public var rawValue: UInt64 { milliseconds << 16 | UInt64(counter) }

    /// 16 lowercase hex digits.
    public var description: String {
        String(unsafeUninitializedCapacity: 16) { out in
            for k in 0..<16 { out[k] = Hex.digits[Int(truncatingIfNeeded: rawValue >> (60 - 4 * UInt64(k))) & 0xF] }
            return 16
        }
    }

    /// Time order: by milliseconds, then counter (the packed 64-bit value).
    public static func < (a: HLC, b: HLC) -> Bool { a.rawValue < b.rawValue }
}

/// An HLC with the node that made it: the total order of writes, (HLC, node).
public struct Stamp: Sendable, Hashable, Comparable {
    /// When the write was made.
    public let hlc: HLC
    /// The id of the node that made it (UUID text); breaks HLC ties.
    public let node: String

    /// The stamp of a write made at `hlc` on `node`.
    public init(hlc: HLC, node: String) {
        self.hlc = hlc
        self.node = node
    }

    /// By HLC, then by node id as text (doc/design.md "Sync"): the same order on every node.
    public static func < (a: Stamp, b: Stamp) -> Bool {
        a.hlc != b.hlc ? a.hlc < b.hlc : a.node < b.node
    }
}

/// The node's hybrid logical clock: never goes backwards, even when the wall
/// clock does, and moves past every stamp it receives.
///
/// Not thread-safe: owned by the store's writer thread. The last issued stamp is
/// persisted with each write transaction, so it survives restarts.
public struct HybridClock: Sendable {
    /// The last stamp issued or received.
    public private(set) var last: HLC
    /// The wall clock in milliseconds since the epoch (injectable for tests).
    public var wallClock: @Sendable () -> UInt64

    /// - Parameters:
    ///   - last: the last stamp persisted before the restart (`.zero` when new).
    ///   - wallClock: milliseconds since the epoch.
    public init(last: HLC = .zero, wallClock: @escaping @Sendable () -> UInt64 = HybridClock.systemMilliseconds) {
        self.last = last
        self.wallClock = wallClock
    }

    /// The system wall clock (CLOCK_REALTIME) in milliseconds since the epoch.
    @Sendable public static func systemMilliseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1000 + UInt64(ts.tv_nsec) / 1_000_000
    }

    /// Issues a stamp for a local event: greater than every stamp before it.
    public mutating func tick() -> HLC {
        let wall = wallClock()
        if wall > last.milliseconds {
            last = HLC(milliseconds: wall, counter: 0)
        } else if last.counter == UInt16.max {
            last = HLC(milliseconds: last.milliseconds + 1, counter: 0)
        } else {
            last = HLC(milliseconds: last.milliseconds, counter: last.counter + 1)
        }
        return last
    }

    /// Moves the clock past a stamp received from another node.
    public mutating func observe(_ remote: HLC) {
        if remote > last { last = remote }
    }
}

#if canImport(Glibc)
import Glibc
#endif
