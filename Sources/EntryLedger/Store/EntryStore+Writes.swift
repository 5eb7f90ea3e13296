import EntryModel

extension EntryStore {
    /// Stores a new entry whose `fields` are already validated and canonical.
    ///
    /// With `id`, idempotent: if `id` exists with the same form and fields and is
    /// not deleted, the stored entry is returned and nothing is written.
    /// - Parameters:
    ///   - id: a canonical UUID, or `nil` to generate a UUIDv7.
    ///   - layout: which fields feed the filter columns and merge together.
    /// - Returns: the entry and whether it was created now.
    /// - Throws: ``EntryError`` `.entryExists` when `id` is used by other values or
    ///   a deleted entry; ``SQLiteError`` for storage failures.
    package func create(
        form: String, id: String?, fields: [String: String], layout: FieldLayout,
        origin: WriteOrigin
    ) throws -> (entry: StoredEntry, created: Bool) {
        try writer.submit { ctx in
            try ctx.create(form: form, id: id, fields: fields, layout: layout, origin: origin)
        }
    }

    /// Queues ``create(form:id:fields:layout:origin:)`` and returns at once, so
    /// that one caller (a session with pipelined Add calls) can have several
    /// writes in one group commit. Writes run in the order they were queued.
    /// The caller must call the ticket's `wait()` before it blocks on anything
    /// else (a session does, before it reads its socket again): a write queued
    /// on an idle store runs on the thread that waits for it.
    /// - Parameter keys: the entry's search keys, derived by the caller from
    ///   `fields` and `layout` (``SearchKeys/derive(fields:layout:)``) so that
    ///   the writer thread, which every write waits for, does not; `nil`: the
    ///   writer derives them.
    /// - Returns: a ticket (a ``WriteTicket``, held inline) whose `wait()` gives
    ///   the entry once it is durable.
    /// - Throws: ``EntryError`` `.storageFailed` once the store is closing.
    package func beginCreate(
        form: String, id: String?, fields: [String: String], layout: FieldLayout,
        origin: WriteOrigin, keys: [String]? = nil
    ) throws -> any PendingWrite<(entry: StoredEntry, created: Bool)> {
        try writer.enqueue(
            { ctx in try ctx.create(form: form, id: id, fields: fields, layout: layout, origin: origin, keys: keys) },
            callerWaitsNext: true)
    }

    /// Changes an entry: `compute` gets the current entry (on the writer
    /// thread, so no other write interleaves) and returns its complete new
    /// field map (validated, canonical). Fields whose value changed, with the
    /// rest of their groups, are written as one `update` change; if none
    /// changed, nothing is written.
    /// - Parameter ifVersion: when given, must equal the current version.
    /// - Throws: ``EntryError`` `.entryNotFound`, `.versionMismatch`; whatever
    ///   `compute` throws (e.g. `.validationFailed`); ``SQLiteError``.
    /// - Parameter layoutOf: the field layout of a form by name, asked for the
    ///   stored entry's form inside the write job (no read before the write).
    package func update(
        id: String, ifVersion: String?, layoutOf: @escaping (String) -> FieldLayout, origin: WriteOrigin,
        compute: @escaping (StoredEntry) throws -> [String: String]
    ) throws -> StoredEntry {
        try writer.submit { ctx in
            let current = try ctx.existing(id, ifVersion: ifVersion)
            let layout = layoutOf(current.form)
            let newFields = try compute(current)
            var changed: [String: String] = [:]
            for name in Set(current.fields.keys).union(newFields.keys) where current.fields[name] != newFields[name] {
                // A change carries its fields' whole groups, so every change is a
                // complete value of each register it writes (doc/design.md "Field groups").
                for member in layout.group(of: name) { changed[member] = newFields[member] ?? "" }
            }
            if changed.isEmpty { return current }
            return try ctx.record(.update, on: current, fields: changed, layout: layout, origin: origin)
        }
    }

