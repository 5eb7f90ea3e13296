import CSystem
import EntryModel
import EntryProtocol
import EntryClient

// MARK: - peers, sync, conflicts, resolve, bridge (io.entryd.Sync peers and conflicts)

enum PeerCommands {
    static let all = [peers, sync, conflicts, resolve, bridge]

    static let peers = Command(
        name: "peers",
        summary: Localized(
            zh: "列出同步对端：地址、各自的同步进度、最近的错误。", en: "List the peers: where they are, how far each sync got, the last error."
        ), arguments: "",
        options: [],
        details: [
            Localized(
                zh: "先列出配置的对端（首次同步之前也列出），再列出按地址同步过的对端。",
                en: "Configured peers first (before their first sync too), then peers synced by address."),
            Localized(
                zh: "“未推送”是本节点在上次推送检查点之后的修改数（0：对端已全部拥有）；",
                en:
                    "\"not pushed\" counts this node's changes after the last push checkpoint (0: the peer has them all);"
            ),
            Localized(
                zh: "其中来自对端自己的修改在推送时跳过。--json 输出 Status 的 peers 数组。",
                en: "the peer's own changes among them are skipped when pushing. --json prints the Status peers array."),
        ],
        examples: ["entryctl peers", "entryctl --json peers"],
        prepare: { input in
            _ = try input.exactly()
            return { session in
                let reply = try session.call(.syncStatus)
                let peers = reply["peers"]?.arrayValue ?? []
                if session.globals.json { return Terminal.out(lines: [JSON.array(peers).text]) }
                guard !peers.isEmpty else {
                    return Terminal.out(lines: [
                        session.globals.locale == .zh
                            ? "没有同步对象。在 entryd.conf 中添加 [peer NAME] 段（address = …），或运行 entryctl sync unix:/path/to/other.sock。"
                            : "No peers. Add a [peer NAME] section (address = …) to entryd.conf, or run entryctl sync unix:/path/to/other.sock."
                    ])
                }
                Terminal.out(lines: peerTable(peers, seq: reply["seq"]?.intValue, locale: session.globals.locale))
            }
        })

    /// The `Status` peers as a table: name, address, node, checkpoints, the
    /// changes not yet pushed (when this node's `seq` is known), last sync, last
    /// error, and the last re-read or re-send with why (doc/design.md "Incarnations").
    static func peerTable(_ peers: [JSON], seq: Int64?, locale: EntryLocale) -> [String] {
        let zh = locale == .zh
        var names =
            zh
            ? ["名称", "地址", "节点", "已拉取到 seq", "已推送到 seq"]
            : ["name", "address", "node", "pulled to seq", "pushed to seq"]
        if seq != nil { names.append(Localized(zh: "未推送", en: "not pushed")(locale)) }
        names += zh ? ["上次同步", "上次错误", "通知"] : ["last sync", "last error", "notice"]
        let rows = peers.map { peer -> [String] in
            func p(_ key: String) -> String { peer[key]?.stringValue ?? peer[key]?.intValue.map(String.init) ?? "" }
            let address = peer["address"]?.stringValue == "" ? SyncCommands.adminOnly(locale) : p("address")
            var row = [p("name"), address, p("node"), p("pulledSeq"), p("pushedSeq")]
            if let seq { row.append(String(max(0, seq - (peer["pushedSeq"]?.intValue ?? 0)))) }
            return row + [
                p("lastSync").isEmpty ? Localized(zh: "从未", en: "never")(locale) : Terminal.localTime(p("lastSync")),
                p("lastError"), p("notice"),
            ]
        }
        return TableRenderer(columns: names.map { TableColumn($0) }).render(rows)
    }

    static let sync = Command(
        name: "sync",
        summary: Localized(zh: "立即与对端双向同步，并显示传送了什么。", en: "Sync with a peer now, both ways, and print what moved."),
        arguments: "PEER",
        options: [],
        details: [
            Localized(
                zh: "PEER 是守护进程配置中命名的对端，或 unix:/path/to/other.sock。",
                en: "PEER is a peer named in the daemon's configuration, or unix:/path/to/other.sock."),
            Localized(
                zh: "exec: 地址会运行命令，因此只有配置的对端可以使用。",
                en: "exec: addresses run commands, so only configured peers may use them."),
        ],
        examples: ["entryctl sync laptop", "entryctl sync unix:/run/user/1000/entryd.sock"],
        prepare: { input in
            let peer = try input.exactly("PEER")[0]
            return { session in
                let reply = try session.call(.syncSyncPeer, params(("peer", .string(peer))))
                if session.globals.json { return Terminal.out(lines: [reply.text]) }
                func n(_ k: String) -> String { reply[k]?.intValue.map(String.init) ?? "0" }
                let locale = session.globals.locale
                var lines = [
                    Localized(
                        zh: "拉取 \(n("pulled"))，推送 \(n("pushed"))，冲突 \(n("conflicts"))",
                        en: "pulled \(n("pulled")), pushed \(n("pushed")), conflicts \(n("conflicts"))")(locale)
                ]
                if let refused = reply["refusedErased"]?.intValue, refused > 0 {
                    lines.append(
                        Localized(
                            zh: "因条目已清除而拒绝的修改：\(refused)",
                            en: "changes refused because their entry was erased: \(refused)")(locale))
                }
                lines += (reply["warnings"]?.arrayValue ?? []).compactMap(\.stringValue).map {
                    Localized(zh: "警告：", en: "warning: ")(locale) + $0
                }
                Terminal.out(lines: lines)
            }
        })

