import EntryModel
import Foundation

/// The users file as entryd-web sees it: read at start, read again when its
/// ``FileStamp`` changes (checked at most once a second, and on SIGHUP), so
/// `entryctl web-user add|remove` takes effect without a restart: a removed
/// user's sessions (and live feeds) end at their next request, a new password
/// ends the old sessions, a changed role applies at once.
/// Thread-safe.
public final class WebUserFile: WebUserStore, @unchecked Sendable {
    /// The file's path.
    public let path: String
    private let lock = NSLock()
    private var users = WebUsers()
    private var stamp: FileStamp?
    private var checkedAt = -Double.infinity
    private let log: Log
    private let clock: @Sendable () -> Double

    /// Reads `path`. A missing file means no users yet (every login fails
    /// until `entryctl web-user add` creates it).
    /// - Throws: ``WebUsersError`` for a file that cannot be read or parsed.
    public init(path: String, log: Log, clock: @escaping @Sendable () -> Double = SessionStore.monotonicSeconds) throws {
        self.path = path
        self.log = log
        self.clock = clock
        do {
            stamp = FileStamp(path: path)
            users = try WebUsers.load(path: path)
        } catch .missing {
            log.warning("no users file at \(path) yet: add users with `entryctl web-user add NAME --role ROLE --users \(path)`")
        }
        checkedAt = clock()
    }

    /// Reads the file again if it changed; a file that no longer parses keeps
    /// the users read before (and is logged), a removed file means no users.
    public func reload() {
        lock.lock()
        defer { lock.unlock() }
        checkedAt = clock()
        let now = FileStamp(path: path)
        guard now != stamp else { return }
        do {
            users = try WebUsers.load(path: path)
            stamp = now
            log.notice("read \(users.users.count) web users from \(path)")
        } catch .missing {
            users = WebUsers()
            stamp = nil
            log.warning("the users file \(path) is gone: no web user can log in")
        } catch {
            log.error("\(error); keeping the web users read before")
        }
    }

    private func current() -> WebUsers {
        if clock() - checkedAt >= 1 { reload() }
        lock.lock()
        defer { lock.unlock() }
        return users
    }

    /// See ``WebUserStore/verify(name:password:)``.
    public func verify(name: String, password: String) -> WebUser? {
        current().verify(name: name, password: password)
    }

    /// See ``WebUserStore/account(named:)``.
    public func account(named name: String) -> WebUser? {
        current().user(named: name)
    }
}
