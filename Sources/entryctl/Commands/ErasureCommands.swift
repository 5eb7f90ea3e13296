import Foundation
import EntryModel
import EntryProtocol
import EntryClient

// MARK: - erase, erasures (issue 17; doc/design.md "Erasure")

enum ErasureCommands {
    static let all = [erase, erasures]

    static let erase = Command(
        name: "erase",
        summary: Localized(
            zh: "彻底清除条目及其所有值、历史和冲突记录，并同步到每个节点（admin）。",
            en: "Erase entries for good: values, history and conflict records, on every node (admin)."),
        arguments: "[ID]",
        options: [
            OptionSpec(
                ["--reason"], value: "TEXT",
                help: Localized(
                    zh: "原因（必需），记入清除记录并同步；不要写入个人信息。",
                    en: "Why (required); kept in the erasure record and synced: name no person in it.")),
            OptionSpec(["--yes"], help: Localized(zh: "不询问，直接清除。", en: "Do not ask before erasing.")),
            OptionSpec(
                ["--phone"], value: "PHONE",
                help: Localized(
                    zh: "清除持有此电话号码的所有条目（宽松输入，同 add）。",
                    en: "Erase every entry holding this phone number (lenient input, as in add).")),
            OptionSpec(
                ["--email"], value: "EMAIL",
                help: Localized(zh: "清除持有此电子邮件地址的所有条目。", en: "Erase every entry holding this e-mail address.")),
            OptionSpec(
                ["--name"], value: "NAME",
                help: Localized(
                    zh: "与 --birthday 一起：清除持有此姓名和生日的所有条目。",
                    en: "With --birthday: erase every entry holding this name and birthday.")),
            OptionSpec(
                ["--birthday"], value: "DATE",
                help: Localized(zh: "与 --name 一起使用的生日。", en: "The birthday, with --name.")),
            OptionSpec(
                ["--country"], value: "COUNTRY",
                help: Localized(
                    zh: "不带国家代码的电话号码所属的国家（默认 CN）。",
                    en: "The country of a phone number without a country code (default CN).")),
            OptionSpec(
                ["--verify"],
                help: Localized(
                    zh:
                        "不清除：检查 ID 的清除，在数据库文件、WAL、清除记录文件和 before-restore 文件中查找 --value 的字节（PostgreSQL 中心节点：用 SQL 查找每张表）。",
                    en:
                        "Erase nothing: check the erasure of ID, scanning the database file, its WAL, the erasure ledger and the before-restore file for the bytes of each --value (a PostgreSQL hub: every table, by SQL)."
                )),
            OptionSpec(
                ["--value"], value: "TEXT",
                help: Localized(
                    zh: "与 --verify 一起：要查找的已清除的值（规范形式，可重复）。",
                    en: "With --verify: an erased value to look for (canonical form; repeatable)."), repeatable: true),
            OptionSpec(
                ["--no-wait"],
                help: Localized(
                    zh: "与 --verify 一起：清除后的清理尚未完成时不等待，只说明它大约何时完成（退出码 1）。",
                    en:
                        "With --verify: do not wait for the purge that follows an erasure; say when it should end (exit 1 while it is pending)."
                )),
        ],
        details: [
            Localized(
                zh: "条目的值、历史、冲突记录和修改日志中的内容在一个事务中被覆盖；只留下 id、表单、清除的时间、执行者和原因。",
                en:
                    "The entry's values, history, conflict records and change-log payloads are overwritten in one transaction; only the id, form, the erasure's time, actor and reason remain."
            ),
            Localized(
                zh: "清除作为修改同步到每个节点，胜过对该条目的任何修改；之后到达的修改被拒绝并计数。之后 get、update、delete、restore 回答“已清除”。",
                en:
                    "It syncs to every node as a change that wins over every change to the entry; changes arriving later are refused and counted. Afterwards get, update, delete and restore answer 'erased'."
            ),
            Localized(
                zh: "不可撤销：不加 --yes 时先列出要清除的条目并询问（在标准输入回答 yes）。",
                en:
                    "It cannot be undone: without --yes it lists what it will erase and asks first (answer yes on standard input)."
            ),
            Localized(
                zh: "entryd 不保留被清除的值，所以 --verify 需要你用 --value 给出要查找的值；命中 0 次且 0 行仍有内容时退出码 0，否则 1。",
                en:
                    "entryd keeps no erased value, so --verify needs the values to look for as --value; it exits 0 for 0 hits and 0 rows holding a payload, else 1."
            ),
            Localized(
                zh: "清除之后，旧副本在后台逐页清理，写入和读取不必等待；--verify 在清理完成之前等待（进度写到标准错误，最多等 --timeout 秒），然后再检查。",
                en:
                    "After an erasure its old copies are purged page by page in the background, so writes and reads do not wait; --verify waits for the purge (progress on stderr, at most --timeout seconds) before it checks."
            ),
            Localized(
                zh: "在清除之前做的备份仍然包含这些值（见 doc/design.md“Erasure”）。",
                en: "Backups made before the erasure still hold the values (see doc/design.md \"Erasure\")."),
        ],
        examples: [
            "entryctl erase 0193a5e2-7c4b-7def-8a12-3456789abcde --reason 'PIPL art. 47 request 2026-118'",
            "entryctl erase --phone 13800138000 --reason 'GDPR art. 17 request 2026-119' --yes",
            "entryctl erase --name 李雷 --birthday 1990-05-17 --reason 'request 2026-120'",
            "entryctl erase --verify 0193a5e2-7c4b-7def-8a12-3456789abcde --value +8613800138000 --value 李雷",
        ],
        prepare: { input in
            let positionals = input.scanned.positionals
            if positionals.count > 1 {
                throw UsageError(zh: "多余的参数“\(positionals[1])”", en: "unexpected argument '\(positionals[1])'")
            }
            let id = positionals.first
            if input.has("--verify") {
                guard let id else { throw UsageError(zh: "--verify 需要 ID", en: "--verify needs an ID") }
                let values = input.scanned.values("--value")
                if values.isEmpty {
                    throw UsageError(
                        zh: "--verify 需要至少一个 --value（要查找的已清除的值）",
                        en: "--verify needs at least one --value (an erased value to look for)")
                }
                let wait = !input.has("--no-wait")
                return { session in try verify(id: id, values: values, waiting: wait, session) }
            }
            let subject = [
                ("phone", input.value("--phone")), ("email", input.value("--email")), ("name", input.value("--name")),
                ("birthday", input.value("--birthday")),
            ].filter { $0.1 != nil }
            if id != nil && !subject.isEmpty {
                throw UsageError(
                    zh: "给出 ID 或 --phone/--email/--name，不能同时给出", en: "give an ID or --phone/--email/--name, not both")
            }
            if id == nil && subject.isEmpty {
                throw UsageError(
                    zh: "缺少 ID（或 --phone、--email、--name 与 --birthday）",
                    en: "missing ID (or --phone, --email, --name with --birthday)")
            }
            if (input.value("--name") == nil) != (input.value("--birthday") == nil) {
                throw UsageError(zh: "--name 和 --birthday 要一起给出", en: "--name and --birthday go together")
            }
            guard let reason = input.value("--reason"), reason.contains(where: { !$0.isWhitespace }) else {
                throw UsageError(
                    zh: "缺少 --reason：清除需要原因（记入清除记录）",
                    en: "missing --reason: an erasure needs a reason (kept in the erasure record)")
            }
            let country = input.value("--country")
            let yes = input.has("--yes")
            return { session in
                let targets: [(id: String, form: String)]
                if let id {
                    targets = [(id, "")]
                } else {
                    let reply = try session.call(
                        .entriesFindSubject,
                        params(
                            ("phone", subject.first { $0.0 == "phone" }?.1.json),
                            ("email", subject.first { $0.0 == "email" }?.1.json),
                            ("name", subject.first { $0.0 == "name" }?.1.json),
                            ("birthday", subject.first { $0.0 == "birthday" }?.1.json),
                            ("country", country.json), ("locale", session.locale)))
                    targets = (reply["entries"]?.arrayValue ?? []).compactMap { e in
                        e["id"]?.stringValue.map { ($0, e["form"]?.stringValue ?? "") }
                    }
                    if targets.isEmpty {
                        Terminal.message(
                            Localized(
                                zh: "没有条目持有此人的数据；未清除任何内容", en: "no entry holds this person's data; nothing was erased")(
                                    session.globals.locale))
                        return
                    }
                }
                if !yes {
                    let locale = session.globals.locale
                    Terminal.message(
                        Localized(
                            zh: "将彻底清除 \(targets.count) 个条目（不可撤销）：",
                            en:
                                "This erases \(targets.count) entr\(targets.count == 1 ? "y" : "ies") for good (it cannot be undone):"
                        )(locale))
                    // Who each entry is; found by a person's values, also what matched.
                    let listed = ErasurePrompt.lines(targets, given: subject, session: session, locale: locale)
                    FileHandle.standardError.write(Data(listed.map { $0 + "\n" }.joined().utf8))
                    FileHandle.standardError.write(
                        Data(Localized(zh: "输入 yes 继续：", en: "Type yes to go on: ")(locale).utf8))
                    let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
                    guard answer == "yes" || answer == "y" || answer == "是" else {
                        throw Refusal(zh: "未确认；未清除任何内容", en: "not confirmed; nothing was erased")
                    }
                }
                var replies: [JSON] = []
                for t in targets {
                    let reply: JSON
                    do {
                        reply = try session.call(
                            .entriesErase, params(("id", .string(t.id)), ("reason", .string(reason))))
                    } catch let error as WireError where error.known == .entryErased && targets.count > 1 {
                        // Erased meanwhile (another operator, a peer's erase): what was asked is done; go on.
                        if !session.globals.json {
                            Terminal.out(lines: [
                                Localized(zh: "\(t.id) 已被清除（在此之前）", en: "\(t.id) was already erased")(
                                    session.globals.locale)
                            ])
                        }
                        continue
                    }
                    replies.append(reply)
                    if session.globals.json { continue }
                    let at = reply["erasure"]?["at"]?.stringValue.map(Terminal.localTime) ?? ""
                    Terminal.out(lines: [
                        Localized(zh: "已清除 \(t.id)（\(at)）", en: "erased \(t.id) (\(at))")(session.globals.locale)
                    ])
                    if reply["walTruncated"]?.boolValue == false {
                        Terminal.message(
                            Localized(
                                zh: "注意：旧副本的清理尚未完成（有读取者占用 WAL；在中心节点上则是有会话持有更早的快照或表锁），下次清除、--verify 或启动时会再做",
                                en:
                                    "note: old copies are not yet removed (a reader held the WAL; on a hub, a session held an older snapshot or a table lock); the next erasure, --verify or start removes them"
                            )(session.globals.locale))
                    }
                }
                if session.globals.json { Terminal.out(lines: [JSON.object([("erased", .array(replies))]).text]) }
            }
        })

