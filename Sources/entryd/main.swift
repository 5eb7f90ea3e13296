@preconcurrency import Glibc
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync
import EntryServer
import Foundation

// entryd: wiring only. Parse options, read the configuration, open the store,
// take the socket from systemd or bind it, serve, reload on SIGHUP and stop
// cleanly on SIGTERM/SIGINT. The logic lives in EntryCore.

let environment = ProcessInfo.processInfo.environment
let options: Options
// `--restore FILE` (issue 8) is taken out before the other options are parsed.
var daemonArguments = Array(CommandLine.arguments.dropFirst())
let restoreFrom: String? = RestoreOption.extract(&daemonArguments)
do {
    guard let parsed = try Options.parse(daemonArguments) else { exit(0) }
    options = parsed
} catch {
    fputs("entryd: \(error.message)\nTry 'entryd --help'.\n", stderr)
    exit(64)
}
let log = Log(threshold: options.logLevel ?? .info, environment: environment)

/// EX_CONFIG (sysexits.h): the configuration or a form file is wrong.
let exitConfig: Int32 = 78

let settings: Settings
do {
    settings = try Settings.load(options, environment: environment)
} catch {
    if options.checkConfig {
        fputs("entryd: \(error)\n", stderr)
    } else {
        log.error("bad configuration, not starting: \(error)")
    }
    exit(exitConfig)
}
if options.checkConfig {
    let activated = environment["LISTEN_PID"].flatMap { pid_t($0) } == getpid()
    print(settings.config.rendered(socket: settings.socketPath, socketActivated: activated,
                                   database: settings.databasePath, forms: settings.formsDirectory), terminator: "")
    print("# forms loaded: " + settings.forms.forms.map(\.name).joined(separator: ", "))
    exit(0)
}
log.threshold = settings.config.logLevel
if let restoreFrom {
    let outcome = RestoreOption.run(backup: restoreFrom, database: settings.databasePath, socket: settings.socketPath)
    fputs("entryd: " + outcome.message + "\n", outcome.status == 0 ? stdout : stderr)
    exit(outcome.status)
}

// Signals first (before any thread starts), so every thread inherits the mask
// and only the signal thread receives them.
/// SIGTERM, SIGINT and SIGHUP: blocked in every thread, taken by sigwait(3) in one.
func daemonSignals() -> sigset_t {
    var set = sigset_t()
    sigemptyset(&set)
    for s in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&set, s) }
    return set
}
var blocked = daemonSignals()
pthread_sigmask(SIG_BLOCK, &blocked, nil)
signal(SIGPIPE, SIG_IGN)

let notifier = Notifier(environment: environment, log: log)
let watchdogUSec = Notifier.watchdogMicroseconds(environment: environment)
let activatedFD: Int32?
do {
    activatedFD = try SocketActivation.takeListeningSocket(environment: environment, log: log)
} catch {
    log.error("\(error)")
    exit(73)
}

let databasePath = settings.databasePath

// The socket first, then the database: a start that cannot listen leaves no
// database behind, and one whose database is in use leaves no socket.
let socketPath: String
let listenFD: Int32
if let fd = activatedFD {
    listenFD = fd
    socketPath = SocketActivation.boundPath(fd)
} else {
    socketPath = settings.socketPath
    do {
        listenFD = try SocketFile.bind(path: socketPath, mode: mode_t(settings.config.socketMode), log: log)
    } catch let e as SocketFile.InUse {
        log.error("another entryd is already serving '\(e.path)'; stop it first or choose another --socket")
        exit(69)
    } catch {
        log.error("cannot listen on '\(socketPath)': \(error)")
        exit(73)
    }
}
/// Removes the socket file this run bound (never one systemd passed).
func releaseSocket() { if activatedFD == nil { unlink(socketPath) } }

