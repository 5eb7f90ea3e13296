import EntryModel
import EntryProtocol
import EntryClient
import EntryArguments

/// The options every command takes, before the command or after it.
struct GlobalOptions {
    /// `--socket PATH`, the only socket tried when given.
    var socket: String?
    /// `--locale`, else `$ENTRYCTL_LOCALE`, else `zh`: the locale of the daemon's
    /// labels, display values and messages, and of the table headers.
    var locale: EntryLocale = .zh
    /// `--json`: print the reply parameters as JSON instead of text.
    var json = false
    /// `--help` / `-h`.
    var help = false
    /// `--version`.
    var version = false
    /// `--timeout SECONDS`: the longest wait for one reply (and for a send);
    /// 0 waits without bound. Default 60 s. `watch` and `bridge` wait for
    /// changes without bound whatever it says.
    var timeoutSeconds = GlobalOptions.defaultTimeoutSeconds
    /// The default of ``timeoutSeconds``.
    static let defaultTimeoutSeconds = 60

    /// The global options as the scanner knows them.
    static let specs: [OptionSpec] = [
        OptionSpec(
            ["--socket"], value: "PATH",
            help: Localized(
                zh: "连接在 PATH 上监听的 entryd（只试这个套接字）。",
                en: "Talk to the entryd listening on PATH (only that socket is tried).")),
        OptionSpec(
            ["--locale"], value: "zh|en",
            help: Localized(
                zh: "标签、值和消息的语言（默认：$ENTRYCTL_LOCALE，否则 zh）。",
                en: "Language of labels, values and messages (default: $ENTRYCTL_LOCALE, else zh).")),
        OptionSpec(
            ["--json"],
            help: Localized(
                zh: "把回复参数输出为 JSON（一行紧凑格式；watch：每个修改一行）。",
                en: "Print the reply parameters as JSON (one compact line; watch: one change per line).")),
        OptionSpec(
            ["--timeout"], value: "SECONDS",
            help: Localized(
                zh: "等待回复的最长时间（默认 60；0：不限；watch 一直等待）。",
                en: "Longest wait for a reply (default 60; 0: no limit; watch waits for ever).")),
        OptionSpec(
            ["--help", "-h"],
            help: Localized(zh: "显示帮助（也可用：entryctl help COMMAND）。", en: "Show help (also: entryctl help COMMAND).")),
        OptionSpec(["--version"], help: Localized(zh: "显示版本。", en: "Show the version.")),
    ]

    /// The locale for words printed before the options are read (and for usage
    /// errors in them): the last valid `--locale VALUE` or `--locale=VALUE`,
    /// else a valid `ENTRYCTL_LOCALE`, else `zh` — as ``init(_:environment:)`` decides.
    static func earlyLocale(arguments: [String], environment: [String: String]) -> EntryLocale {
        var found: EntryLocale?
        for (k, argument) in arguments.enumerated() {
            if argument == "--" { break }
            if argument == "--locale", k + 1 < arguments.count, let l = EntryLocale(tag: arguments[k + 1]) { found = l }
            if argument.hasPrefix("--locale="), let l = EntryLocale(tag: String(argument.dropFirst(9))) { found = l }
        }
        return found ?? environment["ENTRYCTL_LOCALE"].flatMap { EntryLocale(tag: $0) } ?? .zh
    }

    /// The canonical names of ``specs``.
    static let names = Set(specs.map(\.name))

    /// Reads the global options out of scanned arguments (which may hold command options too).
    ///
    /// - Parameter environment: `ENTRYCTL_LOCALE` is read when `--locale` is absent.
    /// - Throws: ``UsageError`` for a locale that is neither `zh` nor `en`
    ///   (longer tags such as `zh_CN.UTF-8` are read by their language).
    init(_ scanned: ScannedArguments, environment: [String: String]) throws {
        socket = scanned.value("--socket")
        json = scanned.has("--json")
        help = scanned.has("--help")
        version = scanned.has("--version")
        if let text = scanned.value("--timeout") {
            guard let seconds = Int(text), (0...86_400).contains(seconds) else {
                throw UsageError(
                    zh: "--timeout 取 0（不限）到 86400 之间的整秒数，不是“\(text)”",
                    en: "--timeout takes whole seconds from 0 (no limit) to 86400, not '\(text)'")
            }
            timeoutSeconds = seconds
        }
        if let tag = scanned.value("--locale") {
            guard let locale = EntryLocale(tag: tag) else {
                throw UsageError(zh: "--locale 为 zh 或 en，不是“\(tag)”", en: "--locale is zh or en, not '\(tag)'")
            }
            self.locale = locale
        } else if let tag = environment["ENTRYCTL_LOCALE"], !tag.isEmpty {
            guard let locale = EntryLocale(tag: tag) else {
                throw UsageError(
                    zh: "ENTRYCTL_LOCALE 为 zh 或 en，不是“\(tag)”", en: "ENTRYCTL_LOCALE is zh or en, not '\(tag)'")
            }
            self.locale = locale
        }
    }

    /// Merges the globals given before the command with those given after it.
    /// - Throws: ``UsageError`` when one is given in both places.
    static func merge(_ before: ScannedArguments, _ after: ScannedArguments) throws -> ScannedArguments {
        var merged = before
        for (name, value) in after.values where names.contains(name) {
            guard merged.values[name] == nil else { throw UsageError(ArgumentError(.repeated(name))) }
            merged.values[name] = value
        }
        for flag in after.flags where names.contains(flag) {
            guard !merged.flags.contains(flag) else { throw UsageError(ArgumentError(.repeated(flag))) }
            merged.flags.insert(flag)
        }
        return merged
    }
}
