@preconcurrency import Glibc
import EntryModel
import EntryProtocol

/// What a client shows for a failed command: an exit code and the text for stderr.
///
/// ``init(for:usage:)`` is the one place where any error becomes an exit code
/// and words, so that every command fails the same way. Messages are sentences
/// without the program prefix, in the locale asked for (``Localized``); the
/// daemon's own texts (problem messages) arrive in the requested locale and are
/// shown as they are.
package struct FailureReport: Sendable, Equatable {
    /// The process exit status.
    package var exitCode: ExitCode
    /// The first line is the message; further lines are details and hints.
    package var lines: [String]

    /// A report of `lines` (at least one) exiting with `exitCode`.
    package init(exitCode: ExitCode, lines: [String]) {
        self.exitCode = exitCode
        self.lines = lines
    }

    /// The usage context of the command that failed, appended to usage errors.
    package struct Usage: Sendable, Equatable {
        /// E.g. `entryctl get ID`.
        package var line: String
        /// E.g. `entryctl get --help`.
        package var helpCommand: String

        /// The usage `line` and the command that shows full help.
        package init(line: String, helpCommand: String) {
            self.line = line
            self.helpCommand = helpCommand
        }
    }

    /// Classifies `error`:
    ///
    /// | error | exit code |
    /// | --- | --- |
    /// | ``UsageError``, `org.varlink.service.InvalidParameter` | 64, plus the usage line |
    /// | `io.entryd.Entries.ValidationFailed` | 65, every problem with its suggestions |
    /// | ``RowsRejected`` (import) | 65, its summary lines |
    /// | ``DaemonUnreachable``, a failed `connect` | 69, the paths tried and how to start entryd |
    /// | `StorageFailed`, `LimitExceeded`, `io.entryd.Sync.PeerUnreachable` (without `role`), a reset or timed-out connection | 75 |
    /// | any other wire error (`EntryNotFound`, `VersionMismatch`, `EntryExists`, `FormNotFound`, `PermissionDenied`, a peer's refusal: `PeerUnreachable` with `role`, …) or error | 1 |
    ///
    /// - Parameters:
    ///   - usage: the failing command's usage, when known.
    ///   - locale: the language of the validation summary (the problems' own
    ///     messages come from the daemon in the requested locale already).
    package init(for error: any Error, usage: Usage? = nil, locale: EntryLocale = .en) {
        switch error {
        case let error as UsageError:
            self = .usage(error.text(locale), usage, locale: locale)
        case let error as WireError:
            self = FailureReport.wire(error, usage: usage, locale: locale)
        case let error as DaemonUnreachable:
            self = .unreachable(error, locale: locale)
        case let error as RowsRejected:
            self.init(exitCode: .dataError, lines: error.lines.map { $0(locale) })
        case let error as any LocalizedFailure:
            self.init(exitCode: error.exitCode, lines: error.lines.map { $0(locale) })
        case is ConnectionClosed:
            self.init(
                exitCode: .temporaryFailure,
                lines: [
                    Localized(
                        zh: "entryd 在回复之前关闭了连接；请重试", en: "entryd closed the connection before replying; try again")(
                            locale)
                ])
        case let error as SystemError:
            self = .system(error, locale: locale)
        case let error as JSONParseError:
            self.init(
                exitCode: .failure,
                lines: [
                    Localized(
                        zh: "entryd 发来的回复不是有效的 JSON（\(error)）",
                        en: "entryd sent a reply that is not valid JSON (\(error))")(locale)
                ])
        case let error as FrameDecoder.Failure:
            self.init(
                exitCode: .failure,
                lines: [
                    Localized(
                        zh: "entryd 发来的回复超过了本客户端接受的大小（\(error)）",
                        en: "entryd sent a reply larger than this client accepts (\(error))")(locale)
                ])
        default:
            self.init(exitCode: .failure, lines: [String(describing: error)])
        }
    }

    static func usage(_ message: String, _ usage: Usage?, locale: EntryLocale) -> FailureReport {
        var lines = [message]
        if let usage {
            lines += [
                Localized(zh: "用法：\(usage.line)", en: "Usage: \(usage.line)")(locale),
                Localized(zh: "参见 '\(usage.helpCommand)'。", en: "See '\(usage.helpCommand)'.")(locale),
            ]
        }
        return FailureReport(exitCode: .usage, lines: lines)
    }

    static func unreachable(_ error: DaemonUnreachable, locale: EntryLocale) -> FailureReport {
        var lines = [Localized(zh: "无法连接 entryd；试过：", en: "cannot reach entryd; tried:")(locale)]
        lines += error.attempts.map { attempt in
            let origin = attempt.candidate.origin(in: locale)
            let reason = attempt.reason(in: locale)
            return locale == .zh
                ? "  \(attempt.candidate.path)（\(origin)）：\(reason)"
                : "  \(attempt.candidate.path) (\(origin)): \(reason)"
        }
        let denied = error.attempts.filter { $0.reason.contains("ermission denied") }
        if let first = denied.first {
            // The group that may use it, as the file system says (entryd's own socket: group
            // entryd, 0660; one a daemon bound itself has its user's group).
            let (path, group) = Self.owningGroup(of: first.candidate.path)
            lines.append(
                Localized(
                    zh: "权限不足：\(path) 只供 \(group) 组的成员使用；请让管理员把你加入该组"
                        + "（usermod -aG \(group) 用户名，重新登录后生效），或以该组成员运行 entryctl。",
                    en:
                        "Permission denied: \(path) is for members of group '\(group)'; ask an administrator to add you "
                        + "(usermod -aG \(group) USER, then log in again), or run entryctl as a member.")(locale))
        }
        // A path that is not a socket needs another path, not a daemon started; one this
        // user may not open has a daemon behind it already.
        if !error.attempts.allSatisfy({ $0.reason.hasPrefix("not a socket") || $0.reason.contains("ermission denied") })
        {
            lines.append(
                Localized(
                    zh: "请用 'entryd --socket PATH' 启动守护进程（再给出 --socket PATH 或设置 ENTRYD_SOCKET），",
                    en: "Start the daemon with 'entryd --socket PATH' (then pass --socket PATH or set ENTRYD_SOCKET),")(
                        locale))
            lines.append(
                Localized(
                    zh: "或在 systemd 下用 'systemctl start entryd.socket'。",
                    en: "or under systemd with 'systemctl start entryd.socket'.")(locale))
        }
        return FailureReport(exitCode: .unavailable, lines: lines)
    }

    /// The group owning `path`, or its nearest directory this user may
    /// search (the one whose permission stopped the connect), by name (its
    /// number when no name is known): with the path it belongs to.
    static func owningGroup(of path: String) -> (path: String, group: String) {
        var current = path
        while true {
            var info = stat()
            if stat(current, &info) == 0 {
                let name = getgrgid(info.st_gid).flatMap { String(validatingCString: $0.pointee.gr_name) }
                return (current, name ?? String(info.st_gid))
            }
            guard let slash = current.lastIndex(of: "/"), slash != current.startIndex else { return (path, "entryd") }
            current = String(current[..<slash])
        }
    }

    static func system(_ error: SystemError, locale: EntryLocale) -> FailureReport {
        switch error.call {
        case "connect", "socket", "socket path":
            let candidate = SocketCandidate(path: error.detail, origin: "connect")
            return unreachable(DaemonUnreachable(attempts: [.init(candidate: candidate, error: error)]), locale: locale)
        case "send", "recv":
            let what =
                (error.errno == EAGAIN || error.errno == EWOULDBLOCK)
                ? Localized(
                    zh:
                        "entryd 没有在允许的时间内回复（--timeout，默认 60 秒）：它可能很忙或卡住了；请查看 'entryctl status' 或守护进程的日志，长时间的工作请调大 --timeout；请重试",
                    en:
                        "entryd did not reply within the time allowed (--timeout, default 60 s): it may be busy or stuck; check 'entryctl status' or the daemon's log, raise --timeout for long work; try again"
                )
                : Localized(
                    zh: "与 entryd 的连接失败（\(error.reasonText)）；请重试",
                    en: "the connection to entryd failed (\(error.reasonText)); try again")
            return FailureReport(exitCode: .temporaryFailure, lines: [what(locale)])
        default:
            return FailureReport(exitCode: .failure, lines: [error.description])
        }
    }
}

extension SystemError {
    /// strerror(3) text of ``errno``, e.g. "Connection refused".
    package var reasonText: String { String(cString: strerror(errno)) }

    /// Why, in `locale`: for the errors of files and sockets people meet (no
    /// such file, permission, a directory, a full or read-only disk, nobody
    /// listening) in Chinese under `zh`; strerror(3)'s English otherwise.
    package func reason(in locale: EntryLocale) -> String {
        guard locale == .zh else { return reasonText }
        switch errno {
        case ENOENT: return "文件不存在"
        case EACCES, EPERM: return "权限不足"
        case EISDIR: return "这是一个目录"
        case ENOTDIR: return "路径中有一段不是目录"
        case ENOSPC: return "磁盘已满"
        case EROFS: return "文件系统是只读的"
        case ELOOP: return "符号链接太多层"
        case ENAMETOOLONG: return "路径太长"
        case ECONNREFUSED: return "连接被拒绝（没有守护进程在监听）"
        case ETIMEDOUT: return "连接超时"
        default: return reasonText
        }
    }
}