    /// `erase --verify ID --value V...`: prints what VerifyErasure found; exit 1
    /// unless the entry is erased with 0 rows holding a payload and 0 hits, and
    /// no purge is pending. While one is, with `waiting` it calls again every
    /// half second (progress on stderr, at most `--timeout` seconds in all);
    /// without, it says when the purge should end.
    static func verify(id: String, values: [String], waiting: Bool, _ session: DaemonConnection) throws {
        let locale = session.globals.locale
        let call = {
            try session.call(
                .entriesVerifyErasure, params(("id", .string(id)), ("values", .array(values.map(JSON.string)))))
        }
        var reply = try call()
        let limit = session.globals.timeoutSeconds
        let began = Date()
        var told = Date.distantPast
        while waiting, let purge = reply["purge"] {
            if limit > 0 && Date().timeIntervalSince(began) >= Double(limit) { break }
            if Date().timeIntervalSince(told) >= 2 {
                Terminal.message(purgeLine(purge, waiting: true)(locale))
                told = Date()
            }
            usleep(500_000)
            reply = try call()
        }
        if let purge = reply["purge"] { Terminal.message(purgeLine(purge, waiting: false)(locale)) }
        let files = reply["files"]?.arrayValue ?? []
        let hits = files.reduce(0) { $0 + Int($1["hits"]?.intValue ?? 0) }
        let payload = Int(reply["payloadRows"]?.intValue ?? 0)
        let erased = reply["erasure"] != nil
        if session.globals.json {
            Terminal.out(lines: [reply.text])
        } else {
            var lines: [String] = []
            if let e = reply["erasure"] {
                func s(_ k: String) -> String { e[k]?.stringValue ?? "" }
                lines.append(
                    Localized(
                        zh: "条目 \(id) 已于 \(Terminal.localTime(s("at"))) 被 \(s("actor")) 清除：\(s("reason"))",
                        en: "entry \(id) was erased at \(Terminal.localTime(s("at"))) by \(s("actor")): \(s("reason"))")(
                            locale))
            } else {
                lines.append(Localized(zh: "条目 \(id) 在此节点上未被清除", en: "entry \(id) is not erased on this node")(locale))
            }
            lines.append(Localized(zh: "仍有内容的行：\(payload)", en: "rows still holding a payload: \(payload)")(locale))
            for f in files {
                let path = f["path"]?.stringValue ?? ""
                if f["exists"]?.boolValue != true {
                    lines.append(Localized(zh: "  \(path)：不存在", en: "  \(path): absent")(locale))
                } else {
                    let n = f["hits"]?.intValue ?? 0
                    let bytes = f["bytes"]?.intValue ?? 0
                    lines.append(
                        Localized(
                            zh: "  \(path)（\(bytes) 字节）：命中 \(n) 次", en: "  \(path) (\(bytes) bytes): \(n) hit(s)")(
                                locale))
                }
            }
            // A hub answers with its tables ("table NAME"), checked in SQL; a SQLite node
            // with its files, read byte by byte.
            let hub = !files.isEmpty && files.allSatisfy { ($0["path"]?.stringValue ?? "").hasPrefix("table ") }
            let rewritten = !hub || reply["walTruncated"]?.boolValue != false
            lines.append(
                !(erased && hits == 0 && payload == 0)
                    ? Localized(zh: "共命中 \(hits) 次", en: "\(hits) hit(s) in all")(locale)
                    : !rewritten
                        ? Localized(
                            zh: "共命中 0 次，但中心节点各表的文件尚未重写（有会话持有更早的快照或表锁）：文件中可能仍有这些值，稍后再检查",
                            en:
                                "0 hits in the hub's tables, but their files are not yet rewritten (a session held an older snapshot or a table lock): the values may still be in the files; check again later"
                        )(locale)
                        : hub
                            ? Localized(
                                zh: "共命中 0 次：中心节点各表中已没有任何一行含有这些值（以 SQL 检查；清除时已重写这些表的文件）。WAL、备库和备份中的副本由管理员按保留期限清理",
                                en:
                                    "0 hits in all: no row of the hub's tables holds the values (checked in SQL; the erasure rewrote those tables' files). Copies in WAL, standbys and backups are the operator's to expire"
                            )(locale)
                            : Localized(
                                zh: "共命中 0 次：上面列出的文件（数据库、WAL、清除日志及恢复前的旧库）中逐字节都已找不到这些值",
                                en:
                                    "0 hits in all: no byte of the files listed above (the database, its WAL, the erasure ledger, the copy kept before a restore) holds the values"
                            )(locale))
            let others = reply["alsoHeldBy"]?.arrayValue?.compactMap(\.stringValue) ?? []
            if hits > 0, !others.isEmpty {
                let listed = others.prefix(5).joined(separator: ", ") + (others.count > 5 ? " …" : "")
                lines.append(
                    Localized(
                        zh: "这些值也属于未清除的条目 \(listed)：命中可能来自它们；请只用这个人独有的值再检查",
                        en:
                            "the values are also held by entries not erased (\(listed)): the hits may be theirs; check again with values only this person had"
                    )(locale))
            }
            Terminal.out(lines: lines)
        }
        let notRewritten =
            reply["walTruncated"]?.boolValue == false
            && files.allSatisfy { ($0["path"]?.stringValue ?? "").hasPrefix("table ") }
        guard erased, hits == 0, payload == 0, !notRewritten, reply["purge"] == nil else {
            throw Refusal(zh: "清除检查未通过", en: "the erasure check failed")
        }
    }

