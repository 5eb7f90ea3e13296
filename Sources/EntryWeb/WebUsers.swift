@preconcurrency import Glibc
import EntryModel
import EntryProtocol

/// One web user: a name, the role entryd-web lets it act with, and its password hash.
///
/// The description is `NAME (ROLE)`: the hash is never printed.
package struct WebUser: Sendable, Equatable, CustomStringConvertible {
    /// The login name (`ActorName.isValid(_:)` (EntryProtocol)), recorded by entryd as the actor `web:NAME`.
    package let name: String
    /// What the user may call: `read`, `write` or `admin` (never `none`).
    package let role: Role
    /// The Argon2id hash (``PasswordHash``), `$argon2id$…`.
    let passwordHash: String

    /// A user whose password is `password`, hashed now (about 0.1 s and 64 MiB: ``PasswordHash``).
    /// - Throws: ``PasswordHashError``.
    package init(name: String, role: Role, password: String) throws(PasswordHashError) {
        self.init(name: name, role: role, passwordHash: try PasswordHash.hash(password))
    }

    init(name: String, role: Role, passwordHash: String) {
        self.name = name
        self.role = role
        self.passwordHash = passwordHash
    }

    /// `NAME (ROLE)`.
    package var description: String { "\(name) (\(role.name))" }

    /// Changes whenever the user's password changes (the hash's own salt
    /// makes every `add --replace` new): a session remembers it, so a new
    /// password, or a user removed and added again, ends the old sessions.
    package var credentialStamp: String { passwordHash }
}

/// Where a users file was when it was read: device, inode, size and
/// modification time (ns). A changed stamp means the file was replaced or
/// written since, and entryd-web reads it again.
package struct FileStamp: Sendable, Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let seconds: Int
    let nanoseconds: Int

    /// The stamp of the file at `path` (following symbolic links), or nil when it cannot be stat'ed.
    package init?(path: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        size = Int64(st.st_size)
        seconds = st.st_mtim.tv_sec
        nanoseconds = st.st_mtim.tv_nsec
    }
}

