import CSQLite
import EntryModel
import EntryProtocol
import EntryLedger
import Foundation

/// The raw SQLite baseline: the same entry row and change-log row that entryd
/// writes per Add, into the same schema and indexes (made by opening an
/// ``EntryStore`` on the file, which runs entryd's migrations), through the
/// same SQLite library, with WAL and `synchronous=FULL`, from this process.
final class RawSQLiteBaseline {
    private let db: OpaquePointer
    private let insertEntry: OpaquePointer
    private let insertChange: OpaquePointer
    private var counter: UInt64 = 0
    private let node = UUIDv7.generate()

    /// Creates the database at `path` with entryd's schema and opens it.
    /// - Throws: ``SQLiteError`` or ``BenchFailure``.
    init(path: String) throws {
        let schema = try EntryStore(path: path, readers: 1)
        schema.close()
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let handle
        else {
            throw BenchFailure("cannot open \(path)")
        }
        db = handle
        // entryd's schema orders names under the pinyin collation (migration 4): writes need it.
        try PinyinCollation.register(on: handle)
        for pragma in ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL"] {
            guard sqlite3_exec(db, pragma, nil, nil, nil) == SQLITE_OK else { throw BenchFailure("\(pragma) failed") }
        }
        func prepare(_ sql: String) throws -> OpaquePointer {
            var s: OpaquePointer?
            guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &s, nil) == SQLITE_OK, let s
            else {
                throw BenchFailure("prepare failed: \(String(cString: sqlite3_errmsg(handle)))")
            }
            return s
        }
        insertEntry = try prepare(
            """
            INSERT INTO entries (id, form, fields, clocks, version, deleted, deleted_clock, created_at, updated_at,
              created_by, updated_by, name, name_folded, birthday, country, province, city, name_order)
            VALUES (?, ?, ?, ?, ?, 0, '', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, \(PinyinCollation.keyFunction)(?10))
            """)
        insertChange = try prepare(
            """
            INSERT INTO changes (node, hlc, entry, form, op, fields, base, actor, at, reason, via)
            VALUES (?, ?, ?, ?, 'create', ?, ?, ?, ?, NULL, NULL)
            """)
    }

    deinit {
        sqlite3_finalize(insertEntry)
        sqlite3_finalize(insertChange)
        sqlite3_close_v2(db)
    }

    private func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchFailure("\(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    private func bind(_ s: OpaquePointer, _ values: [String]) {
        for (i, v) in values.enumerated() { sqlite3_bind_text(s, Int32(i + 1), v, -1, csqlite_transient()) }
    }

    private func step(_ s: OpaquePointer) throws {
        let rc = sqlite3_step(s)
        sqlite3_reset(s)
        guard rc == SQLITE_DONE else { throw BenchFailure("insert failed: \(String(cString: sqlite3_errmsg(db)))") }
    }

    /// Inserts entry `n` and its change-log row (inside the caller's transaction).
    private func insert(_ n: Int) throws {
        let ms = UInt64(Date().timeIntervalSince1970 * 1000)
        counter += 1
        let hlc = String(((ms << 16) | (counter & 0xFFFF)), radix: 16)
        let hlcText = String(repeating: "0", count: max(0, 16 - hlc.count)) + hlc
        let id = UUIDv7.generate(milliseconds: ms)
        let fields = Fixture.fields(n)
        let fieldsJSON = JSON.stringMap(fields).text
        let stamp = hlcText + " " + node
        let clocks = JSON.stringMap(fields.mapValues { _ in stamp }).text
        let base = JSON.stringMap(fields.mapValues { _ in "" }).text
        let at = Timestamp.rfc3339(milliseconds: ms)
        let name = fields["name"] ?? ""
        bind(
            insertEntry,
            [
                id, "registration", fieldsJSON, clocks, hlcText, at, at, "bench", "bench", name, name.lowercased(),
                fields["birthday"] ?? "", fields["country"] ?? "", fields["province"] ?? "", fields["city"] ?? "",
            ])
        try step(insertEntry)
        bind(insertChange, [node, hlcText, id, "registration", fieldsJSON, base, "bench", at])
        try step(insertChange)
    }

    /// One durable transaction per entry for `seconds`.
    /// - Returns: the transactions made and the latency of each.
    func oneTransactionPerEntry(seconds: Double, numbers: Counter) throws -> OneAtATime {
        var result = OneAtATime()
        let t0 = now()
        while now() - t0 < seconds {
            let t = now()
            try exec("BEGIN IMMEDIATE")
            try insert(numbers.next())
            try exec("COMMIT")
            result.latencies.add(now() - t)
            result.calls += 1
        }
        result.seconds = now() - t0
        return result
    }

    /// Durable transactions of `batch` entries each for `seconds`.
    /// - Returns: entries per second.
    func batches(of batch: Int, seconds: Double, numbers: Counter) throws -> Double {
        var done = 0
        let t0 = now()
        while now() - t0 < seconds {
            try exec("BEGIN IMMEDIATE")
            for n in numbers.reserve(batch) { try insert(n) }
            try exec("COMMIT")
            done += batch
        }
        return Double(done) / (now() - t0)
    }

    /// All of `range` in one transaction. - Returns: entries per second.
    func bulk(_ range: Range<Int>) throws -> Double {
        let t0 = now()
        try exec("BEGIN IMMEDIATE")
        for n in range { try insert(n) }
        try exec("COMMIT")
        return Double(range.count) / (now() - t0)
    }
}
