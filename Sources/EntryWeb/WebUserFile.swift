import EntryModel
import Foundation
import Synchronization

/// The users file as entryd-web sees it: read at start, read again when its
/// ``FileStamp`` changes (checked at most once a second, and on SIGHUP), so
/// `entryctl web-user add|remove` takes effect without a restart: a removed
/// user's sessions (and live feeds) end at their next request, a new password
/// ends the old sessions, a changed role applies at once.
/// Thread-safe.
package final class WebUserFile: WebUserStore, Sendable {
    /// The file's path.
    package let path: String
    /// The users read last, the file's stamp then, and when it was last checked.
    private struct State {
        var users = WebUsers()
        var stamp: FileStamp?
        var checkedAt = -Double.infinity
    }
    private let state: Mutex<State>
    private let log: Log
    private let clock: @Sendable () -> Double

    /// Reads `path`. A missing file means no users yet (every login fails
    /// until `entryctl web-user add` creates it).
    /// - Throws: ``WebUsersError`` for a file that cannot be read or parsed.
    package init(path: String, log: Log, clock: @escaping @Sendable () -> Double = SessionStore.monotonicSeconds) throws
    {
        self.path = path
        self.log = log
        self.clock = clock
        var initial = State()
        do {
            initial.stamp = FileStamp(path: path)
            initial.users = try WebUsers.load(path: path)
        } catch .missing {
            log.warning(
                "no users file at \(path) yet: add users with `entryctl web-user add NAME --role ROLE --users \(path)`")
        }
        initial.checkedAt = clock()
        state = Mutex(initial)
    }

    /// Reads the file again if it changed; a file that no longer parses keeps
    /// the users read before (and is logged), a removed file means no users.
    package func reload() {
        state.withLock { reload(&$0) }
    }

    /// ``reload()`` with the lock held.
    private func reload(_ state: inout State) {
        state.checkedAt = clock()
        let now = FileStamp(path: path)
        guard now != state.stamp else { return }
        do {
            state.users = try WebUsers.load(path: path)
            state.stamp = now
            log.notice("read \(state.users.users.count) web users from \(path)")
        } catch .missing {
            state.users = WebUsers()
            state.stamp = nil
            log.warning("the users file \(path) is gone: no web user can log in")
        } catch {
            log.error("\(error); keeping the web users read before")
        }
    }

    /// The users, read again first when the file was last checked a second ago or more.
    private func current() -> WebUsers {
        state.withLock { state in
            if clock() - state.checkedAt >= 1 { reload(&state) }
            return state.users
        }
    }

    /// See ``WebUserStore/verify(name:password:)``.
    package func verify(name: String, password: String) -> WebUser? {
        current().verify(name: name, password: password)
    }

    /// See ``WebUserStore/account(named:)``.
    package func account(named name: String) -> WebUser? {
        current().user(named: name)
    }

    /// See ``WebUserStore/freshAccount(named:)``: the file's stamp is checked
    /// now (one `stat`), not at most once a second.
    package func freshAccount(named name: String) -> WebUser? {
        state.withLock { state in
            reload(&state)
            return state.users.user(named: name)
        }
    }
}
