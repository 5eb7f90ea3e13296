import EntryModel

/// The entries of one node with their change log, HLC, merge, conflicts and
/// peer checkpoints: everything the service and sync need of a store
/// (doc/design.md "Storage", "Sync").
///
/// ``EntryStore`` implements it on SQLite; a later store (PostgreSQL) implements
/// it too. The service (`EntryService`), sync (`PeerSync`, `LocalPeer`) and
/// the store tests hold `any LedgerStore`, so they run unchanged on either. Only process wiring (entryd) names the concrete type.
///
/// Every accepted change writes, atomically, the entry's new state and one row
/// of the change log. The change log is append-only and is this node's feed for
/// sync: each row has a local sequence number (seq), the origin node and that
/// node's HLC stamp. Entries are never removed by a delete, which leaves a
/// tombstone; only an erasure (``erase(id:origin:)``) removes one and empties
/// its change-log rows.
///
/// Calls block until done and may come from any thread at once.
///
/// Errors: domain refusals throw ``EntryError`` with the code each requirement
/// names; failures of the storage itself throw a ``StorageError`` (for
/// ``EntryStore``: ``SQLiteError``), which the server answers as `.storageFailed`.
///
/// Units: seq is an `Int64` ≥ 1 (0 means "before the first change"); times are
/// RFC 3339 UTC text with milliseconds; HLCs are ``HLC`` values (16 hex digits
/// on the wire); clock skew is in milliseconds.
///
/// ### Implementing
///
/// These are the rules a second store can get wrong. `StoreTests` and
/// `SyncTests` (Tests/UnitTests) check all but durability for every
/// `StoreKind`; durability across a crash is checked end to end, on the
/// SQLite store only (`CrashSafetyTests`).
///
/// - **Durable before the reply.** A write returns (and a ``PendingWrite``'s
///   `wait()` gives its value) only after its transaction is durably committed
///   (SQLite: `synchronous=FULL`; PostgreSQL: `synchronous_commit=on`). Concurrent
///   writers should share transactions (group commit) so that durability does
///   not cap throughput, but a write that fails must fail alone: its
///   neighbours in the same transaction still commit, and its own writes are undone.
/// - **Seq strictly increasing, never reused.** Every change-log row gets a
///   seq greater than every seq committed before it, and a seq once committed
///   is never given to another row, also after a rollback or a restart. A rolled
///   back write may leave a gap, never a seq that a reader saw and that later
///   changes meaning. Rows become visible to ``changes(since:limit:excludeNode:)``
///   in seq order: a reader must never see seq 8 and later find a new seq 7
///   (peers keep "pulled up to 8" as their checkpoint).
/// - **Commit signal after commit.** ``commits`` is raised with the highest
///   committed seq after each commit and before that commit's writes return;
///   never before the commit, and never for a rolled back transaction.
///   ``close()`` closes it.
/// - **Apply is idempotent by (node, HLC).** A change whose origin node and HLC
///   are already in the change log is skipped, whoever delivered it and however
///   often; so a batch can be sent twice, or through two peers, without harm.
/// - **Conflicts are kept, never dropped.** When two writes of one register
///   (a field group, or the deleted flag) were concurrent, the greater (HLC,
///   node) wins on every node and the loser is kept as a conflict record, with
///   an id derived from the entry, field and both stamps (the same on every
///   node), and in the change log (History). Only ``resolveConflict(id:useLost:layout:origin:)``
///   or a later write that had seen the kept value marks it resolved; nothing
///   deletes it.
/// - **The HLC is monotonic across restarts.** Every local change gets an HLC
///   greater than every stamp the store issued or observed before, also after
///   a restart with a wall clock that went back: the last stamp observed from
///   a peer must be persisted in the same transaction as the change that carried it.
/// - **The node id is stable.** Created once (a UUIDv7) and kept with the data.
public protocol LedgerStore: AnyObject, Sendable {
    // MARK: - The node

    /// This node's id: a UUID created with the store and kept in it, the same
    /// after every restart. Every local change carries it.
    var nodeID: String { get }

