import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync
import EntryServer
import EntryHub
import Foundation
import Synchronization

/// The writer: opens the database (locking it and migrating it, with `STATUS=`
/// lines for systemd) when it starts, and checkpoints and closes it when it
/// stops. Also holds the ``EntryService`` over the store, which the other
/// services share.
///
/// Started first and stopped last. What ``start()`` opens is set on the
/// runner's thread, before any thread that reads it is started.
final class StoreService: DaemonService, Sendable {
    let name = "store"
    /// The database file.
    let databasePath: String
    private let settings: DaemonSettings
    private let notifier: Notifier
    private let log: Log
    /// Held from start to the end of the process; the kernel releases it at exit.
    private let lock = Mutex<DatabaseLock?>(nil)
    /// The store and the service over it, once started.
    private let opened = Mutex<(store: EntryStore, entries: EntryService)?>(nil)
    /// The forms in force (a reload's too) for the store's ``Canonicaliser``.
    private let formsSource: FormsSource

    /// A store service for `settings.databasePath`, serving `settings`' forms,
    /// limits, locale and peers once started.
    init(settings: DaemonSettings, notifier: Notifier, log: Log) {
        self.databasePath = settings.databasePath
        self.settings = settings
        self.notifier = notifier
        self.log = log
        self.formsSource = FormsSource(settings.forms)
    }

    /// The open store. Only after ``start()``.
    var store: EntryStore {
        guard let opened = opened.withLock({ $0 }) else { preconditionFailure("the store service has not started") }
        return opened.store
    }

    /// The calls over the store, shared by the listener and the peer scheduler. Only after ``start()``.
    var entries: EntryService {
        guard let opened = opened.withLock({ $0 }) else { preconditionFailure("the store service has not started") }
        return opened.entries
    }

    /// Creates the database's directory, locks the database, removes snapshots
    /// an interrupted backup left, opens the store and migrates it.
    /// - Throws: ``StartupFailure``: `cantCreate` (73) when the directory of a
    ///   database the user named does not exist (default state directories are
    ///   created), `unavailable` (69) when another entryd holds the database,
    ///   `ioError` (74) when it cannot be opened, `config` (78) for a database
    ///   copied or moved from elsewhere without `--as-new-node` or `--moved`.
    func start() throws {
        let path = databasePath
        if DaemonPaths.isServerURI(path) { return try startOnServer() }
        do {
            notifier.send("STATUS=opening the database")
            let directory = (path as NSString).deletingLastPathComponent
            if settings.databaseIsNamed {
                var isDirectory: ObjCBool = false
                guard
                    FileManager.default.fileExists(
                        atPath: directory.isEmpty ? "." : directory, isDirectory: &isDirectory),
                    isDirectory.boolValue
                else {
                    throw StartupFailure(
                        .cantCreate,
                        "the directory of database '\(path)' does not exist: "
                            + "check --db (or database in entryd.conf, $ENTRYD_DB) for a typo, or create the directory first"
                    )
                }
            } else {
                try FileManager.default.createDirectory(
                    atPath: directory.isEmpty ? "." : directory, withIntermediateDirectories: true)
            }
            if !FileManager.default.fileExists(atPath: path) {
                log.notice("no database at '\(path)': creating a new, empty one")
            }
            let held = try DatabaseLock(path: path)
            lock.withLock { $0 = held }
            let stale = EntryStore.removeStaleSnapshots(database: path)
            if stale > 0 { log.notice("removed \(stale) backup snapshot(s) left by an interrupted backup") }
            let store = try EntryStore(
                path: path,
                progress: { [notifier, log] version, total in
                    notifier.send("STATUS=migrating the database to schema version \(version) of \(total)")
                    log.info("migrating database to schema version \(version) of \(total)")
                }, copies: settings.copies,
                canonicaliser: StoredValues.canonicaliser(forms: { [formsSource] in formsSource.forms }),
                layoutOf: { [formsSource] in formsSource.forms.form(named: $0)?.layout ?? .registration },
                rebuilding: { [notifier] done in
                    // Each batch gives systemd's start timeout another minute: a rebuild of
                    // a million entries outlasts the default 90 s.
                    notifier.send(
                        "STATUS=rebuilding the search keys: \(done) entries done", "EXTEND_TIMEOUT_USEC=60000000")
                })
            if let reason = store.incarnationBegan {
                log.notice(
                    "node \(store.nodeID) begins incarnation \(store.incarnation.id) at seq \(store.incarnation.startSeq): \(reason); "
                        + "its peers will read it again from there and send back what it lost")
            }
            logErasureLedger(store)
            serve(store)
        } catch let e as StartupFailure {
            throw e
        } catch let e as DatabaseMovedOrCopied {
            throw StartupFailure(.config, "\(e)")
        } catch let e as DatabaseInUse {
            throw StartupFailure(.unavailable, "\(e)")
        } catch {
            throw StartupFailure(.ioError, "cannot open database '\(path)': \(error)")
        }
    }

