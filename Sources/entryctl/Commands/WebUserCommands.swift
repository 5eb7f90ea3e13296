@preconcurrency import Glibc
import EntryModel
import EntryProtocol
import EntryClient
import EntryWeb

// MARK: - web-user add | remove | list (entryd-web's users file; no daemon)

enum WebUserCommands {
    static let all = [webUser]

    static let usersOption = OptionSpec(
        ["--users"], value: "FILE",
        help: Localized(
            zh: "用户文件（默认：$ENTRYD_WEB_USERS，否则 \(WebUsers.defaultPath)）。",
            en: "The users file (default: $ENTRYD_WEB_USERS, else \(WebUsers.defaultPath))."))

    static let webUser = Command(
        name: "web-user",
        summary: Localized(
            zh: "管理 entryd-web 的网页用户：添加、删除、列出（不连接 entryd）。",
            en: "Manage entryd-web's web users: add, remove, list (entryd is not contacted)."),
        arguments: "add NAME --role ROLE | remove NAME | list",
        options: [
            OptionSpec(
                ["--role"], value: "submit|read|write|admin",
                help: Localized(
                    zh: "add：用户的角色（submit：只能填写并提交表单，如自助登记终端）。",
                    en: "add: the user's role (submit: fill in and send the form only, as a kiosk).")),
            OptionSpec(
                ["--replace"],
                help: Localized(
                    zh: "add：用户已存在时替换其密码和角色。", en: "add: replace the password and role of an existing user.")),
            usersOption,
            OptionSpec(
                ["--format"], value: "FORMAT",
                help: Localized(zh: "list：table（默认）或 json。", en: "list: table (default) or json.")),
        ],
        details: [
            Localized(
                zh: "add 从标准输入读取密码（一行，去掉行尾换行）；在终端上则提示输入两次，不回显。",
                en:
                    "add reads the password from standard input (one line, its newline dropped); on a terminal it asks twice, without echo."
            ),
            Localized(
                zh: "密码为 \(PasswordHash.minimumBytes) 到 \(PasswordHash.maximumBytes) 字节；以 Argon2id 散列保存，从不显示。",
                en:
                    "Passwords are \(PasswordHash.minimumBytes) to \(PasswordHash.maximumBytes) bytes, kept as Argon2id hashes, never shown."
            ),
            Localized(
                zh: "NAME 为 1 到 64 个字母、数字或 . _ - @；entryd 把此用户的修改记为 web:NAME。",
                en:
                    "NAME is 1 to 64 letters, digits, '.', '_', '-' or '@'; entryd records the user's changes as web:NAME."
            ),
            Localized(
                zh: "文件每行一个用户（NAME:ROLE:HASH），在锁（FILE.lock）下原子地改写，权限 0640；格式错误的文件不会被改写。",
                en:
                    "The file has a user per line (NAME:ROLE:HASH), rewritten atomically under a lock (FILE.lock), mode 0640; a malformed file is never rewritten."
            ),
            Localized(zh: "entryd-web 在文件变化时重新读取它。", en: "entryd-web reads the file again when it changes."),
        ],
        examples: [
            "entryctl web-user add 李雷 --role write",
            "entryctl web-user add alice --role admin --users ./web-users < password.txt",
            "entryctl web-user remove alice", "entryctl web-user list --format json",
        ],
        prepare: { input in
            let given = input.scanned.positionals
            guard let verb = given.first else {
                throw UsageError(zh: "缺少子命令：add、remove 或 list", en: "missing a subcommand: add, remove or list")
            }
            let path = WebUsers.path(option: input.value("--users"), environment: input.environment)
            func only(_ allowed: [String], for verb: String) throws {
                for option in ["--role", "--replace", "--format"]
                where !allowed.contains(option) && (input.has(option) || input.value(option) != nil) {
                    throw UsageError(
                        zh: "web-user \(verb) 不接受 \(option)", en: "web-user \(verb) does not take \(option)")
                }
            }
            func name() throws -> String {
                guard given.count >= 2 else { throw UsageError(zh: "缺少 NAME", en: "missing NAME") }
                guard given.count == 2 else {
                    throw UsageError(zh: "多余的参数“\(given[2])”", en: "unexpected argument '\(given[2])'")
                }
                guard ActorName.isValid(given[1]) else {
                    throw UsageError(
                        zh: "用户名“\(given[1])”不是 1 到 64 个字母、数字或 . _ - @",
                        en: "the user name '\(given[1])' is not 1 to 64 letters, digits, '.', '_', '-' or '@'")
                }
                return given[1]
            }
            switch verb {
            case "add":
                try only(["--role", "--replace"], for: verb)
                let user = try name()
                guard let roleText = input.value("--role") else {
                    throw UsageError(
                        zh: "add 需要 --role submit|read|write|admin", en: "add needs --role submit|read|write|admin")
                }
                guard let role = Role(name: roleText), role != .none else {
                    throw UsageError(
                        zh: "--role 取 submit、read、write 或 admin 之一，不是“\(roleText)”",
                        en: "--role is one of submit, read, write, admin, not '\(roleText)'")
                }
                let replace = input.has("--replace")
                return { session in
                    try add(user, role: role, replace: replace, path: path, locale: session.globals.locale)
                }
            case "remove":
                try only([], for: verb)
                let user = try name()
                return { session in try remove(user, path: path, locale: session.globals.locale) }
            case "list":
                try only(["--format"], for: verb)
                if given.count > 1 {
                    throw UsageError(zh: "多余的参数“\(given[1])”", en: "unexpected argument '\(given[1])'")
                }
                let json = try input.choice("--format", of: ["table", "json"]) == "json" || input.globals.json
                return { session in try list(path: path, json: json, locale: session.globals.locale) }
            default:
                throw UsageError(
                    zh: "未知的子命令“\(verb)”（可用：add、remove、list）", en: "unknown subcommand '\(verb)' (add, remove or list)")
            }
        })

