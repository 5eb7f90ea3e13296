import Foundation
import Synchronization
import EntryModel

/// One life of a node's change log (doc/design.md "Incarnations").
///
/// A database can go back in time — restored from a backup, put back from a
/// snapshot, copied — and then hands out again sequence numbers that peers
/// already pulled under other changes. Sequence numbers therefore belong to an
/// incarnation: seqs up to ``startSeq`` were inherited from the incarnations
/// before, seqs after it were made in this one. A peer that finds a new
/// incarnation re-reads the node from ``startSeq`` and re-sends what it holds.
package struct Incarnation: Sendable, Equatable {
    /// A UUIDv7, new for each incarnation.
    package var id: String
    /// The node's last seq when the incarnation began.
    package var startSeq: Int64
    /// Why it began (e.g. "restored from …"), `nil` for a node's first.
    package var reason: String?
    /// The node's own changes of this incarnation are stamped at or after this
    /// (the wall clock when it began; `.zero` for a node's first). Peers send a
    /// node back its own changes stamped before it, which it may have lost.
    package var since: HLC

    /// An incarnation as stored or served.
    package init(id: String, startSeq: Int64, reason: String? = nil, since: HLC = .zero) {
        self.id = id
        self.startSeq = startSeq
        self.reason = reason
        self.since = since
    }
}

/// What a running instance of a server database tells entryd besides
/// reachability (``EntryStore/storeEvents``), for its log (issue 30).
package enum StoreEvent: Sendable, Equatable {
    /// This instance took a new incarnation while it ran: begun by another
    /// instance at its start, or because the database went back (its reason
    /// says from which seq to which, and how many changes were lost).
    /// `seenSeq` is the highest seq this instance had seen committed before:
    /// above the incarnation's `startSeq`, it saw `seenSeq - startSeq` changes
    /// the database no longer holds.
    case incarnationTaken(Incarnation, seenSeq: Int64)
    /// Erase changes of this instance's erasure ledger that the database
    /// lacked after it went back, carried out again (``ErasureLedger``).
    case erasuresReapplied(Int)
    /// The ledger could not be re-applied for a minute after the database
    /// went back (the reason): the next start or going back tries again.
    case erasuresNotReapplied(String)
}

/// What `EntryStore` does with a database that was last opened as a node at
/// another place (another machine, or another path: a copy or a move).
package enum CopiedDatabasePolicy: Sendable, Equatable {
    /// Refuse to open it (``DatabaseMovedOrCopied``): two live copies would be
    /// two nodes with one node id, each hiding the other's changes.
    case refuse
    /// It is a copy: serve it as a new node (a new node id; its entries and
    /// change log are kept, the old node's changes keep their origin).
    case newNode
    /// It was moved here and the old place no longer serves it: the same node,
    /// in a new incarnation.
    case sameNode
}

/// The database was last opened as a node at another place; the operator must
/// say whether it is a copy or a move (``CopiedDatabasePolicy``).
package struct DatabaseMovedOrCopied: Error, Sendable, Equatable, CustomStringConvertible {
    /// The node id the database holds.
    package var node: String
    /// Where it was last opened (`machine-id:path`).
    package var home: String
    /// Where it is now (`machine-id:path`).
    package var here: String

    /// What happened and the two ways on.
    package var description: String {
        "the database of node \(node) was last opened at \(home), not here (\(here)): it was copied or moved. "
            + "If it is a copy, start with --as-new-node to serve it as a new node; if it was moved here and the old "
            + "place no longer runs it, start once with --moved. Two live copies under one node id would hide each "
            + "other's changes from their peers."
    }
}

/// The start-up check of doc/design.md "Incarnations": from what the database
/// says and what its marker file says, whether this start continues the
/// incarnation, begins a new one, or must be refused. Pure: the caller reads
/// the evidence and carries out the decision.
struct IncarnationCheck {
    /// What the database holds.
    var node: String
    /// `nil`: a database from before incarnations, or a new one.
    var incarnation: Incarnation?
    /// `machine-id:path` recorded in the database, `nil` before incarnations.
    var home: String?
    /// A reason left by `--restore` for the next start.
    var pendingReason: String?
    /// The last seq in the change log.
    var lastSeq: Int64
    /// The database file's (device, inode).
    var file: NodeMarker.FileIdentity
    /// The marker beside the database, `nil` when there is none.
    var marker: NodeMarker?
    /// `machine-id:path` of this start.
    var here: String
    /// The operator's word for a database from elsewhere.
    var policy: CopiedDatabasePolicy
    /// Whether a missing marker is evidence (a SQLite file put back) or a new
    /// instance of a server database (``StoreServer``).
    var markerRequired = true

    /// What to do.
    enum Decision: Equatable {
        /// Continue the stored incarnation.
        case same
        /// Begin a new incarnation (and record `here` as home), for this reason.
        case begin(String)
        /// Mint a new node id and begin its first incarnation here.
        case newNode(String)
        /// Refuse to open.
        case refuse(DatabaseMovedOrCopied)
    }

