@preconcurrency import Glibc
import Foundation
import EntryModel
import EntryProtocol
import EntryClient

/// Where entryctl writes: stdout for results, stderr for messages.
enum Terminal {
    /// Writes `text` to stdout and flushes, so `watch` lines reach a pipe at once.
    static func out(_ text: String) {
        if fputs(text, stdout) < 0 || fflush(stdout) != 0 { outputError = outputError ?? errno }
    }

    /// The errno of the first failed write to stdout, if any: the command then
    /// exits 74 (EX_IOERR) instead of claiming success with lost output.
    nonisolated(unsafe) static var outputError: Int32?

    /// Writes each line plus `\n` to stdout.
    static func out(lines: [String]) {
        guard !lines.isEmpty else { return }
        out(lines.map { $0 + "\n" }.joined())
    }

    /// Writes one line to stderr, prefixed `entryctl: `.
    static func message(_ line: String) {
        fputs("entryctl: " + line + "\n", stderr)
    }

    /// Writes `report` to stderr — the first line prefixed `entryctl: `, the
    /// others as they are — and returns its exit code.
    static func fail(_ report: FailureReport) -> Int32 {
        var text = ""
        for (k, line) in report.lines.enumerated() { text += (k == 0 ? "entryctl: " : "") + line + "\n" }
        fputs(text, stderr)
        return report.exitCode.rawValue
    }

    /// `key  value` lines with the keys padded to one display width; empty values are skipped.
    static func keyValueLines(_ pairs: [(String, String)], indent: String = "") -> [String] {
        let shown = pairs.filter { !$0.1.isEmpty }
        let width = shown.map { DisplayWidth.of($0.0) }.max() ?? 0
        return shown.map { key, value in
            indent + DisplayWidth.padded(DisplayWidth.sanitized(key), to: width) + "  " + DisplayWidth.sanitized(value)
        }
    }

    // MARK: - Times

    // entryctl is single-threaded; the formatter is only used from the main thread.
    nonisolated(unsafe) private static let wireTime: ISO8601DateFormatter = {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f
    }()

    private static let localTime: DateFormatter = {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.calendar = Calendar(identifier: .gregorian)
        f.timeZone = TimeZone.current
        f.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return f
    }()

    /// `date` as local `yyyy-MM-dd HH:mm:ss`.
    static func localTime(_ date: Date) -> String { localTime.string(from: date) }

    /// A wire time (`2026-11-30T08:15:02.123Z`) as local `yyyy-MM-dd HH:mm:ss`;
    /// text that is not a wire time is returned as it is.
    static func localTime(_ wire: String) -> String {
        guard let date = wireTime.date(from: wire) else { return wire }
        return localTime.string(from: date)
    }
}
