import EntryModel
import EntryLedger
import EntryServer
import EntryProtocol
import Foundation
import Synchronization

/// The re-spelling pass over stored phones and e-mails (``StoredValues``):
/// when the libraries that canonicalise them differ from those of the last
/// pass, it reads every live entry again on a thread of its own, a page at a
/// time, while entryd serves (a call that edits an entry meanwhile is never
/// overwritten: each page's transaction reads its values again). It records
/// the rules once it has read every entry; a stop or a crash part-way leaves
/// them unrecorded, so the next start reads again (values already re-spelled
/// need nothing more).
///
/// Started after the listener (after `READY=1`); stopped first, before the
/// listener and the store: it finishes the page in hand.
final class StoredValuesService: DaemonService, Sendable {
    let name = "stored-values pass"
    private let store: StoreService
    private let notifier: Notifier
    private let log: Log
    /// Set by ``stop(deadline:)``: the pass stops after its page.
    private let stopping = Atomic(false)
    /// The pass's thread; `nil` when no pass runs.
    private let pass = Mutex<ServiceThread?>(nil)

    /// A pass over `store`'s entries, saying how far it is in `STATUS=` and the log.
    init(store: StoreService, notifier: Notifier, log: Log) {
        self.store = store
        self.notifier = notifier
        self.log = log
    }

    /// Starts the pass on the thread `entryd-respell` when the rules changed since the last one.
    /// - Throws: ``SQLiteError`` when the node table cannot be read.
    func start() throws {
        let rules = StoredValues.rules
        let store = store.store
        let entries = self.store.entries
        guard try store.nodeValue(StoredValues.rulesKey) != rules else { return }
        let thread = ServiceThread(name: "entryd-respell") { [self, log, notifier] in
            log.notice("re-spelling stored phones and e-mails under \(rules), while serving")
            do {
                let pass = try StoredValues.recanonicalise(
                    store: store, forms: entries.forms, shouldStop: { [self] in stopping.load(ordering: .acquiring) },
                    refused: { r in
                        log.warning(
                            "entry \(r.id): stored \(r.field) no longer validates under \(rules) (\(r.code.rawValue)); it stays as stored"
                        )
                    },
                    progress: { examined, total in
                        notifier.send(
                            "STATUS=serving; re-spelling stored phones and e-mails: \(examined) of \(total) entries read"
                        )
                    })
                notifier.send("STATUS=serving")
                guard pass.finished else {
                    log.notice(
                        "re-spelling stopped after \(pass.examined) entries (\(pass.changed) values); the next start goes on"
                    )
                    return
                }
                try store.setNodeValue(StoredValues.rulesKey, rules)
                log.notice(
                    "re-spelled \(pass.changed) stored value(s) in \(pass.examined) entries under \(rules); "
                        + "\(pass.refused) no longer validate and stay as stored")
            } catch {
                notifier.send("STATUS=serving")
                log.error("re-spelling stored phones and e-mails failed: \(error); the next start tries again")
            }
        }
        pass.withLock { $0 = thread }
    }

    /// Asks the pass to stop after its page and waits for it until `deadline`.
    func stop(deadline: ContinuousClock.Instant) {
        guard let thread = pass.withLock({ $0 }) else { return }
        stopping.store(true, ordering: .releasing)
        if !thread.wait(seconds: deadline.secondsLeft) {
            log.notice("the re-spelling pass is still writing a page; not waiting for it")
        }
    }
}
