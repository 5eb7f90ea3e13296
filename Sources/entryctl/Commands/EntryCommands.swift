import EntryModel
import EntryProtocol
import EntryClient

// MARK: - add, get, update, delete, restore, history (io.entryd.Entries)

enum EntryCommands {
    static let formOption = OptionSpec(
        ["--form"], value: "FORM",
        help: Localized(
            zh: "表单（默认：守护进程的默认表单 registration）。", en: "The form (default: the daemon's default form, registration)."))
    static let reasonOption = OptionSpec(
        ["--reason"], value: "TEXT", help: Localized(zh: "原因，随修改记入历史。", en: "Why, kept with the change in the history.")
    )
    static let ifVersionOption = OptionSpec(
        ["--if-version"], value: "V",
        help: Localized(zh: "条目的版本不再是 V 时拒绝（退出码 1）。", en: "Refuse (exit 1) unless the entry's version is still V."))

    static let all = [add, get, update, delete, restore, history]

    static let add = Command(
        name: "add",
        summary: Localized(
            zh: "按 FIELD=VALUE 参数存储新条目，或在屏幕上填写表单（-i）。",
            en: "Store a new entry from FIELD=VALUE arguments, or fill the form on screen (-i)."),
        arguments: "FIELD=VALUE...",
        options: [
            OptionSpec(
                ["--id"], value: "ID",
                help: Localized(
                    zh: "使用此 id；用同样的值再次添加同一 id 不会改变任何内容。",
                    en: "Use this id; adding the same id with the same values again changes nothing.")),
            formOption,
            InteractiveCommands.interactiveOption,
        ],
        details: [
            Localized(
                zh: "每个参数是 FIELD=VALUE，在第一个 '=' 处分开；值可以包含 '='，也可以为空。",
                en: "Each argument is FIELD=VALUE, split at the first '='; the value may contain '=' and may be empty."),
            Localized(
                zh: "FIELD 是表单定义的字段名、其中文或英文标签，或其表头别名（姓名=李雷、Birthday=1990-05-17、手机=13800138000）。",
                en:
                    "FIELD is a field name, its label in zh or en, or one of its header aliases, as the form defines them (姓名=李雷, Birthday=1990-05-17, 手机=13800138000)."
            ),
            Localized(
                zh: "值可以宽松书写（中国、China、CN；广东、广东省、440000）；守护进程存储规范形式。",
                en: "Values may be lenient (中国, China, CN; 广东, 广东省, 440000); the daemon stores the canonical form."),
            Localized(
                zh: "显示存储的条目。值有问题时逐一列出，退出码 65。",
                en: "Prints the stored entry. Problems with the values are listed and exit with 65."),
            Localized(
                zh: "已有条目看起来是同一人（姓名和生日、电话或邮箱相同）时，存储后在标准错误上警告，退出码仍为 0；--json 的输出带 duplicates。",
                en:
                    "When stored entries look like the same person (same name and birthday, phone or e-mail), a warning follows on stderr after storing; the exit status stays 0, and --json output carries duplicates."
            ),
            Localized(
                zh: "加 -i（不带 FIELD=VALUE）：带选择器的全屏表单；显示新条目的 id（见 'entryctl edit --help'）。",
                en:
                    "With -i (no FIELD=VALUE): a full-screen form with pickers; prints the new entry's id (see 'entryctl edit --help')."
            ),
        ],
        examples: [
            "entryctl add name=李雷 birthday=1990-05-17 country=中国 province=广东 city=广州 contact_method=phone phone=13800138000",
            "entryctl add --id 7d3c0e2a-5b1f-4c6e-9a8d-2f4b6c8e0a1b name=韩梅梅 birthday=1991-02-03 country=CN province=北京 city=东城区 contact_method=email email=meimei@example.com",
            "entryctl add -i --form registration",
        ],
        prepare: { input in
            if input.has("--interactive") { return try InteractiveCommands.prepareAdd(input) }
            let (_, typed) = try input.fields()
            let form = input.value("--form")
            let id = input.value("--id")
            return { session in
                let names = try ExportCommand.formFields(session, form: form)
                let (fields, unknown) = try FieldAssignment.resolve(typed, fields: names.fields)
                let reply = try explainingUnknownFields(unknown, form: names, session) {
                    try session.call(
                        .entriesAdd,
                        params(
                            ("form", form.json), ("id", id.json), ("fields", JSON.stringMap(fields)),
                            ("locale", session.locale)))
                }
                printEntry(reply, session)
                // A warning, after the entry is stored: the exit status stays 0.
                DuplicateWarning.warn(reply, locale: session.globals.locale)
            }
        })

