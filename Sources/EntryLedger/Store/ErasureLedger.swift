import Foundation
import EntryModel

/// One erasure (doc/design.md "Erasure"): which entry, of which form, by which
/// erase change, who and why. Never a value of the entry.
package struct ErasureRecord: Sendable, Equatable {
    /// The erased entry's id (lower-case UUID).
    package var entry: String
    /// The erased entry's form name.
    package var form: String
    /// The HLC of the erase change at its origin node.
    package var hlc: HLC
    /// The node where the erase was made.
    package var node: String
    /// Who erased it: the user name at the origin node.
    package var actor: String
    /// Wall time of the erase at its origin, RFC 3339 UTC ms.
    package var at: String
    /// Why, as the operator gave it.
    package var reason: String

    /// A value with every member given.
    package init(entry: String, form: String, hlc: HLC, node: String, actor: String, at: String, reason: String) {
        self.entry = entry
        self.form = form
        self.hlc = hlc
        self.node = node
        self.actor = actor
        self.at = at
        self.reason = reason
    }
}

/// The erasure ledger: a text file beside the database (`DATABASE.erasures`),
/// outside it, one line per erase change this node has stored (its own and
/// those applied from peers), re-applied at every start-up
/// (doc/design.md "Erasure"): a database restored from a backup older than an
/// erasure is erased again before it serves a call.
///
/// A hub instance (a database server's) keeps one beside its marker file
/// (``init(marker:)``) with the erase changes it made or applied and those the
/// database held when it started; it re-applies them at start-up and whenever
/// it finds the database went back while it runs (an asynchronous failover
/// that lost commits, issue 30), so an erasure acknowledged on a hub survives
/// the loss of the commit that made it.
///
/// Byte layout: UTF-8 lines ending in LF; `#` starts a comment line; every other
/// line is seven fields separated by one TAB: entry id, form name, HLC (16 hex
/// digits), origin node id, wall time (RFC 3339), actor (a user name) and
/// reason, the last two with `\`, TAB and LF written `\\`, `\t`, `\n`. Never a
/// value of the entry. The actor and reason are the erase change's, which every
/// node's change log holds too, so a re-applied erase is the same change on
/// every node; the reason is audit text that must name no person (entryctl's
/// help says so). Lines are only ever appended; a line may repeat (a
/// write job can run twice, and start-up appends what the database holds and
/// the file lacks), and readers take the set.
///
/// ### Ordering
///
/// A line is appended and `fsync`ed inside the write job, before the
/// transaction that erases commits. So the file is never behind the database:
/// if the process dies between the two (or the commit fails), the file holds an
/// erasure the database lacks, and the next start-up completes it: the
/// operator asked for it, so it happens, only its reply was lost or an error. The other order would leave a window in which a
/// committed erasure is in no ledger, and a restore from a backup in that
/// window would bring the values back.
struct ErasureLedger {
    /// The ledger's path.
    let path: String

    /// The ledger beside the database at `database`: `DATABASE.erasures`.
    init(database: String) {
        path = database + ".erasures"
    }

    /// The ledger of a database server's instance, beside its marker file
    /// (``StoreServer/markerPath``, `….node`): `….erasures`.
    init(marker: String) {
        path = (marker.hasSuffix(".node") ? String(marker.dropLast(5)) : marker) + ".erasures"
    }

    /// One line of the ledger.
    struct Line: Hashable {
        var entry: String
        var form: String
        var hlc: HLC
        var node: String
        var at: String
        var actor: String
        var reason: String
    }

