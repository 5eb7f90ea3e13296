import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger

/// The store implementations the store tests run against: every test of
/// `StoreTests` and `SyncTests` takes a `StoreKind` argument
/// (`@Test(arguments: StoreKind.allCases)`) and gets its store from
/// ``open(_:readers:wallClock:)``, so a new case runs all of them against the
/// new store.
///
/// A kind maps a ``TestDatabase`` (a place made for one test and removed after
/// it) to a store: opening the same place again gives the same store after a
/// restart (same node id, same data), a new place a new, empty one.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible {
    /// ``EntryStore``: the SQLite database `entries.db` in the place's directory.
    case sqlite

    /// Opens (creating it when new) the store of `place`.
    /// - Parameters:
    ///   - readers: concurrent readers the store may keep (SQLite: read-only connections).
    ///   - wallClock: milliseconds since the epoch, for HLC stamps.
    ///   - canonicaliser: the rules that re-spell arriving values (``Canonicaliser``).
    /// - Throws: what opening the store throws.
    func open(_ place: TestDatabase, readers: Int = 4,
              wallClock: @escaping @Sendable () -> UInt64 = HybridClock.systemMilliseconds,
              canonicaliser: Canonicaliser? = nil) throws -> any LedgerStore {
        switch self {
        case .sqlite: try EntryStore(path: place.path, readers: readers, wallClock: wallClock, canonicaliser: canonicaliser)
        }
    }

    /// A backup of `store` made while it serves, as a file in `place`'s directory.
    func backup(_ store: any LedgerStore, in place: TestDatabase, name: String) throws -> String {
        switch self {
        case .sqlite:
            let file = place.directory + "/" + name
            try? FileManager.default.removeItem(atPath: file)
            try FileManager.default.moveItem(atPath: try (store as! EntryStore).consistentCopy(), toPath: file)
            return file
        }
    }

    /// Closes `store`, puts `backup` in place of its data as `entryd --restore`
    /// does, and opens it again (a new incarnation).
    func restore(_ store: any LedgerStore, at place: TestDatabase, from backup: String) throws -> any LedgerStore {
        store.close()
        switch self {
        case .sqlite:
            try DatabaseBackup.restore(from: backup, to: place.path)
            return try EntryStore(path: place.path, readers: 2)
        }
    }

    /// A new node from a copy of `store`'s data in a new place (`--as-new-node`).
    func copyAsNewNode(_ store: any LedgerStore, to place: TestDatabase) throws -> any LedgerStore {
        switch self {
        case .sqlite:
            try FileManager.default.moveItem(atPath: try (store as! EntryStore).consistentCopy(), toPath: place.path)
            return try EntryStore(path: place.path, readers: 2, copies: .newNode)
        }
    }

    /// The name in test results, e.g. `lifecycle(kind: SQLite)`.
    var testDescription: String {
        switch self {
        case .sqlite: "SQLite"
        }
    }
}