    static let get = Command(
        name: "get", summary: Localized(zh: "显示一个条目。", en: "Show one entry."), arguments: "ID", options: [],
        details: [Localized(zh: "已删除的条目也会显示，并标为已删除。", en: "Deleted entries are shown too, marked as deleted.")],
        examples: ["entryctl get 0193a5e2-7c4b-7def-8a12-3456789abcde"],
        prepare: { input in
            let id = try input.exactly("ID")[0]
            return { session in
                printEntry(
                    try session.call(.entriesGet, params(("id", .string(id)), ("locale", session.locale))), session)
            }
        })

    static let update = Command(
        name: "update", summary: Localized(zh: "修改条目的部分字段。", en: "Change some fields of an entry."),
        arguments: "ID FIELD=VALUE...",
        options: [ifVersionOption, reasonOption],
        details: [
            Localized(
                zh: "只修改给出的字段。空值（email=）清除可选字段。",
                en: "Only the fields given change. An empty value (email=) clears an optional field."),
            Localized(
                zh: "FIELD 是条目所属表单定义的字段名或其中文、英文标签（城市=深圳）。",
                en: "FIELD is a field name or its label in zh or en, as the entry's form defines them (城市=深圳)."),
            Localized(
                zh: "加 --if-version 时，如果在你读取该版本之后有人修改了条目，修改会被拒绝。",
                en: "With --if-version, the change is refused if someone changed the entry since you read that version."
            ),
        ],
        examples: [
            "entryctl update 0193a5e2-7c4b-7def-8a12-3456789abcde city=深圳 --reason 搬家",
            "entryctl update 0193a5e2-7c4b-7def-8a12-3456789abcde contact_method=email email=lilei@example.com phone=",
        ],
        prepare: { input in
            let (leading, typed) = try input.fields(after: "ID")
            let ifVersion = input.value("--if-version")
            let reason = input.value("--reason")
            return { session in
                // The entry's form says which names and labels there are.
                let current = try session.call(.entriesGet, params(("id", .string(leading[0]))))
                let names = try ExportCommand.formFields(session, form: current["entry"]?["form"]?.stringValue)
                let (fields, unknown) = try FieldAssignment.resolve(typed, fields: names.fields)
                let reply = try explainingUnknownFields(unknown, form: names, session) {
                    try session.call(
                        .entriesUpdate,
                        params(
                            ("id", .string(leading[0])), ("fields", JSON.stringMap(fields)),
                            ("ifVersion", ifVersion.json),
                            ("reason", reason.json), ("locale", session.locale)))
                }
                printEntry(reply, session)
                if reply["entry"]?["deleted"]?.boolValue == true {
                    // The edit is stored, but nobody sees a deleted entry in lists: say so.
                    let id = leading[0]
                    Terminal.message(
                        session.globals.locale == .zh
                            ? "注意：条目 \(id) 已删除，修改已保存但不会出现在列表中；要恢复它，运行 entryctl restore \(id)"
                            : "note: entry \(id) is deleted: the change is stored, but lists leave it out; to bring it back, run entryctl restore \(id)"
                    )
                }
            }
        })

    static let delete = Command(
        name: "delete", summary: Localized(zh: "删除条目（可以恢复）。", en: "Delete an entry (it can be restored)."),
        arguments: "ID",
        options: [ifVersionOption, reasonOption],
        details: [
            Localized(
                zh: "条目保留它的值并标为已删除，这样删除会同步，也可以撤销。",
                en: "The entry keeps its values, marked as deleted, so that the deletion syncs and can be undone.")
        ],
        examples: ["entryctl delete 0193a5e2-7c4b-7def-8a12-3456789abcde --reason 重复登记"],
        prepare: { input in
            let id = try input.exactly("ID")[0]
            let ifVersion = input.value("--if-version")
            let reason = input.value("--reason")
            return { session in
                let reply = try session.call(
                    .entriesDelete,
                    params(
                        ("id", .string(id)), ("ifVersion", ifVersion.json), ("reason", reason.json),
                        ("locale", session.locale)))
                printEntry(reply, session)
            }
        })

