import Foundation
import EntryModel

/// The entries of one node in one SQLite database, with their change log: the
/// SQLite ``LedgerStore``.
///
/// Every accepted change writes, in one transaction, the entry's new state and
/// one change-log row (doc/design.md "Storage"). Writes go through the single
/// writer with group commit (``WriteQueue``, one round at a time); reads use a pool of
/// read-only WAL connections and never wait for the writer. Storage failures
/// throw ``SQLiteError``.
///
/// Thread-safe: any thread may call any method. Calls block until done.
public final class EntryStore: LedgerStore, @unchecked Sendable {
    /// Absolute path of the database file.
    public let path: String
    /// This node's id: a UUID created on first start and kept in the database.
    public let nodeID: String
    /// The database file's absolute path (``path``).
    public var location: String { path }
    /// The latest migration number: ``init(path:readers:wallClock:progress:vfs:)``
    /// migrates every database to it (`PRAGMA user_version`).
    public var schemaVersion: Int { Migrations.all.count }
    let writer: WriteQueue
    let readers: ReaderPool
    /// Wakes `Changes` streams after each commit.
    public let commits: CommitSignal

    /// The incarnation this store serves (doc/design.md "Incarnations").
    public let incarnation: Incarnation
    /// Why a new incarnation (or a new node id) began at this opening, for the
    /// log; `nil` when the stored one continues.
    public let incarnationBegan: String?
    let marker: MarkerKeeper
    /// How many erase changes of the erasure ledger the database lacked at this
    /// opening and were carried out again (a restore of an older backup), for the log.
    public private(set) var erasuresReapplied = 0
    /// Lines of the erasure ledger that could not be read at open (damaged:
    /// their erasures were not re-applied from the ledger; entryd warns).
    public internal(set) var erasureLedgerMalformed = 0

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
    /// - Throws: ``SQLiteError`` when the file cannot be opened, is not a
    ///   database, or is newer than this build; ``DatabaseMovedOrCopied`` with
    ///   `copies` `.refuse` for a database last opened elsewhere.
    public init(path: String, readers: Int = 4,
                wallClock: @escaping @Sendable () -> UInt64 = HybridClock.systemMilliseconds,
                progress: (Int, Int) -> Void = { _, _ in }, vfs: String? = nil,
                copies: CopiedDatabasePolicy = .refuse, canonicaliser: Canonicaliser? = nil) throws {
        self.path = path
        let db = try SQLiteConnection(path: path, vfs: vfs)
        try Migrations.migrate(db, progress: progress)
        try PinyinCollation.ensureIndex(db)
        var stored: [String: String] = [:]
        try db.statement("SELECT key, value FROM node").query { stored[$0.text(0)] = $0.text(1) }
        var lastSeq: Int64 = 0
        try db.statement("SELECT COALESCE(MAX(seq), 0) FROM changes").query { lastSeq = $0.int(0) }
        var node = stored["id"] ?? ""
        if node.isEmpty { node = UUIDv7.generate(milliseconds: wallClock()) }
        let here = NodeMarker.home(of: path)
        let file = NodeMarker.FileIdentity.of(path) ?? NodeMarker.FileIdentity(device: 0, inode: 0)
        let markerPath = NodeMarker.path(for: path)
        let check = IncarnationCheck(
            node: node, incarnation: stored["incarnation"].map { Incarnation(id: $0, startSeq: Int64(stored["incarnation_seq"] ?? "") ?? 0) },
            home: stored["home"], pendingReason: stored["incarnation_pending"], lastSeq: lastSeq, file: file,
            marker: NodeMarker.read(markerPath), here: here, policy: copies)
        var incarnation = Incarnation(id: stored["incarnation"] ?? UUIDv7.generate(milliseconds: wallClock()),
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
            incarnation = Incarnation(id: UUIDv7.generate(milliseconds: wallClock()), startSeq: lastSeq, reason: reason, since: now)
            incarnationBegan = reason
        case .newNode(let reason):
            node = UUIDv7.generate(milliseconds: wallClock())
            incarnation = Incarnation(id: UUIDv7.generate(milliseconds: wallClock()), startSeq: lastSeq, reason: reason, since: now)
            incarnationBegan = reason
        }
        try db.execute("BEGIN IMMEDIATE")
        let put = try db.statement("INSERT INTO node (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
        for (key, value) in [("id", node), ("incarnation", incarnation.id), ("incarnation_seq", String(incarnation.startSeq)),
                             ("incarnation_reason", incarnation.reason ?? ""), ("incarnation_hlc", incarnation.since.description),
                             ("home", here)] {
            try put.run([.text(key), .text(value)])
        }
        try db.execute("DELETE FROM node WHERE key = 'incarnation_pending'")
        try db.execute("COMMIT")
        nodeID = node
        self.incarnation = incarnation
        let keeper = MarkerKeeper(path: markerPath, marker: NodeMarker(node: node, incarnation: incarnation.id, seq: lastSeq,
                                                                      file: file, machine: NodeMarker.machine))
        marker = keeper
        // The clock resumes after the greatest stamp it issued: the node table keeps
        // the last one observed from a peer, the change log every local one
        // (WriteContext.persistClock); UNIQUE (node, hlc) makes this a lookup.
        let lastHLC = try EntryStore.lastCommittedHLC(db, node: node)
        let signal = CommitSignal(seq: lastSeq)
        commits = signal
        let context = WriteContext(db: db, nodeID: node, clock: HybridClock(last: lastHLC, wallClock: wallClock), lastSeq: lastSeq,
                                   canonicaliser: canonicaliser)
        writer = WriteQueue(context: context) { seq in
            signal.publish(seq)
            keeper.advance(to: seq)
        }
        self.readers = try ReaderPool(path: path, count: readers, vfs: vfs)
        writer.start()
        // Before the first call: a database restored from a backup older than an
        // erasure is erased again (doc/design.md "Erasure").
        do {
            erasuresReapplied = try reapplyErasureLedger()
            // A crash between an erasure's commit and its rewrite and checkpoint leaves
            // old page images in the database file: rewrite it when one is pending, and
            // checkpoint before the first call whenever anything was erased.
            var anyErased = false, pending = false
            try self.readers.read { db in
                try db.statement("SELECT 1 FROM erasures LIMIT 1").query { _ in anyErased = true }
                try db.statement("SELECT 1 FROM node WHERE key = 'rewrite_pending'").query { _ in pending = true }
            }
            if pending { rewriteAfterErasure() } else if anyErased { _ = truncateWAL() }
        } catch {
            close()
            throw error
        }
    }

    /// Transactions the writer has committed since opening (group commit makes
    /// this far smaller than the number of writes under load).
    var transactionsCommitted: Int { writer.commits }

    /// Finishes queued writes, checkpoints the WAL and stops the writer.
    /// Idempotent. After it, writes fail with `.storageFailed`.
    public func close() {
        _ = try? writer.perform { db in db.checkpoint("TRUNCATE") }
        writer.stop()
        marker.advance(to: commits.lastSeq, force: true)
        commits.close()
    }

    /// How the writer gets on: steps finished and, while work waits for it,
    /// since when it has finished none (the watchdog pings on it). Never waits
    /// for the writer.
    public var writerProgress: WriterProgress { writer.progress }

    /// Queues a cheap query (`SELECT 1`) for the writer, to run alone between
    /// two rounds, and returns at once: when the writer was idle, the probe is
    /// work that waits in ``writerProgress`` until the writer runs it, so a
    /// writer wedged while idle shows as one that finishes nothing.
    /// - Throws: ``EntryError`` `.storageFailed` once the store is closing.
    public func queueWriterProbe() throws {
        try writer.performLater { db in try db.execute("SELECT 1") }
    }
}
