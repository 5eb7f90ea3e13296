import EntryModel

extension EntryStore {
    /// The entry `id` (deleted ones too), or `nil`.
    /// - Throws: ``SQLiteError``.
    package func get(_ id: String) throws -> StoredEntry? {
        try readers.read { db in try EntryStore.loadEntry(db, id) }
    }

    /// A page of entries matching `query`, ordered by (sort column, id), using
    /// keyset paging so a page costs the same wherever it starts.
    /// - Throws: ``SQLiteError``.
    package func list(_ query: ListQuery) throws -> ListPage {
        let sql = EntryStore.listSQL(query, onServer: server != nil)
        let (pageSQL, pageValues, values, limit) = (sql.page, sql.pageValues, sql.countValues, sql.limit)
        let countSQL = sql.count
        return try readers.read { db in
            var entries: [StoredEntry] = []
            var sortValues: [String] = []
            try db.statement(pageSQL).query(pageValues) { row in
                entries.append(try EntryStore.entry(from: row))
                sortValues.append(row.text(12))
            }
            var next: (String, String)?
            if entries.count > limit {
                entries.removeLast()
                next = (sortValues[limit - 1], entries[limit - 1].id)
            }
            var total = 0
            try db.statement(countSQL).query(values) { total = Int($0.int(0)) }
            return ListPage(entries: entries, next: next, total: total)
        }
    }

    /// The statements of a List call: the page (keyset, `limit + 1` rows) and
    /// the count of all matches, with their bound values. Tests check their
    /// query plans (`QueryPlanTests`). `onServer`: for a database server
    /// (PostgreSQL), whose planner joins a search's keys otherwise (below).
    static func listSQL(_ query: ListQuery, onServer: Bool = false) -> (
        page: String, pageValues: [SQLValue], count: String,
        countValues: [SQLValue], limit: Int
    ) {
        var conditions: [String] = []
        var values: [SQLValue] = []
        /// Adds the condition `sql` with `value` bound to its `?`; nothing when `value` is `nil`.
        func add(_ sql: String, _ value: String?) {
            guard let value else { return }
            conditions.append(sql)
            values.append(.text(value))
        }
        if !query.includeDeleted { conditions.append("deleted = 0") }
        add("form = ?", query.form)
        add("country = ?", query.country)
        add("province = ?", query.province)
        add("city = ?", query.city)
        add("birthday >= ?", query.bornFrom)
        if let to = query.bornTo { add("birthday <> '' AND birthday <= ?", to) }
        add("appointment >= ?", query.appointmentFrom)
        if let to = query.appointmentTo { add("appointment <> '' AND appointment <= ?", to) }
        add("instr(name_folded, ?) > 0", query.text)
        // A search: the entries whose keys start with a prefix drive the query (each
        // prefix a range of the (key, entry) primary key, in byte order on both engines:
        // SQLite BINARY, PostgreSQL COLLATE "C"), each entry then read by its id: a
        // search matches few entries, a region or an order index many. SQLite keeps
        // a CROSS JOIN's order, so it never walks another index probing the keys row
        // by row. PostgreSQL keeps no statistics of the keys (personal values), so it
        // guesses thousands of matches and would hash-join them with a scan of every
        // entry: the ids are collected first (an InitPlan) and looked up by the
        // primary key (`id = ANY(ARRAY(…))`).
        var from = "entries"
        var searchValues: [SQLValue] = []
        if let prefixes = query.search, !prefixes.isEmpty {
            let ranges = prefixes.map { _ in "(key >= ? AND key < ?)" }.joined(separator: " OR ")
            let matching = "SELECT DISTINCT entry FROM entry_keys WHERE \(ranges)"
            if onServer {
                conditions.insert("id = ANY(ARRAY(\(matching)))", at: 0)
            } else {
                from = "(\(matching)) AS k CROSS JOIN entries"
                conditions.insert("id = k.entry", at: 0)
            }
            for prefix in prefixes { searchValues += [.text(prefix), .text(SearchKeys.upperBound(of: prefix))] }
        }
        add("updated_at >= ?", query.updatedSince)
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let column = query.order.column
        // The expression pages are ordered by, and the keyset compares with: the
        // same collation in both, and the index of that collation serves both.
        // In pinyin order: on SQLite the names' sort keys (migration 9), the
        // cursor's name made a key the same way; on a server its ICU collation.
        let pinyin = query.order == .name && query.nameCollation == .pinyin
        let sortKey =
            !pinyin ? column : onServer ? "\(column) COLLATE \(PinyinCollation.name)" : "name_order"
        let afterValue = pinyin && !onServer ? "\(PinyinCollation.keyFunction)(?)" : "?"
        let direction = query.descending ? "DESC" : "ASC"
        var pageConditions = conditions
        var pageValues = searchValues + values
        if let after = query.after {
            pageConditions.append("(\(sortKey), id) \(query.descending ? "<" : ">") (\(afterValue), ?)")
            pageValues += [.text(after.value), .text(after.id)]
        }
        let pageWhere = pageConditions.isEmpty ? "" : " WHERE " + pageConditions.joined(separator: " AND ")
        let limit = max(1, min(query.limit, 1000))
        let pageSQL = """
            SELECT id, form, fields, clocks, version, deleted, deleted_clock, created_at, updated_at, created_by, updated_by, seq, \(column)
            FROM \(from)\(pageWhere) ORDER BY \(sortKey) \(direction), id \(direction) LIMIT \(limit + 1)
            """
        // Filters on form, the deleted flag and the region alone: the total is a sum
        // over the kept counts (migration 2). Others count the matching entries.
        if query.bornFrom == nil && query.bornTo == nil && query.text == nil && query.updatedSince == nil
            && query.appointmentFrom == nil && query.appointmentTo == nil && (query.search ?? []).isEmpty
        {
            return (pageSQL, pageValues, "SELECT COALESCE(SUM(n), 0) FROM entry_counts" + whereClause, values, limit)
        }
        return (pageSQL, pageValues, "SELECT COUNT(*) FROM \(from)" + whereClause, searchValues + values, limit)
    }

