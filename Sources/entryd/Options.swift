import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync
import EntryServer
import EntryArguments

/// entryd's command line (parse → validate → run, as swift-argument-parser does).
///
/// Every setting flag is optional: a flag given overrides `entryd.conf`
/// (``apply(to:)``), which overrides the environment and embedded defaults.
struct Options {
    /// `--config FILE`: `nil` means ``DaemonConfiguration/defaultPath`` (which may be missing).
    var configPath: String?
    /// `--check-config`: validate, print the effective configuration, exit 0 or 78.
    var checkConfig = false
    var socket: String?
    var database: String?
    /// `--instance NAME`: this instance's name (``DaemonConfiguration/instance``).
    var instance: String?
    /// `--state-directory DIR`: the state directory, in place of `$STATE_DIRECTORY`
    /// (``DaemonPaths/stateDirectory(flag:environment:)``): where a hub instance
    /// keeps its marker file, and where the default database is. Tests and the
    /// bench give their own, so nothing is written to the user's
    /// `~/.local/state/entryd`.
    var stateDirectory: String?
    var formsDirectory: String?
    var locale: EntryLocale?
    var logLevel: Log.Level?
    var maxConnections: Int?
    var idleTimeoutSeconds: Int?
    var peerTimeoutSeconds: Int?
    var maxMessageBytes: Int?
    var maxBatch: Int?
    var peers: [PeerConfig] = []
    var syncInterval: Int?
    /// `--as-new-node` / `--moved`: the operator's word on a database last opened elsewhere.
    var copies: CopiedDatabasePolicy = .refuse
    /// `--restore FILE`: put the backup FILE in place of the database, then exit (``RestoreOption``).
    var restoreFrom: String?

    /// What `--version` prints: the daemon's version, the libraries that canonicalise
    /// values (``LibraryVersions``: `libphonenumber 8.12.57`, `libidn2 2.3.3`), then the version of the
    /// reference data compiled into it (``ReferenceData/dataVersion``: the
    /// generation date and source releases of the country table, the division
    /// lists, a digest), e.g. `reference data: countries 2026-12-01 (iso-codes 4.15.0, …`.
    static var versionText: String {
        (["entryd \(EntrydVersion.string)"] + LibraryVersions.all.map { "lib\($0.name) \($0.version)" }
            + ["reference data: \(ReferenceData.shared.dataVersion)"]).joined(separator: "\n")
    }

