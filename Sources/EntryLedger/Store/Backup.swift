@preconcurrency import Glibc
import Foundation
import EntryModel

// MARK: - Taking a backup (online)

extension EntryStore {
    /// Writes a consistent copy of the whole database to a new file next to it
    /// and returns the file's path; the caller streams it and removes it
    /// (the store's ``EntryStore/consistentCopy()``).
    ///
    /// Uses `VACUUM INTO` (sqlite.org/lang_vacuum.html#vacuuminto) on a
    /// connection of its own:
    /// > The VACUUM INTO command is transactional in the sense that the
    /// > generated output database is a consistent snapshot of the original database.
    /// The snapshot is one read transaction in WAL mode, so the writer keeps
    /// committing while it is made, and it holds every change committed before
    /// the call. The copy is compact and in rollback-journal mode; it keeps the
    /// node id, the HLC, the change log and the peer checkpoints.
    ///
    /// - Returns: the path of the copy (`DATABASE.backup-XXXXXXXX`, mode 0600).
    /// - Throws: ``EntryError/backupUnsupported(database:tool:)`` on a database
    ///   server; ``SQLiteError`` (e.g. `SQLITE_FULL` when the disk is full); no
    ///   file is left behind then.
    package func consistentCopy() throws -> String {
        // The server's own tool copies a server's database (doc/hub.md).
        if let server { throw EntryError.backupUnsupported(database: server.location, tool: "pg_dump") }
        let target = path + ".backup-" + String(UUIDv7.generate().suffix(12))
        // Create it 0600 first: VACUUM INTO would use the process umask.
        let fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SystemError("open", detail: target) }
        Glibc.close(fd)
        do {
            let db = try SQLiteConnection(path: path, readOnly: false)
            try db.prepared("VACUUM INTO ?").run([.text(target)])
        } catch {
            unlink(target)
            throw error
        }
        return target
    }

    /// Removes snapshots left next to the database by a daemon that died while
    /// streaming a backup (`DATABASE.backup-*`). Called at start-up, under the
    /// database lock, when no backup of this database can be running.
    /// - Returns: the number of files removed.
    @discardableResult
    package static func removeStaleSnapshots(database path: String) -> Int {
        let directory = (path as NSString).deletingLastPathComponent
        let prefix = (path as NSString).lastPathComponent + ".backup-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory)) ?? []
        var removed = 0
        for name in names where name.hasPrefix(prefix) {
            let full = directory.isEmpty ? name : directory + "/" + name
            if unlink(full) == 0 { removed += 1 }
        }
        return removed
    }
}

// MARK: - Checking and restoring

