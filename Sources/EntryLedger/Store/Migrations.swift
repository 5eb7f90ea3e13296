import CSQLite
import EntryModel

/// The numbered schema migrations, tracked with `PRAGMA user_version`.
///
/// Each migration runs in one transaction together with the bump of
/// `user_version`, so a failed migration leaves neither behind. Never edit a
/// released migration; append a new one.
package enum Migrations {
    /// Migration `i + 1` is `all[i]`.
    package static let all: [String] = [
        // 1: node identity, entries with per-field registers, the change log,
        //    conflicts and peer checkpoints.
        """
        CREATE TABLE node (
          key   TEXT PRIMARY KEY,          -- 'id' (node UUID), 'hlc' (last stamp issued)
          value TEXT NOT NULL
        ) WITHOUT ROWID;

        CREATE TABLE entries (
          id          TEXT PRIMARY KEY,    -- UUID, lower case; UUIDv7 when entryd made it
          form        TEXT NOT NULL,
          fields      TEXT NOT NULL,       -- JSON object: field -> canonical value
          clocks      TEXT NOT NULL,       -- JSON object: field -> 'HLC NODE' of its register
          version     TEXT NOT NULL,       -- HLC of the latest change
          deleted     INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
          deleted_clock TEXT NOT NULL DEFAULT '',  -- 'HLC NODE' of the deleted register
          created_at  TEXT NOT NULL,       -- RFC 3339 UTC, milliseconds
          updated_at  TEXT NOT NULL,
          created_by  TEXT NOT NULL,
          updated_by  TEXT NOT NULL,
          -- filter and sort keys, copied from fields by EntryStore
          name        TEXT NOT NULL DEFAULT '',
          name_folded TEXT NOT NULL DEFAULT '',
          birthday    TEXT NOT NULL DEFAULT '',
          country     TEXT NOT NULL DEFAULT '',
          province    TEXT NOT NULL DEFAULT '',
          city        TEXT NOT NULL DEFAULT '',
          seq         INTEGER NOT NULL DEFAULT 0  -- local seq of the latest change applied to it
        ) WITHOUT ROWID;
        CREATE INDEX entries_by_created  ON entries (created_at, id);
        CREATE INDEX entries_by_updated  ON entries (updated_at, id);
        CREATE INDEX entries_by_birthday ON entries (birthday, id);
        CREATE INDEX entries_by_name     ON entries (name, id);
        CREATE INDEX entries_by_country  ON entries (country, created_at, id);
        CREATE INDEX entries_by_province ON entries (province, created_at, id);
        CREATE INDEX entries_by_city     ON entries (city, created_at, id);

        CREATE TABLE changes (
          seq    INTEGER PRIMARY KEY AUTOINCREMENT,  -- position in this node's change log
          node   TEXT NOT NULL,                      -- node where the change was made
          hlc    TEXT NOT NULL,
          entry  TEXT NOT NULL,
          form   TEXT NOT NULL,
          op     TEXT NOT NULL CHECK (op IN ('create', 'update', 'delete', 'restore')),
          fields TEXT NOT NULL,                      -- JSON object: values this change set
          base   TEXT NOT NULL,                      -- JSON object: field -> HLC it replaced
          actor  TEXT NOT NULL,
          at     TEXT NOT NULL,                      -- wall time at the origin
          reason TEXT,
          via    TEXT,                               -- peer that delivered it; NULL when local
          UNIQUE (node, hlc)
        );
        CREATE INDEX changes_by_entry ON changes (entry, seq);

        CREATE TABLE conflicts (
          id          TEXT PRIMARY KEY,    -- UUIDv7
          entry       TEXT NOT NULL,
          field       TEXT NOT NULL,
          kept        TEXT NOT NULL,
          kept_hlc    TEXT NOT NULL,
          kept_node   TEXT NOT NULL,
          lost        TEXT NOT NULL,
          lost_hlc    TEXT NOT NULL,
          lost_node   TEXT NOT NULL,
          lost_group  TEXT NOT NULL,       -- JSON object: the losing write's whole field group
          detected_at TEXT NOT NULL,
          resolved    INTEGER NOT NULL DEFAULT 0 CHECK (resolved IN (0, 1))
        ) WITHOUT ROWID;
        CREATE INDEX conflicts_by_entry ON conflicts (entry, detected_at);

        CREATE TABLE peers (
          name       TEXT PRIMARY KEY,     -- configured peer name, or the unix: address
          address    TEXT NOT NULL,
          node       TEXT,                 -- the peer's node id, learnt in the handshake
          pulled_seq INTEGER NOT NULL DEFAULT 0,  -- peer's change log seen up to here
          pushed_seq INTEGER NOT NULL DEFAULT 0,  -- our change log sent up to here
          last_sync  TEXT,
          last_error TEXT
        ) WITHOUT ROWID;
        """,
        // 2: entry counts by form, deleted flag and region, kept by triggers: Status
        //    and List totals filtered by form/country/province/city read a few
        //    summary rows instead of counting entries, at a million as at ten.
        """
        CREATE TABLE entry_counts (
          form     TEXT NOT NULL,
          deleted  INTEGER NOT NULL,
          country  TEXT NOT NULL,
          province TEXT NOT NULL,
          city     TEXT NOT NULL,
          n        INTEGER NOT NULL,
          PRIMARY KEY (deleted, country, province, city, form)
        ) WITHOUT ROWID;
        INSERT INTO entry_counts (form, deleted, country, province, city, n)
          SELECT form, deleted, country, province, city, COUNT(*) FROM entries GROUP BY 1, 2, 3, 4, 5;
        CREATE TRIGGER entries_counted_insert AFTER INSERT ON entries BEGIN
          INSERT INTO entry_counts (form, deleted, country, province, city, n)
            VALUES (NEW.form, NEW.deleted, NEW.country, NEW.province, NEW.city, 1)
            ON CONFLICT (deleted, country, province, city, form) DO UPDATE SET n = n + 1;
        END;
        CREATE TRIGGER entries_counted_delete AFTER DELETE ON entries BEGIN
          UPDATE entry_counts SET n = n - 1 WHERE form = OLD.form AND deleted = OLD.deleted
            AND country = OLD.country AND province = OLD.province AND city = OLD.city;
        END;
        CREATE TRIGGER entries_counted_update AFTER UPDATE OF form, deleted, country, province, city ON entries
        WHEN OLD.form IS NOT NEW.form OR OLD.deleted IS NOT NEW.deleted OR OLD.country IS NOT NEW.country
          OR OLD.province IS NOT NEW.province OR OLD.city IS NOT NEW.city BEGIN
          UPDATE entry_counts SET n = n - 1 WHERE form = OLD.form AND deleted = OLD.deleted
            AND country = OLD.country AND province = OLD.province AND city = OLD.city;
          INSERT INTO entry_counts (form, deleted, country, province, city, n)
            VALUES (NEW.form, NEW.deleted, NEW.country, NEW.province, NEW.city, 1)
            ON CONFLICT (deleted, country, province, city, form) DO UPDATE SET n = n + 1;
        END;
        """,
        // 3: incarnations (doc/design.md "Incarnations"). The node table gains the
        //    keys 'incarnation', 'incarnation_seq', 'incarnation_reason', 'home' and,
        //    after a restore, 'incarnation_pending' (written by EntryStore, no DDL).
        //    Each peer's row remembers the peer's incarnation, the fingerprint of the
        //    last change pulled, this node's incarnation at the last completed sync,
        //    and the last re-read or re-send with its reason.
        """
        ALTER TABLE peers ADD COLUMN incarnation TEXT;
        ALTER TABLE peers ADD COLUMN mark TEXT;
        ALTER TABLE peers ADD COLUMN synced_incarnation TEXT;
        ALTER TABLE peers ADD COLUMN notice TEXT;
        """,
        // 4: List by name in zh, in pinyin order (doc/design.md "Storage"): names
        //    under the ICU collation `pinyin` (PinyinCollation, registered on every
        //    connection). An entryd older than this migration has no such collation
        //    and refuses the database by its schema version, as it must: it could
        //    not write to entries. The node table gains 'pinyin_collation', the ICU
        //    collation version the index was built with (EntryStore, no DDL).
        """
        CREATE INDEX entries_by_name_pinyin ON entries (name COLLATE pinyin, id);
        """,
        // 5: erasure (issue 17, doc/design.md "Erasure"). The change log may hold
        //    `erase` changes: SQLite cannot alter a CHECK constraint, so the table is
        //    copied whole (same columns, same seqs) and the AUTOINCREMENT high-water
        //    mark carried over, so no seq is ever given again. `erasures` keeps, per
        //    erased entry, the erasure that took effect (the least (hlc, node) when
        //    several nodes erased it) and never a value. The node table gains
        //    'refused_erased', the count of changes refused because their entry was
        //    erased (EntryStore, no DDL).
        """
        CREATE TABLE changes_v5 (
          seq    INTEGER PRIMARY KEY AUTOINCREMENT,
          node   TEXT NOT NULL,
          hlc    TEXT NOT NULL,
          entry  TEXT NOT NULL,
          form   TEXT NOT NULL,
          op     TEXT NOT NULL CHECK (op IN ('create', 'update', 'delete', 'restore', 'erase')),
          fields TEXT NOT NULL,
          base   TEXT NOT NULL,
          actor  TEXT NOT NULL,
          at     TEXT NOT NULL,
          reason TEXT,
          via    TEXT,
          UNIQUE (node, hlc)
        );
        INSERT INTO changes_v5 (seq, node, hlc, entry, form, op, fields, base, actor, at, reason, via)
          SELECT seq, node, hlc, entry, form, op, fields, base, actor, at, reason, via FROM changes ORDER BY seq;
        DELETE FROM sqlite_sequence WHERE name = 'changes_v5';
        INSERT INTO sqlite_sequence (name, seq) SELECT 'changes_v5', seq FROM sqlite_sequence WHERE name = 'changes';
        DROP TABLE changes;
        ALTER TABLE changes_v5 RENAME TO changes;
        CREATE INDEX changes_by_entry ON changes (entry, seq);

        CREATE TABLE erasures (
          entry  TEXT PRIMARY KEY,         -- the erased entry's id
          form   TEXT NOT NULL,
          hlc    TEXT NOT NULL,            -- the erase change's HLC and origin node
          node   TEXT NOT NULL,
          actor  TEXT NOT NULL,            -- who erased it (user name at the origin)
          at     TEXT NOT NULL,            -- wall time at the origin, RFC 3339 UTC ms
          reason TEXT NOT NULL             -- why, as the operator gave it
        ) WITHOUT ROWID;
        """,
        // 6: compaction with a peer horizon (issue 17 item 5, doc/design.md
        //    "Compaction"). `folded` keeps the stamp of every change-log row that
        //    compaction removed (no value): Apply skips such a change when it comes
        //    back, HeldFrom still counts it, and the expired-peer rule finds which
        //    rows a returning peer holds. `peer_acks` keeps, per node that pulled
        //    this node's log with `excludeNode`, the last `since` it pulled with and
        //    when. `compacted` keeps, per entry, the horizon of the last compaction
        //    that removed rows of it (History). A peer row may be marked expired.
        //    A change may name the fields later writes superseded (`superseded`,
        //    comma-separated; set by compaction on the rows it keeps, and synced).
        //    The node table gains 'compaction', the figures of the last run
        //    (EntryStore, no DDL).
        """
        CREATE TABLE folded (
          hlc    TEXT NOT NULL,            -- the removed change's HLC and origin node
          node   TEXT NOT NULL,            --   (HLC first: writes name what they saw by HLC)
          seq    INTEGER NOT NULL,         -- its seq here, before it was removed
          PRIMARY KEY (hlc, node)
        ) WITHOUT ROWID;
        CREATE TABLE peer_acks (
          node   TEXT PRIMARY KEY,         -- the pulling node's id (its excludeNode)
          since  INTEGER NOT NULL,         -- the highest since it pulled this log with
          at     TEXT NOT NULL             -- when, RFC 3339 UTC ms
        ) WITHOUT ROWID;
        CREATE TABLE compacted (
          entry   TEXT PRIMARY KEY,
          horizon INTEGER NOT NULL,        -- the horizon of the last compaction that removed rows of it
          at      TEXT NOT NULL
        ) WITHOUT ROWID;
        ALTER TABLE peers ADD COLUMN expired TEXT;  -- when compaction found it silent past peer-expiry
        ALTER TABLE changes ADD COLUMN superseded TEXT NOT NULL DEFAULT '';  -- fields later writes superseded
        """,
        // 7: the appointment (issue 33): the form's date-time field (the one named
        //    appointment, else the first; FieldLayout) as a filter and sort key,
        //    `YYYY-MM-DD HH:mm` or ''. Existing rows take the field named
        //    appointment; a date-time field of another name is copied at the
        //    entry's next write.
        """
        ALTER TABLE entries ADD COLUMN appointment TEXT NOT NULL DEFAULT '';
        UPDATE entries SET appointment = COALESCE(json_extract(fields, '$.appointment'), '')
          WHERE json_type(fields, '$.appointment') = 'text';
        CREATE INDEX entries_by_appointment ON entries (appointment, id);
        """,
        // 8: search keys (issue 33, doc/design.md "Search keys"): per entry, the
        //    keys derived from its name, phones, e-mails and birthday
        //    (EntryModel SearchKeys), matched by prefix (Filter.search) and
        //    exactly (duplicates). Derivation needs ICU and libphonenumber, so
        //    the rows are filled by EntryStore at open (EntryKeys.swift), which
        //    rebuilds them whenever the node table's 'search_keys' (the versions
        //    that made them) differs from the running ones.
        """
        CREATE TABLE entry_keys (
          key   TEXT NOT NULL,             -- kind prefix ('s:', 't:', 'm:', 'b:') and the derived value
          entry TEXT NOT NULL,             -- entries.id
          PRIMARY KEY (key, entry)
        ) WITHOUT ROWID;
        CREATE INDEX entry_keys_by_entry ON entry_keys (entry);
        """,
        // 9: the pinyin order as data (issue 34): each name's ICU sort key under
        //    the `zh` collation (`pinyin_key`, PinyinCollation) in `name_order`,
        //    indexed under SQLite's own BINARY order, replaces the index of
        //    migration 4 under the custom collation, so the file is plain SQLite
        //    again (`PRAGMA integrity_check`, writes and `VACUUM` work in any
        //    sqlite3). The keys are derived personal data: an erasure deletes the
        //    row that holds them; ICU moving names rewrites them all at start-up.
        """
        ALTER TABLE entries ADD COLUMN name_order BLOB NOT NULL DEFAULT x'';
        UPDATE entries SET name_order = pinyin_key(name);
        DROP INDEX IF EXISTS entries_by_name_pinyin;
        CREATE INDEX entries_by_name_order ON entries (name_order, id);
        """,
    ]

    /// Brings the database at `connection` to the latest version.
    /// - Parameter progress: called before each migration with (version, total).
    /// - Returns: the version before migrating.
    /// - Throws: ``SQLiteError``; a failed migration is rolled back whole.
    ///   A database newer than this build is refused (``SQLiteError`` with
    ///   SQLITE_ERROR and a message saying so).
    @discardableResult
    static func migrate(_ connection: SQLiteConnection, progress: (Int, Int) -> Void = { _, _ in }) throws(SQLiteError)
        -> Int
    {
        let current = try userVersion(connection)
        if current > all.count {
            throw SQLiteError(
                code: SQLITE_ERROR,
                message:
                    "the database is at schema version \(current), newer than this entryd (\(all.count)); use a newer entryd"
            )
        }
        for version in (current + 1)...max(current + 1, all.count) where version <= all.count {
            progress(version, all.count)
            try connection.execute("BEGIN IMMEDIATE")
            do {
                try connection.execute(all[version - 1])
                try connection.execute("PRAGMA user_version = \(version)")
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
        return current
    }

    /// `PRAGMA user_version`.
    static func userVersion(_ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        var v = 0
        do {
            try connection.prepared("PRAGMA user_version").query { v = Int($0.int(0)) }
        } catch let e as SQLiteError { throw e } catch { preconditionFailure("\(error)") }
        return v
    }
}
