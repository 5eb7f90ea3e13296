import EntryModel
import EntryProtocol
import EntryClient
import EntryLedger
import Foundation

// MARK: - backup (io.entryd.Entries.Backup, streamed)

enum BackupCommand {
    static let command = Command(
        name: "backup", summary: "Copy the whole database while entryd keeps serving (admin).", arguments: "FILE",
        options: [],
        details: [
            "entryd makes a consistent snapshot (VACUUM INTO) and streams it; entryctl writes it to FILE.partial-PID,",
            "checks it (PRAGMA integrity_check, schema version, node id), then renames it to FILE (mode 0600).",
            "The copy holds every change committed before the backup began, the change log, the node id and the",
            "peer checkpoints. Put it back with 'entryd --restore FILE' while the daemon is stopped.",
        ],
        examples: ["entryctl backup /var/backups/entryd/entries-$(date +%F).db"],
        prepare: { input in
            let file = try input.exactly("FILE")[0]
            guard file != "-" else { throw UsageError("backup writes to a file, not to standard output") }
            return { session in try run(file: file, session) }
        })

    /// Streams the snapshot into a temporary file, checks it, renames it into place.
    static func run(file: String, _ session: DaemonSession) throws {
        let out = try OutputFile(path: file)
        let progress = ProgressLine(label: "backup")
        var written: Int64 = 0
        var size: Int64 = -1
        try out.produce(progress: progress) {
            try session.stream("io.entryd.Entries.Backup", .object([])) { reply in
                guard let text = reply["chunk"]?.stringValue, let chunk = Data(base64Encoded: text),
                      let offset = reply["offset"]?.intValue, let total = reply["size"]?.intValue else {
                    throw Refusal("entryd sent a backup reply without chunk, offset and size")
                }
                guard offset == written else { throw Refusal("entryd sent backup bytes out of order (offset \(offset), expected \(written))") }
                size = total
                try out.write([UInt8](chunk))
                written += Int64(chunk.count)
                progress.update(count: Int(written >> 10), fraction: total > 0 ? Double(written) / Double(total) : nil)
                return true
            }
            guard written == size else { throw Refusal("the backup stream ended after \(written) of \(size) bytes") }
        }
        let info: DatabaseBackup.Info
        do {
            info = try DatabaseBackup.verify(path: file)
        } catch {
            unlink(file)
            throw Refusal("the backup failed its check and was removed: \(error)")
        }
        if session.globals.json {
            Terminal.out(lines: [params(("file", .string(file)), ("bytes", .int(written)), ("node", .string(info.node)),
                                        ("schemaVersion", .int(Int64(info.schemaVersion))), ("entries", .int(Int64(info.entries))),
                                        ("seq", .int(info.seq))).text])
        } else {
            Terminal.out(lines: ["backup of node \(info.node): \(info.entries) entries, change log to seq \(info.seq), "
                + "\(written) bytes, schema \(info.schemaVersion) → \(file)"])
        }
    }
}
