import CSodium

/// Password hashes, session tokens and constant-time comparison for the web
/// users (doc/design.md "The HTTP door: entryd-web"), through libsodium
/// (Debian's libsodium-dev, 1.0.18).
///
/// Hashes are Argon2id strings in libsodium's `crypto_pwhash_str` form
/// (`$argon2id$v=19$m=65536,t=2,p=1$SALT$HASH`, at most 127 bytes), made with
/// `OPSLIMIT_INTERACTIVE` (2 passes) and `MEMLIMIT_INTERACTIVE` (64 MiB). The
/// interactive limits are chosen on purpose, not the moderate or sensitive
/// ones: entryd-web hashes on every login, rate-limits logins (429
/// `io.entryd.web.TooManyAttempts`) rather than relying on the hash's cost
/// alone, and must survive many logins at once; 64 MiB each keeps a burst of
/// them within memory, where the sensitive limit (1 GiB) would not. A stored
/// hash keeps its own parameters, so hashes made with other limits still verify.
package enum PasswordHash {
    /// The shortest password accepted, in UTF-8 bytes.
    package static let minimumBytes = 8
    /// The longest password accepted, in UTF-8 bytes (bounds the work of one login).
    package static let maximumBytes = 1024

    /// Whether libsodium initialised (`sodium_init` is called once, on first use).
    private static let ready: Bool = sodium_init() >= 0

    /// Hashes `password` with Argon2id at the interactive limits (see the type).
    ///
    /// - Returns: the `$argon2id$…` string, ASCII, at most 127 bytes.
    /// - Throws: ``PasswordHashError/outOfMemory`` when the 64 MiB cannot be
    ///   had; ``PasswordHashError/unavailable`` when libsodium did not initialise.
    package static func hash(_ password: String) throws(PasswordHashError) -> String {
        guard ready else { throw .unavailable }
        var out = [CChar](repeating: 0, count: Int(crypto_pwhash_strbytes()))
        // With its NUL, so that even an empty password has an address; the NUL is not hashed.
        let bytes = Array(password.utf8CString)
        let status = bytes.withUnsafeBufferPointer { c in
            crypto_pwhash_str_alg(
                &out, c.baseAddress!, UInt64(c.count - 1),
                UInt64(crypto_pwhash_opslimit_interactive()), crypto_pwhash_memlimit_interactive(),
                crypto_pwhash_alg_argon2id13())
        }
        guard status == 0 else { throw .outOfMemory }
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `password` matches `hash` (a `crypto_pwhash_str` string).
    /// A malformed hash matches nothing.
    package static func verify(_ password: String, against hash: String) -> Bool {
        guard ready, hash.utf8.count < Int(crypto_pwhash_strbytes()) else { return false }
        let bytes = Array(password.utf8CString)
        return bytes.withUnsafeBufferPointer { c in
            crypto_pwhash_str_verify(hash, c.baseAddress!, UInt64(c.count - 1)) == 0
        }
    }

    /// A hash of a random password nobody knows, made once: verified in place of
    /// a user's hash when the name is unknown, so that an unknown name takes as
    /// long as a wrong password and the time of a login does not tell which names exist.
    static let dummy: String = (try? hash(token())) ?? ""

    /// Verifies `password` against the dummy hash (always false), taking the time of a real check.
    static func burnVerify(_ password: String) {
        _ = verify(password, against: dummy)
    }

    /// The length of every ``token()``: 32 bytes in base64url without padding.
    package static let tokenLength = 43

    /// A fresh random token for a session or a CSRF check: 32 bytes from
    /// `randombytes_buf` (the kernel's `getrandom`), as base64url without
    /// padding (RFC 4648 §5): 43 characters of `A–Z a–z 0–9 - _`.
    package static func token() -> String {
        _ = ready
        var bytes = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, $0.count) }
        return base64url(bytes)
    }

    /// Whether `a` and `b` are equal, in time that depends on their length only,
    /// never on where they differ (`sodium_memcmp`): for comparing a presented
    /// token or CSRF value with the stored one. Different lengths are unequal
    /// (the length of a token is no secret).
    package static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        _ = ready
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        if x.isEmpty { return true }
        return x.withUnsafeBytes { p in
            y.withUnsafeBytes { q in sodium_memcmp(p.baseAddress, q.baseAddress, x.count) == 0 }
        }
    }

    /// `bytes` in base64url without padding.
    static func base64url(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var k = 0
        while k < bytes.count {
            let b0 = UInt32(bytes[k])
            let b1 = k + 1 < bytes.count ? UInt32(bytes[k + 1]) : 0
            let b2 = k + 2 < bytes.count ? UInt32(bytes[k + 2]) : 0
            let n = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            if k + 1 < bytes.count { out.append(alphabet[Int(n >> 6 & 63)]) }
            if k + 2 < bytes.count { out.append(alphabet[Int(n & 63)]) }
            k += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Why a password could not be hashed.
package enum PasswordHashError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libsodium did not initialise (`sodium_init` failed: no source of randomness).
    case unavailable
    /// Argon2id could not have its memory (64 MiB).
    case outOfMemory

    /// The English text (logs).
    package var description: String {
        switch self {
        case .unavailable: return "libsodium did not initialise (no source of randomness)"
        case .outOfMemory: return "Argon2id could not allocate its 64 MiB"
        }
    }
}
