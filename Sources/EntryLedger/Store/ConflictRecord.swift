import EntryModel

/// A kept conflict (doc/protocol.md `io.entryd.Sync.Conflict`).
package struct ConflictRecord: Sendable, Equatable {
    /// The conflict id: a UUIDv8 derived from entry, field and both stamps, the same on every node.
    package var id: String
    /// The entry's id (lower-case UUID text).
    package var entry: String
    /// The field whose values differed.
    package var field: String
    /// The winning value (canonical; "" when the field was cleared).
    package var kept: String
    /// HLC of the winning write, 16 hex digits.
    package var keptHlc: String
    /// Node id of the winning write.
    package var keptNode: String
    /// The losing value (canonical; "" when that write cleared the field).
    package var lost: String
    /// HLC of the losing write, 16 hex digits.
    package var lostHlc: String
    /// Node id of the losing write.
    package var lostNode: String
    /// The losing write's whole field group (Resolve writes it back whole).
    var lostGroup: [String: String]
    /// When this node recorded it: RFC 3339 UTC, milliseconds (local wall clock).
    package var detectedAt: String
    /// True once resolved here (by Resolve, or by a later write over the kept one).
    package var resolved: Bool

    /// A value with every member given.
    package init(
        id: String, entry: String, field: String, kept: String, keptHlc: String, keptNode: String, lost: String,
        lostHlc: String, lostNode: String, lostGroup: [String: String], detectedAt: String, resolved: Bool
    ) {
        self.id = id
        self.entry = entry
        self.field = field
        self.kept = kept
        self.keptHlc = keptHlc
        self.keptNode = keptNode
        self.lost = lost
        self.lostHlc = lostHlc
        self.lostNode = lostNode
        self.lostGroup = lostGroup
        self.detectedAt = detectedAt
        self.resolved = resolved
    }
}

/// Conflict ids: the same on every node for the same pair of writes.
enum ConflictID {
    /// A UUIDv8 (RFC 9562 §5.8) from two FNV-1a 64-bit hashes of the entry,
    /// the field, and both stamps.
    static func make(entry: String, field: String, kept: Stamp, lost: Stamp) -> String {
        let text = "\(entry)|\(field)|\(kept.hlc) \(kept.node)|\(lost.hlc) \(lost.node)"
        /// FNV-1a, 64 bits, over `text` from `seed` (the standard offset basis, or it
        /// with its halves swapped for the second hash).
        func fnv(_ seed: UInt64) -> UInt64 {
            var h = seed
            for b in text.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01B3 }
            return h
        }
        let a = fnv(0xCBF2_9CE4_8422_2325)
        let b = fnv(0x8422_2325_CBF2_9CE4)
        var bytes =
            (0..<8).map { UInt8(truncatingIfNeeded: a >> (56 - 8 * UInt64($0))) }
            + (0..<8).map { UInt8(truncatingIfNeeded: b >> (56 - 8 * UInt64($0))) }
        bytes[6] = 0x80 | (bytes[6] & 0x0F)
        bytes[8] = 0x80 | (bytes[8] & 0x3F)
        return UUIDv7.format(bytes)
    }
}