    /// The incarnation this store serves: a store that went back in time
    /// (restored, put back, copied) serves a new one, so that peers re-read it
    /// from ``Incarnation/startSeq`` and re-send what it lost (doc/design.md
    /// "Incarnations"). Each store decides from its own evidence.
    var incarnation: Incarnation { get }

    /// Where the store keeps its data, for people (`Status`'s `database`): the
    /// database file's absolute path for ``EntryStore``; a connection name
    /// without credentials for a database server.
    var location: String { get }

    /// The version of the store's schema, as a backup copy records it
    /// (``consistentCopy()``); for ``EntryStore``, its latest migration number.
    var schemaVersion: Int { get }

    /// Raised after each commit with the highest committed seq: `Changes`
    /// streams and the peer scheduler wait on it. Closed by ``close()``.
    var commits: CommitSignal { get }

    /// The last HLC this node committed: the greater of its last local change's
    /// stamp and the last stamp it observed from a peer (`.zero` for a new store).
    /// - Throws: ``StorageError``.
    func currentHLC() throws -> HLC

    // MARK: - Entries

    /// Stores a new entry whose `fields` are already validated and canonical,
    /// with its `create` change.
    ///
    /// With `id`, idempotent: if `id` exists with the same form and fields and is
    /// not deleted, the stored entry is returned with `created` false and nothing
    /// is written.
    /// - Parameters:
    ///   - form: the form's name.
    ///   - id: a canonical lower-case UUID, or `nil` to generate a UUIDv7.
    ///   - layout: which fields feed the filter columns and merge together.
    ///   - origin: the actor and reason recorded on the change.
    /// - Returns: the entry (its `version` is the change's HLC, `seq` the change's
    ///   seq) and whether it was created now.
    /// - Throws: ``EntryError`` `entryExists` when `id` is used by other values
    ///   or by a deleted entry; ``StorageError``.
    func create(form: String, id: String?, fields: [String: String], layout: FieldLayout,
                origin: WriteOrigin) throws -> (entry: StoredEntry, created: Bool)

    /// ``create(form:id:fields:layout:origin:)`` queued, returning at once, so one
    /// caller (a session with pipelined Add calls) can have several writes in one
    /// group commit. Writes of one caller run in the order they were queued.
    ///
    /// The caller must call the ticket's `wait()` before it blocks on anything
    /// else (a session does, before it reads its socket again): a store may run
    /// a write queued on an idle store on the thread that waits for it. This is
    /// the Add hot path: it should cost no more than the write itself (no
    /// allocation beyond the queued job).
    /// - Returns: a ticket whose `wait()` gives what `create` returns, once durable,
    ///   or throws what it throws.
    /// - Throws: ``EntryError`` `storageFailed` once the store is closing.
    func beginCreate(form: String, id: String?, fields: [String: String], layout: FieldLayout,
                     origin: WriteOrigin) throws -> any PendingWrite<(entry: StoredEntry, created: Bool)>

    /// The entry `id`, deleted ones too, or `nil` when there is none.
    /// - Throws: ``StorageError``.
    func get(_ id: String) throws -> StoredEntry?

    /// Changes an entry: `compute` gets the current entry, with no other write
    /// between that read and this write, and returns its complete new field map
    /// (validated, canonical). Fields whose value changed, with the rest of their
    /// groups (`layoutOf(form).group(of:)`), are written as one `update` change
    /// whose `base` holds each field's replaced HLC; if none changed, nothing is
    /// written and the current entry is returned.
    /// - Parameters:
    ///   - ifVersion: when given, 16 hex digits the current version must equal.
    ///   - layoutOf: the field layout of a form by name, asked for the stored
    ///     entry's form inside the write (no read before the write).
    /// - Throws: ``EntryError`` `entryNotFound`, `versionMismatch` (carrying the
    ///   current version); whatever `compute` throws (e.g. `validationFailed`),
    ///   with nothing written; ``StorageError``.
    func update(id: String, ifVersion: String?, layoutOf: @escaping (String) -> FieldLayout, origin: WriteOrigin,
                compute: @escaping (StoredEntry) throws -> [String: String]) throws -> StoredEntry

