@preconcurrency import Glibc
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync
import EntryServer
import Foundation

/// entryd: wiring only. Parses the options, reads the configuration, then
/// either checks it (`--check-config`), restores a backup (`--restore`), or
/// serves: takes the socket from systemd or binds it, and runs the services
/// (store, peer scheduler, listener, stored-values pass, watchdog) with a ``ServiceRunner`` until
/// SIGTERM or SIGINT; SIGHUP reloads. The logic lives in EntryServer and the targets below it.
final class EntryDaemon {
    private let options: Options
    private let environment: [String: String]
    private let log: Log
    private let notifier: Notifier
    /// The settings in force; only ``reload(store:listener:)`` changes them, on the runner's thread.
    private var settings: DaemonSettings

    /// The daemon's whole life: exits with an ``ExitCode`` (0 after a clean stop).
    static func main() -> Never {
        let environment = ProcessInfo.processInfo.environment
        let options: Options
        do {
            guard let parsed = try Options.parse(Array(CommandLine.arguments.dropFirst())) else { exit(.success) }
            options = parsed
        } catch {
            fputs("entryd: \(error.message)\nTry 'entryd --help'.\n", stderr)
            exit(.usage)
        }
        let log = Log(threshold: options.logLevel ?? .info, environment: environment)
        let settings: DaemonSettings
        do {
            settings = try DaemonSettings.load(options, environment: environment)
        } catch {
            if options.checkConfig {
                fputs("entryd: \(error)\n", stderr)
            } else {
                log.error("bad configuration, not starting: \(error)")
            }
            exit(.config)
        }
        if options.checkConfig {
            let activated = environment["LISTEN_PID"].flatMap { pid_t($0) } == getpid()
            print(
                settings.config.rendered(
                    socket: settings.socketPath, socketActivated: activated,
                    database: DaemonPaths.redacted(settings.databasePath), forms: settings.formsDirectory),
                terminator: "")
            print("# forms loaded: " + settings.forms.forms.map(\.name).joined(separator: ", "))
            exit(.success)
        }
        log.threshold = settings.config.logLevel
        let restoreFrom = options.restoreFrom
        if restoreFrom != nil, DaemonPaths.isServerURI(settings.databasePath) {
            fputs(
                "entryd: --restore puts back a SQLite backup; the database \(DaemonPaths.redacted(settings.databasePath)) is PostgreSQL's: "
                    + "restore it with pg_restore (or the server's point-in-time recovery) with every instance stopped; "
                    + "the next start begins a new incarnation (doc/hub.md)\n", stderr)
            exit(.usage)
        }
        if let restoreFrom {
            // A restore replaces a database: never a default one nobody named (from a
            // shell, without --state-directory or $STATE_DIRECTORY, that is a per-user
            // path, not the service's).
            guard
                settings.databaseIsNamed || options.stateDirectory != nil
                    || environment["STATE_DIRECTORY"].map({ !$0.isEmpty }) == true
            else {
                fputs(
                    "entryd: --restore needs the database it replaces: give --db PATH (the service's is "
                        + "/var/lib/entryd/entries.db); without it, it would go to '\(settings.databasePath)'\n", stderr
                )
                exit(.usage)
            }
            let outcome = RestoreOption.run(
                backup: restoreFrom, database: settings.databasePath, socket: settings.socketPath)
            fputs("entryd: " + outcome.message + "\n", outcome.status == .success ? stdout : stderr)
            exit(outcome.status)
        }
        // Signals first (before any thread starts), so every thread inherits the mask
        // and only the signal thread receives them.
        Signals.block()
        let daemon = EntryDaemon(options: options, environment: environment, log: log, settings: settings)
        exit(daemon.serve())
    }

    /// Ends the process with `code`.
    private static func exit(_ code: ExitCode) -> Never {
        Glibc.exit(code.rawValue)
    }

    /// A daemon with `settings` in force; reads `NOTIFY_SOCKET` (and removes it from the environment).
    private init(options: Options, environment: [String: String], log: Log, settings: DaemonSettings) {
        self.options = options
        self.environment = environment
        self.log = log
        self.settings = settings
        self.notifier = Notifier(environment: environment, log: log)
    }