    /// Every change of entry `id`, oldest first (by seq); of an erased entry,
    /// its erase changes alone (doc/design.md "Erasure").
    /// - Throws: ``SQLiteError``.
    package func history(_ id: String) throws -> [ChangeRecord] {
        try readers.read { db in
            var changes: [ChangeRecord] = []
            try db.statement("SELECT \(EntryStore.changeColumns) FROM changes WHERE entry = ? ORDER BY seq")
                .query([.text(id)]) { changes.append(try EntryStore.change(from: $0)) }
            if changes.contains(where: { $0.op == .erase }) { changes.removeAll { $0.op != .erase } }
            return changes
        }
    }

    /// Changes after `since` (exclusive), oldest first, at most `limit`.
    /// - Parameter excludeNode: drop changes made on that node, stamped at or after `excludeSince`.
    /// - Returns: the changes and `last`, the highest seq examined (even if all were filtered out).
    /// - Throws: ``SQLiteError``.
    package func changes(since: Int64, limit: Int, excludeNode: String?, excludeSince: HLC) throws -> (
        changes: [ChangeRecord], last: Int64
    ) {
        try scanChanges(since: since, limit: limit, excludeNode: excludeNode, excludeSince: excludeSince) {
            try EntryStore.change(from: $0)
        }
    }

    /// ``changes(since:limit:excludeNode:excludeSince:)`` in the wire form a
    /// `Changes` reply carries, each change already encoded (``ChangeWire``):
    /// no decode and encode again per row, for the many pullers of a hub.
    /// - Throws: ``SQLiteError``.
    package func wireChanges(since: Int64, limit: Int, excludeNode: String?, excludeSince: HLC) throws -> (
        changes: [JSON], last: Int64
    ) {
        try scanChanges(since: since, limit: limit, excludeNode: excludeNode, excludeSince: excludeSince) {
            try ChangeWire.json(from: $0)
        }
    }