    /// Marks an entry deleted with a `delete` change (a tombstone: its values are
    /// kept, so the delete syncs and can be undone). Deleting a deleted entry
    /// writes nothing and returns it.
    /// - Throws: ``EntryError`` `entryNotFound`, `versionMismatch`; ``StorageError``.
    func delete(id: String, ifVersion: String?, layoutOf: @escaping (String) -> FieldLayout,
                origin: WriteOrigin) throws -> StoredEntry

    /// Undoes a delete with a `restore` change. Restoring an entry that is not
    /// deleted writes nothing and returns it.
    /// - Throws: ``EntryError`` `entryNotFound`; ``StorageError``.
    func restore(id: String, layoutOf: @escaping (String) -> FieldLayout, origin: WriteOrigin) throws -> StoredEntry

    /// Stores many entries in one transaction, each with its `create` change (and a
    /// `delete` change for a row marked deleted). A row with `problems` is
    /// rejected untouched; a row whose id exists with the same form, values and
    /// deleted flag counts as unchanged (stored fields its form does not define
    /// need not be given: ``ImportRow/matches(_:form:)``, so none is ever
    /// cleared); with anything else it is rejected, and so is a new row that
    /// gives values its form cannot take (``ImportRow/unknown``).
    ///
    /// Queued, returning at once, so that the caller can go on while the rows
    /// are stored (a session validates its next pipelined Import meanwhile);
    /// ``importEntries(form:rows:layout:atomic:origin:)`` waits at once. Writes
    /// of one caller run in the order they were queued. Unlike
    /// ``beginCreate(form:id:fields:layout:origin:)`` the caller may do other
    /// work before it waits: the store starts the job without it.
    /// - Parameter atomic: one rejected row stores nothing.
    /// - Returns: a ticket whose `wait()` gives the counts and the rejected rows,
    ///   in row order, once durable; or throws ``AtomicImportRefused`` (nothing
    ///   stored) when `atomic` and a row was rejected, or a ``StorageError``
    ///   (nothing stored).
    /// - Throws: ``EntryError`` `storageFailed` once the store is closing.
    func beginImport(form: String, rows: [ImportRow], layout: FieldLayout, atomic: Bool,
                     origin: WriteOrigin) throws -> any PendingWrite<ImportResult>

    /// A page of entries matching `query`, ordered by (sort column, id) in the
    /// query's direction, with keyset paging (`query.after`), so a page costs the
    /// same wherever it starts. At most `query.limit` (clamped to 1…1000) entries.
    /// - Returns: the page, the keyset position of its last entry when more may
    ///   follow, and the number of all matching entries.
    /// - Throws: ``StorageError``.
    func list(_ query: ListQuery) throws -> ListPage

    /// Every change of entry `id`, local and received, oldest first (by seq);
    /// empty for an unknown id.
    /// - Throws: ``StorageError``.
    func history(_ id: String) throws -> [ChangeRecord]

    /// Counts for `Status`: live entries, deleted entries (tombstones), and the
    /// highest committed seq (0 for an empty change log). Must not scan the entries.
    /// - Throws: ``StorageError``.
    func counts() throws -> (entries: Int, deleted: Int, seq: Int64)

    // MARK: - The change log and merge

    /// Changes after `since` (exclusive), in seq order, at most `limit` (≥ 1) of them.
    /// - Parameters:
    ///   - excludeNode: drop changes made on that node (they still count as examined)…
    ///   - excludeSince: …stamped at or after this HLC only: the start of that
    ///     node's incarnation, so a restored node gets back its own changes from
    ///     before (doc/design.md "Incarnations"); `.zero` drops them all.
    /// - Returns: the changes, each with this node's `seq` and the `via` it was
    ///   received through, and `last`, the highest seq examined (`since` when none
    ///   was): a caller continues from `last` even when every change was dropped.
    /// - Throws: ``StorageError``.
    func changes(since: Int64, limit: Int, excludeNode: String?, excludeSince: HLC) throws -> (changes: [ChangeRecord], last: Int64)