    /// `text` with `\`, TAB and LF escaped.
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\t", with: "\\t")
            .replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r")
    }

    /// The text ``escape(_:)`` wrote.
    static func unescape(_ text: String) -> String {
        var out = ""
        var escaped = false
        for c in text {
            if escaped {
                out.append(c == "t" ? "\t" : c == "n" ? "\n" : c == "r" ? "\r" : c)
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else {
                out.append(c)
            }
        }
        return out
    }

    /// Every well-formed line, in file order, without repeats, and how many
    /// other lines were skipped; a missing file is an empty ledger. A torn last
    /// line (no line end: a crash while appending, its job had not committed)
    /// is skipped without counting; bytes that are not UTF-8 spoil only their
    /// own line.
    func read() -> (lines: [Line], malformed: Int) {
        guard let data = FileManager.default.contents(atPath: path) else { return ([], 0) }
        let text = String(decoding: data, as: UTF8.self)
        var seen = Set<Line>()
        var lines: [Line] = []
        var malformed = 0
        let raws = text.split(separator: "\n", omittingEmptySubsequences: true)
        for (index, raw) in raws.enumerated() where !raw.hasPrefix("#") {
            let parts = raw.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 7, UUIDv7.canonical(parts[0]) == parts[0], !parts[1].isEmpty, let hlc = HLC(parts[2])
            else {
                if index < raws.count - 1 || text.hasSuffix("\n") { malformed += 1 }
                continue
            }
            let line = Line(
                entry: parts[0], form: parts[1], hlc: hlc, node: parts[3], at: parts[4],
                actor: Self.unescape(parts[5]), reason: Self.unescape(parts[6]))
            if seen.insert(line).inserted { lines.append(line) }
        }
        return (lines, malformed)
    }

    /// Appends `lines` and `fsync`s the file (and its directory when the file is new).
    /// - Throws: ``EntryError`` `.storageFailed` naming the ledger and the
    ///   ``SystemError`` (open, write, fsync; e.g. `ENOSPC`); the caller's write
    ///   then fails and nothing is erased.
    func append(_ lines: [Line]) throws {
        guard !lines.isEmpty else { return }
        do {
            try write(lines)
        } catch {
            // The ledger is this node's own file: say so, not a peer's or an internal fault.
            throw EntryError.storageFailed(
                "cannot write the erasure ledger '\(path)' (\(error)); nothing was erased: "
                    + "check that it is a writable file beside the database")
        }
    }

    /// Appends and fsyncs `lines` (see ``append(_:)``).
    private func write(_ lines: [Line]) throws {
        let isNew = !FileManager.default.fileExists(atPath: path)
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SystemError("open", detail: path) }
        defer { close(fd) }
        var text =
            isNew
            ? "# entryd erasure ledger: entry\tform\thlc\tnode\tat\tactor\treason (no values; doc/design.md \"Erasure\")\n"
            : ""
        for line in lines {
            // Form names come from form files and peers' changes (no TAB or LF: ChangeRecord(json:)).
            text +=
                "\(line.entry)\t\(line.form)\t\(line.hlc)\t\(line.node)\t\(line.at)\t\(Self.escape(line.actor))\t\(Self.escape(line.reason))\n"
        }
        try DatabaseBackup.writeFully(fd, Array(text.utf8)[...], path: path)
        guard fsync(fd) == 0 else { throw SystemError("fsync", detail: path) }
        if isNew {
            let directory = (path as NSString).deletingLastPathComponent
            let dirFD = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dirFD >= 0 {
                fsync(dirFD)
                close(dirFD)
            }
        }
    }
}

extension ErasureLedger.Line {
    /// The ledger line of an erase change.
    init(_ change: ChangeRecord) {
        self.init(
            entry: change.entry, form: change.form, hlc: change.hlc, node: change.node, at: change.at,
            actor: change.actor, reason: change.reason ?? "")
    }

    /// The erase change this line records, as start-up re-applies it (`via`
    /// says where it came from).
    var change: ChangeRecord {
        ChangeRecord(
            seq: 0, node: node, hlc: hlc, entry: entry, form: form, op: .erase, fields: [:], base: [:],
            actor: actor, at: at, reason: reason, via: "erasure-ledger")
    }
}
