@preconcurrency import Glibc
import EntryModel
import EntryProtocol
import EntryClient
import EntryArguments

/// The entryctl process: read the command line, run one command, return its exit code.
enum EntryCtl {
    /// Runs the command line `arguments` (without the program name).
    ///
    /// Order: global options up to the command name; the command's own options
    /// (global ones are accepted there too); `--version` / `--help`; validation
    /// into an action; then the action, which connects on its first call. Every
    /// error reaches ``Terminal/fail(_:)`` through ``FailureReport`` — the one
    /// mapping from errors to exit codes.
    ///
    /// - Returns: the exit code (see ``ExitCode``).
    static func run(arguments: [String], environment: [String: String]) -> Int32 {
        let code = runCommand(arguments: arguments, environment: environment)
        // Output that could not be written is a failure, not a success with lost output.
        if code == ExitCode.success.rawValue, let e = Terminal.outputError {
            let locale = GlobalOptions.earlyLocale(arguments: arguments, environment: environment)
            Terminal.message(
                Localized(
                    zh: "无法写入标准输出：\(String(cString: strerror(e)))",
                    en: "cannot write to standard output: \(String(cString: strerror(e)))")(locale))
            return ExitCode.ioError.rawValue
        }
        return code
    }

    /// ``run(arguments:environment:)`` before the check of the output.
    private static func runCommand(arguments: [String], environment: [String: String]) -> Int32 {
        var usage = Help.mainUsage
        // Until the options are read: the locale --locale or ENTRYCTL_LOCALE names, if it is valid, else zh.
        var locale = GlobalOptions.earlyLocale(arguments: arguments, environment: environment)
        do {
            let (before, consumed) = try ArgumentScanner.scan(
                arguments, options: GlobalOptions.specs, stopAtPositional: true)
            let rest = Array(arguments[consumed...])
            guard let name = rest.first else {
                if before.has("--version") {
                    Terminal.out("entryctl \(EntrydVersion.string)\n")
                    return 0
                }
                if before.has("--help") {
                    Terminal.out(Help.main(locale))
                    return 0
                }
                throw UsageError(zh: "没有给出命令", en: "no command given")
            }
            if name == "help" { return try help(Array(rest.dropFirst()), locale: locale) }
            guard let command = Help.command(named: name) else {
                let names = Help.commands.map(\.name)
                let near = MatchKey.nearest(name, among: names)
                throw UsageError(
                    zh: "未知的命令“\(name)”（" + (near.map { "是否指 '\($0)'？" } ?? "")
                        + "命令有：\(names.joined(separator: ", "))）",
                    en: "unknown command '\(name)' (" + (near.map { "did you mean '\($0)'? " } ?? "")
                        + "commands: \(names.joined(separator: ", ")))")
            }
            usage = command.usage
            let (after, _) = try ArgumentScanner.scan(
                Array(rest.dropFirst()), options: command.options + GlobalOptions.specs)
            let globals = try GlobalOptions(GlobalOptions.merge(before, after), environment: environment)
            locale = globals.locale
            if globals.help {
                Terminal.out(Help.text(for: command, locale: locale))
                return 0
            }
            if globals.version {
                Terminal.out("entryctl \(EntrydVersion.string)\n")
                return 0
            }
            let action = try command.prepare(CommandInput(scanned: after, globals: globals, environment: environment))
            try action(DaemonConnection(globals: globals, environment: environment))
            return ExitCode.success.rawValue
        } catch {
            return Terminal.fail(FailureReport(for: error, usage: usage, locale: locale))
        }
    }

    /// `entryctl help [COMMAND]`.
    private static func help(_ arguments: [String], locale: EntryLocale) throws -> Int32 {
        guard let name = arguments.first, name != "--help", name != "-h", name != "help" else {
            Terminal.out(Help.main(locale))
            return 0
        }
        guard arguments.count == 1 else { throw UsageError(zh: "help 只接受一个命令名", en: "help takes one command name") }
        guard let command = Help.command(named: name) else {
            throw UsageError(zh: "未知的命令“\(name)”", en: "unknown command '\(name)'")
        }
        Terminal.out(Help.text(for: command, locale: locale))
        return 0
    }
}