    /// Marks an entry deleted (a tombstone: its values are kept, so the delete
    /// syncs and can be undone). Deleting a deleted entry changes nothing.
    /// - Throws: ``EntryError`` `.entryNotFound`, `.versionMismatch`; ``SQLiteError``.
    package func delete(
        id: String, ifVersion: String?, layoutOf: @escaping (String) -> FieldLayout,
        origin: WriteOrigin
    ) throws -> StoredEntry {
        try writer.submit { ctx in
            let current = try ctx.existing(id, ifVersion: ifVersion)
            if current.deleted { return current }
            return try ctx.record(.delete, on: current, fields: [:], layout: layoutOf(current.form), origin: origin)
        }
    }

    /// Undoes a delete. Restoring an entry that is not deleted changes nothing.
    /// Values the tombstone kept in an older spelling are re-spelled under this
    /// node's rules in the same transaction (``Canonicaliser``): the answer holds them.
    /// - Throws: ``EntryError`` `.entryNotFound`; ``SQLiteError``.
    package func restore(id: String, layoutOf: @escaping (String) -> FieldLayout, origin: WriteOrigin) throws
        -> StoredEntry
    {
        try writer.submit { ctx in
            let current = try ctx.existing(id, ifVersion: nil)
            if !current.deleted { return current }
            let restored = try ctx.record(
                .restore, on: current, fields: [:], layout: layoutOf(current.form), origin: origin)
            return try ctx.canonicalise(id, scope: nil, layout: layoutOf) > 0
                ? ctx.existing(id, ifVersion: nil) : restored
        }
    }

    /// Queues an import of many entries as one job and returns at once: the
    /// writer thread stores it while the caller goes on (a session validating
    /// its next pipelined Import). A row whose id exists with the same values
    /// (and deleted flag) counts as unchanged; with other values it is
    /// rejected. Fields the form does not define are never cleared: a row may
    /// leave them out, or give the values stored (``ImportRow/matches(_:form:)``);
    /// values the form cannot take (``ImportRow/unknown``) only confirm an entry
    /// that holds them, they never make one. With `atomic`, one rejected row
    /// stores nothing (added = 0). A row with the id of an erased entry is
    /// rejected and counted (``refusedErasedCount()``).
    ///
    /// Queued without the promise to wait next (`callerWaitsNext: false`): on
    /// an idle store the writer thread is woken and takes the job once the
    /// lone job's grace is over (``GroupCommitPolicy/loneJobGrace``, 2 ms), or
    /// at once behind a running round; a caller that waits within the grace
    /// runs it on its own thread. One thread hand-off is nothing next to a job
    /// of up to `max-batch` rows. Called from any thread; the ticket's `wait()`
    /// must be called by the same thread, once.
    /// - Returns: a ticket whose `wait()` gives the counts and rejected rows
    ///   once the transaction is durable, or throws ``AtomicImportRefused``
    ///   (nothing stored) when `atomic` and a row was rejected, or the
    ///   ``SQLiteError`` of a failed round (nothing stored).
    /// - Throws: ``EntryError`` `.storageFailed` once the store is closing.
    package func beginImport(
        form: String, rows: [ImportRow], layout: FieldLayout, atomic: Bool,
        origin: WriteOrigin
    ) throws -> any PendingWrite<ImportResult> {
        try writer.enqueue(
            { ctx -> ImportResult in
                try ctx.claim()  // before the first row's erasure is read (ChangeFeed "Claim first")
                var result = ImportResult()
                var refused = 0
                for row in rows {
                    if !row.problems.isEmpty {
                        result.rejected.append((row.index, row.id, row.problems))
                        continue
                    }
                    // No savepoint per row: rows were validated before the job, so a row can
                    // only fail on storage, which fails the whole job (its own savepoint).
                    if let id = row.id, try ctx.erasure(of: id) != nil {
                        // An old export imported again: the erased entry is refused, and counted.
                        refused += 1
                        result.rejected.append(
                            (
                                row.index, id,
                                [
                                    Problem(
                                        field: "id", code: .erased,
                                        message: "the entry with id \(id) was erased; it cannot be imported again")
                                ]
                            ))
                    } else if let id = row.id, let existing = try ctx.load(id) {
                        if row.matches(existing, form: form) {
                            result.unchanged += 1
                        } else if !row.unknownMatches(existing) {
                            result.rejected.append((row.index, id, row.unknownProblems))
                        } else {
                            result.rejected.append(
                                (
                                    row.index, id,
                                    [
                                        Problem(
                                            field: "id", code: .exists,
                                            message:
                                                "an entry with id \(id) already exists with other values, or is deleted"
                                        )
                                    ]
                                ))
                        }
                    } else if !row.unknown.isEmpty {
                        result.rejected.append((row.index, row.id, row.unknownProblems))
                    } else {
                        var (entry, _) = try ctx.create(
                            form: form, id: row.id, fields: row.fields, layout: layout, origin: origin,
                            keys: row.keys?.all)
                        if row.deleted {
                            entry = try ctx.record(.delete, on: entry, fields: [:], layout: layout, origin: origin)
                        }
                        result.added += 1
                        if !row.deleted {
                            result.addedLive.append((row.index, entry.id, row.fields, row.keys?.duplicates))
                        }
                    }
                }
                if atomic && !result.rejected.isEmpty {
                    throw AtomicImportRefused(result: ImportResult(added: 0, unchanged: 0, rejected: result.rejected))
                }
                try ctx.countRefusedErased(refused)
                return result
            }, callerWaitsNext: false)
    }
}

