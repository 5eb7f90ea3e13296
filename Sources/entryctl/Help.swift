import EntryModel
import EntryProtocol
import EntryClient

/// The help texts. They are tested output (Tests/EndToEndTests): change them
/// together with the snapshot.
enum Help {
    /// Every command, in the order `entryctl --help` lists them.
    static let commands: [Command] =
        EntryCommands.all + ErasureCommands.all + [InteractiveCommands.edit, ListCommand.command] + DataCommands.all
        + FormCommands.all + SyncCommands.all + PeerCommands.all + WebUserCommands.all

    /// The command named `name`, or `nil`.
    static func command(named name: String) -> Command? { commands.first { $0.name == name } }

    /// The usage of entryctl as a whole, for usage errors before a command is known.
    static let mainUsage = FailureReport.Usage(
        line: "entryctl [--socket PATH] [--locale zh|en] [--json] COMMAND [ARGS...]", helpCommand: "entryctl --help")

    /// `entryctl --help`, in `locale`.
    static func main(_ locale: EntryLocale) -> String {
        let t = { (zh: String, en: String) in Localized(zh: zh, en: en)(locale) }
        var lines = [
            t(
                "entryctl — entryd（本地表单录入守护进程）的命令行客户端。",
                "entryctl — the command-line client of entryd, the local form-entry daemon."),
            "",
            t("用法：", "Usage: ") + mainUsage.line,
            "",
            t("命令：", "Commands:"),
        ]
        lines += aligned(
            commands.map { ($0.name, $0.summary(locale)) }
                + [("help", t("显示命令的帮助（entryctl help COMMAND）。", "Show help for a command (entryctl help COMMAND)."))])
        lines += ["", t("全局选项（在命令之前或之后）：", "Global options (before or after the command):")]
        lines += aligned(GlobalOptions.specs.map { ($0.synopsis, $0.help(locale)) })
        lines += [
            "",
            t(
                "套接字：给了 --socket PATH 时只用它；否则用以下第一个存在的：",
                "Socket: --socket PATH when given (only that one); else the first that exists of"),
            "$ENTRYD_SOCKET, \(SocketLocator.systemSocketPath), $XDG_RUNTIME_DIR/entryd.sock, ./entryd.sock.",
            "",
            t("退出码：", "Exit codes:"),
        ]
        lines += aligned([
            ("0", t("成功", "success")),
            (
                "1",
                t(
                    "被拒绝：不存在、版本不符、已存在、没有此表单、权限不足 ……",
                    "refused: not found, version mismatch, exists, no such form, permission denied …")
            ),
            ("64", t("用法错误：参数错误或缺少参数", "usage error: bad or missing arguments")),
            ("65", t("值未被接受（列出每个问题）", "the values were not accepted (every problem is listed)")),
            (
                "66",
                t(
                    "import 的输入文件无法读取；web-user remove/list：用户文件不存在",
                    "import: the input file cannot be read; web-user remove/list: the users file does not exist")
            ),
            (
                "69",
                t(
                    "无法连接 entryd（启动它：entryd --socket PATH，或 systemctl start entryd.socket）",
                    "entryd cannot be reached (start it: entryd --socket PATH, or systemctl start entryd.socket)")
            ),
            ("73", t("web-user add/remove：无法写入用户文件", "web-user add/remove: the users file cannot be written")),
            (
                "75",
                t(
                    "暂时失败（存储失败、达到限制、连接中断）：请重试",
                    "temporary failure (storage failed, a limit was hit, connection lost): try again")
            ),
        ])
        lines += [
            "",
            t(
                "运行 'entryctl help COMMAND' 或 'entryctl COMMAND --help' 查看命令的选项和示例。",
                "Run 'entryctl help COMMAND' or 'entryctl COMMAND --help' for a command's options and examples."),
        ]
        return lines.map { $0 + "\n" }.joined()
    }

    /// `entryctl COMMAND --help`, in `locale`.
    static func text(for command: Command, locale: EntryLocale) -> String {
        let t = { (zh: String, en: String) in Localized(zh: zh, en: en)(locale) }
        var lines = [
            "entryctl \(command.name) — \(command.summary(locale))", "", t("用法：", "Usage: ") + command.usageLine,
        ]
        if !command.details.isEmpty { lines += [""] + command.details.map { $0(locale) } }
        let helpSpec = GlobalOptions.specs.first { $0.name == "--help" }!
        lines +=
            ["", t("选项：", "Options:")] + aligned((command.options + [helpSpec]).map { ($0.synopsis, $0.help(locale)) })
        lines += [
            "",
            t(
                "全局选项：--socket PATH、--locale zh|en、--json（见 entryctl --help）。",
                "Global options: --socket PATH, --locale zh|en, --json (see entryctl --help)."),
        ]
        if !command.examples.isEmpty {
            lines +=
                ["", command.examples.count == 1 ? t("示例：", "Example:") : t("示例：", "Examples:")]
                + command.examples.map { "  " + $0 }
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// Two-column lines, indented two spaces, the first column padded to its widest entry.
    static func aligned(_ rows: [(String, String)]) -> [String] {
        let width = rows.map { DisplayWidth.of($0.0) }.max() ?? 0
        return rows.map { "  " + DisplayWidth.padded($0.0, to: width) + "  " + $0.1 }
    }
}
