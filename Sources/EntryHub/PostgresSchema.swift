/// The PostgreSQL store's numbered schema migrations, tracked in the one-row
/// table `schema_version` (SQLite's store uses `PRAGMA user_version`).
///
/// The tables mirror the SQLite schema after its migration 6
/// (`EntryLedger.Migrations`) in PostgreSQL types: the same columns and
/// meanings, `integer` 0/1 flags as in SQLite (the store's SQL is one text for
/// both), `bigint` for seqs and counts, and every text column in the `C`
/// collation, so text orders and compares by bytes as in SQLite whatever the
/// database's locale (keyset paging and HLC order depend on it).
/// JSON columns stay `text`: the store writes canonical JSON and must read back
/// the same bytes, which `jsonb` would not keep. Differences:
/// - `changes.seq` is not a serial: ``ChangeFeed`` hands it out from the
///   one-row `change_counter` in commit order (see there), so a reader of
///   `seq > N` never skips a row that commits later.
/// - `change_counter` also keeps the node's last HLC (migration 2), so that
///   all instances on one database stamp from one clock (``ChangeFeed``).
/// - The pinyin index uses the server's ICU collation `zh-u-co-pinyin`.
///
/// Each migration runs in one transaction with the bump of `schema_version`,
/// under a transaction-level advisory lock, so several entryd instances
/// starting at once on one database migrate it once. Never edit a released
/// migration; append a new one.
enum PostgresSchema {
    /// Migration `i + 1` is `all[i]`.
    static let all: [String] = [
        // 1: everything the SQLite store has after its migration 6.
        """
        CREATE TABLE node (
          key   text COLLATE "C" PRIMARY KEY,          -- 'id' (node UUID), 'hlc' (last stamp issued), …
          value text COLLATE "C" NOT NULL
        );

        CREATE COLLATION pinyin (provider = icu, locale = 'zh-u-co-pinyin');

        CREATE TABLE entries (
          id            text COLLATE "C" PRIMARY KEY,  -- UUID, lower case; UUIDv7 when entryd made it
          form          text COLLATE "C" NOT NULL,
          fields        text COLLATE "C" NOT NULL,     -- JSON object: field -> canonical value
          clocks        text COLLATE "C" NOT NULL,     -- JSON object: field -> 'HLC NODE' of its register
          version       text COLLATE "C" NOT NULL,     -- HLC of the latest change
          deleted       integer NOT NULL DEFAULT 0,  -- 0 or 1
          deleted_clock text COLLATE "C" NOT NULL DEFAULT '',  -- 'HLC NODE' of the deleted register
          created_at    text COLLATE "C" NOT NULL,     -- RFC 3339 UTC, milliseconds
          updated_at    text COLLATE "C" NOT NULL,
          created_by    text COLLATE "C" NOT NULL,
          updated_by    text COLLATE "C" NOT NULL,
          name          text COLLATE "C" NOT NULL DEFAULT '',
          name_folded   text COLLATE "C" NOT NULL DEFAULT '',
          birthday      text COLLATE "C" NOT NULL DEFAULT '',
          country       text COLLATE "C" NOT NULL DEFAULT '',
          province      text COLLATE "C" NOT NULL DEFAULT '',
          city          text COLLATE "C" NOT NULL DEFAULT '',
          seq           bigint NOT NULL DEFAULT 0  -- local seq of the latest change applied to it
        );
        CREATE INDEX entries_by_created  ON entries (created_at, id);
        CREATE INDEX entries_by_updated  ON entries (updated_at, id);
        CREATE INDEX entries_by_birthday ON entries (birthday, id);
        CREATE INDEX entries_by_name     ON entries (name, id);
        CREATE INDEX entries_by_name_pinyin ON entries (name COLLATE pinyin, id);
        CREATE INDEX entries_by_country  ON entries (country, created_at, id);
        CREATE INDEX entries_by_province ON entries (province, created_at, id);
        CREATE INDEX entries_by_city     ON entries (city, created_at, id);

        -- Entry counts by form, deleted flag and region, kept by a trigger (SQLite migration 2).
        CREATE TABLE entry_counts (
          form     text COLLATE "C" NOT NULL,
          deleted  integer NOT NULL,
          country  text COLLATE "C" NOT NULL,
          province text COLLATE "C" NOT NULL,
          city     text COLLATE "C" NOT NULL,
          n        bigint NOT NULL,
          PRIMARY KEY (deleted, country, province, city, form)
        );
        CREATE FUNCTION entries_counted() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP IN ('DELETE', 'UPDATE') THEN
            UPDATE entry_counts SET n = n - 1 WHERE form = OLD.form AND deleted = OLD.deleted
              AND country = OLD.country AND province = OLD.province AND city = OLD.city;
          END IF;
          IF TG_OP IN ('INSERT', 'UPDATE') THEN
            INSERT INTO entry_counts (form, deleted, country, province, city, n)
              VALUES (NEW.form, NEW.deleted, NEW.country, NEW.province, NEW.city, 1)
              ON CONFLICT (deleted, country, province, city, form) DO UPDATE SET n = entry_counts.n + 1;
          END IF;
          RETURN NULL;
        END $$;
        CREATE TRIGGER entries_counted_insert AFTER INSERT OR DELETE ON entries
          FOR EACH ROW EXECUTE FUNCTION entries_counted();
        CREATE TRIGGER entries_counted_update AFTER UPDATE OF form, deleted, country, province, city ON entries
          FOR EACH ROW WHEN (OLD.form IS DISTINCT FROM NEW.form OR OLD.deleted IS DISTINCT FROM NEW.deleted
            OR OLD.country IS DISTINCT FROM NEW.country OR OLD.province IS DISTINCT FROM NEW.province
            OR OLD.city IS DISTINCT FROM NEW.city)
          EXECUTE FUNCTION entries_counted();

        -- The change log. seq comes from change_counter (ChangeFeed), in commit order.
        CREATE TABLE changes (
          seq        bigint PRIMARY KEY,    -- position in this node's change log
          node       text COLLATE "C" NOT NULL,         -- node where the change was made
          hlc        text COLLATE "C" NOT NULL,
          entry      text COLLATE "C" NOT NULL,
          form       text COLLATE "C" NOT NULL,
          op         text COLLATE "C" NOT NULL CHECK (op IN ('create', 'update', 'delete', 'restore', 'erase')),
          fields     text COLLATE "C" NOT NULL,         -- JSON object: values this change set
          base       text COLLATE "C" NOT NULL,         -- JSON object: field -> HLC it replaced
          actor      text COLLATE "C" NOT NULL,
          at         text COLLATE "C" NOT NULL,         -- wall time at the origin
          reason     text COLLATE "C",
          via        text COLLATE "C",                  -- peer that delivered it; NULL when local
          superseded text COLLATE "C" NOT NULL DEFAULT '',  -- fields later writes superseded (compaction)
          UNIQUE (node, hlc)
        );
        CREATE INDEX changes_by_entry ON changes (entry, seq);
        -- The highest seq handed out (and, once committed, the highest committed).
        -- One row; its row lock orders the writers' commits (ChangeFeed).
        CREATE TABLE change_counter (
          one boolean PRIMARY KEY DEFAULT true CHECK (one),
          seq bigint NOT NULL CHECK (seq >= 0)
        );
        INSERT INTO change_counter (one, seq) VALUES (true, 0);

        CREATE TABLE conflicts (
          id          text COLLATE "C" PRIMARY KEY,
          entry       text COLLATE "C" NOT NULL,
          field       text COLLATE "C" NOT NULL,
          kept        text COLLATE "C" NOT NULL,
          kept_hlc    text COLLATE "C" NOT NULL,
          kept_node   text COLLATE "C" NOT NULL,
          lost        text COLLATE "C" NOT NULL,
          lost_hlc    text COLLATE "C" NOT NULL,
          lost_node   text COLLATE "C" NOT NULL,
          lost_group  text COLLATE "C" NOT NULL,        -- JSON object: the losing write's whole field group
          detected_at text COLLATE "C" NOT NULL,
          resolved    integer NOT NULL DEFAULT 0  -- 0 or 1
        );
        CREATE INDEX conflicts_by_entry ON conflicts (entry, detected_at);

        -- Peers and their checkpoints (pulled_seq, pushed_seq), incarnations, expiry.
        CREATE TABLE peers (
          name       text COLLATE "C" PRIMARY KEY,      -- configured peer name, or the unix: address
          address    text COLLATE "C" NOT NULL,
          node       text COLLATE "C",                  -- the peer's node id, learnt in the handshake
          pulled_seq bigint NOT NULL DEFAULT 0,  -- peer's change log seen up to here
          pushed_seq bigint NOT NULL DEFAULT 0,  -- our change log sent up to here
          last_sync  text COLLATE "C",
          last_error text COLLATE "C",
          incarnation        text COLLATE "C",
          mark               text COLLATE "C",
          synced_incarnation text COLLATE "C",
          notice             text COLLATE "C",
          expired            text COLLATE "C"           -- when compaction found it silent past peer-expiry
        );
        -- Per node that pulled this log with excludeNode: the highest since it pulled with.
        CREATE TABLE peer_acks (
          node  text COLLATE "C" PRIMARY KEY,
          since bigint NOT NULL,
          at    text COLLATE "C" NOT NULL
        );

        -- The erasure ledger: per erased entry, the erasure that took effect; never a value.
        CREATE TABLE erasures (
          entry  text COLLATE "C" PRIMARY KEY,
          form   text COLLATE "C" NOT NULL,
          hlc    text COLLATE "C" NOT NULL,
          node   text COLLATE "C" NOT NULL,
          actor  text COLLATE "C" NOT NULL,
          at     text COLLATE "C" NOT NULL,
          reason text COLLATE "C" NOT NULL
        );

        -- Compaction: stamps of removed change-log rows, and per entry the last horizon.
        CREATE TABLE folded (
          hlc  text COLLATE "C" NOT NULL,
          node text COLLATE "C" NOT NULL,
          seq  bigint NOT NULL,
          PRIMARY KEY (hlc, node)
        );
        CREATE TABLE compacted (
          entry   text COLLATE "C" PRIMARY KEY,
          horizon bigint NOT NULL,
          at      text COLLATE "C" NOT NULL
        );
        """,
        // 2: the node's last HLC beside the seq counter, so that every instance on the
        // database stamps local changes from one clock (ChangeFeed.claim). Its packed
        // 64-bit value (HLC.rawValue); starts at the greatest stamp the node has issued
        // or observed: the node table's 'hlc' and every stamp in the change log.
        """
        ALTER TABLE change_counter ADD COLUMN hlc bigint NOT NULL DEFAULT 0 CHECK (hlc >= 0);
        UPDATE change_counter SET hlc = GREATEST(hlc,
          COALESCE((SELECT max(('x' || value)::bit(64)::bigint) FROM node
                    WHERE key = 'hlc' AND value ~ '^[0-9A-Fa-f]{16}$'), 0),
          COALESCE((SELECT max(('x' || hlc)::bit(64)::bigint) FROM changes
                    WHERE hlc ~ '^[0-9A-Fa-f]{16}$'), 0));
        """,
        // 3: no sample of a personal value in the catalogue. ANALYZE copies the most
        // common values and a histogram of each column into pg_statistic, where an
        // erasure cannot reach them: the columns that hold personal values keep no
        // statistics (SET STATISTICS 0), and those gathered before are removed (a
        // column's type set again, to the same type, drops its statistics; the
        // indexes on it are rebuilt, the table is not rewritten).
        """
        ALTER TABLE entries ALTER COLUMN fields SET STATISTICS 0, ALTER COLUMN name SET STATISTICS 0,
          ALTER COLUMN name_folded SET STATISTICS 0, ALTER COLUMN birthday SET STATISTICS 0,
          ALTER COLUMN fields TYPE text COLLATE "C", ALTER COLUMN name TYPE text COLLATE "C",
          ALTER COLUMN name_folded TYPE text COLLATE "C", ALTER COLUMN birthday TYPE text COLLATE "C";
        ALTER TABLE changes ALTER COLUMN fields SET STATISTICS 0, ALTER COLUMN fields TYPE text COLLATE "C";
        ALTER TABLE conflicts ALTER COLUMN kept SET STATISTICS 0, ALTER COLUMN lost SET STATISTICS 0,
          ALTER COLUMN lost_group SET STATISTICS 0, ALTER COLUMN kept TYPE text COLLATE "C",
          ALTER COLUMN lost TYPE text COLLATE "C", ALTER COLUMN lost_group TYPE text COLLATE "C";
        """,
        // 4: the appointment (issue 33; SQLite migration 7): the form's date-time
        // field as a filter and sort key, `YYYY-MM-DD HH:mm` or ''; no statistics
        // (a personal value, as migration 3). Existing rows take the field named
        // appointment; one of another name is copied at the entry's next write.
        """
        ALTER TABLE entries ADD COLUMN appointment text COLLATE "C" NOT NULL DEFAULT '';
        ALTER TABLE entries ALTER COLUMN appointment SET STATISTICS 0;
        UPDATE entries SET appointment = fields::jsonb ->> 'appointment'
          WHERE jsonb_typeof(fields::jsonb -> 'appointment') = 'string';
        CREATE INDEX entries_by_appointment ON entries (appointment, id);
        """,
        // 5: search keys (issue 33; SQLite migration 8): per entry, the keys
        // derived from its name, phones, e-mails and birthday, compared by byte
        // (COLLATE "C": prefix ranges as on SQLite); no statistics (personal
        // values, as migration 3). Filled and rebuilt by EntryStore at open.
        """
        CREATE TABLE entry_keys (
          key   text COLLATE "C" NOT NULL,
          entry text COLLATE "C" NOT NULL,
          PRIMARY KEY (key, entry)
        );
        ALTER TABLE entry_keys ALTER COLUMN key SET STATISTICS 0;
        CREATE INDEX entry_keys_by_entry ON entry_keys (entry);
        """,
    ]