    /// The highest HLC among the changes made on `node` that this store holds,
    /// `nil` when it holds none: a node that finds its peer holding one of its
    /// own changes it no longer has has gone back in time (doc/design.md "Incarnations").
    /// - Throws: ``StorageError``.
    func highestHLC(madeOn node: String) throws -> HLC?

    /// Whether the change log holds the change made on `node` at `hlc`.
    /// - Throws: ``StorageError``.
    func holds(node: String, hlc: HLC) throws -> Bool

    /// Applies changes made on other nodes in one transaction (doc/design.md "Sync").
    ///
    /// - Skips, without error, a change whose (node, HLC) is already in the
    ///   change log (counted in `skipped`).
    /// - Appends every other change to the change log (new local seq, `via`
    ///   recorded) and merges it: each field group is a last-writer-wins register
    ///   ordered by (HLC, node); a change whose `base` equals the register's HLC
    ///   follows it, otherwise the writes were concurrent, the greater stamp wins
    ///   and a ``ConflictRecord`` keeps the losing value. The deleted flag is a
    ///   register of its own.
    /// - Moves the local clock past every applied stamp, durably with the batch.
    /// - With `pulled`, records the peer's pull checkpoint in the same transaction.
    /// - With `respell`, re-spells under this node's rules the values it stored
    ///   that its ``Canonicaliser`` writes otherwise (``ApplyResult/recanonicalised``).
    ///
    /// - Parameters:
    ///   - via: the peer or user that delivered the batch (recorded on each change).
    ///   - layout: the field layout of a form, by form name.
    ///   - maxClockSkewMs: a change stamped more than this many milliseconds ahead
    ///     of the local wall clock refuses the whole batch.
    ///   - respell: false when the sender canonicalises with the same libraries
    ///     (it re-spells what it holds itself, and those re-spellings come too).
    /// - Returns: applied, skipped, new open conflicts, and this node's highest seq after it.
    /// - Throws: ``EntryError/clockSkew(node:aheadMs:)`` with nothing applied;
    ///   ``StorageError`` with nothing applied.
    func apply(_ changes: [ChangeRecord], via: String?, layout: @escaping (String) -> FieldLayout,
               maxClockSkewMs: Int, pulled: PullCheckpoint?, respell: Bool) throws -> ApplyResult

    // MARK: - Conflicts

    /// Conflicts, oldest first (by detection time, then id); of one entry when
    /// `entry` is given; resolved ones only with `includeResolved`.
    /// - Throws: ``StorageError``.
    func conflicts(entry: String?, includeResolved: Bool) throws -> [ConflictRecord]

    /// How many conflicts are open (for `Status`), counted without reading them.
    /// - Throws: ``StorageError``.
    func openConflictCount() throws -> Int

    /// Resolves conflict `id`: writes its field group as a new local `update`
    /// change (with `useLost`, the losing values; else the kept values as they
    /// stand), which marks it resolved here and, once synced, on the other nodes.
    /// A conflict whose kept value was already overwritten, or that is already
    /// resolved, is only marked resolved. The record stays (resolved).
    /// - Returns: the conflict, resolved.
    /// - Throws: ``EntryError`` `conflictNotFound`; `entryNotFound` when its entry
    ///   is gone; ``StorageError``.
    func resolveConflict(id: String, useLost: Bool, layout: @escaping (String) -> FieldLayout,
                         origin: WriteOrigin) throws -> ConflictRecord

    // MARK: - Erasure (doc/design.md "Erasure")

