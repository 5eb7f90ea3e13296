@preconcurrency import Glibc
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync

/// The daemon's configuration: `entryd.conf` with its drop-ins, over the
/// embedded defaults (doc/design.md "Security and limits", "Running").
///
/// `config/entryd.conf` documents every key with its unit, default and bounds;
/// ``DaemonConfiguration/keys`` is the same table in code. Values that are
/// `nil` here fall back, at start-up, to the environment and the embedded
/// defaults of ``DaemonPaths`` (command-line flags > file > environment >
/// embedded defaults).
///
/// Which settings a reload (SIGHUP) can change: roles, peers, limits, locale,
/// log level and forms. `socket`, `socket-mode` and `database` take effect only
/// at start-up (the socket and the store stay open across a reload).
package struct DaemonConfiguration: Sendable, Equatable {
    /// Path of the Unix socket to bind when not socket-activated (`socket`).
    /// Default `nil`: `$ENTRYD_SOCKET`, `$XDG_RUNTIME_DIR/entryd.sock`, `./entryd.sock`.
    package var socketPath: String?
    /// Permission bits of a socket the daemon binds itself (`socket-mode`),
    /// octal. Default `0660`; `0600`…`0777` (the owner keeps read and write).
    /// A socket passed by systemd keeps the mode of `SocketMode=`.
    package var socketMode: UInt32 = 0o660
    /// Path of the SQLite database, or a PostgreSQL connection URI (`database`,
    /// or `db`). Default `nil`: `$ENTRYD_DB`,
    /// `$STATE_DIRECTORY/entries.db`, `$XDG_STATE_HOME/entryd/entries.db`.
    package var databasePath: String?
    /// This instance's name (`instance`), shown by `Status` and naming its
    /// marker file when several instances serve one PostgreSQL database.
    /// Default `nil`: the host name.
    package var instance: String?

    /// True for an instance name: 1-64 ASCII letters, digits, `.`, `_` or `-`
    /// (the rule of peer names; systemd's `%i` of `entryd@NAME`).
    package static func isValidInstance(_ name: String) -> Bool { ConfigValues.isPeerName(name) }
    /// Locale of replies to calls that give none (`locale`). Default `zh`.
    package var locale: EntryLocale = .zh
    /// Directory of form definitions, `DIR/*.conf` (`forms`). Default `nil`:
    /// `$ENTRYD_FORMS`, else the built-in registration form.
    package var formsDirectory: String?
    /// Lowest priority written to the log (`log-level`). Default `info`.
    package var logLevel: Log.Level = .info
    /// Message size, connections, idle time, batch size and clock skew
    /// (`max-message-size`, `max-connections`, `idle-timeout`, `max-batch`, `max-clock-skew`).
    package var limits = Limits()
    /// Who may do what (`[roles]`).
    package var access = AccessPolicy()
    /// The peers to sync with (`[peer NAME]`), in order of first appearance.
    package var peers: [PeerConfig] = []
    /// The files read, in the order they were applied (empty: embedded defaults only).
    package var sources: [String] = []

    /// The embedded defaults.
    package init() {}

    /// Where the daemon looks when `--config` is not given.
    package static let defaultPath = "/etc/entryd/entryd.conf"
}

/// A configuration that cannot be used: which file, line and key, and what to do.
///
/// `description` is `FILE:LINE: KEY: MESSAGE` (`FILE:LINE: MESSAGE` when the
/// problem is not one key, e.g. a malformed line; line 0 for the file as a whole).
package struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file, as it was given or found.
    package var path: String
    /// The physical line, from 1; 0 for the whole file.
    package var line: Int
    /// The key or section at fault; empty when the line as a whole is wrong.
    package var key: String
    /// What is wrong and how to fix it.
    package var message: String
    /// The file's later problems, in line order (every problem is reported, not only the first).
    package var more: [ConfigurationError] = []

    /// - Parameters:
    ///   - path: The file.
    ///   - line: The physical line, from 1; 0 for the whole file.
    ///   - key: The key or `[section]`; empty for a malformed line.
    ///   - message: What is wrong and what to do.
    package init(path: String, line: Int, key: String, message: String) {
        self.path = path
        self.line = line
        self.key = key
        self.message = message
    }

    /// `FILE:LINE: KEY: MESSAGE`, or `FILE:LINE: MESSAGE` without a key; one line per problem.
    package var description: String {
        ([self] + more).map {
            $0.key.isEmpty ? "\($0.path):\($0.line): \($0.message)" : "\($0.path):\($0.line): \($0.key): \($0.message)"
        }
        .joined(separator: "\n")
    }

    /// The first of `errors` (in line order) carrying the others in ``more``, or `nil` when there are none.
    static func collected(_ errors: [ConfigurationError]) -> ConfigurationError? {
        let sorted = errors.sorted { $0.line < $1.line }
        guard var first = sorted.first else { return nil }
        first.more = Array(sorted.dropFirst())
        return first
    }
}
