import EntryModel
import EntryProtocol
import EntryClient

// MARK: - status, watch (io.entryd.Sync), call (any method)

enum SyncCommands {
    static let all = [status, metrics, compact, watch, call]

    static let compact = Command(
        name: "compact",
        summary: Localized(
            zh: "压缩修改日志：删除已被取代、且各对等节点都已确认的修改。",
            en: "Compact the change log: remove superseded changes every peer has acknowledged."),
        arguments: "", options: [],
        details: [
            Localized(
                zh: "只删除被后来的修改取代的行，且只到视界：每个已知对等节点都已确认的最早位置。",
                en:
                    "Removes only rows that later changes superseded, and only up to the horizon: the oldest point every known"
            ),
            Localized(
                zh: "合并仍需要的修改（当前值、未解决冲突的两边）都保留。超过 peer-expiry 未联系的",
                en:
                    "peer has acknowledged. What a merge still needs (current values, both sides of open conflicts) stays."
            ),
            Localized(
                zh: "对等节点不再等待；它回来时会从头重新同步。不询问；需要 admin 角色。",
                en:
                    "Peers silent past peer-expiry are not waited for; back, they resync from the start. Asks nothing; admin role."
            ),
        ],
        examples: ["entryctl compact", "entryctl --json compact"],
        prepare: { input in
            _ = try input.exactly()
            return { session in
                let reply = try session.call(.syncCompact)
                if session.globals.json { return Terminal.out(lines: [reply.text]) }
                Terminal.out(lines: [compactLine(reply, locale: session.globals.locale)])
            }
        })

    /// One line with the figures of a `Compact` reply (or of `Status.compaction`), in `locale`.
    static func compactLine(_ reply: JSON, locale: EntryLocale) -> String {
        let removed = reply["removed"]?.intValue ?? 0
        let freed = reply["bytesFreed"]?.intValue ?? 0
        let horizon = reply["horizon"]?.intValue ?? 0
        let expired = (reply["expired"]?.arrayValue ?? []).compactMap(\.stringValue)
        var line = Localized(
            zh: "已删除 \(removed) 条修改，释放 \(freed) 字节；视界：变更序号 \(horizon)",
            en: "removed \(removed) changes, freed \(freed) bytes; horizon: seq \(horizon)")(locale)
        if let peer = reply["heldBackBy"]?.stringValue {
            line += Localized(zh: "（由对等节点 \(peer) 决定）", en: " (held back by peer \(peer))")(locale)
        }
        if !expired.isEmpty {
            line += Localized(
                zh: "；已过期的对等节点：\(expired.joined(separator: ", "))",
                en: "; expired peers: \(expired.joined(separator: ", "))")(locale)
        }
        return line
    }

    static let status = Command(
        name: "status",
        summary: Localized(zh: "显示本节点：数量、版本、限制和对端。", en: "Show the node: counts, versions, limits and peers."),
        arguments: "", options: [],
        details: [],
        examples: ["entryctl status", "entryctl status --json"],
        prepare: { input in
            _ = try input.exactly()
            return { session in
                let reply = try session.call(.syncStatus)
                if session.globals.json { return Terminal.out(lines: [reply.text]) }
                Terminal.out(lines: statusLines(reply, locale: session.globals.locale))
            }
        })

    static let metrics = Command(
        name: "metrics",
        summary: Localized(
            zh: "以 Prometheus 文本格式显示本实例的监控指标。",
            en: "Print this instance's monitoring metrics in Prometheus's text format."),
        arguments: "", options: [],
        details: [
            Localized(
                zh: "与 entryd-web 的 GET /metrics 相同：调用次数、校验问题、写入轮次、提交延迟、冲突、对端同步、擦除、看门狗。",
                en:
                    "The same as entryd-web's GET /metrics: calls, validation problems, write rounds, commit latency, conflicts,"
            ),
            Localized(
                zh: "计数从实例启动开始。可用于没有 entryd-web 的机器（例如 node_exporter 的文本文件收集器）。需要 read 角色。",
                en:
                    "peer syncs, erasures, the watchdog. Counters count from the instance's start. For a machine without entryd-web (node_exporter's textfile collector, say). Read role."
            ),
        ],
        examples: [
            "entryctl metrics", "entryctl --json metrics",
            "entryctl metrics > /var/lib/node_exporter/entryd.prom.tmp && mv /var/lib/node_exporter/entryd.prom.tmp /var/lib/node_exporter/entryd.prom",
        ],
        prepare: { input in
            _ = try input.exactly()
            return { session in
                let reply = try session.call(.syncMetrics)
                if session.globals.json { return Terminal.out(lines: [reply.text]) }
                Terminal.out(MetricsExposition.text(reply))
            }
        })