    static let conflicts = Command(
        name: "conflicts",
        summary: Localized(zh: "列出冲突：在并发修改中落败的值。", en: "List conflicts: values that lost a concurrent edit."),
        arguments: "",
        options: [
            OptionSpec(["--entry"], value: "ID", help: Localized(zh: "只看此条目的冲突。", en: "Only conflicts of this entry.")),
            OptionSpec(["--all"], help: Localized(zh: "包括已解决的冲突。", en: "Include resolved conflicts.")),
        ],
        details: [
            Localized(
                zh: "每个冲突：其 id 与是否已解决；条目的姓名、生日、表单与 id；字段名称；保留的值和落败的值，各自的写入时间与节点。",
                en:
                    "Each conflict: its id and whether resolved; the entry's name, birthday, form and id; the field's label; "
                    + "the kept and the lost value, each with the time and node that wrote it."),
            Localized(
                zh: "字段“deleted”：删除与它没看到的编辑（条目保持删除，带有编辑的值）；",
                en:
                    "Field 'deleted': a delete and an edit it did not see (the entry stays deleted, with the edit's values);"
            ),
            Localized(
                zh: "resolve --use-lost 恢复条目，只用 resolve 则保持删除。",
                en: "resolve --use-lost restores the entry, resolve alone keeps it deleted."),
        ],
        examples: ["entryctl conflicts", "entryctl conflicts --entry 0193a5e2-7c4b-7def-8a12-3456789abcde --all"],
        prepare: { input in
            _ = try input.exactly()
            let entry = input.value("--entry")
            let all = input.has("--all")
            return { session in
                let reply = try session.call(
                    .syncListConflicts,
                    params(("entry", entry.json), ("includeResolved", .bool(all))))
                let list = reply["conflicts"]?.arrayValue ?? []
                if session.globals.json { return Terminal.out(lines: [reply.text]) }
                let locale = session.globals.locale
                var lines: [String] = []
                let people = ConflictPeople(session: session, locale: locale)
                for c in list {
                    lines += people.describe(c)
                    lines.append("")
                }
                Terminal.out(
                    lines: lines + [Localized(zh: "共 \(list.count) 个冲突", en: "\(list.count) conflict(s)")(locale)])
            }
        })

    static let resolve = Command(
        name: "resolve",
        summary: Localized(
            zh: "把冲突标记为已解决，可选择写回落败的值。", en: "Mark a conflict resolved, optionally writing the lost value back."),
        arguments: "CONFLICT-ID",
        options: [
            OptionSpec(
                ["--use-lost"],
                help: Localized(
                    zh: "把落败的值作为新修改写回（随后会同步）；对“deleted”冲突则恢复条目。",
                    en:
                        "Write the lost value back as a new change (it then syncs); for a 'deleted' conflict, restore the entry."
                ))
        ],
        details: [],
        examples: ["entryctl resolve 0193a5e2-7c4b-7def-8a12-3456789abcde --use-lost"],
        prepare: { input in
            let id = try input.exactly("CONFLICT-ID")[0]
            let useLost = input.has("--use-lost")
            return { session in
                let reply = try session.call(.syncResolve, params(("id", .string(id)), ("useLost", .bool(useLost))))
                Terminal.out(lines: [
                    session.globals.json
                        ? reply.text
                        : Localized(zh: "已解决 \(id)", en: "resolved \(id)")(session.globals.locale)
                ])
            }
        })

    static let bridge = Command(
        name: "bridge",
        summary: Localized(
            zh: "把标准输入/输出连接到本地守护进程（用于 exec:ssh HOST entryctl bridge）。",
            en: "Connect stdin/stdout to the local daemon (for exec:ssh HOST entryctl bridge)."),
        arguments: "", options: [],
        details: [
            Localized(
                zh: "在标准输入/输出与守护进程的套接字之间双向复制字节，直到任一方结束。",
                en: "Copies bytes both ways between stdin/stdout and the daemon's socket until either side ends."),
            Localized(
                zh: "另一台机器上的守护进程把它配置为对端：address = exec:ssh HOST entryctl bridge",
                en: "A daemon on another machine names this as a peer: address = exec:ssh HOST entryctl bridge"),
        ],
        examples: ["entryctl bridge", "ssh host entryctl bridge"],
        prepare: { input in
            _ = try input.exactly()
            return { session in
                let connection = try session.open()
                _ = csystem_set_timeouts(connection.fd, 0, 0)  // a bridge may idle for as long as its peer likes
                ByteBridge.run(input: 0, output: 1, socket: connection.fd)
            }
        })
}
