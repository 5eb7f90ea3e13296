import EntryModel
import EntryProtocol
import EntryClient

// MARK: - options, forms, check (io.entryd.Forms)

enum FormCommands {
    static let all = [options, forms, check]

    static let options = Command(
        name: "options", summary: Localized(zh: "显示字段选择列表中的行。", en: "Show the rows of a field's picker list."),
        arguments: "FIELD",
        options: [
            OptionSpec(
                ["--parent"], value: "V",
                help: Localized(
                    zh: "级联字段（城市）的上级值（省份）。", en: "For a cascading field (city): the parent's value (province).")),
            OptionSpec(
                ["--search"], value: "Q",
                help: Localized(zh: "值、名称、拼音或别名包含 Q 的行。", en: "Rows whose value, name, pinyin or alias contains Q.")),
            OptionSpec(["--limit"], value: "N", help: Localized(zh: "最多 N 行。", en: "At most N rows.")),
            EntryCommands.formOption,
        ],
        details: [
            Localized(
                zh: "列：要输入的规范值、名称（国家带旗帜）、上级、其他可接受的输入。",
                en:
                    "Columns: the canonical value to type, the name (with flag for countries), the parent, other accepted inputs."
            )
        ],
        examples: [
            "entryctl options country --search 中",
            "entryctl options city --parent 440000",
            "entryctl --locale en options province --search guang",
        ],
        prepare: { input in
            let field = try input.exactly("FIELD")[0]
            let parent = input.value("--parent")
            let query = input.value("--search")
            let form = input.value("--form")
            let limit = try input.integer("--limit")
            return { session in
                let reply: JSON
                do {
                    reply = try session.call(
                        .formsOptions,
                        params(
                            ("form", form.json), ("field", .string(field)), ("parent", parent.json),
                            ("query", query.json),
                            ("limit", limit.map(JSON.int)), ("locale", session.locale)))
                } catch let error as WireError
                    where error.known == .invalidParameter && error.parameters["parameter"]?.stringValue == "parent"
                {
                    // The daemon's word is the wire member; say which option and what it takes.
                    let given = parent ?? ""
                    throw UsageError(
                        zh:
                            "--parent “\(given)” 没有对应唯一的省份：请给出省份的代码、名称或别名，例如 440000 或 广东（entryctl options province --search \(given)）",
                        en:
                            "--parent '\(given)' names no single province: give a province's code, name or alias, e.g. 440000 or Guangdong (entryctl options province --search \(given))"
                    )
                }
                if session.globals.json { return Terminal.out(lines: [reply.text]) }
                Terminal.out(lines: optionTable(reply["options"]?.arrayValue ?? [], text: session.text))
            }
        })

    static let forms = Command(
        name: "forms", summary: Localized(zh: "显示表单及其字段。", en: "Show the forms and their fields."), arguments: "",
        options: [],
        details: [
            Localized(
                zh: "字段按导航顺序列出，包括类型、标签、何时必填及其范围。",
                en:
                    "Fields are listed in navigation order, with their type, label, when they are required and their bounds."
            )
        ],
        examples: ["entryctl forms", "entryctl --locale en forms"],
        prepare: { input in
            _ = try input.exactly()
            return { session in
                let reply = try session.call(.formsListForms, params(("locale", session.locale)))
                if session.globals.json { return Terminal.out(lines: [reply.text]) }
                var lines: [String] = []
                for form in reply["forms"]?.arrayValue ?? [] {
                    if !lines.isEmpty { lines.append("") }
                    lines.append(
                        DisplayWidth.sanitized(
                            "\(form["name"]?.stringValue ?? "?") — \(form["title"]?.stringValue ?? "")"))
                    lines += fieldTable(form["fields"]?.arrayValue ?? [], locale: session.globals.locale).map {
                        "  " + $0
                    }
                }
                Terminal.out(lines: lines)
            }
        })

