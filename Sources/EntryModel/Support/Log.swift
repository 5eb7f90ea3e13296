@preconcurrency import Glibc
import Foundation
import Synchronization

/// The daemon's log: one line per event on stderr. With `JOURNAL_STREAM` set
/// (stderr connected to journald, systemd.exec(5)) each line starts with its
/// syslog priority `<N>` (sd-daemon(3)); otherwise plain lines.
/// Lines carry ids and counts, never field values (form data is personal).
package final class Log: Sendable {
    /// Syslog priorities (RFC 5424 §6.2.1), most severe first.
    package enum Level: Int32, Comparable, Sendable {
        case error = 3
        case warning = 4
        case notice = 5
        case info = 6
        case debug = 7
        /// Less severe orders first: `debug < info < notice < warning < error`
        /// (the opposite of the syslog numbers).
        package static func < (a: Level, b: Level) -> Bool { a.rawValue > b.rawValue }

        /// Parses `error`, `warning`, `notice`, `info`, `debug`.
        package init?(name: String) {
            switch name.lowercased() {
            case "error", "err": self = .error
            case "warning", "warn": self = .warning
            case "notice": self = .notice
            case "info": self = .info
            case "debug": self = .debug
            default: return nil
            }
        }
    }

    /// Lines below this level are dropped. Thread-safe: a reload (SIGHUP)
    /// may change it while other threads log.
    package var threshold: Level {
        get { storedThreshold.withLock { $0 } }
        set { storedThreshold.withLock { $0 = newValue } }
    }
    private let storedThreshold: Mutex<Level>
    let journal: Bool
    let program: String

    /// - Parameters:
    ///   - threshold: the lowest level written. Default `info`.
    ///   - environment: `JOURNAL_STREAM` there selects `<N>` priority prefixes.
    ///   - program: the name lines start with outside the journal. Default `entryd`.
    package init(threshold: Level = .info, environment: [String: String], program: String = "entryd") {
        self.storedThreshold = Mutex(threshold)
        self.journal = environment["JOURNAL_STREAM"] != nil
        self.program = program
    }

    /// Writes one line at `level`.
    package func log(_ level: Level, _ message: String) {
        guard level >= threshold else { return }
        let line = (journal ? "<\(level.rawValue)>" : program + ": ") + message + "\n"
        _ = line.withCString { fputs($0, stderr) }
    }

    /// Logs `m` at priority 3 (`error`).
    package func error(_ m: String) { log(.error, m) }
    /// Logs `m` at priority 4 (`warning`).
    package func warning(_ m: String) { log(.warning, m) }
    /// Logs `m` at priority 5 (`notice`).
    package func notice(_ m: String) { log(.notice, m) }
    /// Logs `m` at priority 6 (`info`).
    package func info(_ m: String) { log(.info, m) }
    /// Logs `m` at priority 7 (`debug`).
    package func debug(_ m: String) { log(.debug, m) }
}