    static let restore = Command(
        name: "restore", summary: Localized(zh: "恢复已删除的条目。", en: "Bring back a deleted entry."), arguments: "ID",
        options: [reasonOption],
        details: [],
        examples: ["entryctl restore 0193a5e2-7c4b-7def-8a12-3456789abcde --reason 误删"],
        prepare: { input in
            let id = try input.exactly("ID")[0]
            let reason = input.value("--reason")
            return { session in
                printEntry(
                    try session.call(
                        .entriesRestore,
                        params(("id", .string(id)), ("reason", reason.json), ("locale", session.locale))), session)
            }
        })

    static let history = Command(
        name: "history", summary: Localized(zh: "列出条目的每次修改，最早的在前。", en: "List every change of an entry, oldest first."),
        arguments: "ID", options: [],
        details: [
            Localized(
                zh: "每个修改：时间（精确到秒）、做了什么、谁、在哪个节点；然后是它设置的每个字段，",
                en: "Each change: its time (to the second), what it did, who, on which node; then each field it set"),
            Localized(
                zh: "形如 标签  旧值 → 新值，标签和值的语言按 --locale。在同步冲突中",
                en: "as label  old → new, with labels and values in the --locale language. Changes that lost a"),
            Localized(
                zh: "落败的修改也会列出。--json 输出协议中的修改（代码、字段名）。",
                en: "sync conflict are listed too. --json prints the wire changes (codes, field names)."),
            Localized(
                zh: "压缩删除过已被取代的修改时，最后一行说明删到哪里。",
                en: "When compaction removed superseded changes, a last line says through where."),
        ],
        examples: ["entryctl history 0193a5e2-7c4b-7def-8a12-3456789abcde"],
        prepare: { input in
            let id = try input.exactly("ID")[0]
            return { session in
                let reply = try session.call(.entriesHistory, params(("id", .string(id)), ("locale", session.locale)))
                if session.globals.json { return Terminal.out(lines: [reply.text]) }
                let changes = reply["changes"]?.arrayValue ?? []
                let names = session.fieldNames(form: changes.first?["form"]?.stringValue)
                Terminal.out(lines: HistoryView.lines(changes, names: names, locale: session.globals.locale))
                if let through = reply["compactedThrough"]?.intValue {
                    Terminal.out(lines: [
                        Localized(
                            zh: "（压缩已删除本条目较早的、已被取代的修改，直到本节点变更序号 \(through)。）",
                            en:
                                "(Compaction removed earlier, superseded changes of this entry, through seq \(through) of this node.)"
                        )(session.globals.locale)
                    ])
                }
            }
        })

    /// Runs `call`; when the daemon refuses the values, the problems of the
    /// `unknown` names (no field's name or label) say so with the nearest
    /// name or label, which the daemon, knowing names only, cannot suggest.
    /// - Throws: what `call` throws, the problems rewritten.
    static func explainingUnknownFields(
        _ unknown: [String], form: (name: String, fields: [DataColumns.FieldNames]),
        _ session: DaemonConnection, _ call: () throws -> JSON
    ) throws -> JSON {
        do {
            return try call()
        } catch let error as WireError where error.known == .validationFailed && !unknown.isEmpty {
            let problems = explained(
                error.parameters["problems"]?.arrayValue ?? [], unknown: unknown, form: form, session)
            throw WireError(name: error.name, parameters: .object([("problems", .array(problems))]))
        }
    }

    /// `problems` with the message of each `unknown-field` problem of an
    /// `unknown` name replaced by ``FieldAssignment/unknownFieldMessage(_:form:fields:locale:)``.
    static func explained(
        _ problems: [JSON], unknown: [String], form: (name: String, fields: [DataColumns.FieldNames]),
        _ session: DaemonConnection
    ) -> [JSON] {
        problems.map { problem -> JSON in
            guard case .object(var members) = problem, problem["code"]?.stringValue == "unknown-field",
                let field = problem["field"]?.stringValue, unknown.contains(field)
            else { return problem }
            let message = FieldAssignment.unknownFieldMessage(
                field, form: form.name, fields: form.fields,
                locale: session.globals.locale)
            members = members.map { key, value in key == "message" ? (key, .string(message)) : (key, value) }
            return .object(members)
        }
    }

    /// Prints a reply holding `entry`: as JSON with `--json`, else readably with the form's labels.
    static func printEntry(_ reply: JSON, _ session: DaemonConnection) {
        if session.globals.json { return Terminal.out(lines: [reply.text]) }
        let entry = reply["entry"] ?? .object([])
        let labels = session.fieldLabels(form: entry["form"]?.stringValue)
        Terminal.out(lines: EntryView.lines(entry, labels: labels, text: session.text))
    }
}
