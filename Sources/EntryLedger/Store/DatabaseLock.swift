@preconcurrency import Glibc
import EntryModel

/// One daemon per database: an exclusive flock(2) on the database file,
/// held for the daemon's lifetime and released by the kernel when it exits,
/// however it exits.
///
/// flock locks are independent of the POSIX record locks SQLite's unix VFS
/// uses on the same file (flock(2), "NOTES"), so this never interferes with
/// SQLite's own locking; it only stops a second entryd (or `--restore`) from
/// using a database another entryd is serving.
package final class DatabaseLock: Sendable {
    private let fd: Int32

    /// Creates the database file if missing (an empty file is an empty
    /// SQLite database) and locks it.
    /// - Throws: ``DatabaseInUse`` when another process holds the lock; ``SystemError``
    ///   when the file cannot be opened.
    package init(path: String) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SystemError("open", detail: path) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let e = errno
            close(fd)
            if e == EWOULDBLOCK { throw DatabaseInUse(path: path) }
            throw SystemError("flock", errno: e, detail: path)
        }
        self.fd = fd
    }

    /// True when another process holds the lock on `path` (a missing file is not held).
    static func isHeld(path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    deinit { close(fd) }
}

/// The database is held by another process: its ``DatabaseLock`` is taken.
package struct DatabaseInUse: Error, CustomStringConvertible {
    /// The database file that is locked, as given to ``DatabaseLock/init(path:)``.
    package let path: String
    /// One line naming the path and what to do (stop the other entryd or choose another `--db`).
    package var description: String {
        "the database '\(path)' is in use by another entryd; stop it first or choose another --db"
    }
}