extension WriteContext {
    /// The entry `id` (deleted ones too) as the writer sees it now.
    /// - Parameter ifVersion: 16-hex-digit HLC the current version must equal (`nil`: any).
    /// - Throws: ``EntryError`` `.entryNotFound`; `.versionMismatch` carrying the current version.
    func existing(_ id: String, ifVersion: String?) throws -> StoredEntry {
        guard let current = try load(id) else {
            if let erased = try erasure(of: id) { throw EntryError.entryErased(id: id, at: erased.at) }
            throw EntryError.entryNotFound(id)
        }
        if let ifVersion, ifVersion != current.version.description {
            throw EntryError.versionMismatch(id: id, version: current.version.description)
        }
        return current
    }

    /// The writer-thread body of ``EntryStore/create(form:id:fields:layout:origin:)``:
    /// the same form and fields under a live `id` return it with `created` false;
    /// otherwise a new entry (UUIDv7 id when `id` is `nil`) and its `create` change.
    /// - Throws: ``EntryError`` `.entryExists`; ``SQLiteError``.
    func create(
        form: String, id: String?, fields: [String: String], layout: FieldLayout,
        origin: WriteOrigin, keys: [String]? = nil
    ) throws -> (entry: StoredEntry, created: Bool) {
        if let id, let existing = try load(id) {
            if !existing.deleted, existing.form == form, existing.fields == fields { return (existing, false) }
            throw EntryError.entryExists(id)
        }
        // No resurrection: an erased id is never used again (doc/design.md "Erasure").
        if let id, let erased = try erasure(of: id) { throw EntryError.entryErased(id: id, at: erased.at) }
        let hlc = try tick()
        let at = Timestamp.rfc3339(milliseconds: clock.wallClock())
        let stamp = Stamp(hlc: hlc, node: nodeID)
        var entry = StoredEntry(
            id: id ?? UUIDv7.generate(milliseconds: hlc.milliseconds), form: form, fields: fields,
            clocks: fields.mapValues { _ in stamp }, version: hlc, deleted: false, deletedClock: nil,
            createdAt: at, updatedAt: at, createdBy: origin.actor, updatedBy: origin.actor)
        var change = ChangeRecord(
            seq: 0, node: nodeID, hlc: hlc, entry: entry.id, form: form, op: .create, fields: fields,
            base: fields.mapValues { _ in "" }, actor: origin.actor, at: at, reason: origin.reason, via: nil)
        try append(&change)
        entry.seq = change.seq
        try save(entry, layout: layout, keys: keys, before: .absent)
        return (entry, true)
    }

