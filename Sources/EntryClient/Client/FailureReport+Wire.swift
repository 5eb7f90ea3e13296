import EntryModel
import EntryProtocol

// MARK: - Wire errors (doc/protocol.md names; branch on names, never on text)

extension FailureReport {
    /// The report for an error reply, chosen by its name: an exhaustive switch
    /// over ``WireError/known`` (a new error in interfaces/*.varlink does not
    /// compile until it has its words here, in zh and en); a name this build
    /// does not declare is shown as it came.
    static func wire(_ error: WireError, usage: Usage?, locale: EntryLocale = .en) -> FailureReport {
        let p = error.parameters
        func s(_ key: String) -> String { p[key]?.stringValue ?? "?" }
        // The exit code comes from the one mapping of wire errors (ExitCode(wireError:)); this chooses the words.
        func say(_ lines: Localized...) -> FailureReport {
            FailureReport(exitCode: ExitCode(wireError: error), lines: lines.map { $0(locale) })
        }
        let line = Localized.init(zh:en:)

        switch error.known {
        case .validationFailed?:
            return validationFailed(p["problems"]?.arrayValue ?? [], locale: locale)
        case .entryNotFound?:
            return say(line("没有 id 为“\(s("id"))”的条目", "no entry with id '\(s("id"))'"))
        case .entryErased?:
            return say(
                line(
                    "条目“\(s("id"))”已于 \(s("at")) 被彻底清除，其数据无法读取、修改或恢复",
                    "entry '\(s("id"))' was erased at \(s("at")); its data cannot be read, changed or brought back"),
                line("'entryctl erasures' 列出谁在何时因何清除了它。", "'entryctl erasures' lists who erased it, when and why."))
        case .backupUnsupported?:
            return say(
                line(
                    "本节点的条目保存在数据库服务器 \(s("database")) 中，entryctl backup 无法复制它",
                    "this node's entries are in the database server \(s("database")); entryctl backup cannot copy it"),
                line(
                    "请用 \(s("tool")) 备份（见 doc/hub.md），例如：\(s("tool")) --format=custom --file=entryd.dump 数据库URI",
                    "Back it up with \(s("tool")) (see doc/hub.md), e.g. \(s("tool")) --format=custom --file=entryd.dump DATABASE-URI"
                ))
        case .entryExists?:
            return say(
                line(
                    "条目“\(s("id"))”已存在且值不同，或已被删除", "entry '\(s("id"))' already exists with other values, or is deleted"),
                line(
                    "用 'entryctl update \(s("id")) …' 修改它，或用 'entryctl restore \(s("id"))' 恢复它。",
                    "Change it with 'entryctl update \(s("id")) …' or bring it back with 'entryctl restore \(s("id"))'."
                ))
        case .versionMismatch?:
            return say(
                line(
                    "条目“\(s("id"))”在你读取之后被修改了：当前版本是 \(s("version"))",
                    "entry '\(s("id"))' was changed since you read it: its current version is \(s("version"))"),
                line(
                    "用 'entryctl get \(s("id"))' 查看，再用 --if-version \(s("version")) 重试。",
                    "Check it with 'entryctl get \(s("id"))', then retry with --if-version \(s("version"))."))
        case .entriesFormNotFound?, .formsFormNotFound?:
            return say(
                line("没有表单“\(s("form"))”", "there is no form '\(s("form"))'"),
                line("'entryctl forms' 列出所有表单。", "'entryctl forms' lists the forms."))
        case .fieldNotFound?:
            return say(
                line(
                    "表单“\(s("form"))”没有带选择列表的字段“\(s("field"))”",
                    "form '\(s("form"))' has no field '\(s("field"))' with a picker list"),
                line(
                    "'entryctl forms' 列出字段；options 用于国家、省份、城市和选项字段。",
                    "'entryctl forms' lists the fields; options work on country, province, city and choice fields."))
        case .limitExceeded?:
            let maximum = p["maximum"]?.intValue.map(String.init) ?? "?"
            return say(
                line(
                    "entryd 拒绝了调用：达到限制“\(s("limit"))”（最大 \(maximum)）；请减少数量后重试",
                    "entryd refused the call: limit '\(s("limit"))' (maximum \(maximum)) was reached; try again with less"
                ))
        case .storageFailed?:
            return say(
                line(
                    "entryd 的存储出错（\(s("reason"))）；没有任何改动，请稍后重试",
                    "entryd's storage failed (\(s("reason"))); nothing was changed, try again later"))
        case .permissionDenied? where p["gateway"]?.boolValue == true:
            return say(
                line(
                    "权限不足：entryd.conf 的 [roles] gateway 列出了这个用户（entryd-web 的用户），而网关不能调用 Apply、SyncPeer、HeldFrom 和 Backup",
                    "permission denied: [roles] gateway in entryd.conf lists this user (entryd-web's), and a gateway may not call Apply, SyncPeer, HeldFrom or Backup"
                ),
                line("请以不在 gateway 中的用户运行它。", "Run it as a user not listed under gateway."))
        case .permissionDenied?:
            let role = p["role"]?.stringValue
            return say(
                line(
                    "权限不足" + (role.map { "：需要“\($0)”角色" } ?? ""),
                    "permission denied" + (role.map { ": this needs the '\($0)' role" } ?? "")),
                line("角色在 entryd.conf 中授予用户和组。", "Roles are given to users and groups in entryd.conf."))
        case .invalidParameter?:
            // The parameters a user types through an option get a hint in the option's terms.
            let hints = [
                "ifVersion": line(
                    "--if-version 取条目的版本：16 位十六进制数字，即 `entryctl get ID` 在“版本”下显示的值",
                    "--if-version takes the entry's version: 16 hexadecimal digits, as `entryctl get ID` shows under 'version'"
                ),
                "id": line(
                    "条目 id 是 UUID（8-4-4-4-12 位十六进制数字），即 `entryctl add` 和 `entryctl list` 显示的形式",
                    "an entry id is a UUID (8-4-4-4-12 hexadecimal digits), as `entryctl add` and `entryctl list` show it"
                ),
                "locale": line("--locale 取 zh 或 en", "--locale takes zh or en"),
            ]
            if let hint = hints[s("parameter")] {
                return .usage(
                    line("entryd 拒绝了“\(s("parameter"))”：\(hint.zh)", "entryd refused '\(s("parameter"))': \(hint.en)")(
                        locale), usage, locale: locale)
            }
            return .usage(
                line(
                    "entryd 拒绝了参数“\(s("parameter"))”（缺少、类型错误或无法使用）",
                    "entryd refused parameter '\(s("parameter"))' (missing, of the wrong type or unusable)")(locale),
                usage, locale: locale)
        case .methodNotFound?, .methodNotImplemented?:
            return say(line("entryd 不提供方法“\(s("method"))”", "entryd does not serve method '\(s("method"))'"))
        case .interfaceNotFound?:
            return say(line("entryd 不提供接口“\(s("interface"))”", "entryd does not serve interface '\(s("interface"))'"))
        case .peerUnreachable? where p["gateway"]?.boolValue == true:
            // adding the user to admin there would not help: a gateway may never push
            return say(
                line(
                    "对端“\(s("peer"))”拒绝了本节点：本节点在那里使用的用户列在对端 entryd.conf 的 [roles] gateway 中，"
                        + "而网关不能调用 Apply、SyncPeer、HeldFrom 和 Backup，无论其角色",
                    "peer '\(s("peer"))' refused this node: the user this node connects as is listed under [roles] gateway "
                        + "in the peer's entryd.conf, and a gateway may not call Apply, SyncPeer, HeldFrom or Backup, "
                        + "whatever its role"),
                line(
                    "请以未列为 gateway 的用户连接对端（例如另建一个同步用户），或在那里把该用户从 gateway 中去掉。",
                    "Connect to the peer as a user not listed as gateway there (a user of its own for syncing), "
                        + "or take that user out of gateway there."))
        case .peerUnreachable? where p["role"]?.stringValue != nil:
            // the peer refused this node: lasting until its [roles] change (exit 1); entryd's English reason is not shown
            return say(
                line(
                    "对端“\(s("peer"))”拒绝了本节点：本节点在那里使用的用户缺少 \(s("role")) 角色",
                    "peer '\(s("peer"))' refused this node: the user this node connects as there lacks the \(s("role")) role"
                ),
                line(
                    "请在对端的 entryd.conf 的 [roles] 中把该用户加入 \(s("role"))（拉取需要 read，推送需要 admin），"
                        + "重新加载那里的 entryd，然后再同步。",
                    "In the peer's entryd.conf, add that user to \(s("role")) under [roles] (pulling needs read, "
                        + "pushing admin), reload that entryd, then sync again."))
        case .peerUnreachable?:
            return say(
                line(
                    "无法连接对端“\(s("peer"))”（\(s("reason"))）；请稍后重试",
                    "peer '\(s("peer"))' cannot be reached (\(s("reason"))); try again later"))
        case .peerNotFound?:
            if s("peer").hasPrefix("exec:") {
                return say(
                    line(
                        "entryd 只为配置中列出的对端运行 exec: 地址",
                        "entryd runs exec: addresses only for peers named in its configuration"),
                    line(
                        "在 entryd.conf 中加一个带此地址的 [peer NAME] 段，再运行 'entryctl sync NAME'。",
                        "Add a [peer NAME] section with this address to entryd.conf, then 'entryctl sync NAME'."))
            }
            return say(
                line("没有对端“\(s("peer"))”", "there is no peer '\(s("peer"))'"),
                line(
                    "请给出已配置的对端（entryd.conf 中的 [peer NAME]，或 entryd --peer NAME=ADDRESS；'entryctl status' 列出它们），"
                        + "或给出 unix:/path/to/entryd.sock。",
                    "Name a configured peer ([peer NAME] in entryd.conf, or entryd --peer NAME=ADDRESS; "
                        + "'entryctl status' lists them), or give unix:/path/to/entryd.sock."))
        case .conflictNotFound?:
            return say(line("没有冲突“\(s("id"))”", "there is no conflict '\(s("id"))'"))
        case .clockSkew?:
            let ahead = p["aheadMs"]?.intValue.map(String.init) ?? "?"
            return say(
                line(
                    "节点“\(s("node"))”的时钟快了 \(ahead) 毫秒；未应用任何内容",
                    "the clock of node '\(s("node"))' is \(ahead) ms ahead; nothing was applied"))
        case nil:
            return say(line("entryd 拒绝了调用：\(error.name) \(p.text)", "entryd refused the call: \(error.name) \(p.text)"))
        }
    }