    static let check = Command(
        name: "check",
        summary: Localized(
            zh: "校验 FIELD=VALUE 参数，不存储；或列出已存储但现行规则不再接受的值。",
            en: "Validate FIELD=VALUE arguments without storing them, or list stored values the current rules refuse."),
        arguments: "FIELD=VALUE... | --stored",
        options: [
            EntryCommands.formOption,
            OptionSpec(
                ["--stored"],
                help: Localized(
                    zh: "列出现行规则不再接受的已存储电话和电子邮件（ID、字段、值、原因）。",
                    en: "List stored phones and e-mails the current rules refuse (id, field, value, why).")),
        ],
        details: [
            Localized(
                zh: "显示 add 将会存储的值，或列出每个问题（退出码 65）。",
                en: "Prints the values as add would store them, or every problem (exit 65)."),
            Localized(zh: "未给出的字段按缺少检查，与 add 相同。", en: "Fields left out are checked as missing, as add would."),
            Localized(
                zh: "使用 --stored：每行一个不再通过校验的已存储电话或电子邮件；它们保持原样，请逐条修改。",
                en:
                    "With --stored: every stored phone and e-mail that no longer validates, one a line; they stay as stored, for you to fix."
            ),
        ],
        examples: [
            "entryctl check name=李雷 birthday=1990-05-17 country=中国 province=广东 city=广州 contact_method=phone phone=13800138000",
            "entryctl check --stored",
        ],
        prepare: { input in
            if input.has("--stored") {
                guard input.scanned.positionals.isEmpty else {
                    throw UsageError(zh: "--stored 不接受 FIELD=VALUE 参数", en: "--stored takes no FIELD=VALUE")
                }
                return { session in
                    let reply = try session.call(.formsCheckStored, params(("locale", session.locale)))
                    let problems = reply["problems"]?.arrayValue ?? []
                    if session.globals.json {
                        Terminal.out(lines: [reply.text])
                    } else if !problems.isEmpty {
                        let column = { (p: JSON, key: String) in p[key]?.stringValue ?? "" }
                        Terminal.out(
                            lines: TableRenderer(
                                columns: (session.globals.locale == .zh
                                    ? ["ID", "字段", "值", "原因"] : ["id", "field", "value", "reason"]).map {
                                        TableColumn($0)
                                    }
                            )
                            .render(problems.map { p in ["id", "field", "value", "message"].map { column(p, $0) } }))
                    }
                }
            }
            let (_, typed) = try input.fields()
            let form = input.value("--form")
            return { session in
                // Labels in zh or en stand for their fields, as for add.
                let names = try ExportCommand.formFields(session, form: form)
                let (fields, unknown) = try FieldAssignment.resolve(typed, fields: names.fields)
                let reply = try session.call(
                    .formsCheck,
                    params(
                        ("form", form.json), ("fields", JSON.stringMap(fields)), ("locale", session.locale)))
                if session.globals.json { Terminal.out(lines: [reply.text]) }
                let problems = EntryCommands.explained(
                    reply["problems"]?.arrayValue ?? [], unknown: unknown, form: names, session)
                if !problems.isEmpty {
                    throw WireError(.validationFailed, parameters: .object([("problems", .array(problems))]))
                }
                if session.globals.json { return }
                let canonical = EntryView.stringMap(reply["fields"])
                let display = EntryView.stringMap(reply["display"])
                let labels = session.fieldLabels(form: form)
                var pairs = EntryView.orderedFields(Array(canonical.keys), labels: labels).map { name, label in
                    (label, display[name] ?? canonical[name] ?? "")
                }
                pairs.append((session.text.region, display["region"] ?? ""))
                Terminal.out(lines: Terminal.keyValueLines(pairs))
            }
        })

    /// Picker rows as a table: value, flag + label, parent (when any row has one), aliases.
    static func optionTable(_ options: [JSON], text: UIText) -> [String] {
        let hasParent = options.contains { !($0["parent"]?.stringValue ?? "").isEmpty }
        var columns = [TableColumn(text.value), TableColumn(text.label)]
        if hasParent { columns.append(TableColumn(text.parent)) }
        columns.append(TableColumn(text.aliases, maxWidth: 48))
        let rows = options.map { option -> [String] in
            let label = option["label"]?.stringValue ?? ""
            let flag = option["flag"]?.stringValue ?? ""
            var row = [option["value"]?.stringValue ?? "", flag.isEmpty ? label : "\(flag) \(label)"]
            if hasParent { row.append(option["parent"]?.stringValue ?? "") }
            row.append((option["aliases"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", "))
            return row
        }
        return TableRenderer(columns: columns).render(rows)
    }

    /// A form's fields as a table: name, type, label, required, parent, bounds.
    static func fieldTable(_ fields: [JSON], locale: EntryLocale) -> [String] {
        let t = { (zh: String, en: String) in Localized(zh: zh, en: en)(locale) }
        let columns =
            (locale == .zh
            ? ["字段", "类型", "标签", "必填", "上级", "范围"] : ["field", "type", "label", "required", "parent", "bounds"])
            .map { TableColumn($0) }
        let rows = fields.map { field -> [String] in
            func s(_ key: String) -> String { field[key]?.stringValue ?? "" }
            // A city under a province is required whenever that province has cities (the validator's rule).
            let required =
                field["required"]?.boolValue == true
                ? t("是", "yes")
                : !s("requiredWhen").isEmpty
                    ? t("当 \(s("requiredWhen")) 时", "when \(s("requiredWhen"))")
                    : s("type") == "city" && !s("parent").isEmpty
                        ? t("当 \(s("parent")) 有城市时", "when \(s("parent")) has cities") : t("否", "no")
            var bounds: [String] = []
            if !s("min").isEmpty { bounds.append(t("最早 \(s("min"))", "min \(s("min"))")) }
            if !s("max").isEmpty { bounds.append(t("最晚 \(s("max"))", "max \(s("max"))")) }
            if let n = field["maxLength"]?.intValue { bounds.append(t("最多 \(n) 个字符", "at most \(n) characters")) }
            if let n = field["minuteInterval"]?.intValue { bounds.append(t("每 \(n) 分钟", "every \(n) minutes")) }
            return [s("name"), s("type"), s("label"), required, s("parent"), bounds.joined(separator: t("，", ", "))]
        }
        return TableRenderer(columns: columns).render(rows)
    }
}