    /// Logs what opening the store did before serving: a rebuild of the search
    /// keys (``EntryStore/keysRebuilt``); and what the erasure ledger's
    /// re-application found: damaged lines, and erasures the database lacked
    /// that were carried out again.
    private func logErasureLedger(_ store: EntryStore) {
        if let rebuilt = store.keysRebuilt {
            log.notice(
                "rebuilt the search keys of \(rebuilt.entries) entr\(rebuilt.entries == 1 ? "y" : "ies") before serving "
                    + "(\(rebuilt.reason))")
        }
        if store.erasureLedgerMalformed > 0 {
            log.warning(
                "erasure ledger '\(store.erasureLedgerPath)': \(store.erasureLedgerMalformed) damaged line(s) could not be read; "
                    + "an erasure they held is not re-applied from the ledger (its peers give it back): check the file")
        }
        if store.erasuresReapplied > 0 {
            log.notice(
                "erasure ledger '\(store.erasureLedgerPath)': \(store.erasuresReapplied) erasure(s) the database lacked "
                    + "(restored from an older backup, or lost by a failover?) were carried out again before serving")
        }
    }

    /// Opens the store in the PostgreSQL database `databasePath` names (a hub,
    /// doc/hub.md): no file lock, since several instances serve one database
    /// as one node; this instance's marker file is in the state directory.
    /// - Throws: ``StartupFailure``: `unavailable` (69) when the server cannot
    ///   be reached or refuses (systemd restarts the service), `config` (78)
    ///   for a database from another server without `--as-new-node` or `--moved`,
    ///   `ioError` (74) otherwise.
    private func startOnServer() throws {
        let shown = DaemonPaths.redacted(databasePath)
        do {
            notifier.send("STATUS=connecting to the PostgreSQL database")
            try FileManager.default.createDirectory(atPath: settings.stateDirectory, withIntermediateDirectories: true)
            let store = try PostgresStoreFactory.open(
                uri: databasePath, markerDirectory: settings.stateDirectory, instance: settings.instance,
                progress: { [notifier, log] version, total in
                    notifier.send("STATUS=migrating the database to schema version \(version) of \(total)")
                    log.info("migrating the PostgreSQL database to schema version \(version) of \(total)")
                },
                copies: settings.copies,
                canonicaliser: StoredValues.canonicaliser(forms: { [formsSource] in formsSource.forms }),
                layoutOf: { [formsSource] in formsSource.forms.form(named: $0)?.layout ?? .registration },
                rebuilding: { [notifier] done in
                    // Each batch gives systemd's start timeout another minute: a rebuild of
                    // a million entries outlasts the default 90 s.
                    notifier.send(
                        "STATUS=rebuilding the search keys: \(done) entries done", "EXTEND_TIMEOUT_USEC=60000000")
                })
            if let reason = store.incarnationBegan {
                log.notice(
                    "node \(store.nodeID) begins incarnation \(store.incarnation.id) at seq \(store.incarnation.startSeq): \(reason); "
                        + "its peers will read it again from there and send back what it lost")
            }
            log.notice("instance \(settings.instance) serves node \(store.nodeID) from \(store.location)")
            logErasureLedger(store)
            store.storeEvents = { [log, node = store.nodeID, ledger = store.erasureLedgerPath] event in
                switch event {
                case .incarnationTaken(let now, let seen):
                    let lostHere =
                        seen > now.startSeq
                        ? "; this instance had seen seqs up to \(seen): \(seen - now.startSeq) of them lost" : ""
                    log.warning(
                        "node \(node) takes incarnation \(now.id) at seq \(now.startSeq): \(now.reason ?? "begun by another instance")"
                            + "\(lostHere); its peers will read it again from there and send back what it lost")
                case .erasuresReapplied(let count):
                    log.notice(
                        "erasure ledger '\(ledger)': \(count) erasure(s) the database lost were carried out again")
                case .erasuresNotReapplied(let why):
                    log.error(
                        "erasure ledger '\(ledger)': could not carry out the erasures the database lost (\(why)); "
                            + "restart this instance when the database is reachable")
                }
            }
            store.serverReachability = { [log, location = store.location] up, why in
                if up {
                    log.notice("the PostgreSQL server at \(location) is reachable again; calls are served")
                } else {
                    log.warning(
                        "the PostgreSQL server at \(location) is unreachable (\(why)): calls answer StorageFailed until it is back"
                    )
                }
            }
            serve(store)
        } catch let e as DatabaseMovedOrCopied {
            throw StartupFailure(.config, "\(e)")
        } catch let e as PGError where e.sqlState == PGError.invalidURI {
            throw StartupFailure(.config, "the PostgreSQL database \(shown): \(e.message)")
        } catch let e as PGError where e.isConnectionFailure {
            throw StartupFailure(.unavailable, "cannot open the PostgreSQL database \(shown): \(e.message)")
        } catch let e as PGError {
            throw StartupFailure(.ioError, "cannot open the PostgreSQL database \(shown): \(e.message)")
        } catch {
            throw StartupFailure(.ioError, "cannot open the PostgreSQL database \(shown): \(error)")
        }
    }