let databaseLock: DatabaseLock
let store: EntryStore
do {
    notifier.send("STATUS=opening the database")
    let directory = (databasePath as NSString).deletingLastPathComponent
    try FileManager.default.createDirectory(atPath: directory.isEmpty ? "." : directory, withIntermediateDirectories: true)
    databaseLock = try DatabaseLock(path: databasePath)
    let stale = EntryStore.removeStaleSnapshots(database: databasePath)
    if stale > 0 { log.notice("removed \(stale) backup snapshot(s) left by an interrupted backup") }
    store = try EntryStore(path: databasePath, progress: { version, total in
        notifier.send("STATUS=migrating the database to schema version \(version) of \(total)")
        log.info("migrating database to schema version \(version) of \(total)")
    })
} catch let e as DatabaseLock.InUse {
    log.error("\(e)")
    releaseSocket()
    exit(69)
} catch {
    log.error("cannot open database '\(databasePath)': \(error)")
    releaseSocket()
    exit(74)
}

let config = settings.config
let openFiles = ResourceLimits.raiseOpenFiles()
if openFiles < config.limits.maxConnections + 32 {
    log.warning("open-file limit \(openFiles) is below max-connections \(config.limits.maxConnections) + 32; raise LimitNOFILE")
}
/// The settings in force; only the signal thread changes them (reload).
final class SettingsInForce: @unchecked Sendable { var value: Settings; init(_ s: Settings) { value = s } }
let inForce = SettingsInForce(settings)
let service = EntryService(store: store, forms: settings.forms, limits: config.limits, defaultLocale: config.locale, peers: config.peers)
let listener = Listener(fd: listenFD, service: service, access: config.access, log: log)

let scheduler = PeerScheduler(host: service) { log.info($0) }
let schedulerThread = Thread { scheduler.run() }
schedulerThread.name = "entryd-peers"
schedulerThread.start()

/// Re-reads the configuration and forms (SIGHUP) and puts them in force; a bad
/// one is refused with a log line and the one in force stays.
func reload() {
    notifier.send("RELOADING=1", "MONOTONIC_USEC=\(Notifier.monotonicMicroseconds())", "STATUS=reloading the configuration")
    do {
        let new = try Settings.load(options, environment: environment)
        let old = inForce.value
        for (key, old, now) in [("socket", old.socketPath, new.socketPath), ("database", old.databasePath, new.databasePath),
                                ("socket-mode", String(old.config.socketMode, radix: 8), String(new.config.socketMode, radix: 8))]
            where old != now {
            log.warning("reload: '\(key)' changed; it takes effect at the next start, ignoring for now")
        }
        log.threshold = new.config.logLevel
        service.replaceForms(new.forms)
        service.reconfigure(limits: new.config.limits, defaultLocale: new.config.locale, peers: new.config.peers)
        listener.access = new.config.access
        inForce.value = new
        log.notice("reloaded the configuration (\(new.config.sources.count) file(s)), \(new.forms.forms.count) form(s), \(new.config.peers.count) peer(s); \(listener.openCount) connection(s) kept")
    } catch {
        log.error("reload refused, keeping the configuration in force: \(error)")
    }
    notifier.send("READY=1", "STATUS=serving")
}

let signalThread = Thread {
    var signals = daemonSignals()
    while true {
        var received: Int32 = 0
        sigwait(&signals, &received)
        if received == SIGHUP {
            log.notice("SIGHUP: reloading the configuration")
            reload()
            continue
        }
        notifier.send("STOPPING=1", "STATUS=stopping: draining connections")
        log.notice("signal \(received): shutting down")
        scheduler.stop()
        store.commits.close()
        let left = listener.stop(deadline: 10)
        if left > 0 { log.warning("\(left) session(s) still busy after 10 s; closing anyway") }
        store.close()
        // A socket systemd passed belongs to entryd.socket: it stays for the next activation.
        releaseSocket()
        log.notice("stopped")
        exit(left > 0 ? 1 : 0)
    }
}
signalThread.start()

log.notice("listening on '\(socketPath)'\(activatedFD == nil ? "" : " (passed by systemd)"), database '\(databasePath)', node \(store.nodeID), \(settings.forms.forms.count) form(s), \(config.peers.count) peer(s)")
// READY=1 only now: migrations are done and the socket listens (connections
// queue in its backlog until the accept loop below takes them).
notifier.send("READY=1", "STATUS=serving")
if let usec = watchdogUSec, notifier.isActive {
    notifier.startWatchdog(usec: usec) { try store.probeWriter() }
}
listener.run()
// run() returns once stop() closed the socket; the signal thread finishes the shutdown.
while true { pause() }