    /// Writes a local update/delete/restore of `current` and its change-log row.
    func record(
        _ op: ChangeOp, on current: StoredEntry, fields: [String: String], layout: FieldLayout,
        origin: WriteOrigin
    ) throws -> StoredEntry {
        let hlc = try tick()
        let at = Timestamp.rfc3339(milliseconds: clock.wallClock())
        let stamp = Stamp(hlc: hlc, node: nodeID)
        var entry = current
        var base: [String: String] = [:]
        var named: [Stamp] = []  // every write the base names, for its `@nodes` (SeenWrites)
        // The deletes and restores it has seen on the deleted register (the heads), under
        // a key no field can have.
        func nameDeletes() throws {
            let deletes = try deletedRegisterHeads(entry: current.id).map(\.stamp)
            base[EntryStore.deletedBaseKey] = deletes.map(\.hlc.description).joined(separator: ",")
            named += deletes
        }
        if op == .delete || op == .restore {
            // What the delete (or restore) saw: the HLC of each field's value, so a
            // node that holds a write it did not see records a delete-against-edit
            // conflict (doc/design.md "Delete against edit").
            for (name, clock) in current.clocks { base[name] = clock.hlc.description }
            named += current.clocks.values
            // …and the deletes and restores it has seen: a concurrent delete and restore are a conflict too.
            try nameDeletes()
        }
        // The groups this write touches: the other heads it has in view are listed, so
        // it settles their conflicts (FieldConflicts.swift).
        var touched: [[String]] = []
        for name in fields.keys.sorted() where !touched.contains(where: { $0.contains(name) }) {
            touched.append(layout.group(of: name))
        }
        // A head counts as named only through the group's own fields' bases: that is
        // all SeenWrites(group:) reads besides the heads list.
        var others = Set<Stamp>()
        var settle: [[String]] = []
        for group in touched {
            let heads = try groupHeads(entry: current.id, group: group)
            if heads.count > 1 { settle.append(group) }
            let namedHere = Set(group.filter { fields[$0] != nil }.compactMap { current.clocks[$0] })
            others.formUnion(heads.map(\.stamp).filter { !namedHere.contains($0) })
        }
        for (name, value) in fields {
            base[name] = current.clocks[name]?.hlc.description ?? ""
            if let clock = current.clocks[name] { named.append(clock) }
            if value.isEmpty { entry.fields[name] = nil } else { entry.fields[name] = value }
            entry.clocks[name] = stamp
        }
        if !others.isEmpty {
            base[EntryStore.headsKey] = Set(others.map(\.hlc.description)).sorted().joined(separator: ",")
        }
        named += others
        if op == .update, current.deleted {
            // An edit of an entry known to be deleted has seen the delete: no delete-against-edit conflict.
            try nameDeletes()
        }
        // Which node's write each named HLC means, where it could mean another's.
        base[EntryStore.nodesKey] = SeenWrites.nodesValue(naming: named, own: nodeID)
        switch op {
        case .delete:
            entry.deleted = true
            entry.deletedClock = stamp
        case .restore:
            entry.deleted = false
            entry.deletedClock = stamp
        case .create, .update, .erase: break
        }
        entry.version = hlc
        entry.updatedAt = at
        entry.updatedBy = origin.actor
        var change = ChangeRecord(
            seq: 0, node: nodeID, hlc: hlc, entry: entry.id, form: entry.form, op: op, fields: fields, base: base,
            actor: origin.actor, at: at, reason: origin.reason, via: nil)
        try append(&change)
        if op == .delete || op == .restore || entry.deleted {
            _ = try deleteAgainstEdit(entry: entry.id, layout: layout)
        }
        for group in settle { _ = try settleGroup(entry: entry.id, group: group, current: entry.fields) }
        entry.seq = change.seq
        try save(entry, layout: layout)
        return entry
    }
}

extension EntryStore {
    /// The value kept under `key` in the node table (this node's own
    /// settings, never synced), or `nil`.
    /// - Throws: ``SQLiteError``.
    package func nodeValue(_ key: String) throws -> String? {
        try readers.read { db in
            var value: String?
            try db.statement("SELECT value FROM node WHERE key = ?").query([.text(key)]) { value = $0.text(0) }
            return value
        }
    }

    /// Keeps `value` under `key` in the node table, through the writer.
    /// - Throws: ``SQLiteError``.
    package func setNodeValue(_ key: String, _ value: String) throws {
        try writer.submit { ctx in
            try ctx.db.statement(
                "INSERT INTO node (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
            )
            .run([.text(key), .text(value)])
        }
    }
}
