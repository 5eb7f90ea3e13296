import Foundation
import EntryModel

/// Rebuilding entries from the change log alone (doc/design.md "Storage": the
/// entries table can always be rebuilt by replaying the change log).
///
/// Replays every change in seq order: each field holds its standing write
/// (last-writer-wins by (HLC, node) stamp, with re-spellings under newer rules
/// standing only over the value they re-spelled: FieldConflicts.swift), and
/// the deleted register is last-writer-wins by stamp, which is exactly what
/// the writer did when it stored them.
package struct ReplayedEntry: Sendable, Equatable {
    /// The form named by the entry's first change in seq order.
    package var form: String
    /// Canonical values by field name, each the standing write's (the last by
    /// (HLC, node) stamp, but for re-spellings); cleared fields are absent.
    package var fields: [String: String]
    /// True when the latest delete or restore by stamp was a delete.
    package var deleted: Bool
    /// The greatest HLC of the entry's changes.
    package var version: HLC

    /// A value with every member given.
    package init(form: String, fields: [String: String], deleted: Bool, version: HLC) {
        self.form = form
        self.fields = fields
        self.deleted = deleted
        self.version = version
    }
}

extension EntryStore {
    /// The entries as the change log alone describes them, by id.
    /// - Throws: ``SQLiteError``.
    package func replayChangeLog() throws -> [String: ReplayedEntry] {
        try readers.read { db in
            var changes: [ChangeRecord] = []
            try db.statement("SELECT \(EntryStore.changeColumns) FROM changes ORDER BY seq").query {
                changes.append(try EntryStore.change(from: $0))
            }
            return EntryStore.replay(changes)
        }
    }

    /// The entries `changes` (in seq order) describe, by id: the rule of
    /// ``replayChangeLog()`` over any list, such as one entry's rows (compaction
    /// checks with it that what it keeps still rebuilds the entry).
    static func replay(_ changes: [ChangeRecord]) -> [String: ReplayedEntry] {
        var entries: [String: ReplayedEntry] = [:]
        var writes: [String: [String: [WriteContext.GroupWrite]]] = [:]  // entry → field → its writes
        var deletedClock: [String: Stamp] = [:]
        var erased = Set<String>()
        for change in changes {
            // An erase removes the entry for good: nothing of it is rebuilt.
            if change.op == .erase {
                erased.insert(change.entry)
                entries[change.entry] = nil
            }
            if erased.contains(change.entry) { continue }
            let stamp = change.stamp
            var entry =
                entries[change.entry] ?? ReplayedEntry(form: change.form, fields: [:], deleted: false, version: .zero)
            for (name, value) in change.fields {
                writes[change.entry, default: [:]][name, default: []].append(
                    WriteContext.GroupWrite(
                        stamp: stamp, fields: [name: value],
                        seen: SeenWrites(group: [name], base: change.base, node: change.node),
                        isMigration: change.actor == WriteOrigin.migrationActor,
                        superseded: change.superseded.contains(name)))
            }
            if change.op == .delete || change.op == .restore, deletedClock[change.entry].map({ $0 < stamp }) ?? true {
                entry.deleted = change.op == .delete
                deletedClock[change.entry] = stamp
            }
            entry.version = max(entry.version, change.hlc)
            entries[change.entry] = entry
        }
        for (id, fields) in writes {
            for (name, list) in fields {
                let value = WriteContext.standing(of: list)?.fields[name] ?? ""
                entries[id]?.fields[name] = value.isEmpty ? nil : value
            }
        }
        return entries
    }

    /// Every stored entry in the same shape as ``replayChangeLog()``, by id.
    /// - Throws: ``SQLiteError``.
    package func storedEntries() throws -> [String: ReplayedEntry] {
        try readers.read { db in
            var entries: [String: ReplayedEntry] = [:]
            try db.statement("\(WriteContext.selectEntry.replacingOccurrences(of: " WHERE id = ?", with: ""))").query {
                row in
                let e = try EntryStore.entry(from: row)
                entries[e.id] = ReplayedEntry(form: e.form, fields: e.fields, deleted: e.deleted, version: e.version)
            }
            return entries
        }
    }
}

extension EntryStore {
    /// `PRAGMA integrity_check` (sqlite.org/pragma.html#pragma_integrity_check):
    /// `["ok"]` for a sound database, else SQLite's list of problems.
    /// - Throws: ``SQLiteError``.
    package func integrityCheck() throws -> [String] {
        // A server checks its own pages (data checksums); nothing to ask here.
        guard server == nil else { return ["ok"] }
        return try readers.read { db in
            var lines: [String] = []
            try db.statement("PRAGMA integrity_check").query { lines.append($0.text(0)) }
            return lines
        }
    }
}