    static let watch = Command(
        name: "watch",
        summary: Localized(
            zh: "在修改提交时逐行显示，直到按 Ctrl-C。", en: "Print changes as they are committed, one line each, until Ctrl-C."),
        arguments: "",
        options: [
            OptionSpec(
                ["--since"], value: "SEQ",
                help: Localized(
                    zh: "从修改 SEQ 之后开始（默认：节点当前的 seq）。", en: "Start after change SEQ (default: the node's current seq)."))
        ],
        details: [
            Localized(
                zh: "每行：#SEQ 时间 操作 条目 由 操作者：field=value, …；加 --json 时每行一个修改对象。",
                en: "Each line: #SEQ TIME OP ENTRY by ACTOR: field=value, … With --json, one change object per line."),
            Localized(zh: "按 Ctrl-C 结束。", en: "Ctrl-C ends watching."),
        ],
        examples: ["entryctl watch", "entryctl --json watch --since 0 > changes.jsonl"],
        prepare: { input in
            _ = try input.exactly()
            let since = try input.integer("--since", in: 0...Int64.max)
            return { session in
                var start = try since ?? session.call(.syncStatus)["seq"]?.intValue ?? 0
                while true {
                    var incarnation: String?
                    try session.stream(.syncChanges, params(("since", .int(start)))) { reply in
                        incarnation = reply["incarnation"]?.stringValue ?? incarnation
                        let changes = reply["changes"]?.arrayValue ?? []
                        Terminal.out(
                            lines: changes.map {
                                session.globals.json
                                    ? $0.text : EntryView.changeLine($0, locale: session.globals.locale)
                            })
                        return true
                    }
                    // The stream ended: the daemon stops, or the node began a new incarnation under it
                    // (a hub's database put back while it ran): then go on with the new history.
                    guard let status = try? session.call(.syncStatus), let incarnation,
                        let now = status["incarnation"]?.stringValue, now != incarnation,
                        let from = status["incarnationSeq"]?.intValue
                    else { return }
                    let why = status["incarnationReason"]?.stringValue ?? ""
                    Terminal.message(
                        Localized(
                            zh: "节点从 seq \(from) 起开始了新的数据代次（\(why)）：接着显示它的修改",
                            en: "the node began a new incarnation at seq \(from) (\(why)): watching its changes")(
                                session.globals.locale))
                    start = from
                }
            }
        })

    static let call = Command(
        name: "call",
        summary: Localized(
            zh: "用 JSON 参数调用任意方法并显示回复。", en: "Call any method with JSON parameters and print the reply."),
        arguments: "METHOD [JSON]",
        options: [
            OptionSpec(
                ["--more"],
                help: Localized(
                    zh: "请求多个回复（流式方法）；每个一行。", en: "Ask for several replies (streaming methods); print each on a line."))
        ],
        details: [
            Localized(
                zh: "METHOD 是完整的方法名；JSON 是参数对象（默认 {}）。",
                en: "METHOD is fully qualified; JSON is the parameters object (default {})."),
            Localized(
                zh: "回复参数输出为一行 JSON。错误回复输出为",
                en: "The reply parameters are printed as one JSON line. An error reply is printed as"),
            Localized(
                zh: "标准输出上的 {\"error\": NAME, \"parameters\": {…}}，在标准错误中解释，并设置退出码。",
                en: "{\"error\": NAME, \"parameters\": {…}} on stdout, explained on stderr, and sets the exit code."),
        ],
        examples: [
            "entryctl call io.entryd.Entries.Get '{\"id\": \"0193a5e2-7c4b-7def-8a12-3456789abcde\", \"locale\": \"zh\"}'",
            "entryctl call org.varlink.service.GetInfo",
        ],
        prepare: { input in
            let given = input.scanned.positionals
            guard let method = given.first else { throw UsageError(zh: "缺少 METHOD", en: "missing METHOD") }
            guard given.count <= 2 else {
                throw UsageError(zh: "多余的参数“\(given[2])”", en: "unexpected argument '\(given[2])'")
            }
            guard method.contains("."), !method.hasPrefix("."), !method.hasSuffix(".") else {
                throw UsageError(
                    zh: "“\(method)”不是完整的方法名（例如 io.entryd.Entries.Get）",
                    en: "'\(method)' is not a qualified method name such as io.entryd.Entries.Get")
            }
            let parameters: JSON
            do { parameters = try given.count == 2 ? JSON.parse(given[1]) : .object([]) } catch {
                throw UsageError(zh: "参数不是有效的 JSON：\(error)", en: "the parameters are not valid JSON: \(error)")
            }
            guard case .object = parameters else {
                throw UsageError(
                    zh: "参数必须是 JSON 对象，例如 {\"id\": \"…\"}",
                    en: "the parameters must be a JSON object, e.g. {\"id\": \"…\"}")
            }
            let more = input.has("--more")
            return { session in
                do {
                    if more {
                        try session.stream(method, parameters) {
                            Terminal.out(lines: [$0.text])
                            return true
                        }
                    } else {
                        Terminal.out(lines: [try session.call(method, parameters).text])
                    }
                } catch let error as WireError {
                    Terminal.out(lines: [
                        JSON.object([("error", .string(error.name)), ("parameters", error.parameters)]).text
                    ])
                    throw error
                }
            }
        })

