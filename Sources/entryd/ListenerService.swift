@preconcurrency import Glibc
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync
import EntryServer
import Foundation
import Synchronization

/// The listener (``Listener``): accepts clients on the listening socket, on a
/// thread of its own, and sends `READY=1` once it does.
///
/// Started after the store and the peer scheduler; stopped first: it stops
/// accepting, ends `Changes` streams, and drains the calls in flight.
final class ListenerService: DaemonService, Sendable {
    let name = "listener"
    private let socket: ListeningSocket
    private let store: StoreService
    private let settings: DaemonSettings
    private let notifier: Notifier
    private let log: Log
    /// The listener and the thread of its accept loop, which returns once it has closed its descriptor.
    private let started = Mutex<(listener: Listener, thread: ServiceThread)?>(nil)

    /// A listener on `socket` serving `store`'s ``StoreService/entries`` with
    /// `settings`' access policy and limits.
    init(socket: ListeningSocket, store: StoreService, settings: DaemonSettings, notifier: Notifier, log: Log) {
        self.socket = socket
        self.store = store
        self.settings = settings
        self.notifier = notifier
        self.log = log
    }

    /// The listener. Only after ``start()``; a reload changes its access policy.
    var listener: Listener {
        guard let started = started.withLock({ $0 }) else {
            preconditionFailure("the listener service has not started")
        }
        return started.listener
    }

    /// Raises the open-file limit, starts the accept loop on the thread
    /// `entryd-listener`, logs where it listens, and sends `READY=1`.
    func start() {
        let config = settings.config
        let openFiles = ResourceLimits.raiseOpenFiles()
        if openFiles < config.limits.maxConnections + 32 {
            log.warning(
                "open-file limit \(openFiles) is below max-connections \(config.limits.maxConnections) + 32; raise LimitNOFILE"
            )
        }
        let listener = Listener(fd: socket.fd, service: store.entries, access: config.access, log: log)
        let thread = ServiceThread(name: "entryd-listener") { listener.run() }
        started.withLock { $0 = (listener, thread) }
        log.notice(
            "listening on '\(socket.path)'\(socket.activated ? " (passed by systemd)" : ""), database '\(DaemonPaths.redacted(store.databasePath))', "
                + "node \(store.store.nodeID), \(settings.forms.forms.count) form(s), \(config.peers.count) peer(s)")
        // READY=1 only now: migrations are done and the socket listens (connections
        // wait in its backlog until the accept loop takes them).
        notifier.send("READY=1", "STATUS=serving")
    }

    /// Stops accepting, ends open `Changes` streams, lets each session finish
    /// the call it is in, and waits for them until `deadline`.
    /// - Throws: ``StopIncomplete`` when sessions are still busy at `deadline`.
    func stop(deadline: ContinuousClock.Instant) throws {
        guard let started = started.withLock({ $0 }) else { return }
        store.store.commits.close()
        let seconds = deadline.secondsLeft
        let left = started.listener.stop(deadline: seconds)
        started.thread.wait(until: deadline)
        if left > 0 {
            throw StopIncomplete(
                description: "\(left) session(s) still busy after \(Int(seconds.rounded())) s; closing anyway")
        }
    }
}
