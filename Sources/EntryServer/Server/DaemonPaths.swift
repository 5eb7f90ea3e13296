import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync

/// Where the daemon listens and stores, when nothing configures it otherwise
/// (doc/design.md "Running", the embedded default without systemd).
package enum DaemonPaths {
    /// The socket path: `flag`, else `$ENTRYD_SOCKET`, else
    /// `$XDG_RUNTIME_DIR/entryd.sock`, else `./entryd.sock`.
    package static func socket(flag: String?, environment env: [String: String]) -> String {
        if let flag, !flag.isEmpty { return flag }
        if let s = env["ENTRYD_SOCKET"], !s.isEmpty { return s }
        if let r = env["XDG_RUNTIME_DIR"], !r.isEmpty { return r + "/entryd.sock" }
        return "./entryd.sock"
    }

    /// The database path: `flag`, else `$ENTRYD_DB`, else
    /// `$STATE_DIRECTORY/entries.db` (systemd's StateDirectory=), else
    /// `$XDG_STATE_HOME/entryd/entries.db`, else `$HOME/.local/state/entryd/entries.db`.
    /// True when the database path was named by the user (`--db`, `database`
    /// in entryd.conf, or `$ENTRYD_DB`), not one of the default state
    /// directories: its directory must exist already (a typo must not create a
    /// new, empty database in a new directory).
    /// True for a database named by a libpq connection URI (`postgresql://…`,
    /// `postgres://…`): a PostgreSQL database (EntryHub) instead of a SQLite file.
    package static func isServerURI(_ database: String) -> Bool {
        database.hasPrefix("postgresql://") || database.hasPrefix("postgres://")
    }

    /// `database` as it may be shown and logged: a URI's password (in its
    /// user part, or a query parameter that libpq reads as a secret option,
    /// `password` or `sslpassword`, its name percent-decoded as libpq decodes
    /// it: `pass%77ord=` too) replaced by `***`; a path as it is.
    package static func redacted(_ database: String) -> String {
        guard isServerURI(database), let scheme = database.range(of: "://") else { return database }
        var text = database
        let rest = text[scheme.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        if let at = rest[..<authorityEnd].lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") {
            text.replaceSubrange(text.index(after: colon)..<at, with: "***")
        }
        guard let question = text.firstIndex(of: "?") else { return text }
        let parameters = text[text.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false)
            .map { pair -> String in
                guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
                let name = String(pair[..<equals])
                let decoded = (name.removingPercentEncoding ?? name).lowercased()
                return secretOptions.contains(decoded) ? name + "=***" : String(pair)
            }
        return String(text[...question]) + parameters.joined(separator: "&")
    }

    /// libpq's connection options shown as secrets (`dispchar` `*` in PQconninfoOptions).
    static let secretOptions: Set<String> = ["password", "sslpassword"]

    package static func databaseIsNamed(flag: String?, environment env: [String: String]) -> Bool {
        (flag.map { !$0.isEmpty } ?? false) || (env["ENTRYD_DB"].map { !$0.isEmpty } ?? false)
    }

    /// - Parameter stateFlag: `--state-directory`, for the default
    ///   (``stateDirectory(flag:environment:)``).
    package static func database(
        flag: String?, stateDirectory stateFlag: String? = nil, environment env: [String: String]
    ) -> String {
        if let flag, !flag.isEmpty { return flag }
        if let s = env["ENTRYD_DB"], !s.isEmpty { return s }
        return stateDirectory(flag: stateFlag, environment: env) + "/entries.db"
    }

    /// The daemon's state directory: `flag` (`--state-directory`), else
    /// `$STATE_DIRECTORY` (systemd's StateDirectory=; the first of a
    /// colon-separated list), else `$XDG_STATE_HOME/entryd`, else
    /// `$HOME/.local/state/entryd`. A hub instance keeps its marker file there.
    package static func stateDirectory(flag: String? = nil, environment env: [String: String]) -> String {
        if let flag, !flag.isEmpty { return flag }
        if let s = env["STATE_DIRECTORY"], !s.isEmpty { return String(s.split(separator: ":").first ?? Substring(s)) }
        if let s = env["XDG_STATE_HOME"], !s.isEmpty { return s + "/entryd" }
        return (env["HOME"] ?? ".") + "/.local/state/entryd"
    }
}
