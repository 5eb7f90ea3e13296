@preconcurrency import Glibc
import EntryModel
import EntryProtocol

/// A socket path a client may try, and where the path came from.
package struct SocketCandidate: Sendable, Equatable, CustomStringConvertible {
    /// The path as it will be connected to (may be relative: `./entryd.sock`).
    package var path: String
    /// Where it came from, for messages: `--socket`, `$ENTRYD_SOCKET`, …
    package var origin: String

    /// A candidate `path` found through `origin`.
    package init(path: String, origin: String) {
        self.path = path
        self.origin = origin
    }

    /// `PATH (ORIGIN)`.
    package var description: String { "\(path) (\(origin))" }

    /// The origin in `locale`: `当前目录` for the current directory; the
    /// others are option, variable and unit names, the same in both.
    package func origin(in locale: EntryLocale) -> String {
        locale == .zh && origin == "current directory" ? "当前目录" : origin
    }
}

/// Finds the socket of a running entryd, in the order doc/design.md ("Running") gives:
///
/// 1. `--socket PATH`, when given — then it is the only candidate: talking to
///    another daemon than the one named would be worse than failing;
/// 2. `$ENTRYD_SOCKET`;
/// 3. `/run/entryd/entryd.sock` (systemd's `entryd.socket`);
/// 4. `$XDG_RUNTIME_DIR/entryd.sock`;
/// 5. `./entryd.sock`.
///
/// The first candidate that exists is used. Unset or empty variables are
/// skipped, as is a relative `$XDG_RUNTIME_DIR` (the XDG spec requires it to be
/// absolute). The environment and the file check are injected, so the order can
/// be tested without touching the file system.
package struct SocketLocator {
    /// The socket systemd's `entryd.socket` listens on.
    package static let systemSocketPath = "/run/entryd/entryd.sock"
    /// The file name looked for in `$XDG_RUNTIME_DIR` and the current directory.
    static let socketFileName = "entryd.sock"

    /// The `--socket` value, or `nil`.
    package var explicitPath: String?
    /// Environment variables (`ENTRYD_SOCKET`, `XDG_RUNTIME_DIR` are read).
    package var environment: [String: String]
    /// Whether something may exist at a path; see ``pathMayExist(_:)``.
    package var fileExists: (String) -> Bool

    /// A locator for `--socket` (`explicitPath`, or `nil`), the process
    /// `environment`, and a file check (default: ``pathMayExist(_:)``).
    package init(
        explicitPath: String?, environment: [String: String],
        fileExists: @escaping (String) -> Bool = SocketLocator.pathMayExist
    ) {
        self.explicitPath = explicitPath
        self.environment = environment
        self.fileExists = fileExists
    }

    /// Every path that would be tried, in order, without checking any of them.
    package var candidates: [SocketCandidate] {
        if let explicitPath { return [SocketCandidate(path: explicitPath, origin: "--socket")] }
        var list: [SocketCandidate] = []
        if let env = environment["ENTRYD_SOCKET"], !env.isEmpty {
            list.append(SocketCandidate(path: env, origin: "$ENTRYD_SOCKET"))
        }
        list.append(SocketCandidate(path: Self.systemSocketPath, origin: "entryd.socket"))
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            let dir = runtime.hasSuffix("/") ? String(runtime.dropLast()) : runtime
            list.append(SocketCandidate(path: dir + "/" + Self.socketFileName, origin: "$XDG_RUNTIME_DIR"))
        }
        list.append(SocketCandidate(path: "./" + Self.socketFileName, origin: "current directory"))
        return list
    }

    /// The first candidate that exists.
    /// - Throws: ``DaemonUnreachable`` listing every candidate, each with the
    ///   reason "no such file", when none exists.
    package func locate() throws(DaemonUnreachable) -> SocketCandidate {
        let all = candidates
        if let found = all.first(where: { fileExists($0.path) }) { return found }
        throw DaemonUnreachable(attempts: all.map { .init(candidate: $0, reason: "no such file", reasonZh: "文件不存在") })
    }

    /// True unless `stat(2)` says the path is missing (`ENOENT`, `ENOTDIR`).
    /// A path that cannot be examined (`EACCES`) counts as existing, so that the
    /// connection attempt reports the real reason instead of "no such file".
    package static func pathMayExist(_ path: String) -> Bool {
        var info = stat()
        if stat(path, &info) == 0 { return true }
        return errno != ENOENT && errno != ENOTDIR
    }
}

/// No running entryd could be reached: the candidates tried and why each failed.
package struct DaemonUnreachable: Error, Sendable, Equatable, CustomStringConvertible {
    /// One path tried.
    package struct Attempt: Sendable, Equatable {
        /// The path tried.
        package var candidate: SocketCandidate
        /// Why it failed, in English, e.g. "no such file", "Connection refused".
        package var reason: String
        /// The same in Chinese, when entryctl has the words for it (else `nil`:
        /// an error text of the system, shown as it is).
        package var reasonZh: String?

        /// `candidate` failed because of `reason` (and `reasonZh` in Chinese).
        package init(candidate: SocketCandidate, reason: String, reasonZh: String? = nil) {
            self.candidate = candidate
            self.reason = reason
            self.reasonZh = reasonZh
        }

        /// Why it failed, in `locale`.
        package func reason(in locale: EntryLocale) -> String { locale == .zh ? reasonZh ?? reason : reason }
    }

    /// In the order tried; never empty.
    package var attempts: [Attempt]

    /// The failure of `attempts` (not empty).
    package init(attempts: [Attempt]) {
        self.attempts = attempts
    }

    /// One line naming every attempt and its reason.
    package var description: String {
        "cannot reach entryd: " + attempts.map { "\($0.candidate): \($0.reason)" }.joined(separator: "; ")
    }
}

extension DaemonUnreachable.Attempt {
    /// The attempt at `candidate` that failed with `error`. connect(2) answers
    /// "Connection refused" both when nobody listens and when the path is not
    /// a socket at all; a path that exists as a regular file or a directory is
    /// named as such, so the user fixes the path instead of starting a daemon.
    package init(candidate: SocketCandidate, error: SystemError) {
        var info = stat()
        if error.call == "connect", error.errno == ECONNREFUSED || error.errno == ENOTSOCK,
            lstat(candidate.path, &info) == 0, info.st_mode & S_IFMT != S_IFSOCK
        {
            let type = info.st_mode & S_IFMT
            let kind = type == S_IFDIR ? "a directory" : type == S_IFREG ? "a regular file" : "not a socket file"
            let kindZh = type == S_IFDIR ? "是目录" : type == S_IFREG ? "是普通文件" : "不是套接字文件"
            self.init(
                candidate: candidate, reason: "not a socket (\(kind)): give the path of entryd's socket",
                reasonZh: "不是套接字（\(kindZh)）：请给出 entryd 套接字的路径")
        } else {
            self.init(candidate: candidate, reason: error.reasonText, reasonZh: error.reason(in: .zh))
        }
    }
}