/// The web users file of entryd-web (doc/design.md "The HTTP door: entryd-web"),
/// written by `entryctl web-user`, read by entryd-web.
///
/// Format: UTF-8, one user per line, `NAME:ROLE:HASH`:
/// - NAME: 1–64 Unicode scalars, each a letter (general category L*), a decimal
///   digit (Nd) or one of `. _ - @` (`ActorName.isValid(_:)`): the rule for the actor a
///   gateway names to entryd (recorded as `web:NAME`), so every user name is one
///   entryd accepts;
/// - ROLE: `submit`, `read`, `write` or `admin` (EntryModel's ``Role``);
/// - HASH: the Argon2id string of ``PasswordHash`` (`$argon2id$…`, under 128 bytes).
///
/// Lines whose first non-blank character is `#` and blank lines are kept as
/// they are when the file is rewritten. A name appears once.
package struct WebUsers: Sendable, Equatable {
    /// Where entryctl and entryd-web look without `--users` or `$ENTRYD_WEB_USERS`: beside entryd.conf.
    package static let defaultPath = "/etc/entryd/web-users"

    /// The file at `option` (a `--users` value), else `$ENTRYD_WEB_USERS` when
    /// set and not empty, else ``defaultPath``.
    package static func path(option: String?, environment: [String: String]) -> String {
        if let option { return option }
        if let path = environment["ENTRYD_WEB_USERS"], !path.isEmpty { return path }
        return defaultPath
    }

    /// A line of the file: a comment or blank line kept as it is, or a user.
    enum Line: Sendable, Equatable {
        case text(String)
        case user(WebUser)
    }

    /// The lines, in file order.
    private(set) var lines: [Line]

    /// The users, in file order.
    package var users: [WebUser] {
        lines.compactMap { if case .user(let u) = $0 { return u } else { return nil } }
    }

    /// An empty file.
    package init() { lines = [] }

    /// Reads `text` as a users file.
    /// - Parameter path: named in errors.
    /// - Throws: ``WebUsersError/malformed(path:line:problem:)`` for the first bad line.
    package init(parsing text: String, path: String) throws(WebUsersError) {
        lines = []
        var seen: [String: Int] = [:]
        var number = 0
        // By bytes: as Characters, "\r\n" is one grapheme and would not split at "\n".
        var rows = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if rows.last?.isEmpty == true { rows.removeLast() }
        for raw in rows {
            number += 1
            var line = Substring(String(decoding: raw, as: UTF8.self))
            while let last = line.last, last == "\r" || last == " " || last == "\t" { line.removeLast() }
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty || trimmed.hasPrefix("#") {
                lines.append(.text(String(line)))
                continue
            }
            func bad(_ problem: WebUsersError.LineProblem) -> WebUsersError {
                .malformed(path: path, line: number, problem: problem)
            }
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { throw bad(.notThreeParts) }
            let name = String(parts[0])
            let roleText = String(parts[1])
            let hash = String(parts[2])
            guard ActorName.isValid(name) else { throw bad(.badName(name)) }
            guard let role = Role(name: roleText), role != .none else { throw bad(.badRole(roleText)) }
            guard Self.isValidHash(hash) else { throw bad(.badHash) }
            if let first = seen[name] { throw bad(.duplicate(name: name, firstLine: first)) }
            seen[name] = number
            lines.append(.user(WebUser(name: name, role: role, passwordHash: hash)))
        }
    }

    /// Whether `hash` looks like a `crypto_pwhash_str` Argon2id string: the
    /// `$argon2id$` prefix, printable ASCII without blanks or colons, under 128 bytes.
    static func isValidHash(_ hash: String) -> Bool {
        hash.hasPrefix("$argon2id$") && hash.utf8.count < 128
            && hash.utf8.allSatisfy { (0x21...0x7E).contains($0) && $0 != UInt8(ascii: ":") }
    }

    /// Reads the users file at `path`.
    /// - Throws: ``WebUsersError/missing(path:)`` when there is no such file,
    ///   ``WebUsersError/unreadable(path:errno:)``, ``WebUsersError/malformed(path:line:problem:)``.
    package static func load(path: String) throws(WebUsersError) -> WebUsers {
        // O_NONBLOCK: a FIFO put in its place must not hang the reader.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            let e = errno
            throw e == ENOENT ? .missing(path: path) : .unreadable(path: path, errno: e)
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { throw .unreadable(path: path, errno: EINVAL) }
        return try WebUsers(parsing: try readAll(fd, path: path), path: path)
    }

    /// The whole file open on `fd`, as UTF-8 (invalid bytes repaired; such a line then fails to parse).
    private static func readAll(_ fd: Int32, path: String) throws(WebUsersError) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, errno: errno)
            }
            if n == 0 { break }
            bytes += buffer[..<n]
            if bytes.count > 16 << 20 { throw .unreadable(path: path, errno: EFBIG) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The user named `name` (exact, case-sensitive), or nil.
    package func user(named name: String) -> WebUser? {
        // Scalar by scalar: Swift's == holds for canonically equivalent strings
        // (K and the Kelvin sign, a precomposed é and e + U+0301), and a web
        // user must never log in, or be recorded, under another spelling.
        users.first { $0.name.unicodeScalars.elementsEqual(name.unicodeScalars) }
    }

    /// The user named `name` if `password` is theirs, else nil.
    ///
    /// An unknown name is checked against a dummy hash, so it takes as long as
    /// a wrong password (about 0.1 s): the answer's time does not tell which
    /// names exist. The hash comparison is libsodium's, in constant time.
    package func verify(name: String, password: String) -> WebUser? {
        guard let user = user(named: name) else {
            PasswordHash.burnVerify(password)
            return nil
        }
        return PasswordHash.verify(password, against: user.passwordHash) ? user : nil
    }

    /// Adds `user` at the end, or with `replace` puts it in the place of the user of the same name.
    /// - Throws: ``WebUsersError/invalidName(_:)`` for a name against the rule
    ///   (it would make the file unreadable); ``WebUsersError/exists(name:)``
    ///   when the name is taken and `replace` is false.
    package mutating func add(_ user: WebUser, replace: Bool) throws(WebUsersError) {
        guard ActorName.isValid(user.name) else { throw .invalidName(user.name) }
        if let k = lines.firstIndex(where: {
            if case .user(let u) = $0 { return u.name == user.name } else { return false }
        }) {
            guard replace else { throw .exists(name: user.name) }
            lines[k] = .user(user)
        } else {
            lines.append(.user(user))
        }
    }

    /// Removes the user named `name`.
    /// - Throws: ``WebUsersError/unknownUser(name:)`` when there is none.
    package mutating func remove(named name: String) throws(WebUsersError) {
        guard
            let k = lines.firstIndex(where: {
                if case .user(let u) = $0 { return u.name == name } else { return false }
            })
        else {
            throw .unknownUser(name: name)
        }
        lines.remove(at: k)
    }

    /// The file's text: each line with a newline; a new file starts with a comment naming the format.
    package var text: String {
        var out =
            lines.isEmpty || !lines.contains(where: { if case .text = $0 { return true } else { return false } })
            ? "# entryd-web users: NAME:ROLE:HASH (ROLE submit, read, write or admin; HASH Argon2id). Edit with entryctl web-user.\n"
            : ""
        for line in lines {
            switch line {
            case .text(let t): out += t + "\n"
            case .user(let u): out += "\(u.name):\(u.role.name):\(u.passwordHash)\n"
            }
        }
        return out
    }

    /// Changes the users file at `path` under an exclusive lock, so that two
    /// changes at once (two `entryctl web-user` runs) never lose each other's.
    ///
    /// Takes `flock(LOCK_EX)` on `PATH.lock` (created beside the file, mode
    /// 0640, and left there: the file itself is replaced, so it cannot carry the
    /// lock), reads the file again (a missing file is an empty one when `create`
    /// is true), calls `change`, and writes the result atomically: a temporary
    /// file in the same directory, `fsync`, `rename` over the file, `fsync` of
    /// the directory. The new file has mode 0640 and, as far as the caller may,
    /// the old file's owner and group (entryd-web's group must still read it).
    /// A malformed file is never rewritten: its error is thrown before `change` runs.
    ///
    /// - Throws: ``WebUsersError`` (`.missing` when `create` is false and there
    ///   is no file; `.cannotWrite` for the lock, temporary file, write, fsync or
    ///   rename), or what `change` throws (then nothing is written).
    /// - Returns: the users as written.
    @discardableResult
    package static func update(path: String, create: Bool, _ change: (inout WebUsers) throws -> Void) throws -> WebUsers
    {
        let lockPath = path + ".lock"
        let lockFD = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o640)
        guard lockFD >= 0 else { throw WebUsersError.cannotWrite(path: lockPath, call: "open", errno: errno) }
        defer { close(lockFD) }
        while flock(lockFD, LOCK_EX) != 0 {
            guard errno == EINTR else { throw WebUsersError.cannotWrite(path: lockPath, call: "flock", errno: errno) }
        }
        var users: WebUsers
        var old: stat?
        do {
            users = try load(path: path)
            var st = stat()
            if stat(path, &st) == 0 { old = st }
        } catch .missing(let p) {
            guard create else { throw WebUsersError.missing(path: p) }
            users = WebUsers()
        }
        try change(&users)
        try write(users.text, to: path, like: old)
        return users
    }

    /// Writes `text` to `path` atomically (see ``update(path:create:_:)``).
    private static func write(_ text: String, to path: String, like old: stat?) throws(WebUsersError) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw .cannotWrite(path: temporary, call: "open", errno: errno) }
        var done = false
        defer { if !done { unlink(temporary) } }
        func fail(_ call: String) -> WebUsersError {
            let e = errno
            close(fd)
            return .cannotWrite(path: temporary, call: call, errno: e)
        }
        // The umask may have taken bits away; the file is 0640 whatever it is.
        guard fchmod(fd, 0o640) == 0 else { throw fail("fchmod") }
        if let old { _ = fchown(fd, old.st_uid, old.st_gid) == 0 || fchown(fd, getuid(), old.st_gid) == 0 }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw fail("write")
            }
            offset += n
        }
        guard fsync(fd) == 0 else { throw fail("fsync") }
        guard close(fd) == 0 else { throw .cannotWrite(path: temporary, call: "close", errno: errno) }
        guard rename(temporary, path) == 0 else { throw .cannotWrite(path: path, call: "rename", errno: errno) }
        done = true
        let dirFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 {
            _ = fsync(dirFD)
            close(dirFD)
        }
    }
}