    static let usage = """
        Usage: entryd [OPTIONS]

        The entryd daemon: validates form entries against their picker lists, keeps
        them in SQLite with a change log, and serves them over varlink on a Unix socket.

        Options:
          --config FILE         configuration file (default: /etc/entryd/entryd.conf if
                                present); drop-ins FILE.d/*.conf apply after it
          --check-config        validate the configuration and forms, print the
                                effective configuration, exit 0 (or 78 when invalid)
          --socket PATH         socket to listen on (default: `socket` in the file,
                                $ENTRYD_SOCKET, $XDG_RUNTIME_DIR/entryd.sock, ./entryd.sock;
                                a socket passed by systemd comes first)
          --db PATH|URI         database file (default: `database` in the file, $ENTRYD_DB,
                                $STATE_DIRECTORY/entries.db, $XDG_STATE_HOME/entryd/entries.db,
                                ~/.local/state/entryd/entries.db), or a PostgreSQL database
                                by its libpq URI, postgresql://USER@HOST:PORT/NAME: several
                                entryd instances on one database serve as one node (a hub;
                                doc/hub.md)
          --instance NAME       this instance's name, shown by `entryctl status` (default:
                                `instance` in the file, else the host name; entryd@NAME.service
                                passes NAME)
          --state-directory DIR the state directory, in place of $STATE_DIRECTORY: a
                                hub instance keeps its marker file there, and the default
                                database is DIR/entries.db (default: $STATE_DIRECTORY,
                                $XDG_STATE_HOME/entryd, ~/.local/state/entryd)
          --forms DIR           read form definitions from DIR/*.conf (default: `forms` in
                                the file, $ENTRYD_FORMS, else the built-in registration form)
          --locale zh|en        default locale of replies (default: zh)
          --log-level LEVEL     error, warning, notice, info or debug (default: info)
          --max-connections N   simultaneous clients (default: 1024)
          --idle-timeout SECS   close connections silent this long (default: 300)
          --peer-timeout SECS   give up on a peer that does not answer this long (default: 30)
          --max-message-size B  largest message in bytes (default: 4194304)
          --max-batch N         rows per Import, changes per Apply (default: 10000)
          --peer NAME=ADDRESS   a peer to sync with (repeatable): ADDRESS is unix:/path
                                or exec:COMMAND, e.g. exec:ssh host entryctl bridge;
                                `entryctl sync NAME` syncs it
          --sync-interval SECS  sync every configured peer this often (0: on demand;
                                default: each peer's `interval`, 60)
          --restore FILE        with the daemon stopped: check the backup FILE (made by
                                `entryctl backup`) and put it in place of the database
                                named by --db (or `database`, $ENTRYD_DB, --state-directory,
                                $STATE_DIRECTORY),
                                keeping the old one as DATABASE.before-restore; then exit.
                                Its next start begins a new incarnation
          --as-new-node         the database is a copy of a node's (last opened at another
                                place): serve it as a new node, with a new node id
          --moved               the database was moved here and its old place no longer
                                runs it: the same node, in a new incarnation
          -h, --help            show this help
          --version             show the version and the reference data's version

        Signals: SIGTERM or SIGINT stops accepting, finishes in-flight calls, closes
        the database and exits 0 (1 if a client still had not taken its replies after
        10 s: every call answered is stored; calls queued behind an unread reply are
        not run). SIGHUP re-reads the configuration and the forms; a bad new
        configuration is refused and the old one stays.

        Exit codes: 0 ok, 1 stopped while a client had not taken its replies (above),
        64 bad arguments, 65 a backup that fails its checks (--restore), 66 a backup file
        that cannot be read (--restore), 69 the socket or the database in use by a live
        entryd (or the PostgreSQL server cannot be reached yet: systemd's
        Restart=on-failure tries again; or libpq5 is not installed), 73 cannot create the
        socket (or the directory of a --db does not exist), 74 cannot open the database,
        78 bad configuration (or a database copied or moved from elsewhere: say
        --as-new-node or --moved).
        """

    /// A bad command line: the message, for `entryd: …` and exit 64.
    struct OptionError: Error { let message: String }

    /// The options as the scanner reads them. Each may be given again, the last
    /// one counting (`--peer` adds a peer each time), except `--restore`.
    static let specs: [ArgumentOption] =
        [
            (["--help", "-h"], nil), (["--version"], nil), (["--config"], "FILE"), (["--check-config"], nil),
            (["--socket"], "PATH"), (["--db"], "PATH|URI"), (["--instance"], "NAME"), (["--state-directory"], "DIR"),
            (["--forms"], "DIR"), (["--locale"], "zh|en"), (["--log-level"], "LEVEL"), (["--max-connections"], "N"),
            (["--idle-timeout"], "SECS"), (["--peer-timeout"], "SECS"), (["--max-message-size"], "B"),
            (["--max-batch"], "N"),
            (["--peer"], "NAME=ADDRESS"), (["--sync-interval"], "SECS"), (["--as-new-node"], nil), (["--moved"], nil),
        ].map { ArgumentOption($0.0, value: $0.1, repeatable: true) } + [ArgumentOption(["--restore"], value: "FILE")]

