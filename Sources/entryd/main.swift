@preconcurrency import Glibc
import EntryCore
import Foundation

// entryd: wiring only. Parse options, open the store, bind the socket, serve,
// and stop cleanly on SIGTERM/SIGINT. The logic lives in EntryCore.

let environment = ProcessInfo.processInfo.environment
let options: Options
// `--restore FILE` (issue 8) is taken out before the other options are parsed.
var daemonArguments = Array(CommandLine.arguments.dropFirst())
let restoreFrom: String? = RestoreOption.extract(&daemonArguments)
do {
    guard let parsed = try Options.parse(daemonArguments, environment: environment) else { exit(0) }
    options = parsed
} catch {
    fputs("entryd: \(error.message)\nTry 'entryd --help'.\n", stderr)
    exit(64)
}
if let restoreFrom {
    let outcome = RestoreOption.run(backup: restoreFrom,
                                    database: DaemonPaths.database(flag: options.database, environment: environment),
                                    socket: DaemonPaths.socket(flag: options.socket, environment: environment))
    fputs("entryd: " + outcome.message + "\n", outcome.status == 0 ? stdout : stderr)
    exit(outcome.status)
}
let log = Log(threshold: options.logLevel, environment: environment)

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

let forms: FormRegistry
do {
    forms = try options.formsDirectory.map { try FormRegistry.load(directory: $0) } ?? FormRegistry.builtIn
} catch {
    log.error("cannot load forms: \(error)")
    exit(78)
}

let databasePath = DaemonPaths.database(flag: options.database, environment: environment)
let store: EntryStore
do {
    try FileManager.default.createDirectory(atPath: (databasePath as NSString).deletingLastPathComponent.isEmpty ? "." : (databasePath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    store = try EntryStore(path: databasePath, progress: { version, total in log.info("migrating database to schema version \(version) of \(total)") })
} catch {
    log.error("cannot open database '\(databasePath)': \(error)")
    exit(74)
}

let socketPath = DaemonPaths.socket(flag: options.socket, environment: environment)
let listenFD: Int32
do {
    listenFD = try SocketFile.bind(path: socketPath, log: log)
} catch let e as SocketFile.InUse {
    log.error("another entryd is already serving '\(e.path)'; stop it first or choose another --socket")
    store.close()
    exit(69)
} catch {
    log.error("cannot listen on '\(socketPath)': \(error)")
    store.close()
    exit(73)
}

let service = EntryService(store: store, forms: forms, limits: options.limits, defaultLocale: options.locale, peers: options.peers)
let listener = Listener(fd: listenFD, service: service, log: log)
log.notice("listening on '\(socketPath)', database '\(databasePath)', node \(store.nodeID), \(forms.forms.count) form(s)")

let scheduler = PeerScheduler(service: service) { log.info($0) }
if !options.peers.isEmpty {
    let t = Thread { scheduler.run() }
    t.name = "entryd-peers"
    t.start()
}

let signalThread = Thread {
    var signals = daemonSignals()
    while true {
        var received: Int32 = 0
        sigwait(&signals, &received)
        if received == SIGHUP {
            log.notice("SIGHUP: configuration reload is not supported yet; ignoring")
            continue
        }
        log.notice("signal \(received): shutting down")
        scheduler.stop()
        store.commits.close()
        let left = listener.stop(deadline: 10)
        if left > 0 { log.warning("\(left) session(s) still busy after 10 s; closing anyway") }
        store.close()
        unlink(socketPath)
        log.notice("stopped")
        exit(left > 0 ? 1 : 0)
    }
}
signalThread.start()
listener.run()
// run() returns once stop() closed the socket; the signal thread finishes the shutdown.
while true { pause() }
