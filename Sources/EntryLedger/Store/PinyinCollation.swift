import CICU
import CSQLite

/// The SQLite collation `pinyin`: ICU's `zh` collation (CLDR's default for
/// Chinese), which orders Han characters by their pinyin (阿 a … 陈 chen …
/// 张 zhang … 赵 zhao) and Latin letters as the root collation does. List
/// orders names with it under the `zh` locale (doc/design.md "Storage").
///
/// Every connection entryd opens registers it (``SQLiteConnection``), each with
/// a collator of its own, since an ICU collator is not safe for concurrent use.
/// The index `entries_by_name_pinyin` (migration 4) is built with it, so a
/// SQLite without it (the `sqlite3` shell) can read the database but not write
/// to `entries` or check it ("no such collation sequence: pinyin"); dropping
/// the index makes the file plain SQLite again, and entryd builds it again at
/// its next start (``ensureIndex(_:)``).
package enum PinyinCollation {
    /// The collation's name in SQL (`COLLATE pinyin`).
    static let name = "pinyin"

    /// The index that orders entries by name under this collation (migration 4).
    static let indexSQL = "CREATE INDEX IF NOT EXISTS entries_by_name_pinyin ON entries (name COLLATE pinyin, id)"

    /// Registers the collation on the SQLite connection `db`, with a collator
    /// that the connection owns and closes when it closes.
    /// - Throws: ``SQLiteError`` when ICU has no `zh` collator or SQLite refuses.
    package static func register(on db: OpaquePointer) throws(SQLiteError) {
        guard let collator = cicu_collator_open_zh() else {
            throw SQLiteError(code: SQLITE_ERROR, message: "ICU has no zh collator (is libicu's data installed?)")
        }
        let rc = sqlite3_create_collation_v2(
            db, name, SQLITE_UTF8, collator, cicu_collator_compare, cicu_collator_close)
        if rc != SQLITE_OK {
            // sqlite3_create_collation_v2 does not call the destructor when it fails.
            cicu_collator_close(collator)
            throw SQLiteError(
                code: rc, message: "registering the pinyin collation: \(String(cString: sqlite3_errmsg(db)))")
        }
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

    /// Makes the pinyin index current on the writer's connection `db` at
    /// start-up: creates it when it is missing (dropped to let another tool
    /// write), and rebuilds it (`REINDEX pinyin`) when the collation's version
    /// differs from the one it was built with (an ICU upgrade may move names;
    /// an index in another order than its collation's would miss rows). The
    /// version is kept in the node table (`pinyin_collation`).
    /// - Throws: ``SQLiteError``; nothing changes then.
    static func ensureIndex(_ db: SQLiteConnection) throws(SQLiteError) {
        var built: String?
        var present = false
        do {
            try db.prepared("SELECT value FROM node WHERE key = 'pinyin_collation'").query { built = $0.text(0) }
            try db.prepared("SELECT 1 FROM sqlite_schema WHERE type = 'index' AND name = 'entries_by_name_pinyin'")
                .query { _ in present = true }
        } catch let e as SQLiteError { throw e } catch { preconditionFailure("\(error)") }
        guard !present || built != version else { return }
        try db.execute("BEGIN IMMEDIATE")
        do {
            if present { try db.execute("REINDEX \(name)") } else { try db.execute(indexSQL) }
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
