import EntryModel
import EntryLedger
import EntryProtocol

/// What one ``PeerSync/run(local:peer:name:address:batch:layout:maxClockSkewMs:)`` moved.
public struct PeerSyncResult: Sendable, Equatable {
    /// Changes pulled from the peer and applied here (skipped ones not counted).
    public var pulled = 0
    /// Changes the peer applied from this node (skipped ones not counted).
    public var pushed = 0
    /// Conflict records created here while pulling.
    public var conflicts = 0
}

/// Two-way sync with one peer (doc/design.md "Sync", "Peers").
///
/// Pull: the peer's changes since the stored checkpoint, without our own,
/// applied batch by batch; each batch and its checkpoint commit in one
/// transaction, so an interrupted sync resumes without loss or duplicates.
/// Push: our changes the peer has not seen (without its own), then our push
/// checkpoint. A push interrupted after the peer applied but before the
/// checkpoint is sent again next time and skipped there (Apply is idempotent).
public enum PeerSync {
    /// Syncs `local` with `peer` both ways.
    /// - Parameters:
    ///   - local: this node's store (any ``LedgerStore``).
    ///   - name: the peer's name (its checkpoints are stored under it).
    ///   - batch: changes per Changes/Apply call.
    /// - Throws: what the peer link or the store throws; checkpoints of the
    ///   batches done so far are kept.
    public static func run(local: any LedgerStore, peer: any PeerLink, name: String, address: String, batch: Int = 1000,
                           layout: @escaping (String) -> FieldLayout, maxClockSkewMs: Int) throws -> PeerSyncResult {
        let peerNode = try peer.nodeID()
        var state = try local.peerState(name) ?? PeerState(name: name, address: address, node: nil, pulledSeq: 0, pushedSeq: 0)
        if state.node != peerNode {
            // A new peer, or its database was replaced: start over (Apply skips what we have).
            state = PeerState(name: name, address: address, node: peerNode, pulledSeq: 0, pushedSeq: 0)
            try local.savePeerState(state)
        }
        var result = PeerSyncResult()
        while true {
            let page = try peer.changes(since: state.pulledSeq, limit: batch, excludeNode: local.nodeID)
            if page.last <= state.pulledSeq { break }
            let last = page.last
            let applied = try local.apply(page.changes, via: name, layout: layout, maxClockSkewMs: maxClockSkewMs,
                                          pulled: PullCheckpoint(peer: name, pulledSeq: last))
            state.pulledSeq = last
            result.pulled += applied.applied
            result.conflicts += applied.conflicts
        }
        while true {
            let page = try local.changes(since: state.pushedSeq, limit: batch, excludeNode: peerNode)
            if page.last <= state.pushedSeq { break }
            if !page.changes.isEmpty {
                let applied = try peer.apply(page.changes)
                result.pushed += applied.applied
            }
            state.pushedSeq = page.last
            try local.savePeerState(state)
        }
        state.lastSync = Timestamp.rfc3339(milliseconds: HybridClock.systemMilliseconds())
        state.lastError = nil
        try local.savePeerState(state)
        return result
    }
}