    /// `web-user add`: checks the file first (so a malformed file or a taken
    /// name is refused before the password is asked for), reads and hashes the
    /// password, then changes the file under its lock, checking again.
    static func add(_ name: String, role: Role, replace: Bool, path: String, locale: EntryLocale) throws {
        do {
            let current = try WebUsers.load(path: path)
            if !replace, current.user(named: name) != nil {
                throw WebUserFailure(WebUsersError.exists(name: name), path: path)
            }
        } catch let error as WebUsersError {
            if case .missing = error {} else { throw WebUserFailure(error, path: path) }
        }
        let password = try readPassword(locale: locale)
        let user: WebUser
        do { user = try WebUser(name: name, role: role, password: password) } catch {
            throw Refusal(zh: "无法散列密码：\(error)", en: "cannot hash the password: \(error)")
        }
        var existed = false
        do {
            try WebUsers.update(path: path, create: true) { users in
                existed = users.user(named: name) != nil
                try users.add(user, replace: replace)
            }
        } catch let error as WebUsersError {
            throw WebUserFailure(error, path: path)
        }
        Terminal.out(lines: [
            existed
                ? Localized(
                    zh: "已替换网页用户 \(name)（\(role.name)），文件 \(path)",
                    en: "replaced web user \(name) (\(role.name)) in \(path)")(locale)
                : Localized(
                    zh: "已添加网页用户 \(name)（\(role.name)），文件 \(path)",
                    en: "added web user \(name) (\(role.name)) to \(path)")(locale)
        ])
    }

    /// `web-user remove`.
    static func remove(_ name: String, path: String, locale: EntryLocale) throws {
        do {
            try WebUsers.update(path: path, create: false) { try $0.remove(named: name) }
        } catch let error as WebUsersError {
            throw WebUserFailure(error, path: path)
        }
        Terminal.out(lines: [
            Localized(zh: "已删除网页用户 \(name)，文件 \(path)", en: "removed web user \(name) from \(path)")(locale)
        ])
    }

    /// `web-user list`: NAME and ROLE, as a table or `{"users": [{"name", "role"}]}`.
    static func list(path: String, json: Bool, locale: EntryLocale) throws {
        let users: [WebUser]
        do { users = try WebUsers.load(path: path).users } catch { throw WebUserFailure(error, path: path) }
        if json {
            let list = users.map { JSON.object([("name", .string($0.name)), ("role", .string($0.role.name))]) }
            return Terminal.out(lines: [JSON.object([("users", .array(list))]).text])
        }
        let columns = [
            TableColumn(Localized(zh: "用户", en: "user")(locale)), TableColumn(Localized(zh: "角色", en: "role")(locale)),
        ]
        Terminal.out(
            lines: TableRenderer(columns: columns).render(users.map { [$0.name, $0.role.name] })
                + [Localized(zh: "共 \(users.count) 个网页用户", en: "\(users.count) web user(s)")(locale)])
    }

