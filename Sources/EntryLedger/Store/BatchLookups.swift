import EntryModel

/// A database on a server, where every statement that needs an answer costs a
/// round trip: it reads what an Apply checks for each change of its batch —
/// is the change logged, is its entry erased, the entry's row, its search
/// keys — for the whole batch in one round trip (issue 34). Implemented by
/// EntryHub's PostgreSQL connection; a SQLite connection runs the checks
/// one by one in-process.
package protocol BatchLookupDatabase: SQLDatabase {
    /// Fills `lookups`, as the open transaction sees the database: the stamps of
    /// ``BatchLookups/stamps`` the change log holds or held (`changes`, `folded`:
    /// ``BatchLookups/addLogged(node:hlc:)``), which of ``BatchLookups/entries``
    /// are erased (``BatchLookups/addErased(_:)``), and the rows and search keys
    /// (``BatchLookups/addEntry(_:)``, ``BatchLookups/addKey(entry:key:)``) of
    /// the entries of the stamps *not* logged (``BatchLookups/stampEntries``):
    /// a change already logged is skipped, its entry not read.
    ///
    /// With `claiming`, first takes the shared change log (``SharedChangeLog/claim(_:)``:
    /// the same statement, in the same round trip, before the reads).
    /// - Returns: what the claim read (`nil` without `claiming`).
    /// - Throws: the database's ``StorageError``.
    func lookUp(_ lookups: BatchLookups, claiming: Bool) throws -> (seq: Int64, hlc: HLC)?
}

/// What an Apply read ahead for its batch (``BatchLookupDatabase``), kept up
/// to date by the job's own writes while it runs (``WriteContext/lookups``):
/// the change log's (node, HLC) pairs, the erasures, the entries' rows and
/// their search keys, for the batch's changes and entries only; anything
/// else is read from the database as usual.
package final class BatchLookups {
    /// The stamps of the batch's changes.
    package let stamps: [Stamp]
    /// The entry of each of ``stamps``, in the same order.
    package let stampEntries: [String]
    /// The entries the batch's changes name, without repeats.
    package let entries: [String]
    /// The columns ``addEntry(_:)`` reads, in order (those of `entries`).
    package static let entryColumns = WriteContext.entryColumns

    private let batchStamps: Set<Stamp>
    private let batchEntries: Set<String>
    /// The entries whose rows and keys were read (``settle()``): those of the changes not logged.
    private var readEntries = Set<String>()
    private var logged = Set<Stamp>()
    private var erased = Set<String>()
    private var rows: [String: StoredEntry] = [:]
    private var keys: [String: Set<String>] = [:]

    /// For `changes`: nothing found yet.
    init(_ changes: [ChangeRecord]) {
        stamps = changes.map(\.stamp)
        stampEntries = changes.map(\.entry)
        var seen = Set<String>()
        entries = changes.map(\.entry).filter { seen.insert($0).inserted }
        batchStamps = Set(stamps)
        batchEntries = seen
    }

    /// The change log holds (`node`, `hlc`) (or held it: `folded`).
    package func addLogged(node: String, hlc: String) {
        logged.insert(Stamp(hlc: HLC(hlc) ?? .zero, node: node))
    }

    /// Entry `id` is erased.
    package func addErased(_ id: String) { erased.insert(id) }

    /// An `entries` row, selected with ``entryColumns``.
    /// - Throws: ``SQLiteError`` (SQLITE_CORRUPT) for unreadable stored JSON.
    package func addEntry(_ row: any SQLRow) throws {
        let entry = try EntryStore.entry(from: row)
        rows[entry.id] = entry
    }

    /// Entry `entry` holds search key `key`.
    package func addKey(entry: String, key: String) { keys[entry, default: []].insert(key) }

    // MARK: - Answers, and the job's writes

    /// Whether `stamp` is logged, when it is one of the batch's (else `nil`: ask the database).
    func isLogged(_ stamp: Stamp) -> Bool? { batchStamps.contains(stamp) ? logged.contains(stamp) : nil }

    /// Whether entry `id` is erased, when it is one of the batch's.
    func isErased(_ id: String) -> Bool? { batchEntries.contains(id) ? erased.contains(id) : nil }

    /// After the database filled the lookups: which entries' rows and keys it read.
    func settle() {
        for (stamp, entry) in zip(stamps, stampEntries) where !logged.contains(stamp) { readEntries.insert(entry) }
    }

    /// The row of entry `id` (`.some(nil)`: none), when it was read.
    func entry(_ id: String) -> StoredEntry?? { readEntries.contains(id) ? .some(rows[id]) : nil }

    /// The stored search keys of entry `id`, when they were read.
    func keys(of id: String) -> Set<String>? { readEntries.contains(id) ? keys[id, default: []] : nil }

    /// The job appended `stamp` to the change log.
    func logged(_ stamp: Stamp) { if batchStamps.contains(stamp) { logged.insert(stamp) } }

    /// The job wrote `entry`'s row (``WriteContext/save(_:layout:keys:before:)``) with `keys`
    /// (`nil`: its keys stood, as they were). The row keeps the first
    /// `created_at` and `created_by` (the upsert leaves them).
    func saved(_ entry: StoredEntry, keys: [String]?) {
        guard readEntries.contains(entry.id) else { return }
        var row = entry
        if let old = rows[entry.id] {
            row.createdAt = old.createdAt
            row.createdBy = old.createdBy
        }
        rows[entry.id] = row
        if let keys { self.keys[entry.id] = Set(keys) }
    }

    /// The job erased entry `id` (``WriteContext/scrub(_:)``): no row, no keys.
    func scrubbed(_ id: String) {
        guard batchEntries.contains(id) else { return }
        erased.insert(id)
        guard readEntries.contains(id) else { return }
        rows[id] = nil
        keys[id] = []
    }
}

