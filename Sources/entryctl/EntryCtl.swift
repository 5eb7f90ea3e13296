#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import EntryModel
import EntryProtocol
import EntryClient

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
            Terminal.message("cannot write to standard output: \(String(cString: strerror(e)))")
            return ExitCode.ioError.rawValue
        }
        return code
    }

    /// ``run(arguments:environment:)`` before the check of the output.
    private static func runCommand(arguments: [String], environment: [String: String]) -> Int32 {
        var usage = Help.mainUsage
        var locale = EntryLocale.en  // until the options are read: usage errors are in English
        do {
            let (before, consumed) = try ArgumentScanner.scan(arguments, options: GlobalOptions.specs, stopAtPositional: true)
            let rest = Array(arguments[consumed...])
            guard let name = rest.first else {
                if before.has("--version") { Terminal.out("entryctl \(EntrydVersion.string)\n"); return 0 }
                if before.has("--help") { Terminal.out(Help.main); return 0 }
                throw UsageError("no command given")
            }
            if name == "help" { return try help(Array(rest.dropFirst())) }
            guard let command = Help.command(named: name) else {
                let names = Help.commands.map(\.name)
                let hint = MatchKey.nearest(name, among: names).map { "did you mean '\($0)'? " } ?? ""
                throw UsageError("unknown command '\(name)' (\(hint)commands: \(names.joined(separator: ", ")))")
            }
            usage = command.usage
            let (after, _) = try ArgumentScanner.scan(Array(rest.dropFirst()), options: command.options + GlobalOptions.specs)
            let globals = try GlobalOptions(GlobalOptions.merge(before, after), environment: environment)
            locale = globals.locale
            if globals.help { Terminal.out(Help.text(for: command)); return 0 }
            if globals.version { Terminal.out("entryctl \(EntrydVersion.string)\n"); return 0 }
            let action = try command.prepare(CommandInput(scanned: after, globals: globals))
            try action(DaemonSession(globals: globals, environment: environment))
            return ExitCode.success.rawValue
        } catch {
            return Terminal.fail(FailureReport(for: error, usage: usage, locale: locale))
        }
    }

    /// `entryctl help [COMMAND]`.
    private static func help(_ arguments: [String]) throws -> Int32 {
        guard let name = arguments.first, name != "--help", name != "-h", name != "help" else { Terminal.out(Help.main); return 0 }
        guard arguments.count == 1 else { throw UsageError("help takes one command name") }
        guard let command = Help.command(named: name) else { throw UsageError("unknown command '\(name)'") }
        Terminal.out(Help.text(for: command))
        return 0
    }
}
