import Foundation
import EntryModel

/// The entries of one node with their change log, HLC, merge, conflicts and
/// peer checkpoints: everything the service and sync need of a store
/// (doc/design.md "Storage", "Sync"), on SQLite (one database file, one writer
/// process) or on a database server (``StoreServer``, e.g. EntryHub's
/// PostgreSQL, shared by several instances). The service (`EntryService`),
/// sync (`PeerSync`, `LocalPeer`) and the store tests hold it, so they run
/// unchanged on either.
///
/// Every accepted change writes, in one transaction, the entry's new state and
/// one change-log row (doc/design.md "Storage"). Writes go through the single
/// writer with group commit (``WriteQueue``, one round at a time); reads use a pool of
/// reading connections and never wait for the writer. The SQL is one text for
/// both engines (``SQLDatabase``). Storage failures throw the engine's
/// ``StorageError`` (``SQLiteError`` on SQLite).
///
/// The change log is append-only and is this node's feed for sync: each row
/// has a local sequence number (seq), the origin node and that node's HLC
/// stamp. Entries are never removed by a delete, which leaves a tombstone;
/// only an erasure (``erase(id:origin:)``) removes one and empties its
/// change-log rows.
///
/// Thread-safe: any thread may call any method. Calls block until done.
///
/// Errors: domain refusals throw ``EntryError`` with the code each method
/// names; failures of the storage itself throw a ``StorageError``, which the
/// server answers as `.storageFailed`.
///
/// Units: seq is an `Int64` ≥ 1 (0 means "before the first change"); times are
/// RFC 3339 UTC text with milliseconds; HLCs are ``HLC`` values (16 hex digits
/// on the wire); clock skew is in milliseconds.
///
/// ### Implementing
///
/// These are the rules a change to the store, or a new engine under it
/// (``SQLDatabase``, ``StoreServer``), can get wrong. `StoreTests` and
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
package final class EntryStore: @unchecked Sendable {
    // @unchecked: `writeContext` (not Sendable) is the writer thread's; the rest is set by init or behind `incarnationLock`.
    /// Absolute path of the database file; empty for a database server.
    package let path: String
    /// This node's id: a UUID created on first start and kept in the database.
    package let nodeID: String
    /// Where the data is, for people: the database file's absolute path, or
    /// the server's connection name without credentials.
    package var location: String { server?.location ?? path }
    /// The latest migration number: every database is migrated to it.
    package let schemaVersion: Int
    let writer: WriteQueue
    /// The writer's context: touched by the writer thread only, but for ``WriteContext/rebase(to:)``.
    private let writeContext: WriteContext
    let readers: ReaderPool
    /// Acknowledgements of pulls not yet written (``acknowledge(node:since:)``).
    let acks = PeerAcks()
    /// Wakes `Changes` streams after each commit.
    package let commits: CommitSignal
    /// The database server, `nil` on SQLite.
    let server: (any StoreServer)?
    /// The purge that follows erasures on SQLite (``ErasurePurge``).
    let purge: ErasurePurge

    /// The incarnation this store serves (doc/design.md "Incarnations"). On a
    /// server, an incarnation another instance begins later is taken at once.
    package var incarnation: Incarnation { incarnationLock.withLock { currentIncarnation } }
    private var currentIncarnation: Incarnation
    /// Guards ``currentIncarnation``, ``isClosed`` and the reachability handler.
    private let incarnationLock = NSLock()
    /// Set by ``close()``: a late announcement changes nothing after it.
    private var isClosed = false

    /// Told when the database server goes away (false, with the reason) and
    /// comes back (true), once per change, from the server's listening
    /// thread; entryd logs it. `nil` (the default) or on SQLite: never called.
    package var serverReachability: (@Sendable (Bool, String) -> Void)? {
        get { incarnationLock.withLock { reachabilityHandler } }
        set { incarnationLock.withLock { reachabilityHandler = newValue } }
    }
    private var reachabilityHandler: (@Sendable (Bool, String) -> Void)?
    /// Whether the database server answers now and how often it stopped
    /// answering since the store opened; `nil` on SQLite (the monitoring call).
    package var serverReachable: (reachable: Bool, losses: Int)? {
        guard server != nil else { return nil }
        return incarnationLock.withLock { (reachableNow, reachabilityLosses) }
    }
    private var reachableNow = true
    private var reachabilityLosses = 0
    /// Told what happens to a running instance of a server database besides
    /// reachability (``StoreEvent``), from the thread it happens on; entryd
    /// logs it. `nil` (the default) or on SQLite: never called.
    package var storeEvents: (@Sendable (StoreEvent) -> Void)? {
        get { incarnationLock.withLock { eventHandler } }
        set { incarnationLock.withLock { eventHandler = newValue } }
    }
    private var eventHandler: (@Sendable (StoreEvent) -> Void)?
    /// Why a new incarnation (or a new node id) began at this opening, for the
    /// log; `nil` when the stored one continues.
    package let incarnationBegan: String?
    let marker: MarkerKeeper
    /// How many erase changes of the erasure ledger the database lacked at this
    /// opening and were carried out again (a restore of an older backup), for the log.
    package private(set) var erasuresReapplied = 0
    /// Lines of the erasure ledger that could not be read at open (damaged:
    /// their erasures were not re-applied from the ledger; entryd warns).
    package private(set) var erasureLedgerMalformed = 0
    /// Why every entry's search keys were rebuilt at this opening, and for how
    /// many entries (``SearchKeys/versions`` differed from the stored ones), for
    /// the log; `nil` when they were current.
    package let keysRebuilt: (reason: String, entries: Int)?
    /// The erasure ledger's path (``ErasureLedger``), for the log.
    package var erasureLedgerPath: String { ledger.path }

    /// Opens or creates the database at `path`, migrates it, and checks its
    /// incarnation (``IncarnationCheck``): a database that went back in time, was
    /// replaced or restored begins a new one; one last opened elsewhere is
    /// handled by `copies`.
    ///
    /// - Parameters:
    ///   - readers: read-only connections in the pool (≥ 1).
    ///   - wallClock: milliseconds since the epoch, for HLC stamps (tests inject one).
    ///   - progress: called before each migration with (version, total), e.g. for `STATUS=`.
    ///   - vfs: the SQLite VFS by name (`nil`: the default).
    ///   - copies: what to do with a database last opened at another place.
    ///   - canonicaliser: the rules that re-spell phones and e-mails arriving by
    ///     Apply or coming back by a restore (``Canonicaliser``); `nil`: none.
    ///   - layoutOf: the field layout of a form, by form name, for rebuilding
    ///     the search keys at open when they are stale (``keysRebuilt``).
    ///   - rebuilding: told the entries whose keys are rebuilt so far, after
    ///     each batch of such a rebuild (for `STATUS=` and systemd's start timeout).
    /// - Throws: ``SQLiteError`` when the file cannot be opened, is not a
    ///   database, or is newer than this build; ``DatabaseMovedOrCopied`` with
    ///   `copies` `.refuse` for a database last opened elsewhere.
    package convenience init(
        path: String, readers: Int = 4,
        wallClock: @escaping @Sendable () -> UInt64 = HybridClock.systemMilliseconds,
        progress: (Int, Int) -> Void = { _, _ in }, vfs: String? = nil,
        copies: CopiedDatabasePolicy = .refuse, canonicaliser: Canonicaliser? = nil,
        layoutOf: (String) -> FieldLayout = { _ in .registration }, rebuilding: (Int) -> Void = { _ in }
    ) throws {
        let db = try SQLiteConnection(path: path, vfs: vfs)
        try Migrations.migrate(db, progress: progress)
        try PinyinCollation.ensureOrder(db)
        let pool = try ReaderPool(path: path, count: readers, vfs: vfs)
        let place = Place(
            home: NodeMarker.home(of: path),
            file: NodeMarker.FileIdentity.of(path) ?? NodeMarker.FileIdentity(device: 0, inode: 0),
            markerPath: NodeMarker.path(for: path), markerRequired: true)
        try self.init(
            path: path, server: nil, writer: db, readers: pool, schemaVersion: Migrations.all.count, place: place,
            wallClock: wallClock, copies: copies, canonicaliser: canonicaliser, layoutOf: layoutOf,
            rebuilding: rebuilding, vfs: vfs)
    }

    /// Opens the store kept by a database server: `writer` and `readers` are
    /// its connections, already migrated to `schemaVersion` by the caller.
    /// Several stores (entryd instances) may serve one database at once as one
    /// node: one node id, one change log, one clock (``SharedChangeLog``).
    ///
    /// The incarnation check compares the database with this instance's marker
    /// file (``StoreServer/markerPath``): a database that went back in time
    /// (a restore, point-in-time recovery) begins a new incarnation. A missing
    /// marker is a new instance, not evidence; a marker older than the
    /// database's incarnation means another instance already began it.
    /// - Parameters:
    ///   - readers: connections for reads (≥ 1), each used by one read at a time.
    ///   - wallClock, copies, canonicaliser, layoutOf, rebuilding: as for SQLite.
    /// - Throws: the server's ``StorageError``; ``DatabaseMovedOrCopied`` with
    ///   `copies` `.refuse` for a database from another server.
    package convenience init(
        server: any StoreServer, writer: any SQLDatabase, readers: [any SQLDatabase], schemaVersion: Int,
        wallClock: @escaping @Sendable () -> UInt64 = HybridClock.systemMilliseconds,
        copies: CopiedDatabasePolicy = .refuse, canonicaliser: Canonicaliser? = nil,
        layoutOf: (String) -> FieldLayout = { _ in .registration }, rebuilding: (Int) -> Void = { _ in }
    ) throws {
        let place = Place(
            home: server.home,
            file: NodeMarker.FileIdentity(device: server.identity.device, inode: server.identity.inode),
            markerPath: server.markerPath, markerRequired: false)
        try self.init(
            path: "", server: server, writer: writer,
            readers: ReaderPool(connections: readers, begin: server.readBegin),
            schemaVersion: schemaVersion, place: place, wallClock: wallClock, copies: copies,
            canonicaliser: canonicaliser, layoutOf: layoutOf, rebuilding: rebuilding)
    }

    /// Where a database is, as the incarnation check compares it.
    struct Place {
        /// `machine-id:path` of a file, the server and database of a server's.
        var home: String
        /// The file's (device, inode); a server database's identity.
        var file: NodeMarker.FileIdentity
        /// The marker file of this opening.
        var markerPath: String
        /// A missing marker is evidence (SQLite: the file was put back); for a
        /// server's instances it is a new instance.
        var markerRequired: Bool
    }

    private init(
        path: String, server: (any StoreServer)?, writer db: any SQLDatabase, readers: ReaderPool, schemaVersion: Int,
        place: Place, wallClock: @escaping @Sendable () -> UInt64, copies: CopiedDatabasePolicy,
        canonicaliser: Canonicaliser?, layoutOf: (String) -> FieldLayout, rebuilding: (Int) -> Void,
        vfs: String? = nil
    ) throws {
        self.path = path
        self.server = server
        purge = ErasurePurge(vfs: vfs)
        self.schemaVersion = schemaVersion
        // One transaction from reading the node table to writing it back: instances of
        // one server database starting at once must agree on one node id (the shared
        // change log's lock orders them; SQLite's write lock is the process's own).
        try db.statement(server == nil ? "BEGIN IMMEDIATE" : "BEGIN").run()
        var committed = false
        defer { if !committed { try? db.execute("ROLLBACK") } }
        if let server { _ = try server.claim(db) }
        var stored: [String: String] = [:]
        try db.statement("SELECT key, value FROM node").query { stored[$0.text(0)] = $0.text(1) }
        let lastSeq = try EntryStore.lastSeq(db)
        var node = stored["id"] ?? ""
        if node.isEmpty { node = UUIDv7.generate(milliseconds: wallClock()) }
        var marker = NodeMarker.read(place.markerPath)
        let storedIncarnation = stored["incarnation"]
        if !place.markerRequired, let seen = marker,
            seen.node != node || storedIncarnation.map({ $0 > seen.incarnation }) == true
        {
            // An instance's marker is evidence only about the node it last served: one of
            // another node is from a database this instance served before. And when another
            // instance began a newer incarnation (UUIDv7 ids order by time) after this one
            // last ran, that one has handled what came before.
            marker = nil
        }
        let check = IncarnationCheck(
            node: node,
            incarnation: storedIncarnation.map {
                Incarnation(id: $0, startSeq: Int64(stored["incarnation_seq"] ?? "") ?? 0)
            },
            home: stored["home"], pendingReason: stored["incarnation_pending"], lastSeq: lastSeq, file: place.file,
            marker: marker, here: place.home, policy: copies, markerRequired: place.markerRequired)
        var incarnation = Incarnation(
            id: storedIncarnation ?? UUIDv7.generate(milliseconds: wallClock()),
            startSeq: Int64(stored["incarnation_seq"] ?? "") ?? 0,
            reason: stored["incarnation_reason"].flatMap { $0.isEmpty ? nil : $0 },
            since: stored["incarnation_hlc"].flatMap(HLC.init) ?? .zero)
        let now = HLC(milliseconds: wallClock(), counter: 0)
        switch check.decide() {
        case .refuse(let error):
            throw error
        case .same:
            incarnationBegan = nil
        case .begin(let reason):
            incarnation = Incarnation(
                id: UUIDv7.generate(milliseconds: wallClock()), startSeq: lastSeq, reason: reason, since: now)
            incarnationBegan = reason
        case .newNode(let reason):
            node = UUIDv7.generate(milliseconds: wallClock())
            incarnation = Incarnation(
                id: UUIDv7.generate(milliseconds: wallClock()), startSeq: lastSeq, reason: reason, since: now)
            incarnationBegan = reason
        }
        let changed =
            stored["id"] != node || storedIncarnation != incarnation.id || stored["home"] != place.home
            || stored["incarnation_pending"] != nil
        if server == nil || changed {
            let put = try db.statement(
                "INSERT INTO node (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
            for (key, value) in [
                ("id", node), ("incarnation", incarnation.id), ("incarnation_seq", String(incarnation.startSeq)),
                ("incarnation_reason", incarnation.reason ?? ""), ("incarnation_hlc", incarnation.since.description),
                ("home", place.home),
            ] {
                try put.run([.text(key), .text(value)])
            }
            try db.execute("DELETE FROM node WHERE key = 'incarnation_pending'")
            // Instances already running take the new incarnation (reloadIncarnation).
            try server?.announceNodeChange(db)
        }
        try db.statement("COMMIT").run()
        committed = true
        // Before serving: the search keys of every entry, when the libraries or the
        // key format that made them changed (EntryKeys.swift).
        keysRebuilt = try EntryStore.rebuildKeysIfStale(
            db, server: server, layoutOf: layoutOf, progress: rebuilding)
        nodeID = node
        currentIncarnation = incarnation
        let keeper = MarkerKeeper(
            path: place.markerPath,
            marker: NodeMarker(
                node: node, incarnation: incarnation.id, seq: lastSeq,
                file: place.file, machine: NodeMarker.machine))
        self.marker = keeper
        // The clock resumes after the greatest stamp it issued: the node table keeps
        // the last one observed from a peer, the change log every local one
        // (WriteContext.persistClock); UNIQUE (node, hlc) makes this a lookup.
        // On a server the shared counter holds it too (SharedChangeLog.claim).
        let lastHLC = try EntryStore.lastCommittedHLC(db, node: node)
        let signal = CommitSignal(seq: lastSeq)
        commits = signal
        let context = WriteContext(
            db: db, nodeID: node, clock: HybridClock(last: lastHLC, wallClock: wallClock), lastSeq: lastSeq,
            canonicaliser: canonicaliser, shared: server)
        writeContext = context
        writer = WriteQueue(context: context) { seq in
            signal.publish(seq)
            keeper.advance(to: seq)
        }
        self.readers = readers
        if let server {
            // A server database that went back under this running instance (an asynchronous
            // failover, a restore while it ran): a new incarnation begins at once, in the
            // transaction that found it, and every instance takes it (announceNodeChange).
            context.knownSeq = { signal.lastSeq }
            context.wentBack = { [weak self] ctx, from, to in
                // Another instance may have found it first and begun the new incarnation
                // (its announcement not yet read here): take that one rather than begin
                // another, which would make every peer read the node again once more.
                // Only one begun after this instance's own: a database put back from an
                // older dump holds an older one, and that is a going back like any other.
                if let self, let stored = try EntryStore.storedIncarnation(ctx.db), stored.id != self.incarnation.id,
                    stored.since > self.incarnation.since, stored.startSeq <= to
                {
                    self.take(stored, seenSeq: from)
                    signal.rewind(to: to)
                    return false
                }
                // Or this instance took it (reloadIncarnation) since the claim looked.
                if let taken = ctx.takeRebase(), taken <= to { return false }
                let hlc = HLC(milliseconds: ctx.clock.wallClock(), counter: 0)
                let put = try ctx.db.statement(
                    "INSERT INTO node (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
                )
                for (key, value) in [
                    ("incarnation", UUIDv7.generate(milliseconds: ctx.clock.wallClock())),
                    ("incarnation_seq", String(to)),
                    (
                        "incarnation_reason",
                        "the change log went back from seq \(from) to \(to) while this instance ran "
                            + "(a failover that lost commits, or a restore under a running instance): "
                            + "\(from - to) change(s) lost, seqs \(to + 1) to \(from) (at least: \(from) is the "
                            + "highest seq this instance had seen committed; each instance logs its own)"
                    ),
                    ("incarnation_hlc", hlc.description),
                ] {
                    try put.run([.text(key), .text(value)])
                }
                try server.announceNodeChange(ctx.db)
                signal.rewind(to: to)
                return true
            }
            context.beganIncarnation = { [weak self] in
                guard let store = self else { return }
                DispatchQueue.global().async { store.reloadIncarnation() }
            }
        }
        writer.start()
        // Commits of the other instances wake this one's Changes streams too.
        server?.watchCommits(
            { seq in
                signal.publish(seq)
                keeper.advance(to: seq)
            }, nodeChanged: { [weak self] in self?.reloadIncarnation() },
            reachable: { [weak self] up, why in
                self?.noteReachable(up)
                self?.serverReachability?(up, why)
                if up { self?.lookForGoingBack() }
            })
        // Before the first call: a database restored from a backup older than an
        // erasure is erased again (doc/design.md "Erasure").
        do {
            (erasuresReapplied, erasureLedgerMalformed) = try reapplyErasureLedger()
            // A crash between an erasure's commit and its rewrite and checkpoint leaves
            // old page images in the database file: rewrite it when one is pending, and
            // checkpoint before the first call whenever anything was erased.
            var anyErased = false
            var pending = false
            try self.readers.read { db in
                try db.statement("SELECT 1 FROM erasures LIMIT 1").query { _ in anyErased = true }
                pending = try EntryStore.isRewritePending(db)
            }
            // On SQLite the rewrite is the purge, in the background: the WAL is truncated before it.
            if pending { rewriteAfterErasure() }
            if anyErased && (server == nil || !pending) { _ = truncateWAL() }
        } catch {
            close()
            throw error
        }
    }

    /// Takes the incarnation the node table holds now (another instance of a
    /// server database began one at its start) and records it in the marker.
    /// A failed read leaves the current one; the next announcement tries again.
    func reloadIncarnation() {
        guard let stored = try? readers.read({ db in try EntryStore.storedIncarnation(db) }),
            stored.id != incarnation.id
        else { return }
        let seen = commits.lastSeq
        // The seqs of the new incarnation start at its startSeq: the writer's known seq and the
        // commit signal go back there (then the signal up to what is committed now), so this
        // instance's writer does not take the going back for one of its own. In this order:
        // a claim between these steps either still sees the old incarnation here (and takes
        // the stored one itself, in wentBack) or measures from the new startSeq.
        writeContext.rebase(to: stored.startSeq)
        commits.rewind(to: stored.startSeq)
        take(stored, seenSeq: seen)
        if let head = try? readers.read({ db in try EntryStore.lastSeq(db) }) { commits.publish(head) }
    }

    /// On a server whose connection came back (a restart, or a failover to
    /// another server): claims the shared change log once, from a thread of
    /// its own, so a database that went back meanwhile (a failover that lost
    /// commits) is found now rather than at the next write, and the new
    /// incarnation begins and this instance's erasures are re-applied at once
    /// (``WriteContext/wentBack``). A failed claim is left to the next write.
    func lookForGoingBack() {
        DispatchQueue.global().async { [weak self] in _ = try? self?.writer.submit { ctx in try ctx.claim() } }
    }

    /// The change log's highest seq (0 when empty).
    static func lastSeq(_ db: any SQLDatabase) throws -> Int64 {
        var seq: Int64 = 0
        try db.statement("SELECT COALESCE(MAX(seq), 0) FROM changes").query { seq = $0.int(0) }
        return seq
    }

    /// The incarnation the node table holds, or `nil` when it names none.
    static func storedIncarnation(_ db: any SQLDatabase) throws -> Incarnation? {
        var values: [String: String] = [:]
        try db.statement("SELECT key, value FROM node WHERE key LIKE 'incarnation%'").query {
            values[$0.text(0)] = $0.text(1)
        }
        guard let id = values["incarnation"] else { return nil }
        return Incarnation(
            id: id, startSeq: Int64(values["incarnation_seq"] ?? "") ?? 0,
            reason: values["incarnation_reason"].flatMap { $0.isEmpty ? nil : $0 },
            since: values["incarnation_hlc"].flatMap(HLC.init) ?? .zero)
    }

    /// Makes `now` this instance's incarnation (taken while it runs) and
    /// records it in the marker; tells ``storeEvents`` and re-applies this
    /// instance's erasure ledger, on a thread of its own (the caller may be
    /// the writer): an erase whose commit the database lost is carried out again.
    /// - Parameter seenSeq: the highest seq this instance had seen committed.
    private func take(_ now: Incarnation, seenSeq: Int64) {
        let events: (@Sendable (StoreEvent) -> Void)? = incarnationLock.withLock {
            guard !isClosed else { return nil }
            currentIncarnation = now
            marker.rebase(incarnation: now.id, seq: now.startSeq)
            return eventHandler ?? { _ in }
        }
        guard let events else { return }
        events(.incarnationTaken(now, seenSeq: seenSeq))
        DispatchQueue.global().async { [weak self] in self?.reapplyLedgerWhileRunning(events) }
    }

    /// ``reapplyErasureLedger()`` after the database went back under this
    /// running instance; retried every second for a minute while the server
    /// is away (a failover in progress), then given up until the next start
    /// or going back (``StoreEvent/erasuresNotReapplied(_:)``).
    private func reapplyLedgerWhileRunning(_ events: @Sendable (StoreEvent) -> Void) {
        var lastError = ""
        for attempt in 0..<60 {
            if attempt > 0 { Thread.sleep(forTimeInterval: 1) }
            if incarnationLock.withLock({ isClosed }) { return }
            do {
                let (reapplied, _) = try reapplyErasureLedger()
                if reapplied > 0 { events(.erasuresReapplied(reapplied)) }
                return
            } catch {
                lastError = "\(error)"
            }
        }
        events(.erasuresNotReapplied(lastError))
    }

    /// Transactions the writer has committed since opening (group commit makes
    /// this far smaller than the number of writes under load).
    var transactionsCommitted: Int { writer.commits }

    /// The write queue's rounds, writes per round and commit latency since
    /// the store opened (the monitoring call).
    package var writeStatistics: WriteStatistics { writer.statistics }

    /// Records what the server's listener found (``serverReachable``).
    private func noteReachable(_ up: Bool) {
        incarnationLock.withLock {
            if reachableNow && !up { reachabilityLosses += 1 }
            reachableNow = up
        }
    }

    /// How many changes of this node's log after `seq` were not made on `node`
    /// (`nil`: any): what a peer whose last push ended at `seq` has still to be
    /// sent (the monitoring call's pending changes per peer). One range read
    /// of the change log by its primary key.
    /// - Throws: the store's ``StorageError``.
    package func changeCount(after seq: Int64, notMadeOn node: String?) throws -> Int {
        try readers.read { db in
            var n = 0
            try db.statement("SELECT COUNT(*) FROM changes WHERE seq > ? AND node <> ?").query([
                .int(seq), .text(node ?? ""),
            ]) { n = Int($0.int(0)) }
            return n
        }
    }

    /// Finishes queued writes, checkpoints the WAL and stops the writer.
    /// Idempotent. After it, writes fail with `.storageFailed`.
    package func close() {
        purge.close()
        if server == nil { _ = try? writer.perform { db in try db.execute("PRAGMA wal_checkpoint(TRUNCATE)") } }
        writer.stop()
        server?.close()
        incarnationLock.withLock { isClosed = true }
        marker.advance(to: commits.lastSeq, force: true)
        commits.close()
    }

    /// How the writer gets on: steps finished and, while work waits for it,
    /// since when it has finished none (the watchdog pings on it). Never waits
    /// for the writer.
    package var writerProgress: WriterProgress { writer.progress }

    /// Queues a cheap query (`SELECT 1`) for the writer, to run alone between
    /// two rounds, and returns at once: when the writer was idle, the probe is
    /// work that waits in ``writerProgress`` until the writer runs it, so a
    /// writer wedged while idle shows as one that finishes nothing.
    /// - Throws: ``EntryError`` `.storageFailed` once the store is closing.
    package func queueWriterProbe() throws {
        try writer.performLater { db in try db.execute("SELECT 1") }
    }
}