    /// Exit 65 and one line per problem: `  FIELD: [CODE] MESSAGE (did you mean: A, B?)`,
    /// in zh with Chinese punctuation: `（是否指：A、B？）`.
    /// Problems are read from raw JSON so that a code this client does not know is still shown.
    static func validationFailed(_ problems: [JSON], locale: EntryLocale = .en) -> FailureReport {
        let header: String
        let meant: String
        switch locale {
        case .zh:
            header = "提交的值未被接受（\(problems.count) 个问题）："
            meant = "是否指"
        case .en:
            header =
                "the values were not accepted (\(problems.count == 1 ? "1 problem" : "\(problems.count) problems")):"
            meant = "did you mean"
        }
        var lines = [header]
        for problem in problems {
            let field = problem["field"]?.stringValue ?? ""
            let code = problem["code"]?.stringValue ?? "?"
            let message = problem["message"]?.stringValue ?? ""
            let suggestions = problem["suggestions"]?.arrayValue?.compactMap(\.stringValue) ?? []
            var line = "  \(field.isEmpty ? Localized(zh: "（条目）", en: "(entry)")(locale) : field): [\(code)] \(message)"
            if !suggestions.isEmpty {
                let listed = suggestions.map { describe($0, locale: locale) }
                line +=
                    locale == .zh
                    ? "（\(meant)：\(listed.joined(separator: "、"))？）" : " (\(meant): \(listed.joined(separator: ", "))?)"
            }
            lines.append(DisplayWidth.sanitized(line))
        }
        return FailureReport(exitCode: .dataError, lines: lines)
    }

    /// A suggested canonical value with its name in `locale`, from the reference
    /// data this client carries: zh `CN 🇨🇳 中国`, `440100 广东省 广州市`; en
    /// `CN 🇨🇳 China`, `440100 Guangzhou, Guangdong`; other values as they are.
    package static func describe(_ value: String, locale: EntryLocale = .zh) -> String {
        let reference = ReferenceData.shared
        if let label = reference.countryLabel(alpha2: value, locale: locale) { return "\(value) \(label)" }
        if let division = reference.division(code: value) {
            let province = division.parentCode.flatMap(reference.division(code:))
            switch (locale, province) {
            case (.zh, let p?): return "\(value) \(p.nameZH) \(division.nameZH)"
            case (.en, let p?): return "\(value) \(division.nameEN), \(p.nameEN)"
            case (_, nil): return "\(value) \(division.name(in: locale))"
            }
        }
        return value
    }
}
