import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryHub

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
    /// ``EntryStore`` on PostgreSQL (``PostgresStoreFactory``): a database of its own
    /// on the test server (``TestPostgres``), the instance's marker in the place's directory.
    case postgres

    /// Opens (creating it when new) the store of `place`.
    /// - Parameters:
    ///   - readers: concurrent readers the store may keep (SQLite: read-only connections).
    ///   - wallClock: milliseconds since the epoch, for HLC stamps.
    ///   - canonicaliser: the rules that re-spell arriving values (``Canonicaliser``).
    /// - Throws: what opening the store throws.
    func open(
        _ place: TestDatabase, readers: Int = 4,
        wallClock: @escaping @Sendable () -> UInt64 = HybridClock.systemMilliseconds,
        canonicaliser: Canonicaliser? = nil
    ) throws -> EntryStore {
        switch self {
        case .sqlite:
            try EntryStore(path: place.path, readers: readers, wallClock: wallClock, canonicaliser: canonicaliser)
        case .postgres:
            try PostgresStoreFactory.open(
                uri: try place.postgres().databaseURI, markerDirectory: place.directory, instance: "test",
                readers: readers, wallClock: wallClock, canonicaliser: canonicaliser)
        }
    }

    /// A backup of `store` made while it serves, as a file in `place`'s directory.
    func backup(_ store: EntryStore, in place: TestDatabase, name: String) throws -> String {
        switch self {
        case .sqlite:
            let file = place.directory + "/" + name
            try? FileManager.default.removeItem(atPath: file)
            try FileManager.default.moveItem(atPath: try (store as! EntryStore).consistentCopy(), toPath: file)
            return file
        case .postgres:
            // Backup refuses on a server (BackupUnsupported): the operator's tool makes the copy.
            #expect(throws: EntryError.backupUnsupported(database: store.location, tool: "pg_dump")) {
                _ = try (store as! EntryStore).consistentCopy()
            }
            let file = place.directory + "/" + name
            try place.postgres().client("pg_dump", ["--format=custom", "--file=" + file])
            return file
        }
    }

    /// Closes `store`, puts `backup` in place of its data as `entryd --restore`
    /// does, and opens it again (a new incarnation).
    func restore(_ store: EntryStore, at place: TestDatabase, from backup: String) throws -> EntryStore {
        store.close()
        switch self {
        case .sqlite:
            try DatabaseBackup.restore(from: backup, to: place.path)
            return try EntryStore(path: place.path, readers: 2)
        case .postgres:
            // pg_restore into the emptied database, as an operator puts a dump back.
            let database = try place.postgres()
            try database.connect().execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
            try database.client("pg_restore", ["--no-owner", "--exit-on-error", backup])
            return try open(place, readers: 2)
        }
    }

    /// A new node from a copy of `store`'s data in a new place (`--as-new-node`).
    func copyAsNewNode(_ store: EntryStore, from source: TestDatabase, to place: TestDatabase) throws -> EntryStore {
        switch self {
        case .sqlite:
            try FileManager.default.moveItem(atPath: try (store as! EntryStore).consistentCopy(), toPath: place.path)
            return try EntryStore(path: place.path, readers: 2, copies: .newNode)
        case .postgres:
            let file = place.directory + "/copy.dump"
            try source.postgres().client("pg_dump", ["--format=custom", "--file=" + file])
            try place.postgres().client("pg_restore", ["--no-owner", "--exit-on-error", file])
            return try PostgresStoreFactory.open(
                uri: try place.postgres().databaseURI, markerDirectory: place.directory, instance: "test",
                readers: 2, copies: .newNode)
        }
    }

    /// The name in test results, e.g. `lifecycle(kind: SQLite)`.
    var testDescription: String {
        switch self {
        case .sqlite: "SQLite"
        case .postgres: "PostgreSQL"
        }
    }
}