    /// Erases entry `id` for good: in one transaction an `erase` change is logged
    /// (no fields, no base), and the entry's values, conflict records and the
    /// payloads (fields, base, reason) of its other change-log rows are removed
    /// or overwritten, leaving its id, form, the erasure's HLC, actor and reason.
    /// The erasure is kept outside the store too (SQLite: the ledger file beside
    /// the database, made durable before the commit) and re-applied when the
    /// store opens. Afterwards Get, Update, Delete, Restore and a create with the
    /// id throw `entryErased`; list leaves it out; history holds the erase alone;
    /// changes to it from peers or imports are refused and counted.
    /// - Parameter origin: the actor, and the reason, which must not be blank.
    /// - Throws: ``EntryError`` `invalidParameter("reason")`, `entryNotFound`,
    ///   `entryErased` (nothing changes); ``StorageError``.
    func erase(id: String, origin: WriteOrigin) throws -> ErasureOutcome

    /// The erasure of entry `id`, `nil` when it was not erased here.
    /// - Throws: ``StorageError``.
    func erasure(of id: String) throws -> ErasureRecord?

    /// Every erasure this store holds, oldest first (by HLC).
    /// - Throws: ``StorageError``.
    func erasures() throws -> [ErasureRecord]

    /// Changes refused because their entry was erased, in total (for `Status`).
    /// - Throws: ``StorageError``.
    func refusedErasedCount() throws -> Int

    /// Adds `count` to ``refusedErasedCount()``: for refusals whose own write
    /// rolled back (an Add with the id of an erased entry).
    /// - Throws: ``StorageError``.
    func countRefusedErased(_ count: Int) throws

    /// The entries whose change log ever held the subject's data (its values
    /// are canonical): every entry holding it now, in its history or in a
    /// conflict record. Never an erased entry.
    /// - Throws: ``StorageError``.
    func findSubject(_ query: SubjectQuery) throws -> [SubjectMatch]

    /// Proves an erasure: the entry's rows that still hold a payload, and the
    /// occurrences of `values`' bytes in the store's files (0 and 0 expected).
    /// - Throws: ``StorageError``.
    func verifyErasure(id: String, values: [String]) throws -> ErasureVerification

    // MARK: - Peer checkpoints

    /// The stored state of peer `name`, or `nil` before its first sync.
    /// - Throws: ``StorageError``.
    func peerState(_ name: String) throws -> PeerState?

    /// Every stored peer state, by name (ascending).
    /// - Throws: ``StorageError``.
    func peerStates() throws -> [PeerState]

    /// Stores the state of a peer under its name, replacing an earlier one; durable on return.
    /// - Throws: ``StorageError``.
    func savePeerState(_ state: PeerState) throws

    // MARK: - Compaction

    /// Records that node `node` pulled this store's change log with `since`
    /// (it holds everything up to there: the compaction horizon); brings back a
    /// peer of that node that was marked expired, with its checkpoints at 0.
    /// - Throws: ``StorageError``.
    func acknowledge(node: String, since: Int64) throws

    /// Removes superseded change-log rows up to the horizon of the known peers
    /// (doc/design.md "Compaction"), in batches of entries, each in one transaction.
    /// - Parameters:
    ///   - peerExpiryMs: silence after which a peer is expired and ignored, in milliseconds.
    ///   - configured: the names of the configured peers.
    ///   - layout: the field layout of a form, by form name.
    ///   - progress: called after each batch with (entries done, entries in all).
    /// - Throws: ``StorageError``; batches done stay done.
    func compact(peerExpiryMs: UInt64, configured: [String], layout: @escaping (String) -> FieldLayout,
                 progress: (Int, Int) -> Void) throws -> CompactionResult

    /// The figures of the last compaction, `nil` before the first.
    /// - Throws: ``StorageError``.
    func lastCompaction() throws -> CompactionResult?

    /// The horizon of the last compaction that removed rows of `entry`, `nil` if none did.
    /// - Throws: ``StorageError``.
    func compactedThrough(entry: String) throws -> Int64?

    // MARK: - Backup, checks and lifetime

    /// Writes a consistent copy of the whole store (entries, change log, node
    /// id, HLC, conflicts, peer checkpoints) to a new file, mode 0600, and
    /// returns its path; the caller streams it and removes it. The copy holds
    /// every change committed before the call and none half-written; writes
    /// continue meanwhile. The file's format is the store's own (``EntryStore``:
    /// an SQLite database that `entryd --restore` takes).
    /// - Throws: ``StorageError`` or ``SystemError``; no file is left behind then.
    func consistentCopy() throws -> String