extension WriteContext {
    /// Before an Apply of `changes` reads anything: claims the shared change
    /// log (``claim()``: two instances applying one batch at once would both
    /// find it new), and when the database answers in batches
    /// (``BatchLookupDatabase``) reads ahead what the Apply checks per change,
    /// in the same round trip as the claim: ``lookups`` until ``endLookups()``.
    /// Nothing for an empty batch.
    /// - Throws: the database's ``StorageError``.
    func claim(lookingUp changes: [ChangeRecord]) throws {
        // The round read ahead for this job and the others (``lookAhead(_:jobs:)``), and claimed.
        guard !changes.isEmpty, !lookupsSpanRound else { return }
        guard let db = db as? any BatchLookupDatabase else { return try claim() }
        let lookups = BatchLookups(changes)
        let claiming = shared != nil && !hasClaimed
        if let now = try db.lookUp(lookups, claiming: claiming) {
            try took(now)
        } else {
            try claim()
        }
        lookups.settle()
        self.lookups = lookups
    }

    /// Ends what ``claim(lookingUp:)`` began: later reads go to the database;
    /// what the round read ahead stays for the round's next jobs.
    func endLookups() { if !lookupsSpanRound { lookups = nil } }

    /// At the start of a round with more than one Apply (`jobs`), on a database
    /// that answers in batches: claims and reads ahead for all their `changes`
    /// at once (``claim(lookingUp:)``), one round trip for the round instead of
    /// one per Apply (issue 34). The lookups then follow every job's writes
    /// until a job fails (``dropLookups()``) or the round ends.
    /// - Throws: the database's ``StorageError``.
    func lookAhead(_ changes: [ChangeRecord], jobs: Int) throws {
        guard jobs > 1, db is any BatchLookupDatabase else { return }
        try claim(lookingUp: changes)
        lookupsSpanRound = lookups != nil
    }

    /// Forgets what was read ahead (a job failed: its undone writes may be in
    /// it); later jobs read ahead for themselves or from the database.
    func dropLookups() {
        lookups = nil
        lookupsSpanRound = false
    }
}
