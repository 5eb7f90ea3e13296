import CICU
import CSQLite

/// The pinyin order of names on SQLite: ICU's `zh` collation (CLDR's default
/// for Chinese), which orders Han characters by their pinyin (阿 a … 陈 chen …
/// 张 zhang … 赵 zhao) and Latin letters as the root collation does. List
/// orders names with it under the `zh` locale (doc/design.md "Storage").
///
/// Every connection entryd opens registers, each with collators of its own
/// (an ICU collator is not safe for concurrent use), the SQL function
/// `pinyin_key(name)` (``keyFunction``: the name's ICU sort key, bytes that
/// order as the collation orders names) and the collation `pinyin` itself
/// (which migration 4 of an older database still names). The column
/// `entries.name_order` holds each name's key and the index
/// `entries_by_name_order` orders by it under SQLite's own BINARY order
/// (migration 9), so any sqlite3 reads, writes and checks the file; a row
/// written by another tool gets an empty key (first in the order) until
/// entryd writes it again or ICU's version changes (``ensureOrder(_:)``).
package enum PinyinCollation {
    /// The collation's name in SQL (`COLLATE pinyin`).
    static let name = "pinyin"

    /// The index that orders entries by their names' sort keys (migration 9).
    static let indexSQL = "CREATE INDEX IF NOT EXISTS entries_by_name_order ON entries (name_order, id)"

    /// Registers the collation and ``keyFunction`` on the SQLite connection
    /// `db`, each with a collator that the connection owns and closes when it closes.
    /// - Throws: ``SQLiteError`` when ICU has no `zh` collator or SQLite refuses.
    package static func register(on db: OpaquePointer) throws(SQLiteError) {
        guard let collator = cicu_collator_open_zh(), let keyCollator = cicu_collator_open_zh() else {
            throw SQLiteError(code: SQLITE_ERROR, message: "ICU has no zh collator (is libicu's data installed?)")
        }
        var rc = sqlite3_create_collation_v2(
            db, name, SQLITE_UTF8, collator, cicu_collator_compare, cicu_collator_close)
        if rc != SQLITE_OK {
            // sqlite3_create_collation_v2 does not call the destructor when it fails.
            cicu_collator_close(collator)
            cicu_collator_close(keyCollator)
            throw SQLiteError(
                code: rc, message: "registering the pinyin collation: \(String(cString: sqlite3_errmsg(db)))")
        }
        // sqlite3_create_function_v2 calls the destructor itself when it fails.
        rc = sqlite3_create_function_v2(
            db, keyFunction, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, keyCollator, sortKey, nil, nil,
            cicu_collator_close)
        if rc != SQLITE_OK {
            throw SQLiteError(
                code: rc, message: "registering the pinyin_key function: \(String(cString: sqlite3_errmsg(db)))")
        }
    }

    /// The SQL function `pinyin_key(name)`: the ICU sort key of `name` under
    /// the `zh` collation (``cicu_collator_sort_key``), a BLOB whose bytes
    /// order as the collation orders the names. The column `entries.name_order`
    /// holds it (migration 9), indexed under SQLite's own BINARY order, so the
    /// file needs no collation of entryd's to be read, written or checked.
    /// NULL gives an empty key.
    package static let keyFunction = "pinyin_key"

    /// The C body of ``keyFunction``; the function's user data is its collator.
    private static let sortKey: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void =
        {
            context, _, arguments in
            let collator = sqlite3_user_data(context)
            // sqlite3_value_text first, then its length in bytes (sqlite.org/c3ref/value_blob.html).
            guard let text = sqlite3_value_text(arguments![0]) else {
                sqlite3_result_zeroblob(context, 0)
                return
            }
            let length = sqlite3_value_bytes(arguments![0])
            var capacity = Int(length) * 4 + 32
            for _ in 0..<2 {
                var key = [UInt8](repeating: 0, count: capacity)
                let written = text.withMemoryRebound(to: CChar.self, capacity: Int(length) + 1) {
                    cicu_collator_sort_key(collator, $0, length, &key, Int32(capacity))
                }
                if written < 0 { break }
                if Int(written) < capacity {
                    sqlite3_result_blob(context, key, written, csqlite_transient())
                    return
                }
                capacity = Int(written) + 1
            }
            sqlite3_result_error(context, "pinyin_key: ICU could not make a sort key", -1)
        }

    /// The version of ICU's `zh` collation (`ucol_getVersion`, e.g. `153.120.42`):
    /// an index built under one version is rebuilt under another.
    static let version: String = {
        guard let collator = cicu_collator_open_zh() else { return "" }
        defer { cicu_collator_close(collator) }
        var text = [CChar](repeating: 0, count: 32)
        cicu_collator_version(collator, &text, Int32(text.count))
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    /// Makes the pinyin order current on the writer's connection `db` at
    /// start-up: creates the index when it is missing (dropped by another
    /// tool), and writes every name's key again (`UPDATE entries SET
    /// name_order = pinyin_key(name)`) when the collation's version differs
    /// from the one the keys were made with (an ICU upgrade may move names;
    /// keys of another version would order rows wrongly). The version is kept
    /// in the node table (`pinyin_collation`).
    /// - Throws: ``SQLiteError``; nothing changes then.
    static func ensureOrder(_ db: SQLiteConnection) throws(SQLiteError) {
        var built: String?
        var present = false
        do {
            try db.prepared("SELECT value FROM node WHERE key = 'pinyin_collation'").query { built = $0.text(0) }
            try db.prepared("SELECT 1 FROM sqlite_schema WHERE type = 'index' AND name = 'entries_by_name_order'")
                .query { _ in present = true }
        } catch let e as SQLiteError { throw e } catch { preconditionFailure("\(error)") }
        guard !present || built != version else { return }
        try db.execute("BEGIN IMMEDIATE")
        do {
            if built != version { try db.execute("UPDATE entries SET name_order = \(keyFunction)(name)") }
            try db.execute(indexSQL)
            try db.prepared(
                "INSERT INTO node (key, value) VALUES ('pinyin_collation', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
            )
            .run([.text(version)])
            try db.execute("COMMIT")
        } catch {
            try? db.execute("ROLLBACK")
            throw error
        }
    }
}
