import EntryModel
import EntryLedger

/// The far side of a sync: another node's change feed and Apply, reached in
/// process (tests) or over varlink (``VarlinkPeer``).
package protocol PeerLink {
    /// Who the peer is (the handshake): node id, incarnation, last seq.
    func identity() throws -> PeerIdentity
    /// The peer's `Changes(since, limit, excludeNode, excludeSince)`.
    func changes(since: Int64, limit: Int, excludeNode: String?, excludeSince: HLC) throws -> (
        changes: [ChangeRecord], last: Int64
    )
    /// The peer's `Apply(changes)`.
    func apply(_ changes: [ChangeRecord]) throws -> ApplyResult
    /// The highest HLC of `node`'s changes the peer holds (`HeldFrom`); `nil`
    /// when it holds none or cannot say (an older entryd).
    func heldFrom(node: String) throws -> HLC?
}

/// A peer as its `Status` describes it (doc/design.md "Incarnations").
package struct PeerIdentity: Sendable, Equatable {
    /// The peer's node id.
    package var node: String
    /// The peer's incarnation; `nil` for a peer that serves none (an older entryd).
    package var incarnation: Incarnation?
    /// The seq of the peer's last change, `nil` when not told.
    package var seq: Int64?
    /// The versions of the libraries it canonicalises phones and e-mails with,
    /// by name (``LibraryVersions/byName``); `nil` when not told (an older entryd).
    package var libraries: [String: String]?

    /// A peer's identity.
    package init(node: String, incarnation: Incarnation? = nil, seq: Int64? = nil, libraries: [String: String]? = nil) {
        self.node = node
        self.incarnation = incarnation
        self.seq = seq
        self.libraries = libraries
    }
}

/// An in-process peer: another store (tests, and local tooling).
package struct LocalPeer: PeerLink {
    /// The store standing in for the peer.
    package let store: EntryStore
    /// Recorded as `via` on every change applied to ``store``.
    package let via: String
    /// The field layout of a form, by form name.
    package let layout: @Sendable (String) -> FieldLayout
    /// Largest allowed lead of a change's HLC over ``store``'s wall clock, in milliseconds.
    package let maxClockSkewMs: Int
    /// The libraries the peer says it canonicalises with (``PeerIdentity/libraries``); `nil`: not told.
    package let libraries: [String: String]?

    /// A peer over `store`; by default 5 minutes of skew and the registration layout for every form.
    package init(
        store: EntryStore, via: String, maxClockSkewMs: Int = 300_000,
        layout: @escaping @Sendable (String) -> FieldLayout = { _ in .registration }, libraries: [String: String]? = nil
    ) {
        self.libraries = libraries
        self.store = store
        self.via = via
        self.layout = layout
        self.maxClockSkewMs = maxClockSkewMs
    }

    /// ``store``'s node id, incarnation and last committed seq; never throws.
    package func identity() throws -> PeerIdentity {
        PeerIdentity(
            node: store.nodeID, incarnation: store.incarnation, seq: store.commits.lastSeq, libraries: libraries)
    }
    /// ``EntryStore/changes(since:limit:excludeNode:excludeSince:)`` of ``store``.
    /// - Throws: ``StorageError``.
    package func changes(since: Int64, limit: Int, excludeNode: String?, excludeSince: HLC) throws -> (
        changes: [ChangeRecord], last: Int64
    ) {
        // As the service does: a pull without the puller's own changes acknowledges `since`.
        if let excludeNode { try store.acknowledge(node: excludeNode, since: since) }
        let page = try store.changes(since: since, limit: limit, excludeNode: excludeNode, excludeSince: excludeSince)
        return (try page.changes.map(Self.overTheWire), page.last)
    }
    /// ``EntryStore/apply(_:via:layout:maxClockSkewMs:pulled:)`` on ``store``, without a checkpoint.
    /// - Throws: ``EntryError/clockSkew(node:aheadMs:)``; ``StorageError``.
    package func apply(_ changes: [ChangeRecord]) throws -> ApplyResult {
        try store.apply(try changes.map(Self.overTheWire), via: via, layout: layout, maxClockSkewMs: maxClockSkewMs)
    }

    /// `change` as a peer receives it: written in the wire form and read back
    /// (``ChangeRecord/init(json:)``), both ways, so that what an in-process
    /// peer exchanges is held to what a peer over a socket accepts.
    /// - Throws: ``EntryError`` `.invalidParameter("changes")`, as a peer would answer.
    static func overTheWire(_ change: ChangeRecord) throws -> ChangeRecord {
        var read = try ChangeRecord(json: change.json)
        read.seq = change.seq
        return read
    }
    /// ``EntryStore/highestHLC(madeOn:)`` of ``store``.
    /// - Throws: ``StorageError``.
    package func heldFrom(node: String) throws -> HLC? { try store.highestHLC(madeOn: node) }
}