/// What went wrong with a users file or a change to it. The description is
/// one English sentence naming the file (and line) and what to do; hashes are
/// never in it. entryctl prints its own zh and en words for each case.
package enum WebUsersError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with a line.
    package enum LineProblem: Sendable, Equatable {
        /// The line is not `NAME:ROLE:HASH`.
        case notThreeParts
        /// The name breaks the rule of `ActorName.isValid(_:)` (EntryProtocol).
        case badName(String)
        /// The role is not `read`, `write` or `admin`.
        case badRole(String)
        /// The hash is not an Argon2id string (its text is not given).
        case badHash
        /// The name was already on line `firstLine`.
        case duplicate(name: String, firstLine: Int)
    }

    /// There is no file at `path` (exit 66 in entryctl).
    case missing(path: String)
    /// The file could not be read (`errno`).
    case unreadable(path: String, errno: Int32)
    /// Line `line` (from 1) is wrong; the file is left as it is.
    case malformed(path: String, line: Int, problem: LineProblem)
    /// A user of that name exists (entryctl: give `--replace` to change it).
    case exists(name: String)
    /// No user has that name.
    case unknownUser(name: String)
    /// The name breaks the rule of `ActorName.isValid(_:)`.
    case invalidName(String)
    /// `call` failed on `path` with `errno` while writing; the old file is unchanged (exit 73 in entryctl).
    case cannotWrite(path: String, call: String, errno: Int32)

    /// One English sentence.
    package var description: String {
        switch self {
        case .missing(let path):
            return "no users file '\(path)': add a user first (entryctl web-user add NAME --role ROLE --users \(path))"
        case .unreadable(let path, let e):
            return "cannot read the users file '\(path)': \(String(cString: strerror(e)))"
        case .malformed(let path, let line, let problem):
            let what: String
            switch problem {
            case .notThreeParts: what = "not NAME:ROLE:HASH"
            case .badName(let n): what = "the name '\(n)' is not 1 to 64 letters, digits, '.', '_', '-' or '@'"
            case .badRole(let r): what = "the role '\(r)' is not submit, read, write or admin"
            case .badHash: what = "the hash is not an Argon2id hash ($argon2id$...)"
            case .duplicate(let n, let first): what = "the name '\(n)' is already on line \(first)"
            }
            return "\(path):\(line): \(what); fix or remove the line (the file was not changed)"
        case .exists(let name): return "the web user '\(name)' exists: give --replace to set a new password and role"
        case .unknownUser(let name): return "no web user '\(name)'"
        case .invalidName(let name):
            return "the user name '\(name)' is not 1 to 64 letters, digits, '.', '_', '-' or '@'"
        case .cannotWrite(let path, let call, let e):
            return "cannot write '\(path)' (\(call)): \(String(cString: strerror(e))); the users file was not changed"
        }
    }
}