    /// Serves `store`: the ``EntryService`` over it, with the settings' forms, limits and peers.
    private func serve(_ store: EntryStore) {
        let config = settings.config
        let entries = EntryService(
            store: store, forms: settings.forms, limits: config.limits,
            defaultLocale: config.locale, peers: config.peers, log: log, instance: settings.instance)
        opened.withLock { $0 = (store, entries) }
        formsSource.service = entries
    }

    /// Finishes queued writes, checkpoints the WAL and closes the store
    /// (``EntryStore/close()``). The database lock stays until the process exits.
    func stop(deadline: ContinuousClock.Instant) {
        opened.withLock { $0 }?.store.close()
    }
}

extension ContinuousClock.Instant {
    /// Seconds from now until this instant; 0 once it has passed.
    var secondsLeft: Double {
        let left = self - .now
        return max(0, Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18)
    }

}

/// The forms in force, for the store's ``Canonicaliser`` (which the store is
/// opened with, before the ``EntryService`` that holds the forms exists):
/// those at start, then the service's (reloads included). Thread-safe.
final class FormsSource: Sendable {
    private let initial: FormRegistry
    /// The service, held weakly (it holds the store, which holds this source).
    private struct Current {
        weak var service: EntryService?
    }
    private let current = Mutex(Current())

    /// A source with `initial` until a service is set.
    init(_ initial: FormRegistry) {
        self.initial = initial
    }

    /// The service whose forms count from now on.
    var service: EntryService? {
        get { current.withLock { $0.service } }
        set { current.withLock { $0.service = newValue } }
    }

    /// The forms in force.
    var forms: FormRegistry { service?.forms ?? initial }
}