    // MARK: - The password

    /// The password: one line of standard input when it is not a terminal,
    /// else asked for twice on the terminal with echo off.
    /// - Throws: ``Refusal`` for a password out of bounds, two that differ, or none.
    static func readPassword(locale: EntryLocale) throws -> String {
        let password: [UInt8]
        if isatty(0) == 1 {
            let first = try prompt(Localized(zh: "密码：", en: "Password: ")(locale))
            try check(first, typed: true)
            let second = try prompt(Localized(zh: "再次输入密码：", en: "Password again: ")(locale))
            guard first == second else {
                throw Refusal(zh: "两次输入的密码不同；没有修改", en: "the two passwords differ; nothing was changed")
            }
            password = first
        } else {
            password = try readLine(from: 0)
            try check(password, typed: false)
        }
        guard let text = String(validating: password, as: UTF8.self) else {
            throw Refusal(zh: "密码不是有效的 UTF-8", en: "the password is not valid UTF-8")
        }
        return text
    }

    /// Refuses a password shorter or longer than ``PasswordHash`` allows,
    /// saying what to do: `typed` on the terminal's prompt, or given as the
    /// first line of piped input (none at all: how to give one).
    static func check(_ password: [UInt8], typed: Bool) throws {
        let (least, most) = (PasswordHash.minimumBytes, PasswordHash.maximumBytes)
        if password.isEmpty && !typed {
            throw Refusal(
                zh: "没有给出密码；没有修改。请在终端上运行此命令（会提示输入两次），或把密码作为第一行传入："
                    + "printf '%s\\n' 密码 | entryctl web-user add …",
                en: "no password was given; nothing was changed. Run this on a terminal (it asks twice), "
                    + "or pass the password as the first line: printf '%s\\n' PASSWORD | entryctl web-user add …")
        }
        if password.count < least {
            if typed {
                throw Refusal(
                    zh: "密码太短：至少 \(least) 字节（一个汉字算 3 字节）；没有修改。请重新运行，输入更长的密码，例如几个词连成的短语",
                    en: "the password is too short: at least \(least) bytes; nothing was changed. "
                        + "Run the command again and type a longer one, e.g. a phrase of a few words")
            }
            throw Refusal(
                zh: "密码太短：只有 \(password.count) 字节，至少要 \(least) 字节（一个汉字算 3 字节）；没有修改。"
                    + "请在传入内容的第一行给出更长的密码",
                en:
                    "the password is too short: \(password.count) bytes, at least \(least) are needed; nothing was changed. "
                    + "Give a longer password as the first line of the input")
        }
        if password.count > most {
            throw Refusal(zh: "密码太长：最多 \(most) 字节", en: "the password is too long: at most \(most) bytes")
        }
    }

    /// One line from `fd` without its `\n` (or `\r\n`); at most ``PasswordHash/maximumBytes`` + 1 bytes are kept.
    static func readLine(from fd: Int32) throws -> [UInt8] {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = read(fd, &byte, 1)
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError("read", detail: "standard input")
            }
            if n == 0 || byte == UInt8(ascii: "\n") { break }
            if line.count <= PasswordHash.maximumBytes { line.append(byte) }
        }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return line
    }

    /// The terminal's modes while echo is off, restored by ``restoreEcho`` (also on SIGINT, SIGTERM, SIGHUP).
    nonisolated(unsafe) static var savedModes = termios()
    nonisolated(unsafe) static var echoOff = false

    /// Puts echo back and dies of the signal, so Ctrl-C at the prompt leaves a usable terminal.
    static let restoreEcho: @convention(c) (Int32) -> Void = { signal in
        if WebUserCommands.echoOff { _ = tcsetattr(0, TCSAFLUSH, &WebUserCommands.savedModes) }
        _ = Glibc.signal(signal, SIG_DFL)
        _ = raise(signal)
    }

    /// Writes `text` to stderr and reads a line from the terminal with echo off.
    static func prompt(_ text: String) throws -> [UInt8] {
        fputs(text, stderr)
        fflush(stderr)
        guard tcgetattr(0, &savedModes) == 0 else { throw SystemError("tcgetattr") }
        var quiet = savedModes
        quiet.c_lflag &= ~tcflag_t(ECHO)
        quiet.c_lflag |= tcflag_t(ECHONL)
        for s in [SIGINT, SIGTERM, SIGHUP] { _ = signal(s, restoreEcho) }
        echoOff = true
        guard tcsetattr(0, TCSAFLUSH, &quiet) == 0 else {
            echoOff = false
            throw SystemError("tcsetattr")
        }
        defer {
            _ = tcsetattr(0, TCSAFLUSH, &savedModes)
            echoOff = false
            for s in [SIGINT, SIGTERM, SIGHUP] { _ = signal(s, SIG_DFL) }
        }
        return try readLine(from: 0)
    }
}