    /// A line on a pending purge (VerifyErasure's `purge`): how far it is and
    /// when it should end.
    static func purgeLine(_ purge: JSON, waiting: Bool) -> Localized {
        let done = purge["pagesDone"]?.intValue ?? 0
        let pages = purge["pages"]?.intValue ?? 0
        var left: Int?
        switch purge["secondsLeft"] {
        case .double(let d)? where d.isFinite: left = Int(d.rounded(.up))
        case .int(let i)?: left = Int(i)
        default: left = nil
        }
        let zhPages = pages > 0 ? "已清理 \(done)/\(pages) 页，" : ""
        let enPages = pages > 0 ? "\(done) of \(pages) pages cleaned, " : ""
        let zhLeft = left.map { "约 \($0) 秒后完成" } ?? "完成时间未知"
        let enLeft = left.map { "about \($0) s left" } ?? "no estimate yet"
        return waiting
            ? Localized(
                zh: "等待清除后的清理完成：\(zhPages)\(zhLeft)", en: "waiting for the purge after the erasure: \(enPages)\(enLeft)"
            )
            : Localized(
                zh: "清除后的清理尚未完成（\(zhPages)\(zhLeft)）：文件中可能仍有旧副本，完成后再检查",
                en:
                    "the purge after the erasure is still pending (\(enPages)\(enLeft)): the files may still hold old copies; check again when it ends"
            )
    }