    /// What stands for the database and peer addresses Status withholds from
    /// callers below admin (as `""`).
    static let adminOnly = Localized(zh: "（仅 admin 角色可见）", en: "(shown to the admin role only)")

    /// `Status` as key-value lines, then forms, limits, libraries and a peer
    /// table, labelled in `locale` (`--json` prints the wire's member names).
    static func statusLines(_ reply: JSON, locale: EntryLocale) -> [String] {
        func s(_ key: String) -> String {
            if key == "database", reply[key]?.stringValue == "" { return adminOnly(locale) }
            return reply[key]?.stringValue ?? reply[key]?.intValue.map(String.init) ?? ""
        }
        let labels: [(key: String, label: Localized)] = [
            ("node", Localized(zh: "节点", en: "node")),
            ("incarnation", Localized(zh: "数据代次", en: "incarnation")),
            ("incarnationSeq", Localized(zh: "数据代次起始序号", en: "incarnationSeq")),
            ("incarnationReason", Localized(zh: "数据代次原因", en: "incarnationReason")),
            ("seq", Localized(zh: "变更序号", en: "seq")),
            ("hlc", Localized(zh: "混合逻辑时钟", en: "hlc")),
            ("entries", Localized(zh: "条目", en: "entries")),
            ("deleted", Localized(zh: "已删除", en: "deleted")),
            ("conflicts", Localized(zh: "冲突", en: "conflicts")),
            ("erasures", Localized(zh: "已清除条目", en: "erasures")),
            ("refusedErased", Localized(zh: "因清除而拒绝的修改", en: "refusedErased")),
            ("version", Localized(zh: "版本", en: "version")),
            ("database", Localized(zh: "数据库", en: "database")),
            ("instance", Localized(zh: "实例", en: "instance")),
            ("dataVersion", Localized(zh: "参考数据版本", en: "dataVersion")),
        ]
        var lines = Terminal.keyValueLines(labels.map { ($0.label(locale), s($0.key)) })
        let heading = { (zh: String, en: String) in locale == .zh ? zh + "：" : en + ":" }
        // The object members of Status, one indented key-value section each.
        for (key, zh) in [("forms", "表单"), ("limits", "限制"), ("libraries", "库"), ("compaction", "上次压缩")] {
            let members = (reply[key]?.objectValue ?? []).map {
                ($0.0, $0.1.stringValue ?? $0.1.intValue.map(String.init) ?? $0.1.text)
            }
            if !members.isEmpty { lines += [heading(zh, key)] + Terminal.keyValueLines(members, indent: "  ") }
        }
        let peers = reply["peers"]?.arrayValue ?? []
        if !peers.isEmpty {
            lines +=
                [heading("对等节点", "peers")]
                + PeerCommands.peerTable(peers, seq: reply["seq"]?.intValue, locale: locale).map { "  " + $0 }
        }
        return lines
    }
}