/// A users-file failure in entryctl's words, with its exit code: 66 for a
/// missing file, 73 when it cannot be written, 1 otherwise.
struct WebUserFailure: LocalizedFailure {
    let error: WebUsersError
    let path: String

    init(_ error: any Error, path: String) {
        self.error = error as? WebUsersError ?? .unreadable(path: path, errno: EIO)
        self.path = path
    }

    var exitCode: ExitCode {
        switch error {
        case .missing: return .noInput
        case .cannotWrite: return .cantCreate
        default: return .failure
        }
    }

    var lines: [Localized] {
        func why(_ e: Int32) -> String { String(cString: strerror(e)) }
        switch error {
        case .missing(let path):
            return [
                Localized(zh: "没有用户文件“\(path)”", en: "no users file '\(path)'"),
                Localized(
                    zh: "先添加用户：entryctl web-user add NAME --role ROLE --users \(path)",
                    en: "add a user first: entryctl web-user add NAME --role ROLE --users \(path)"),
            ]
        case .unreadable(let path, let e):
            return [Localized(zh: "无法读取用户文件“\(path)”：\(why(e))", en: "cannot read the users file '\(path)': \(why(e))")]
        case .malformed(let path, let line, let problem):
            let what: Localized
            switch problem {
            case .notThreeParts: what = Localized(zh: "不是 NAME:ROLE:HASH", en: "not NAME:ROLE:HASH")
            case .badName(let n):
                what = Localized(
                    zh: "用户名“\(n)”不是 1 到 64 个字母、数字或 . _ - @",
                    en: "the name '\(n)' is not 1 to 64 letters, digits, '.', '_', '-' or '@'")
            case .badRole(let r):
                what = Localized(
                    zh: "角色“\(r)”不是 submit、read、write 或 admin",
                    en: "the role '\(r)' is not submit, read, write or admin")
            case .badHash:
                what = Localized(
                    zh: "散列不是 Argon2id 散列（$argon2id$…）", en: "the hash is not an Argon2id hash ($argon2id$...)")
            case .duplicate(let n, let first):
                what = Localized(zh: "用户名“\(n)”已在第 \(first) 行", en: "the name '\(n)' is already on line \(first)")
            }
            return [
                Localized(zh: "\(path):\(line)：\(what.zh)", en: "\(path):\(line): \(what.en)"),
                Localized(zh: "修正或删除这一行；文件没有修改", en: "fix or remove that line; the file was not changed"),
            ]
        case .exists(let name):
            return [
                Localized(
                    zh: "网页用户 \(name) 已存在；要设置新的密码和角色，请加 --replace",
                    en: "the web user \(name) exists; give --replace to set a new password and role")
            ]
        case .unknownUser(let name):
            return [
                Localized(
                    zh: "“\(path)”中没有网页用户 \(name)（entryctl web-user list 列出用户）",
                    en: "no web user \(name) in '\(path)' (entryctl web-user list shows the users)")
            ]
        case .invalidName(let name):
            return [
                Localized(
                    zh: "用户名“\(name)”不是 1 到 64 个字母、数字或 . _ - @",
                    en: "the user name '\(name)' is not 1 to 64 letters, digits, '.', '_', '-' or '@'")
            ]
        case .cannotWrite(let file, let call, let e):
            return [
                Localized(
                    zh: "无法写入“\(file)”（\(call)）：\(why(e))；用户文件没有修改",
                    en: "cannot write '\(file)' (\(call)): \(why(e)); the users file was not changed")
            ]
        }
    }
}
