import CSodium
import EntryModel
import Foundation
import Synchronization

/// Who a request acts for, once its session cookie or bearer token is known.
package struct WebSession: Sendable, Equatable {
    /// The session token (the cookie's value, or the bearer token): ``PasswordHash/token()``.
    package var token: String
    /// The web user's name as the users file spells it (recorded by entryd as `web:NAME`).
    package var user: String
    /// The user's credential stamp at login: a session ends when it changes.
    package var stamp: String
    /// The token a cookie-authenticated POST must repeat in `X-CSRF-Token` (``PasswordHash/token()``).
    package var csrf: String
    /// Monotonic seconds of the last request made with it.
    var lastUsed: Double
}

/// The gateway's login sessions, in memory: a token from `POST /api/v1/login`
/// is good until it is idle for `idleSeconds`, its user logs out, or the
/// gateway restarts. Thread-safe.
///
/// Tokens are looked up by their SHA-256 (libsodium's generic hash would do as
/// well; the point is that a lookup's timing depends on the digest, not on how
/// many leading characters of a guess were right), and the CSRF token is
/// compared with `sodium_memcmp`, in constant time.
package final class SessionStore: Sendable {
    /// The sessions by the SHA-256 of their token.
    private let byDigest = Mutex<[[UInt8]: WebSession]>([:])
    /// Seconds a session may stay unused (`session-idle`).
    package let idleSeconds: Double
    /// Most sessions at once; the least recently used is dropped beyond it.
    package let capacity: Int
    private let clock: @Sendable () -> Double

    /// - Parameters:
    ///   - idleSeconds: seconds a session may stay unused.
    ///   - capacity: most sessions held at once (default 100,000).
    ///   - clock: monotonic seconds (tests pass their own).
    package init(
        idleSeconds: Double, capacity: Int = 100_000,
        clock: @escaping @Sendable () -> Double = SessionStore.monotonicSeconds
    ) {
        self.idleSeconds = idleSeconds
        self.capacity = capacity
        self.clock = clock
    }

    /// A new session for `account`.
    package func open(_ account: WebUser) -> WebSession {
        let session = WebSession(
            token: PasswordHash.token(), user: account.name, stamp: account.credentialStamp,
            csrf: PasswordHash.token(), lastUsed: clock())
        let key = Secret.digest(session.token)
        byDigest.withLock { byDigest in
            if byDigest.count >= capacity, let oldest = byDigest.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
                byDigest[oldest.key] = nil
            }
            byDigest[key] = session
        }
        return session
    }

    /// The live session of `token`, marked used now; nil when unknown or idle too long (then forgotten).
    package func session(token: String) -> WebSession? {
        guard token.utf8.count == PasswordHash.tokenLength else { return nil }
        let key = Secret.digest(token)
        let now = clock()
        return byDigest.withLock { byDigest in
            guard var session = byDigest[key] else { return nil }
            if now - session.lastUsed > idleSeconds {
                byDigest[key] = nil
                return nil
            }
            session.lastUsed = now
            byDigest[key] = session
            return session
        }
    }

    /// Whether `token`'s session is live, without marking it used (a live feed asks).
    package func isOpen(token: String) -> Bool {
        let key = Secret.digest(token)
        let now = clock()
        return byDigest.withLock { byDigest in
            guard let session = byDigest[key] else { return false }
            return now - session.lastUsed <= idleSeconds
        }
    }

    /// Ends the session of `token` (logout).
    package func close(token: String) {
        let key = Secret.digest(token)
        byDigest.withLock { $0[key] = nil }
    }

    /// Sessions held now.
    package var count: Int { byDigest.withLock { $0.count } }

    /// CLOCK_MONOTONIC in seconds.
    package static func monotonicSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}

/// Digests of secrets (libsodium).
enum Secret {
    /// SHA-256 of `text` (`crypto_hash_sha256`).
    static func digest(_ text: String) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        let bytes = Array(text.utf8)
        crypto_hash_sha256(&out, bytes, UInt64(bytes.count))
        return out
    }
}

/// Login attempts per user name and per client address in a sliding minute:
/// past `limit` attempts not taken back by a success, logins for that name or
/// from that address are refused (429, `retryAfter`) without checking the
/// password, until the oldest is a minute old. Thread-safe.
package final class LoginLimiter: Sendable {
    /// Recent attempts' times by key (`u:USER`, `a:ADDRESS`), oldest first.
    private let failures = Mutex<[String: [Double]]>([:])
    /// Failures allowed per key per window (`login-attempts`).
    package let limit: Int
    /// The window in seconds (60).
    package let window: Double
    private let clock: @Sendable () -> Double

    /// - Parameters:
    ///   - limit: failures allowed per user and per address within `window`.
    ///   - window: seconds (default 60).
    ///   - clock: monotonic seconds.
    package init(
        limit: Int, window: Double = 60, clock: @escaping @Sendable () -> Double = SessionStore.monotonicSeconds
    ) {
        self.limit = limit
        self.window = window
        self.clock = clock
    }

    /// Counts a login attempt for `user` from `address` and returns nil, or,
    /// when either has made `limit` attempts within the window, counts nothing
    /// and returns the seconds to wait. An attempt counts before its password
    /// is checked, so attempts sent all at once are limited like attempts in a
    /// row; ``succeeded(user:address:)`` takes a successful one back.
    package func attempt(user: String, address: String) -> Int? {
        let now = clock()
        return failures.withLock { failures in
            var wait = 0.0
            let keys = ["u:" + user, "a:" + address]
            for key in keys {
                let recent = (failures[key] ?? []).filter { now - $0 < window }
                failures[key] = recent.isEmpty ? nil : recent
                if recent.count >= limit, let oldest = recent.first { wait = max(wait, window - (now - oldest)) }
            }
            if wait > 0 { return max(1, Int(wait.rounded(.up))) }
            for key in keys { failures[key, default: []].append(now) }
            if failures.count > 100_000 { failures = failures.filter { now - ($0.value.last ?? 0) < window } }
            return nil
        }
    }

    /// After a successful login: forgets the failures of `user`, and takes the
    /// attempt back from `address` (an office behind one address logs in often).
    package func succeeded(user: String, address: String) {
        failures.withLock { failures in
            failures["u:" + user] = nil
            if var attempts = failures["a:" + address], !attempts.isEmpty {
                attempts.removeLast()
                failures["a:" + address] = attempts.isEmpty ? nil : attempts
            }
        }
    }
}
