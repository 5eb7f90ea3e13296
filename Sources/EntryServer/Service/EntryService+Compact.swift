import Foundation
import EntryModel
import EntryLedger
import EntryProtocol

extension CompactionResult {
    /// The wire `Compaction` (`io.entryd.Sync`); `heldBackBy` left out when `nil`.
    var json: JSON {
        var members: [(String, JSON)] = [
            ("at", .string(at)), ("removed", .int(Int64(removed))), ("bytesFreed", .int(bytesFreed)),
            ("horizon", .int(horizon)),
        ]
        if let heldBackBy { members.append(("heldBackBy", .string(heldBackBy))) }
        members.append(("expired", .array(expired.map(JSON.string))))
        return .object(members)
    }
}

extension EntryService {
    /// One compaction at a time: a call (or the schedule) that finds one running waits for it.
    private static let compacting = NSLock()

    /// `io.entryd.Sync.Compact()`: `{removed, bytesFreed, horizon, heldBackBy?, expired}`.
    /// - Throws: `StorageFailed` (batches done stay done).
    func compact(_ c: CallContext) throws {
        let result = try compactNow()
        var members = result.json.objectValue ?? []
        members.removeAll { $0.0 == "at" }
        try reply(c, members)
    }

    /// Compacts the change log now, with the configured `peer-expiry` and peers
    /// (one compaction at a time); used by `Compact` and the schedule (`compact-interval`).
    /// - Parameter progress: called after each batch of entries with (entries done, entries in all).
    /// - Returns: what it did.
    /// - Throws: ``StorageError`` (batches done stay done).
    package func compactNow(progress: (Int, Int) -> Void = { _, _ in }) throws -> CompactionResult {
        try EntryService.compacting.withLock {
            try store.compact(
                peerExpiryMs: UInt64(limits.peerExpirySeconds) * 1000, configured: peers.map(\.name),
                layout: { [self] in layout(ofForm: $0) }, progress: progress)
        }
    }
}