    /// Takes the socket, then runs the services until a shutdown signal.
    ///
    /// The socket comes before the database: a start that cannot listen leaves
    /// no database behind, and one whose database is in use leaves no socket.
    /// - Returns: `success` after a clean stop; `failure` when a service hung or
    ///   stopped uncleanly; the ``StartupFailure``'s code when a start failed.
    private func serve() -> ExitCode {
        let watchdogUSec = Notifier.watchdogMicroseconds(environment: environment)
        let socket: ListeningSocket
        do {
            socket = try ListeningSocket.open(settings: settings, environment: environment, log: log)
        } catch {
            log.error(error.message)
            return error.exitCode
        }
        // Parse and index the reference tables now, beside the start-up, rather
        // than in the first call that validates (ICU compiles its Traditional →
        // Simplified rules then: about 0.1 s). A call that comes first waits for it.
        Thread.detachNewThread { _ = ReferenceData.shared }
        let store = StoreService(settings: settings, notifier: notifier, log: log)
        let scheduler = SchedulerService(store: store, log: log)
        let listener = ListenerService(socket: socket, store: store, settings: settings, notifier: notifier, log: log)
        let respell = StoredValuesService(store: store, notifier: notifier, log: log)
        let watchdog = WatchdogService(usec: watchdogUSec, store: store, notifier: notifier, log: log)
        let events = RunnerEvents()
        Signals.deliver(to: events)
        let runner = ServiceRunner(
            services: [store, scheduler, listener, respell, watchdog], events: events,
            stopTimeout: .seconds(10)
        ) { [log] level, line in log.log(level, line) }
        let report: ServiceRunner.StopReport
        do {
            report = try runner.run(
                onReload: { reload(store: store, listener: listener) },
                onShutdown: { signal in
                    notifier.send("STOPPING=1", "STATUS=stopping: draining connections")
                    log.notice("signal \(signal): shutting down")
                })
        } catch {
            log.error((error.error as? StartupFailure)?.message ?? "\(error)")
            socket.release()
            return (error.error as? StartupFailure)?.exitCode ?? .failure
        }
        // A socket systemd passed belongs to entryd.socket: it stays for the next activation.
        socket.release()
        log.notice("stopped")
        return report.isClean ? .success : .failure
    }

    /// Re-reads the configuration and forms (SIGHUP) and puts them in force; a bad
    /// one is refused with a log line and the one in force stays. The socket, the
    /// database and the socket mode take effect at the next start only.
    private func reload(store: StoreService, listener: ListenerService) {
        log.notice("SIGHUP: reloading the configuration")
        notifier.send(
            "RELOADING=1", "MONOTONIC_USEC=\(Notifier.monotonicMicroseconds())", "STATUS=reloading the configuration")
        do {
            let new = try DaemonSettings.load(options, environment: environment)
            let old = settings
            for (key, old, now) in [
                ("socket", old.socketPath, new.socketPath),
                ("database", DaemonPaths.redacted(old.databasePath), DaemonPaths.redacted(new.databasePath)),
                ("instance", old.instance, new.instance),
                ("socket-mode", String(old.config.socketMode, radix: 8), String(new.config.socketMode, radix: 8)),
            ]
            where old != now {
                log.warning("reload: '\(key)' changed; it takes effect at the next start, ignoring for now")
            }
            log.threshold = new.config.logLevel
            store.entries.replaceForms(new.forms)
            store.entries.reconfigure(
                limits: new.config.limits, defaultLocale: new.config.locale, peers: new.config.peers)
            listener.listener.access = new.config.access
            settings = new
            log.notice(
                "reloaded the configuration (\(new.config.sources.count) file(s)), \(new.forms.forms.count) form(s), "
                    + "\(new.config.peers.count) peer(s); \(listener.listener.openCount) connection(s) kept")
        } catch {
            log.error("reload refused, keeping the configuration in force: \(error)")
        }
        notifier.send("READY=1", "STATUS=serving")
    }
}
