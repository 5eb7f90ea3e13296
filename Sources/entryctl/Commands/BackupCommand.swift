import EntryModel
import EntryProtocol
import EntryClient
import EntryLedger
import Foundation

// MARK: - backup (io.entryd.Entries.Backup, streamed)

enum BackupCommand {
    static let command = Command(
        name: "backup",
        summary: Localized(
            zh: "在 entryd 继续服务时复制整个数据库（管理员）。", en: "Copy the whole database while entryd keeps serving (admin)."),
        arguments: "FILE",
        options: [
            OptionSpec(
                ["--force"],
                help: Localized(
                    zh: "FILE 已存在时替换它（新备份通过检查后才替换）。",
                    en: "Replace FILE when it exists (only once the new backup has passed its check)."))
        ],
        details: [
            Localized(
                zh: "entryd 生成一致的快照（VACUUM INTO）并以流发送；entryctl 把它写入 FILE.partial-PID，",
                en:
                    "entryd makes a consistent snapshot (VACUUM INTO) and streams it; entryctl writes it to FILE.partial-PID,"
            ),
            Localized(
                zh: "检查它（PRAGMA integrity_check、模式版本、节点 id），再改名为 FILE（权限 0600）。",
                en: "checks it (PRAGMA integrity_check, schema version, node id), then renames it to FILE (mode 0600)."),
            Localized(
                zh: "副本包含备份开始前提交的每个修改、修改日志、节点 id 和",
                en: "The copy holds every change committed before the backup began, the change log, the node id and the"
            ),
            Localized(
                zh: "对端检查点。在守护进程停止时用 'entryd --restore FILE' 恢复。",
                en: "peer checkpoints. Put it back with 'entryd --restore FILE' while the daemon is stopped."),
            Localized(
                zh: "已存在的 FILE 不会被替换，除非加 --force；entryd 自己的数据库永远不会被替换。",
                en: "An existing FILE is not replaced without --force; entryd's own database never is."),
        ],
        examples: ["entryctl backup /var/backups/entryd/entries-$(date +%F).db"],
        prepare: { input in
            let file = try input.exactly("FILE")[0]
            guard file != "-" else {
                throw UsageError(zh: "backup 写入文件，不能写到标准输出", en: "backup writes to a file, not to standard output")
            }
            let force = input.has("--force")
            if !force, FileManager.default.fileExists(atPath: file) {
                throw UsageError(
                    zh: "“\(file)”已存在：换一个文件名，或加 --force 替换它",
                    en: "'\(file)' exists: choose another name, or give --force to replace it")
            }
            return { session in
                // Never over the live database: a rename over it would leave entryd writing to a file no longer there.
                if let database = try session.call(.syncStatus, .object([]))["database"]?.stringValue,
                    Self.samePath(database, file)
                {
                    throw Refusal(
                        zh: "“\(file)”是 entryd 正在使用的数据库，不能用备份覆盖它：写到别处",
                        en: "'\(file)' is the database entryd is using; a backup cannot go over it: write it elsewhere")
                }
                try run(file: file, session)
            }
        })

    /// True when `a` and `b` name the same file (the same device and inode), or
    /// the same path once resolved when either does not exist yet.
    static func samePath(_ a: String, _ b: String) -> Bool {
        var sa = stat()
        var sb = stat()
        if stat(a, &sa) == 0, stat(b, &sb) == 0 { return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino }
        return URL(fileURLWithPath: a).standardizedFileURL.resolvingSymlinksInPath().path
            == URL(fileURLWithPath: b).standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// Streams the snapshot into a temporary file, checks it, renames it into place.
    static func run(file: String, _ session: DaemonConnection) throws {
        let out = try OutputFile(path: file)
        let progress = ProgressLine(label: Localized(zh: "备份", en: "backup"), locale: session.globals.locale)
        var written: Int64 = 0
        var size: Int64 = -1
        try out.produce(progress: progress) {
            try session.stream(.entriesBackup, .object([])) { reply in
                guard let text = reply["chunk"]?.stringValue, let chunk = Data(base64Encoded: text),
                    let offset = reply["offset"]?.intValue, let total = reply["size"]?.intValue
                else {
                    throw Refusal(
                        zh: "entryd 发来的备份回复缺少 chunk、offset 和 size",
                        en: "entryd sent a backup reply without chunk, offset and size")
                }
                guard offset == written else {
                    throw Refusal(
                        zh: "entryd 发来的备份字节顺序错乱（偏移 \(offset)，应为 \(written)）",
                        en: "entryd sent backup bytes out of order (offset \(offset), expected \(written))")
                }
                size = total
                try out.write([UInt8](chunk))
                written += Int64(chunk.count)
                progress.update(count: Int(written >> 10), fraction: total > 0 ? Double(written) / Double(total) : nil)
                return true
            }
            guard written == size else {
                throw Refusal(
                    zh: "备份数据流在 \(size) 字节中的 \(written) 字节后中断",
                    en: "the backup stream ended after \(written) of \(size) bytes")
            }
        }
        let info: DatabaseBackup.Info
        do {
            info = try DatabaseBackup.verify(path: file)
        } catch {
            unlink(file)
            throw Refusal(zh: "备份未通过检查，已删除：\(error)", en: "the backup failed its check and was removed: \(error)")
        }
        if session.globals.json {
            Terminal.out(lines: [
                params(
                    ("file", .string(file)), ("bytes", .int(written)), ("node", .string(info.node)),
                    ("schemaVersion", .int(Int64(info.schemaVersion))), ("entries", .int(Int64(info.entries))),
                    ("seq", .int(info.seq))
                ).text
            ])
        } else {
            Terminal.out(lines: [
                Localized(
                    zh:
                        "节点 \(info.node) 的备份：\(info.entries) 个条目，修改日志到 seq \(info.seq)，\(written) 字节，模式版本 \(info.schemaVersion) → \(file)",
                    en: "backup of node \(info.node): \(info.entries) entries, change log to seq \(info.seq), "
                        + "\(written) bytes, schema \(info.schemaVersion) → \(file)")(session.globals.locale)
            ])
        }
    }
}