    static let erasures = Command(
        name: "erasures",
        summary: Localized(
            zh: "列出清除记录：谁在何时因何清除了哪个条目（不含个人数据）。",
            en: "List the erasures: who erased which entry, when and why (no personal data)."),
        arguments: "", options: [],
        details: [
            Localized(zh: "每行：时间、条目、表单、执行者、原因；最早的在前。", en: "Each row: time, entry, form, actor, reason; oldest first.")
        ],
        examples: ["entryctl erasures", "entryctl --json erasures"],
        prepare: { input in
            _ = try input.exactly()
            return { session in
                let reply = try session.call(.entriesErasures)
                if session.globals.json { return Terminal.out(lines: [reply.text]) }
                let list = reply["erasures"]?.arrayValue ?? []
                let locale = session.globals.locale
                let columns =
                    (locale == .zh ? ["时间", "条目", "表单", "执行者", "原因"] : ["at", "entry", "form", "actor", "reason"]).map {
                        TableColumn($0)
                    }
                let rows = list.map { e -> [String] in
                    func s(_ k: String) -> String { e[k]?.stringValue ?? "" }
                    return [Terminal.localTime(s("at")), s("entry"), s("form"), s("actor"), s("reason")]
                }
                Terminal.out(
                    lines: TableRenderer(columns: columns).render(rows) + [
                        Localized(zh: "共 \(list.count) 次清除", en: "\(list.count) erasure(s)")(locale)
                    ])
            }
        })
}