    /// Parses `arguments` (without the program name), in order. Returns `nil`
    /// after printing help or the version.
    static func parse(_ arguments: [String]) throws(OptionError) -> Options? {
        var o = Options()
        var scanner = ArgumentScanner(arguments, options: specs, positionals: false)
        func number(_ flag: String, _ text: String, _ range: ClosedRange<Int>) throws(OptionError) -> Int {
            guard let n = Int(text), range.contains(n) else {
                throw OptionError(
                    message:
                        "\(flag) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
            }
            return n
        }
        while true {
            let item: ArgumentScanner.Item?
            do { item = try scanner.next() } catch { throw OptionError(message: error.en) }
            // Without positionals the scanner reads options only.
            guard case .option(let option, let value)? = item else { break }
            let arg = option.name
            let text = value ?? ""
            switch arg {
            case "--help":
                print(usage)
                return nil
            case "--version":
                print(versionText)
                return nil
            case "--config": o.configPath = text
            case "--check-config": o.checkConfig = true
            case "--restore": o.restoreFrom = text
            case "--as-new-node", "--moved":
                let policy: CopiedDatabasePolicy = arg == "--moved" ? .sameNode : .newNode
                guard o.copies == .refuse || o.copies == policy else {
                    throw OptionError(
                        message: "--as-new-node and --moved contradict each other: a database is either a copy or moved"
                    )
                }
                o.copies = policy
            case "--socket": o.socket = text
            case "--db": o.database = text
            case "--instance":
                guard DaemonConfiguration.isValidInstance(text) else {
                    throw OptionError(
                        message: "--instance takes 1 to 64 letters, digits, '.', '_' or '-', e.g. hub-1; not '\(text)'")
                }
                o.instance = text
            case "--state-directory":
                guard !text.isEmpty else { throw OptionError(message: "--state-directory needs a directory") }
                o.stateDirectory = text
            case "--forms": o.formsDirectory = text
            case "--locale":
                guard let l = EntryLocale(tag: text) else {
                    throw OptionError(message: "--locale must be zh or en, not '\(text)'")
                }
                o.locale = l
            case "--log-level":
                guard let l = Log.Level(name: text) else {
                    throw OptionError(
                        message: "--log-level must be error, warning, notice, info or debug, not '\(text)'")
                }
                o.logLevel = l
            case "--max-connections": o.maxConnections = try number(arg, text, 1...65536)
            case "--idle-timeout": o.idleTimeoutSeconds = try number(arg, text, 1...86400)
            case "--peer-timeout": o.peerTimeoutSeconds = try number(arg, text, 1...3600)
            case "--max-message-size": o.maxMessageBytes = try number(arg, text, 4096...(64 << 20))
            case "--max-batch": o.maxBatch = try number(arg, text, 1...1_000_000)
            case "--peer":
                guard let eq = text.firstIndex(of: "="), eq != text.startIndex else {
                    throw OptionError(message: "--peer takes NAME=ADDRESS, not '\(text)'")
                }
                let address = String(text[text.index(after: eq)...])
                let name = String(text[..<eq])
                // The file's rule ([peer NAME]): the name labels logs and metrics lines.
                guard ConfigValues.isPeerName(name) else {
                    throw OptionError(
                        message: "--peer: a peer name is 1-64 letters, digits, '.', '_' or '-', not '\(name)'")
                }
                guard !o.peers.contains(where: { $0.name == name }) else {
                    throw OptionError(message: "--peer: peer '\(name)' is given twice")
                }
                guard address.hasPrefix("unix:") || address.hasPrefix("exec:") else {
                    throw OptionError(message: "a peer address starts with unix: or exec:, not '\(address)'")
                }
                o.peers.append(PeerConfig(name: name, address: address))
            case "--sync-interval": o.syncInterval = try number(arg, text, 0...86400)
            default: preconditionFailure("\(arg) is in specs but not read")
            }
        }
        return o
    }

    /// Lays the flags over a configuration read from the file. `--peer` adds a
    /// peer or replaces the file's peer of that name; `--sync-interval` sets
    /// the interval of every peer. Paths are resolved later, with the
    /// environment (``DaemonSettings``).
    func apply(to config: inout DaemonConfiguration) {
        if let v = locale { config.locale = v }
        if let v = logLevel { config.logLevel = v }
        if let v = instance { config.instance = v }
        if let v = maxConnections { config.limits.maxConnections = v }
        if let v = idleTimeoutSeconds { config.limits.idleTimeoutSeconds = v }
        if let v = peerTimeoutSeconds { config.limits.peerTimeoutSeconds = v }
        if let v = maxMessageBytes { config.limits.maxMessageBytes = v }
        if let v = maxBatch { config.limits.maxBatch = v }
        for peer in peers {
            if let i = config.peers.firstIndex(where: { $0.name == peer.name }) {
                config.peers[i].address = peer.address
            } else {
                config.peers.append(peer)
            }
        }
        if let v = syncInterval {
            for i in config.peers.indices { config.peers[i].intervalSeconds = v }
        }
    }
}