/// Checks backup files and puts one in place of a stopped daemon's database
/// (`entryd --restore FILE`).
package enum DatabaseBackup {
    /// What a checked backup holds.
    package struct Info: Sendable, Equatable {
        /// The node id kept in the backup (peers know the restored node by it; its new incarnation tells them to re-read it).
        package var node: String
        /// `PRAGMA user_version` of the backup (its schema migration number).
        package var schemaVersion: Int
        /// Entries in the backup, deleted ones included.
        package var entries: Int
        /// Highest change-log sequence number in the backup.
        package var seq: Int64
    }

    /// Why a backup cannot be used or restored.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, in English, with what to do.
        package var message: String
        /// A failure with `message`.
        package init(_ message: String) { self.message = message }
        /// The text shown to people (English).
        package var description: String { message }
    }

    /// The database to restore over is open in another process (a running entryd): nothing was changed.
    package struct RestoreTargetInUse: Error, Sendable, Equatable, CustomStringConvertible {
        /// The database path.
        package var database: String
        /// The text shown to people (English).
        package var description: String {
            "the database '\(database)' is in use (is entryd running?); stop the daemon first"
        }
    }

    /// Checks that `path` is a sound entryd database this build can open:
    /// `PRAGMA integrity_check` answers `ok`, the schema version is between 1
    /// and this build's latest, and the node table holds an id.
    ///
    /// Opens the file read-write (a rollback-journal file needs no WAL files);
    /// it does not change it.
    /// - Parameter shownAs: the file to name in messages, when `path` is a
    ///   copy of it (``restore(from:to:)`` checks its own copy); default `path`.
    /// - Throws: ``Failure`` naming the first check that failed.
    package static func verify(path: String, shownAs: String? = nil) throws -> Info {
        let name = shownAs ?? path
        guard FileManager.default.isReadableFile(atPath: path) else { throw Failure("cannot read '\(name)'") }
        let db: SQLiteConnection
        do {
            db = try SQLiteConnection(path: path, readOnly: true)
        } catch {
            throw Failure("'\(name)' cannot be opened as a database: \(error)")
        }
        do {
            var problems: [String] = []
            try db.prepared("PRAGMA integrity_check").query { problems.append($0.text(0)) }
            guard problems == ["ok"] else {
                throw Failure("'\(name)' fails the integrity check: \(problems.prefix(3).joined(separator: "; "))")
            }
            let version = try Migrations.userVersion(db)
            guard version >= 1 else { throw Failure("'\(name)' is not an entryd database (schema version 0)") }
            guard version <= Migrations.all.count else {
                throw Failure(
                    "'\(name)' has schema version \(version), newer than this entryd (\(Migrations.all.count)); use a newer entryd"
                )
            }
            var node = ""
            try db.prepared("SELECT value FROM node WHERE key = 'id'").query { node = $0.text(0) }
            guard !node.isEmpty else { throw Failure("'\(name)' has no node id: not an entryd database") }
            var entries = 0
            try db.prepared("SELECT COUNT(*) FROM entries").query { entries = Int($0.int(0)) }
            var seq: Int64 = 0
            try db.prepared("SELECT COALESCE(MAX(seq), 0) FROM changes").query { seq = $0.int(0) }
            return Info(node: node, schemaVersion: version, entries: entries, seq: seq)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure("'\(name)' cannot be read as an entryd database: \(error)")
        }
    }

    /// Whether another process has the database at `path` open: SQLite's unix
    /// VFS holds a shared lock on the "dead man switch" byte of the WAL index
    /// (`DATABASE-shm`, offset 128) for as long as a connection uses WAL
    /// (sqlite.org/walformat.html §2.3). Also true when the database itself is
    /// locked (a rollback-journal writer).
    static func isInUse(database path: String) -> Bool {
        /// True when another process holds an fcntl(2) lock overlapping `length`
        /// bytes at `offset` of `file` (F_GETLK); false when the file cannot be opened.
        func locked(_ file: String, offset: Int, length: Int) -> Bool {
            let fd = open(file, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var lock = flock()
            lock.l_type = Int16(F_WRLCK)
            lock.l_whence = Int16(SEEK_SET)
            lock.l_start = off_t(offset)
            lock.l_len = off_t(length)
            guard fcntl(fd, F_GETLK, &lock) == 0 else { return false }
            return lock.l_type != Int16(F_UNLCK)
        }
        // A running entryd holds its DatabaseLock.
        if DatabaseLock.isHeld(path: path) { return true }
        // 120…127: the WAL locks; 128: the DMS byte (unix VFS, os_unix.c UNIX_SHM_DMS).
        if locked(path + "-shm", offset: 120, length: 9) { return true }
        // PENDING_BYTE (0x40000000) and the shared range after it (os_unix.c).
        return locked(path, offset: 0x4000_0000, length: 512 + 2)
    }

    /// Puts the backup at `backup` in place of the database at `database`,
    /// atomically, for a daemon that is stopped.
    ///
    /// Steps: refuse if the database is in use (``isInUse(database:)``); copy
    /// the backup to a temporary file next to the database and `fsync` it;
    /// ``verify(path:)`` the copy; keep the old database (with its WAL merged
    /// in) as `DATABASE.before-restore`, replacing an earlier one; remove the
    /// old `-wal` and `-shm` files (a WAL left beside a different database would
    /// corrupt it); `rename(2)` the copy into place and `fsync` the directory.
    /// The node id is the backup's; the copy records that its next start begins a
    /// new incarnation (doc/design.md "Incarnations"), so peers read it again from
    /// its end and send back what it lost. A backup of another node than the
    /// database it replaces (or restored where there was none) keeps its old
    /// home, so that start refuses until the operator says it is a copy or a move.
    ///
    /// - Returns: what the restored database holds.
    /// - Throws: ``RestoreTargetInUse`` when the database is open elsewhere, ``Failure`` when
    ///   the backup fails a check (nothing is changed in either case), or
    ///   ``SystemError`` for a file system error.
    @discardableResult
    package static func restore(from backup: String, to database: String) throws -> Info {
        if isInUse(database: database) { throw RestoreTargetInUse(database: database) }
        let directory =
            (database as NSString).deletingLastPathComponent.isEmpty
            ? "." : (database as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let temporary = database + ".restore-" + String(UUIDv7.generate().suffix(12))
        defer { for suffix in ["", "-journal", "-wal", "-shm"] { unlink(temporary + suffix) } }
        try copyDurably(from: backup, to: temporary)
        let info = try verify(path: temporary, shownAs: backup)
        // The restored database goes back in time: its next start begins a new
        // incarnation (doc/design.md "Incarnations"). Here is its home only when it
        // replaces the same node; a backup of another node (or put where no
        // database was) keeps its old home, so that start refuses until the
        // operator says --as-new-node or --moved: two live nodes never share an id.
        let sameNode = storedNode(at: database) == info.node
        do {
            let restored = try SQLiteConnection(path: temporary)
            let put = try restored.prepared(
                "INSERT INTO node (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
            try put.run([
                .text("incarnation_pending"),
                .text("restored from the backup '\(backup)' (change log to seq \(info.seq))"),
            ])
            if sameNode { try put.run([.text("home"), .text(NodeMarker.home(of: database))]) }
            restored.checkpoint("TRUNCATE")
            try? restored.execute("PRAGMA journal_mode=DELETE")
        }
        if FileManager.default.fileExists(atPath: database) {
            // Merge the old WAL into the old file, then keep the file aside.
            if let old = try? SQLiteConnection(path: database) {
                old.checkpoint("TRUNCATE")
                try? old.execute("PRAGMA journal_mode=DELETE")
            }
            let kept = database + ".before-restore"
            unlink(kept)
            guard rename(database, kept) == 0 else { throw SystemError("rename", detail: database) }
        }
        for suffix in ["-wal", "-shm", "-journal"] { unlink(database + suffix) }
        guard rename(temporary, database) == 0 else { throw SystemError("rename", detail: temporary) }
        let dirFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 {
            fsync(dirFD)
            close(dirFD)
        }
        return info
    }

    /// The node id of the database at `path`, `nil` when there is none or it cannot be read.
    package static func storedNode(at path: String) -> String? {
        guard FileManager.default.fileExists(atPath: path), let db = try? SQLiteConnection(path: path, readOnly: true)
        else { return nil }
        var node: String?
        try? db.prepared("SELECT value FROM node WHERE key = 'id'").query { node = $0.text(0) }
        return node
    }

    /// Writes all of `bytes` to the file `fd` (`write(2)`, retrying short writes).
    /// - Throws: ``SystemError`` (`write`), e.g. `ENOSPC`.
    static func writeFully(_ fd: Int32, _ bytes: ArraySlice<UInt8>, path: String) throws(SystemError) {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError("write", detail: path)
            }
            offset += n
        }
    }

    /// Copies `source` to a new file `target` (mode 0600) and `fsync`s it.
    static func copyDurably(from source: String, to target: String) throws {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else {
            throw Failure("cannot open the backup '\(source)': \(String(cString: strerror(errno)))")
        }
        defer { close(input) }
        let output = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw SystemError("open", detail: target) }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError("read", detail: source)
            }
            if n == 0 { break }
            try writeFully(output, buffer[0..<n], path: target)
        }
        guard fsync(output) == 0 else { throw SystemError("fsync", detail: target) }
    }
}