    /// The advisory lock key migrations hold (any constant; "entryd" in ASCII).
    static let migrationLock = "111290685499748"

    /// Brings the database of `connection` to the latest version (or to
    /// `newest`, for tests of a migration), one transaction per migration;
    /// safe to run from several instances at once.
    /// - Returns: the version before migrating (0 for an empty database).
    /// - Throws: ``PGError``; a failed migration is rolled back whole. A database
    ///   newer than this build is refused (SQLSTATE `55000`, the message says so).
    @discardableResult
    /// - Parameter progress: called with (version, total) before each migration
    ///   this call applies (not for those another instance applied meanwhile).
    static func migrate(
        _ connection: PGConnection, to newest: Int = all.count,
        progress: (Int, Int) -> Void = { _, _ in }
    ) throws -> Int {
        precondition((1...all.count).contains(newest), "no migration \(newest)")
        var before: Int?
        for target in 1...newest {
            try connection.transaction { c in
                try c.execute("SELECT pg_advisory_xact_lock(\(migrationLock))")
                try c.execute(
                    """
                    CREATE TABLE IF NOT EXISTS schema_version (
                      one boolean PRIMARY KEY DEFAULT true CHECK (one),
                      version integer NOT NULL)
                    """)
                try c.execute("INSERT INTO schema_version (one, version) VALUES (true, 0) ON CONFLICT DO NOTHING")
                let current = try version(c)
                if before == nil { before = current }
                if current > all.count {
                    throw PGError(
                        sqlState: "55000",
                        message:
                            "the database is at schema version \(current), newer than this entryd (\(all.count)); use a newer entryd"
                    )
                }
                guard current < target, target <= all.count else { return }
                progress(target, all.count)
                try c.execute(all[target - 1])
                try c.execute("UPDATE schema_version SET version = $1", [String(target)])
            }
        }
        return before ?? 0
    }

    /// The schema version of the database of `connection`: 0 when it has none.
    /// - Throws: ``PGError``.
    static func version(_ connection: PGConnection) throws(PGError) -> Int {
        let exists = try connection.execute("SELECT to_regclass('schema_version') IS NOT NULL")
        guard exists.rows.first?.first == "t" else { return 0 }
        return Int(try connection.execute("SELECT version FROM schema_version").rows.first?.first.flatMap { $0 } ?? "0")
            ?? 0
    }
}