    /// The decision; every reason is a sentence for the log.
    func decide() -> Decision {
        if let home, home != here {
            switch policy {
            case .refuse: return .refuse(DatabaseMovedOrCopied(node: node, home: home, here: here))
            case .newNode: return .newNode("a copy of node \(node) from \(home), served as a new node (--as-new-node)")
            case .sameNode: return .begin("moved from \(home) (--moved)")
            }
        }
        if let pendingReason { return .begin(pendingReason) }
        // New, or from before incarnations: its first incarnation begins with nothing to compare
        // (peers have none stored for it either, so they re-read nothing).
        guard let incarnation, home != nil else { return .same }
        guard let marker else {
            guard markerRequired else { return .same }
            return .begin("the marker file beside the database is missing (the database was put back or replaced)")
        }
        if marker.node != node {
            return .begin("the marker names node \(marker.node): another node's database was put here")
        }
        if marker.incarnation != incarnation.id {
            return .begin(
                "the database is from incarnation \(incarnation.id), the last one run here was \(marker.incarnation) (an older copy was put back)"
            )
        }
        if marker.seq > lastSeq {
            return .begin(
                "the change log went back from seq \(marker.seq) to \(lastSeq) (restored from a backup or a snapshot)")
        }
        if marker.file != file {
            return .begin(
                "the database was replaced (its identity \(marker.file) became \(file): a file's device/inode, "
                    + "a PostgreSQL database's system id/oid)")
        }
        return .same
    }
}

/// The marker file beside a database (`.NAME.node` in its directory): the node,
/// incarnation and highest seq last seen by the daemon that ran it, and the
/// file's identity. It is outside the database so that putting back an older
/// database file (or another one) leaves evidence; its name does not match
/// `NAME*`, so copying `entries.db*` does not carry it along. Written with a
/// rename, without fsync: a marker older than the database only weakens the
/// check; one newer than the database (commits lost) begins a new incarnation,
/// which is right, since peers may have pulled what was lost.
struct NodeMarker: Equatable {
    /// (st_dev, st_ino) of a file.
    struct FileIdentity: Equatable, CustomStringConvertible {
        var device: UInt64
        var inode: UInt64
        var description: String { "\(device)/\(inode)" }

        /// The identity of the file at `path`, `nil` when it cannot be read.
        static func of(_ path: String) -> FileIdentity? {
            var s = stat()
            guard stat(path, &s) == 0 else { return nil }
            return FileIdentity(device: UInt64(s.st_dev), inode: UInt64(s.st_ino))
        }
    }

    var node: String
    var incarnation: String
    var seq: Int64
    var file: FileIdentity
    var machine: String

    /// The marker's path for the database at `database`.
    static func path(for database: String) -> String {
        let url = URL(fileURLWithPath: database)
        return url.deletingLastPathComponent().appendingPathComponent("." + url.lastPathComponent + ".node").path
    }

    /// The marker at `path`, `nil` when missing or unreadable (as good as missing).
    static func read(_ path: String) -> NodeMarker? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            values[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        guard let node = values["node"], let incarnation = values["incarnation"],
            let seq = values["seq"].flatMap(Int64.init),
            let device = values["device"].flatMap(UInt64.init), let inode = values["inode"].flatMap(UInt64.init)
        else { return nil }
        return NodeMarker(
            node: node, incarnation: incarnation, seq: seq, file: FileIdentity(device: device, inode: inode),
            machine: values["machine"] ?? "")
    }

    /// Writes the marker to `path` (a temporary file renamed over it). Best effort.
    func write(to path: String) {
        let text =
            "# entryd: the node, incarnation and highest seq last seen of its database (the SQLite file beside it, or the "
            + "PostgreSQL database its name gives); do not copy it with the database.\n"
            + "node=\(node)\nincarnation=\(incarnation)\nseq=\(seq)\ndevice=\(file.device)\ninode=\(file.inode)\nmachine=\(machine)\n"
        let temporary = path + ".tmp"
        guard (try? text.write(toFile: temporary, atomically: false, encoding: .utf8)) != nil else { return }
        if rename(temporary, path) != 0 { unlink(temporary) }
    }

    /// `machine-id:path` of the database at `path`, the directory's symbolic
    /// links resolved (the file need not exist yet).
    static func home(of path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return machine + ":"
            + url.deletingLastPathComponent().resolvingSymlinksInPath().appendingPathComponent(url.lastPathComponent)
            .path
    }

    /// This machine's id (`/etc/machine-id`, else the host name).
    static let machine: String = {
        if let id = try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines), !id.isEmpty
        {
            return id
        }
        return ProcessInfo.processInfo.hostName
    }()
}

/// Keeps the marker of an open database current: its seq follows commits, written
/// at most once a second (and on close), from the writer thread.
final class MarkerKeeper: Sendable {
    private let path: String
    /// The marker as last recorded, and when it was last written.
    private let state: Mutex<(marker: NodeMarker, written: ContinuousClock.Instant)>

    init(path: String, marker: NodeMarker) {
        self.path = path
        self.state = Mutex((marker, ContinuousClock.now))
        marker.write(to: path)
    }

    /// Records that incarnation `id` began at `seq` (a server database: begun
    /// by another instance, or found while running): the change log may be
    /// below what the marker saw before.
    func rebase(incarnation id: String, seq: Int64) {
        state.withLock { state in
            state.marker.incarnation = id
            state.marker.seq = seq
            state.marker.write(to: path)
        }
    }

    /// Records that the change log reached `seq`.
    func advance(to seq: Int64, force: Bool = false) {
        state.withLock { state in
            guard seq > state.marker.seq || force else { return }
            state.marker.seq = max(state.marker.seq, seq)
            let now = ContinuousClock.now
            guard force || now - state.written >= .seconds(1) else { return }
            state.written = now
            state.marker.write(to: path)
        }
    }
}