    /// The entries as the change log alone describes them, by id: every change
    /// replayed in seq order with per-field last-writer-wins by (HLC, node) and
    /// the deleted register likewise. Equal to ``storedEntries()`` at all times
    /// (doc/design.md "Storage"); the tests check it.
    /// - Throws: ``StorageError``.
    func replayChangeLog() throws -> [String: ReplayedEntry]

    /// Re-spells the stored values of `ids` that `rules` (``Canonicaliser``)
    /// now write otherwise, in one transaction: one `update` change by
    /// ``WriteOrigin/migrationActor`` per entry that needs it, which reads the
    /// values again inside it. Unknown and deleted ids are passed over.
    /// - Returns: how many values were rewritten.
    /// - Throws: ``StorageError``.
    func recanonicalise(ids: [String], rules: @escaping Canonicaliser, layoutOf: @escaping (String) -> FieldLayout) throws -> Int

    /// Every stored entry, deleted ones too, in the shape of ``replayChangeLog()``, by id.
    /// - Throws: ``StorageError``.
    func storedEntries() throws -> [String: ReplayedEntry]

    /// How the write path gets on (``WriterProgress``): steps finished and,
    /// while writes wait, since when none finished. The watchdog pings on it;
    /// cheap, and never waits for a write.
    var writerProgress: WriterProgress { get }

    /// Queues a probe (a cheap step that writes nothing) on the write path and
    /// returns at once, so that a write path wedged while idle shows in
    /// ``writerProgress`` as work waiting without progress.
    /// - Throws: ``StorageError`` or ``EntryError`` `.storageFailed` when the
    ///   probe cannot be queued (the store is closing).
    func queueWriterProbe() throws

    /// Finishes queued writes, closes ``commits`` and releases the store.
    /// Idempotent. Afterwards writes fail with ``EntryError`` `storageFailed`.
    func close()
}

// MARK: - Conveniences

extension LedgerStore {
    /// ``update(id:ifVersion:layoutOf:origin:compute:)`` with one layout for every form.
    public func update(id: String, ifVersion: String?, layout: FieldLayout, origin: WriteOrigin,
                       compute: @escaping (StoredEntry) throws -> [String: String]) throws -> StoredEntry {
        try update(id: id, ifVersion: ifVersion, layoutOf: { _ in layout }, origin: origin, compute: compute)
    }

    /// ``delete(id:ifVersion:layoutOf:origin:)`` with one layout for every form.
    public func delete(id: String, ifVersion: String?, layout: FieldLayout, origin: WriteOrigin) throws -> StoredEntry {
        try delete(id: id, ifVersion: ifVersion, layoutOf: { _ in layout }, origin: origin)
    }

    /// ``beginImport(form:rows:layout:atomic:origin:)`` waited for: blocks the
    /// calling thread until the import is durable.
    /// - Returns: the counts and the rejected rows, in row order.
    /// - Throws: ``AtomicImportRefused`` (nothing stored) when `atomic` and a row
    ///   was rejected; ``StorageError`` (nothing stored); ``EntryError``
    ///   `storageFailed` once the store is closing.
    public func importEntries(form: String, rows: [ImportRow], layout: FieldLayout, atomic: Bool,
                              origin: WriteOrigin) throws -> ImportResult {
        try beginImport(form: form, rows: rows, layout: layout, atomic: atomic, origin: origin).wait()
    }

    /// ``restore(id:layoutOf:origin:)`` with one layout for every form.
    public func restore(id: String, layout: FieldLayout, origin: WriteOrigin) throws -> StoredEntry {
        try restore(id: id, layoutOf: { _ in layout }, origin: origin)
    }

    /// ``changes(since:limit:excludeNode:excludeSince:)`` of every node.
    public func changes(since: Int64, limit: Int) throws -> (changes: [ChangeRecord], last: Int64) {
        try changes(since: since, limit: limit, excludeNode: nil, excludeSince: .zero)
    }

