import Foundation
import EntryModel

/// Rebuilding entries from the change log alone (doc/design.md "Storage": the
/// entries table can always be rebuilt by replaying the change log).
///
/// Replays every change in seq order, applying per-field last-writer-wins by
/// (HLC, node) stamp and the deleted register likewise, which is exactly what
/// the writer did when it stored them.
public struct ReplayedEntry: Sendable, Equatable {
    /// The form named by the entry's first change in seq order.
    public var form: String
    /// Canonical values by field name, each the last write by (HLC, node) stamp;
    /// cleared fields are absent.
    public var fields: [String: String]
    /// True when the latest delete or restore by stamp was a delete.
    public var deleted: Bool
    /// The greatest HLC of the entry's changes.
    public var version: HLC

    /// A value with every member given.
    public init(form: String, fields: [String: String], deleted: Bool, version: HLC) {
        self.form = form
        self.fields = fields
        self.deleted = deleted
        self.version = version
    }
}

extension EntryStore {
    /// The entries as the change log alone describes them, by id.
    /// - Throws: ``SQLiteError``.
    public func replayChangeLog() throws -> [String: ReplayedEntry] {
        try readers.read { db in
            var entries: [String: ReplayedEntry] = [:]
            var clocks: [String: [String: Stamp]] = [:]
            var deletedClock: [String: Stamp] = [:]
            var erased = Set<String>()
            try db.statement("SELECT \(EntryStore.changeColumns) FROM changes ORDER BY seq").query { row in
                let change = try EntryStore.change(from: row)
                // An erase removes the entry for good: nothing of it is rebuilt.
                if change.op == .erase { erased.insert(change.entry); entries[change.entry] = nil }
                if erased.contains(change.entry) { return }
                let stamp = change.stamp
                var entry = entries[change.entry] ?? ReplayedEntry(form: change.form, fields: [:], deleted: false, version: .zero)
                for (name, value) in change.fields where (clocks[change.entry]?[name]).map({ $0 < stamp }) ?? true {
                    entry.fields[name] = value.isEmpty ? nil : value
                    clocks[change.entry, default: [:]][name] = stamp
                }
                if change.op == .delete || change.op == .restore, deletedClock[change.entry].map({ $0 < stamp }) ?? true {
                    entry.deleted = change.op == .delete
                    deletedClock[change.entry] = stamp
                }
                entry.version = max(entry.version, change.hlc)
                entries[change.entry] = entry
            }
            return entries
        }
    }

    /// Every stored entry in the same shape as ``replayChangeLog()``, by id.
    /// - Throws: ``SQLiteError``.
    public func storedEntries() throws -> [String: ReplayedEntry] {
        try readers.read { db in
            var entries: [String: ReplayedEntry] = [:]
            try db.statement("\(WriteContext.selectEntry.replacingOccurrences(of: " WHERE id = ?", with: ""))").query { row in
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
    public func integrityCheck() throws -> [String] {
        try readers.read { db in
            var lines: [String] = []
            try db.statement("PRAGMA integrity_check").query { lines.append($0.text(0)) }
            return lines
        }
    }
}
