import EntryModel
import EntryLedger

/// The far side of a sync: another node's change feed and Apply, reached in
/// process (tests) or over varlink (``VarlinkPeer``).
public protocol PeerLink {
    /// The peer's node id.
    func nodeID() throws -> String
    /// The peer's `Changes(since, limit, excludeNode)`.
    func changes(since: Int64, limit: Int, excludeNode: String?) throws -> (changes: [ChangeRecord], last: Int64)
    /// The peer's `Apply(changes)`.
    func apply(_ changes: [ChangeRecord]) throws -> ApplyResult
}

/// An in-process peer: another store (tests, and local tooling).
public struct LocalPeer: PeerLink {
    /// The store standing in for the peer.
    public let store: any LedgerStore
    /// Recorded as `via` on every change applied to ``store``.
    public let via: String
    /// The field layout of a form, by form name.
    public let layout: @Sendable (String) -> FieldLayout
    /// Largest allowed lead of a change's HLC over ``store``'s wall clock, in milliseconds.
    public let maxClockSkewMs: Int

    /// A peer over `store`; by default 5 minutes of skew and the registration layout for every form.
    public init(store: any LedgerStore, via: String, maxClockSkewMs: Int = 300_000,
                layout: @escaping @Sendable (String) -> FieldLayout = { _ in .registration }) {
        self.store = store
        self.via = via
        self.layout = layout
        self.maxClockSkewMs = maxClockSkewMs
    }

    /// ``store``'s node id; never throws.
    public func nodeID() throws -> String { store.nodeID }
    /// ``LedgerStore/changes(since:limit:excludeNode:)`` of ``store``.
    /// - Throws: ``StorageError``.
    public func changes(since: Int64, limit: Int, excludeNode: String?) throws -> (changes: [ChangeRecord], last: Int64) {
        try store.changes(since: since, limit: limit, excludeNode: excludeNode)
    }
    /// ``LedgerStore/apply(_:via:layout:maxClockSkewMs:pulled:)`` on ``store``, without a checkpoint.
    /// - Throws: ``EntryError/clockSkew(node:aheadMs:)``; ``StorageError``.
    public func apply(_ changes: [ChangeRecord]) throws -> ApplyResult {
        try store.apply(changes, via: via, layout: layout, maxClockSkewMs: maxClockSkewMs)
    }
}
