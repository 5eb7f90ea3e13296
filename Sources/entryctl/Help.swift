import EntryModel
import EntryProtocol
import EntryClient

/// The help texts. They are tested output (Tests/EndToEndTests): change them
/// together with the snapshot.
enum Help {
    /// Every command, in the order `entryctl --help` lists them.
    static let commands: [Command] = EntryCommands.all + [InteractiveCommands.edit, ListCommand.command] + DataCommands.all
        + FormCommands.all + SyncCommands.all + PeerCommands.all

    /// The command named `name`, or `nil`.
    static func command(named name: String) -> Command? { commands.first { $0.name == name } }

    /// The usage of entryctl as a whole, for usage errors before a command is known.
    static let mainUsage = FailureReport.Usage(
        line: "entryctl [--socket PATH] [--locale zh|en] [--json] COMMAND [ARGS...]", helpCommand: "entryctl --help")

    /// `entryctl --help`.
    static var main: String {
        var lines = [
            "entryctl — the command-line client of entryd, the local form-entry daemon.",
            "",
            "Usage: \(mainUsage.line)",
            "",
            "Commands:",
        ]
        lines += aligned(commands.map { ($0.name, $0.summary) } + [("help", "Show help for a command (entryctl help COMMAND).")])
        lines += ["", "Global options (before or after the command):"]
        lines += aligned(GlobalOptions.specs.map { ($0.synopsis, $0.help) })
        lines += [
            "",
            "Socket: --socket PATH when given (only that one); else the first that exists of",
            "$ENTRYD_SOCKET, \(SocketLocator.systemSocketPath), $XDG_RUNTIME_DIR/entryd.sock, ./entryd.sock.",
            "",
            "Exit codes:",
        ]
        lines += aligned([
            ("0", "success"),
            ("1", "refused: not found, version mismatch, exists, no such form, permission denied …"),
            ("64", "usage error: bad or missing arguments"),
            ("65", "the values were not accepted (every problem is listed)"),
            ("69", "entryd cannot be reached (start it: entryd --socket PATH, or systemctl start entryd.socket)"),
            ("75", "temporary failure (storage failed, a limit was hit, connection lost): try again"),
        ])
        lines += ["", "Run 'entryctl help COMMAND' or 'entryctl COMMAND --help' for a command's options and examples."]
        return lines.map { $0 + "\n" }.joined()
    }

    /// `entryctl COMMAND --help`.
    static func text(for command: Command) -> String {
        var lines = ["entryctl \(command.name) — \(command.summary)", "", "Usage: \(command.usageLine)"]
        if !command.details.isEmpty { lines += [""] + command.details }
        let helpSpec = GlobalOptions.specs.first { $0.name == "--help" }!
        lines += ["", "Options:"] + aligned((command.options + [helpSpec]).map { ($0.synopsis, $0.help) })
        lines += ["", "Global options: --socket PATH, --locale zh|en, --json (see entryctl --help)."]
        if !command.examples.isEmpty {
            lines += ["", command.examples.count == 1 ? "Example:" : "Examples:"] + command.examples.map { "  " + $0 }
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// Two-column lines, indented two spaces, the first column padded to its widest entry.
    static func aligned(_ rows: [(String, String)]) -> [String] {
        let width = rows.map { DisplayWidth.of($0.0) }.max() ?? 0
        return rows.map { "  " + DisplayWidth.padded($0.0, to: width) + "  " + $0.1 }
    }
}
