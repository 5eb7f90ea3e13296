import EntryModel
import EntryProtocol
import EntryClient

// MARK: - options, forms, check (io.entryd.Forms)

enum FormCommands {
    static let all = [options, forms, check]

    static let options = Command(
        name: "options", summary: "Show the rows of a field's picker list.", arguments: "FIELD",
        options: [
            OptionSpec(["--parent"], value: "V", help: "For a cascading field (city): the parent's value (province)."),
            OptionSpec(["--search"], value: "Q", help: "Rows whose value, name, pinyin or alias contains Q."),
            OptionSpec(["--limit"], value: "N", help: "At most N rows."),
            EntryCommands.formOption,
        ],
        details: ["Columns: the canonical value to type, the name (with flag for countries), the parent, other accepted inputs."],
        examples: [
            "entryctl options country --search 中",
            "entryctl options city --parent 440000",
            "entryctl --locale en options province --search guang",
        ],
        prepare: { input in
            let field = try input.exactly("FIELD")[0]
            let parent = input.value("--parent"), query = input.value("--search"), form = input.value("--form")
            let limit = try input.integer("--limit")
            return { session in
                let reply: JSON
                do {
                    reply = try session.call("io.entryd.Forms.Options", params(
                        ("form", form.json), ("field", .string(field)), ("parent", parent.json), ("query", query.json),
                        ("limit", limit.map(JSON.int)), ("locale", session.locale)))
                } catch let error as WireError
                    where error.name == WireErrorName.invalidParameter && error.parameters["parameter"]?.stringValue == "parent" {
                    // The daemon's word is the wire member; say which option and what it takes.
                    let given = parent ?? ""
                    throw UsageError(session.globals.locale == .zh
                        ? "--parent “\(given)” 没有对应唯一的省份：请给出省份的代码、名称或别名，例如 440000 或 广东（entryctl options province --search \(given)）"
                        : "--parent '\(given)' names no single province: give a province's code, name or alias, e.g. 440000 or Guangdong (entryctl options province --search \(given))")
                }
                if session.globals.json { return Terminal.out(lines: [reply.text]) }
                Terminal.out(lines: optionTable(reply["options"]?.arrayValue ?? [], text: session.text))
            }
        })

    static let forms = Command(
        name: "forms", summary: "Show the forms and their fields.", arguments: "", options: [],
        details: ["Fields are listed in navigation order, with their type, label, when they are required and their bounds."],
        examples: ["entryctl forms", "entryctl --locale en forms"],
        prepare: { input in
            _ = try input.exactly()
            return { session in
                let reply = try session.call("io.entryd.Forms.ListForms", params(("locale", session.locale)))
                if session.globals.json { return Terminal.out(lines: [reply.text]) }
                var lines: [String] = []
                for form in reply["forms"]?.arrayValue ?? [] {
                    if !lines.isEmpty { lines.append("") }
                    lines.append(DisplayWidth.sanitized("\(form["name"]?.stringValue ?? "?") — \(form["title"]?.stringValue ?? "")"))
                    lines += fieldTable(form["fields"]?.arrayValue ?? []).map { "  " + $0 }
                }
                Terminal.out(lines: lines)
            }
        })

    static let check = Command(
        name: "check", summary: "Validate FIELD=VALUE arguments without storing them.", arguments: "FIELD=VALUE... | --stored",
        options: [EntryCommands.formOption,
                  OptionSpec(["--stored"], help: "List stored phones and e-mails the current rules refuse (id, field, value, why).")],
        details: [
            "Prints the values as add would store them, or every problem (exit 65).",
            "Fields left out are checked as missing, as add would.",
            "With --stored: every stored phone and e-mail that no longer validates, one a line; they stay as stored.",
        ],
        examples: ["entryctl check name=李雷 birthday=1990-05-17 country=中国 province=广东 city=广州 contact_method=phone phone=13800138000",
                   "entryctl check --stored"],
        prepare: { input in
            if input.has("--stored") {
                guard input.scanned.positionals.isEmpty else { throw UsageError("--stored takes no FIELD=VALUE") }
                return { session in
                    let reply = try session.call("io.entryd.Forms.CheckStored", params(("locale", session.locale)))
                    let problems = reply["problems"]?.arrayValue ?? []
                    if session.globals.json {
                        Terminal.out(lines: [reply.text])
                    } else if !problems.isEmpty {
                        let column = { (p: JSON, key: String) in p[key]?.stringValue ?? "" }
                        Terminal.out(lines: TableRenderer(columns: [TableColumn("id"), TableColumn("field"), TableColumn("value"),
                                                                    TableColumn("message")])
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
                let reply = try session.call("io.entryd.Forms.Check", params(
                    ("form", form.json), ("fields", JSON.stringMap(fields)), ("locale", session.locale)))
                if session.globals.json { Terminal.out(lines: [reply.text]) }
                let problems = EntryCommands.explained(reply["problems"]?.arrayValue ?? [], unknown: unknown, form: names, session)
                if !problems.isEmpty {
                    throw WireError(name: "io.entryd.Entries.ValidationFailed", parameters: .object([("problems", .array(problems))]))
                }
                if session.globals.json { return }
                let canonical = EntryView.stringMap(reply["fields"]), display = EntryView.stringMap(reply["display"])
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
    static func fieldTable(_ fields: [JSON]) -> [String] {
        let columns = ["field", "type", "label", "required", "parent", "bounds"].map { TableColumn($0) }
        let rows = fields.map { field -> [String] in
            func s(_ key: String) -> String { field[key]?.stringValue ?? "" }
            // A city under a province is required whenever that province has cities (the validator's rule).
            let required = field["required"]?.boolValue == true ? "yes"
                : !s("requiredWhen").isEmpty ? "when \(s("requiredWhen"))"
                : s("type") == "city" && !s("parent").isEmpty ? "when \(s("parent")) has cities" : "no"
            var bounds: [String] = []
            if !s("min").isEmpty { bounds.append("min \(s("min"))") }
            if !s("max").isEmpty { bounds.append("max \(s("max"))") }
            if let n = field["maxLength"]?.intValue { bounds.append("at most \(n) characters") }
            if let n = field["minuteInterval"]?.intValue { bounds.append("every \(n) minutes") }
            return [s("name"), s("type"), s("label"), required, s("parent"), bounds.joined(separator: ", ")]
        }
        return TableRenderer(columns: columns).render(rows)
    }
}
