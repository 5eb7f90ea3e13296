import EntryModel

// MARK: - Conveniences

extension EntryStore {
    /// ``update(id:ifVersion:layoutOf:origin:compute:)`` with one layout for every form.
    package func update(
        id: String, ifVersion: String?, layout: FieldLayout, origin: WriteOrigin,
        compute: @escaping (StoredEntry) throws -> [String: String]
    ) throws -> StoredEntry {
        try update(id: id, ifVersion: ifVersion, layoutOf: { _ in layout }, origin: origin, compute: compute)
    }

    /// ``delete(id:ifVersion:layoutOf:origin:)`` with one layout for every form.
    package func delete(id: String, ifVersion: String?, layout: FieldLayout, origin: WriteOrigin) throws -> StoredEntry
    {
        try delete(id: id, ifVersion: ifVersion, layoutOf: { _ in layout }, origin: origin)
    }

    /// ``beginImport(form:rows:layout:atomic:origin:)`` waited for: blocks the
    /// calling thread until the import is durable.
    /// - Returns: the counts and the rejected rows, in row order.
    /// - Throws: ``AtomicImportRefused`` (nothing stored) when `atomic` and a row
    ///   was rejected; ``StorageError`` (nothing stored); ``EntryError``
    ///   `storageFailed` once the store is closing.
    package func importEntries(
        form: String, rows: [ImportRow], layout: FieldLayout, atomic: Bool,
        origin: WriteOrigin
    ) throws -> ImportResult {
        try beginImport(form: form, rows: rows, layout: layout, atomic: atomic, origin: origin).wait()
    }

    /// ``restore(id:layoutOf:origin:)`` with one layout for every form.
    package func restore(id: String, layout: FieldLayout, origin: WriteOrigin) throws -> StoredEntry {
        try restore(id: id, layoutOf: { _ in layout }, origin: origin)
    }

    /// ``changes(since:limit:excludeNode:excludeSince:)`` of every node.
    package func changes(since: Int64, limit: Int) throws -> (changes: [ChangeRecord], last: Int64) {
        try changes(since: since, limit: limit, excludeNode: nil, excludeSince: .zero)
    }

    /// ``changes(since:limit:excludeNode:excludeSince:)`` without any of `excludeNode`'s changes.
    package func changes(since: Int64, limit: Int, excludeNode: String?) throws -> (
        changes: [ChangeRecord], last: Int64
    ) {
        try changes(since: since, limit: limit, excludeNode: excludeNode, excludeSince: .zero)
    }

    /// ``apply(_:via:layout:maxClockSkewMs:pulled:)`` without a pull checkpoint
    /// (an `Apply` call, a push from a peer).
    package func apply(
        _ changes: [ChangeRecord], via: String?, layout: @escaping (String) -> FieldLayout,
        maxClockSkewMs: Int
    ) throws -> ApplyResult {
        try apply(changes, via: via, layout: layout, maxClockSkewMs: maxClockSkewMs, pulled: nil, respell: true)
    }

    /// ``apply(_:via:layout:maxClockSkewMs:pulled:respell:)`` re-spelling what it stores.
    package func apply(
        _ changes: [ChangeRecord], via: String?, layout: @escaping (String) -> FieldLayout,
        maxClockSkewMs: Int, pulled: PullCheckpoint?
    ) throws -> ApplyResult {
        try apply(changes, via: via, layout: layout, maxClockSkewMs: maxClockSkewMs, pulled: pulled, respell: true)
    }
}

// MARK: - What the store's calls carry

/// A write queued by a ``EntryStore``, not yet known to be committed: the
/// ticket ``EntryStore/beginCreate(form:id:fields:layout:origin:)`` and
/// ``EntryStore/beginImport(form:rows:layout:atomic:origin:)`` return.
///
/// ### Implementing
/// ``wait()`` blocks until the write's transaction committed durably (then it
/// gives the value) or failed (then it throws). It is called exactly once, by
/// the thread that queued the write; the ticket need not be `Sendable`. Keep it
/// small (at most three words, e.g. two references) so that `any PendingWrite`
/// holds it inline, without an allocation per write.
package protocol PendingWrite<Value> {
    /// What the write gives once committed.
    associatedtype Value

    /// Waits for the write's commit.
    /// - Returns: what the write returned, once durable.
    /// - Throws: what the write threw (only its own writes were undone), or the
    ///   ``StorageError`` of a failed commit.
    func wait() throws -> Value
}

/// A failure of the storage under a ``EntryStore`` (the disk, the database
/// file or server), as opposed to a domain refusal (``EntryError``): the server
/// answers it as `.storageFailed` with ``entryError``, and a failed sync does not
/// blame the peer for it.
///
/// ### Implementing
/// Each store's own error type conforms (``SQLiteError``). ``entryError`` must
/// be safe to show to a client: no bound values, no credentials.
package protocol StorageError: Error, Sendable {
    /// The domain error to answer with: `storageFailed` with a reason safe to show.
    var entryError: EntryError { get }
    /// Whether the connection to a database server was lost (a restart, a
    /// failover): a read that failed so may run again on a new connection.
    var isConnectionFailure: Bool { get }
}

extension StorageError {
    /// A database that is no server keeps no connection to lose.
    package var isConnectionFailure: Bool { false }
}

/// A peer's pull checkpoint, stored by ``EntryStore/apply(_:via:layout:maxClockSkewMs:pulled:)``
/// in the same transaction as the batch pulled from that peer, so an
/// interrupted sync resumes without loss or duplicates.
package struct PullCheckpoint: Sendable, Equatable {
    /// The peer's name: the key of its ``PeerState``, which must have been saved
    /// before (``EntryStore/savePeerState(_:)``); when none is stored, nothing is recorded.
    package var peer: String
    /// The peer's change log has been pulled up to this seq (the peer's seq,
    /// the `last` of its `Changes` page): the new ``PeerState/pulledSeq``.
    package var pulledSeq: Int64
    /// The new ``PeerState/mark`` (the last change of the batch as `SEQ NODE
    /// HLC`), `nil` to keep the stored one (a batch of filtered-out changes).
    package var mark: String?

    /// The checkpoint "peer `peer` pulled up to `pulledSeq`", its last change `mark`.
    package init(peer: String, pulledSeq: Int64, mark: String? = nil) {
        self.peer = peer
        self.pulledSeq = pulledSeq
        self.mark = mark
    }
}