    /// The rows after `since` a pull serves, each made into a `T` by `make`.
    private func scanChanges<T>(
        since: Int64, limit: Int, excludeNode: String?, excludeSince: HLC, _ make: (any SQLRow) throws -> T
    ) throws -> (changes: [T], last: Int64) {
        try readers.read { db in
            var changes: [T] = []
            var last = since
            // Of an erased entry only its erase changes are served (doc/design.md
            // "Erasure"): its other rows are kept, emptied, for the seqs and the
            // (node, HLC) a peer may ask about, but they are not changes to send.
            // Whether the entry is erased comes with each row: one statement, on a
            // database server one round trip, not one more per change (issue 34).
            try db.statement(
                """
                SELECT \(EntryStore.changeColumns), EXISTS (SELECT 1 FROM erasures WHERE erasures.entry = changes.entry)
                FROM changes WHERE seq > ? ORDER BY seq LIMIT ?
                """
            )
            .query([.int(since), .int(Int64(max(1, limit)))]) { row in
                last = row.int(0)
                // An excluded row is skipped before its values are decoded.
                if let excludeNode, row.text(1) == excludeNode, (HLC(row.text(2)) ?? .zero) >= excludeSince { return }
                if row.int(13) != 0 && row.text(5) != ChangeOp.erase.rawValue { return }
                changes.append(try make(row))
            }
            return (changes, last)
        }
    }

    /// ``EntryStore/highestHLC(madeOn:)``: one index lookup (UNIQUE (node, hlc)).
    package func highestHLC(madeOn node: String) throws -> HLC? {
        try readers.read { db in
            var hlc: HLC?
            // Changes compaction removed (`folded`) were held too (doc/design.md "Compaction").
            for table in ["changes", "folded"] {
                try db.statement("SELECT MAX(hlc) FROM \(table) WHERE node = ?").query([.text(node)]) { row in
                    if !row.isNull(0), let found = HLC(row.text(0)) { hlc = max(hlc ?? found, found) }
                }
            }
            return hlc
        }
    }

    /// ``EntryStore/holds(node:hlc:)``: one index lookup.
    package func holds(node: String, hlc: HLC) throws -> Bool {
        try readers.read { db in
            var found = false
            for table in ["changes", "folded"] where !found {
                try db.statement("SELECT 1 FROM \(table) WHERE node = ? AND hlc = ?").query([
                    .text(node), .text(hlc.description),
                ]) { _ in found = true }
            }
            return found
        }
    }

    /// Counts for `Status`: live entries, deleted entries, the highest seq, and the clock.
    /// - Throws: ``SQLiteError``.
    package func counts() throws -> (entries: Int, deleted: Int, seq: Int64) {
        try readers.read { db in
            var live = 0
            var deleted = 0
            // Kept by triggers (migration 2): no table scan.
            try db.statement("SELECT deleted, SUM(n) FROM entry_counts GROUP BY deleted").query {
                if $0.int(0) == 0 { live = Int($0.int(1)) } else { deleted = Int($0.int(1)) }
            }
            return (live, deleted, try EntryStore.lastSeq(db))
        }
    }

    /// The last HLC this node committed: the greater of the last stamp observed
    /// from a peer (the node table) and the last local change's stamp (the
    /// change log under this node's id; see `WriteContext.persistClock`).
    /// - Throws: ``SQLiteError``.
    package func currentHLC() throws -> HLC {
        try readers.read { db in try EntryStore.lastCommittedHLC(db, node: nodeID) }
    }

    /// ``currentHLC()`` on `db`: two index lookups.
    static func lastCommittedHLC(_ db: any SQLDatabase, node: String) throws -> HLC {
        var hlc = HLC.zero
        try db.statement("SELECT value FROM node WHERE key = 'hlc'").query { hlc = HLC($0.text(0)) ?? .zero }
        try db.statement("SELECT MAX(hlc) FROM changes WHERE node = ?").query([.text(node)]) { row in
            if !row.isNull(0), let local = HLC(row.text(0)), local > hlc { hlc = local }
        }
        return hlc
    }
}