    /// ``changes(since:limit:excludeNode:excludeSince:)`` without any of `excludeNode`'s changes.
    public func changes(since: Int64, limit: Int, excludeNode: String?) throws -> (changes: [ChangeRecord], last: Int64) {
        try changes(since: since, limit: limit, excludeNode: excludeNode, excludeSince: .zero)
    }

    /// ``apply(_:via:layout:maxClockSkewMs:pulled:)`` without a pull checkpoint
    /// (an `Apply` call, a push from a peer).
    public func apply(_ changes: [ChangeRecord], via: String?, layout: @escaping (String) -> FieldLayout,
                      maxClockSkewMs: Int) throws -> ApplyResult {
        try apply(changes, via: via, layout: layout, maxClockSkewMs: maxClockSkewMs, pulled: nil, respell: true)
    }

    /// ``apply(_:via:layout:maxClockSkewMs:pulled:respell:)`` re-spelling what it stores.
    public func apply(_ changes: [ChangeRecord], via: String?, layout: @escaping (String) -> FieldLayout,
                      maxClockSkewMs: Int, pulled: PullCheckpoint?) throws -> ApplyResult {
        try apply(changes, via: via, layout: layout, maxClockSkewMs: maxClockSkewMs, pulled: pulled, respell: true)
    }
}

// MARK: - What the requirements carry

/// A write queued by a ``LedgerStore``, not yet known to be committed: the
/// ticket ``LedgerStore/beginCreate(form:id:fields:layout:origin:)`` and
/// ``LedgerStore/beginImport(form:rows:layout:atomic:origin:)`` return.
///
/// ### Implementing
/// ``wait()`` blocks until the write's transaction committed durably (then it
/// gives the value) or failed (then it throws). It is called exactly once, by
/// the thread that queued the write; the ticket need not be `Sendable`. Keep it
/// small (at most three words, e.g. two references) so that `any PendingWrite`
/// holds it inline, without an allocation per write.
public protocol PendingWrite<Value> {
    /// What the write gives once committed.
    associatedtype Value

    /// Waits for the write's commit.
    /// - Returns: what the write returned, once durable.
    /// - Throws: what the write threw (only its own writes were undone), or the
    ///   ``StorageError`` of a failed commit.
    func wait() throws -> Value
}

/// A failure of the storage under a ``LedgerStore`` (the disk, the database
/// file or server), as opposed to a domain refusal (``EntryError``): the server
/// answers it as `.storageFailed` with ``entryError``, and a failed sync does not
/// blame the peer for it.
///
/// ### Implementing
/// Each store's own error type conforms (``SQLiteError``). ``entryError`` must
/// be safe to show to a client: no bound values, no credentials.
public protocol StorageError: Error, Sendable {
    /// The domain error to answer with: `storageFailed` with a reason safe to show.
    var entryError: EntryError { get }
}

/// A peer's pull checkpoint, stored by ``LedgerStore/apply(_:via:layout:maxClockSkewMs:pulled:)``
/// in the same transaction as the batch pulled from that peer, so an
/// interrupted sync resumes without loss or duplicates.
public struct PullCheckpoint: Sendable, Equatable {
    /// The peer's name: the key of its ``PeerState``, which must have been saved
    /// before (``LedgerStore/savePeerState(_:)``); when none is stored, nothing is recorded.
    public var peer: String
    /// The peer's change log has been pulled up to this seq (the peer's seq,
    /// the `last` of its `Changes` page): the new ``PeerState/pulledSeq``.
    public var pulledSeq: Int64
    /// The new ``PeerState/mark`` (the last change of the batch as `SEQ NODE
    /// HLC`), `nil` to keep the stored one (a batch of filtered-out changes).
    public var mark: String?

    /// The checkpoint "peer `peer` pulled up to `pulledSeq`", its last change `mark`.
    public init(peer: String, pulledSeq: Int64, mark: String? = nil) {
        self.peer = peer
        self.pulledSeq = pulledSeq
        self.mark = mark
    }
}
