import EntryModel
import EntryProtocol
import EntryClient

// MARK: - list (io.entryd.Entries.List)

/// The validated options of `list`.
struct ListRequest {
    enum Format: String, CaseIterable { case table, json, jsonl, csv }

    var form: String?
    /// Filter members by wire name (`country`, `bornFrom`, `text` …), only those given.
    var filter: [(String, JSON)]
    var order: String?
    var descending: Bool?
    var limit: Int64?
    var cursor: String?
    var all: Bool
    var includeDeleted: Bool
    var format: Format
    /// Whether the table shows the appointment column (`--appointment`, `--order appointment`).
    var showAppointment = false

    /// The `List` parameters for one page starting at `cursor`.
    func parameters(cursor: String?, locale: JSON) -> JSON {
        params(
            ("form", form.json), ("filter", filter.isEmpty ? nil : .object(filter)), ("order", order.json),
            ("descending", descending.map(JSON.bool)), ("limit", limit.map(JSON.int)), ("cursor", cursor.json),
            ("includeDeleted", includeDeleted ? .bool(true) : nil), ("locale", locale))
    }
}

enum ListCommand {
    /// Calls `List` for one page; a refused filter is reported in the terms the
    /// user typed: the problem of `bornFrom` is the problem of `--born-from`.
    /// - Throws: as ``DaemonConnection/call(_:_:)``.
    static func page(_ session: DaemonConnection, _ parameters: JSON) throws -> JSON {
        do {
            return try session.call(.entriesList, parameters)
        } catch let error as WireError where error.known == .validationFailed {
            let problems = (error.parameters["problems"]?.arrayValue ?? []).map { problem -> JSON in
                guard case .object(var members) = problem,
                    let field = problem["field"]?.stringValue,
                    let option = filters.first(where: { $0.member == field })?.option
                        ?? appointmentMembers.first(where: { $0.member == field })?.option
                else { return problem }
                members = members.map { key, value in
                    switch key {
                    case "field": return (key, .string(option))
                    case "message":
                        return (
                            key, .string((value.stringValue ?? "").replacingOccurrences(of: field, with: option))
                        )
                    default: return (key, value)
                    }
                }
                return .object(members)
            }
            throw WireError(name: error.name, parameters: .object([("problems", .array(problems))]))
        }
    }

    /// Filter options and the `Filter` member each sets.
    static let filters: [(option: String, member: String, value: String, help: Localized)] = [
        (
            "--country", "country", "C",
            Localized(zh: "只看此国家的条目（CN、中国、China ……）。", en: "Only entries of this country (CN, 中国, China …).")
        ),
        (
            "--province", "province", "P",
            Localized(zh: "只看此省份（广东、440000 ……）。", en: "Only this province (广东, 440000 …).")
        ),
        ("--city", "city", "C", Localized(zh: "只看此城市（广州、440100 ……）。", en: "Only this city (广州, 440100 …).")),
        (
            "--born-from", "bornFrom", "DATE",
            Localized(zh: "在 DATE（YYYY-MM-DD）当天或之后出生。", en: "Born on or after DATE (YYYY-MM-DD).")
        ),
        (
            "--born-to", "bornTo", "DATE",
            Localized(zh: "在 DATE（YYYY-MM-DD）当天或之前出生。", en: "Born on or before DATE (YYYY-MM-DD).")
        ),
        (
            "--search", "search", "TEXT",
            Localized(
                zh: "按所知查找：姓名或其中的名字（繁体、简体均可）、拼音或首字母，任意格式的电话号码，或含 @ 的电子邮箱，从开头匹配。",
                en:
                    "Find by what you know: the name or a given name in it (Traditional or Simplified), its pinyin or initials, a phone number in any format, or an e-mail address (with @), matched from the start."
            )
        ),
        (
            "--name-contains", "text", "TEXT",
            Localized(zh: "姓名包含 TEXT（不区分大小写）。", en: "Name contains TEXT (case-insensitive).")
        ),
    ]

    /// The `Filter` members `--appointment` sets (its problems name the option).
    static let appointmentMembers: [(option: String, member: String)] = [
        ("--appointment", "appointmentFrom"), ("--appointment", "appointmentTo"),
    ]

    static let command = Command(
        name: "list",
        summary: Localized(zh: "以表格、JSON、JSON 行或 CSV 列出条目。", en: "List entries as a table, JSON, JSON lines or CSV."),
        arguments: "",
        options: filters.map { OptionSpec([$0.option], value: $0.value, help: $0.help) } + [
            OptionSpec(
                ["--appointment"], value: "WHEN",
                help: Localized(
                    zh: "只看预约在 WHEN 的条目：today、tomorrow（按本机时区）、DATE 或 FROM..TO（含两端，可省略一端），按预约时间排序。",
                    en:
                        "Only entries with an appointment WHEN: today, tomorrow (in this machine's time zone), DATE or FROM..TO (inclusive; one end may be left out), in time order."
                )),
            EntryCommands.formOption,
            OptionSpec(
                ["--order"], value: "ORDER",
                help: Localized(
                    zh: "按 created（默认；有 --appointment 时为 appointment）、updated、birthday、name 或 appointment 排序。",
                    en:
                        "Sort by created (default; appointment with --appointment), updated, birthday, name or appointment."
                )),
            OptionSpec(
                ["--asc"],
                help: Localized(
                    zh: "升序（birthday、name 和 appointment 的默认）。",
                    en: "Ascending (default for birthday, name and appointment).")),
            OptionSpec(
                ["--desc"],
                help: Localized(zh: "降序（created 和 updated 的默认）。", en: "Descending (default for created and updated).")),
            OptionSpec(
                ["--limit"], value: "N",
                help: Localized(
                    zh: "每页条目数（不给时用守护进程的默认值）。", en: "Entries per page (the daemon's default when not given).")),
            OptionSpec(
                ["--cursor"], value: "CURSOR",
                help: Localized(zh: "从上次列表指向的页开始。", en: "Start at the page a previous list pointed to.")),
            OptionSpec(["--all"], help: Localized(zh: "沿游标一直取到最后一页。", en: "Follow the cursors to the last page.")),
            OptionSpec(
                ["--deleted", "--include-deleted"], help: Localized(zh: "包括已删除的条目。", en: "Include deleted entries.")),
            OptionSpec(
                ["--format"], value: "FORMAT",
                help: Localized(
                    zh: "table（默认）、json（一个数组）、jsonl（每行一个条目）或 csv（RFC 4180）。",
                    en: "table (default), json (one array), jsonl (an entry per line) or csv (RFC 4180).")),
        ],
        details: [
            Localized(
                zh: "表格显示 ID、姓名、生日、国家、地区、联系方式和更新时间，语言按 --locale。",
                en:
                    "The table shows ID, name, birthday, country, region, contact and update time, in the --locale language."
            ),
            Localized(
                zh: "CSV 列：id、form、version、deleted、createdAt、updatedAt，然后是表单的字段名。",
                en: "CSV columns: id, form, version, deleted, createdAt, updatedAt, then the form's field names."),
            Localized(
                zh: "--json 输出回复参数 {entries, cursor, total}（--all 时合并所有页）。",
                en: "--json prints the reply parameters {entries, cursor, total} (all pages merged with --all)."),
        ],
        examples: [
            "entryctl list --country 中国 --province 广东 --order birthday",
            "entryctl list --search 李 --born-from 1990-01-01 --all --format csv > entries.csv",
            "entryctl list --search 黄志明",
            "entryctl list --search '+86 136 1234 5678'",
            "entryctl list --appointment today",
            "entryctl list --appointment 2027-03-09..2027-03-15 --all",
        ],
        prepare: { input in
            if !input.scanned.positionals.isEmpty {
                throw UsageError(
                    zh: "多余的参数“\(input.scanned.positionals[0])”",
                    en: "unexpected argument '\(input.scanned.positionals[0])'")
            }
            if input.has("--asc") && input.has("--desc") {
                throw UsageError(zh: "--asc 和 --desc 只能给一个", en: "give --asc or --desc, not both")
            }
            let format = try input.choice("--format", of: ListRequest.Format.allCases.map(\.rawValue)).flatMap(
                ListRequest.Format.init)
            if input.globals.json, let format, format != .table {
                throw UsageError(
                    zh: "--json 和 --format \(format.rawValue) 只能给一个",
                    en: "give --json or --format \(format.rawValue), not both")
            }
            var filter: [(String, JSON)] = filters.compactMap { f in
                input.value(f.option).map { (f.member, .string($0)) }
            }
            // today and tomorrow are this machine's: resolved here, in its time zone.
            var appointment: AppointmentRange?
            if let text = input.value("--appointment") { appointment = try AppointmentRange(parsing: text) }
            if let appointment {
                if let from = appointment.from { filter.append(("appointmentFrom", .string(from))) }
                if let to = appointment.to { filter.append(("appointmentTo", .string(to))) }
            }
            let order =
                try input.choice("--order", of: ["created", "updated", "birthday", "name", "appointment"])
                ?? (appointment != nil ? "appointment" : nil)
            var request = ListRequest(
                form: input.value("--form"),
                filter: filter,
                order: order,
                descending: input.has("--desc") ? true : input.has("--asc") ? false : nil,
                limit: try input.integer("--limit"), cursor: input.value("--cursor"),
                all: input.has("--all"), includeDeleted: input.has("--deleted"), format: format ?? .table)
            request.showAppointment = appointment != nil || order == "appointment"
            return { session in try run(request, session) }
        })

    /// Fetches one page, or every page with `--all`, and prints them.
    static func run(_ request: ListRequest, _ session: DaemonConnection) throws {
        var entries: [JSON] = []
        var cursor = request.cursor
        var total: Int64 = 0
        while true {
            let reply = try page(session, request.parameters(cursor: cursor, locale: session.locale))
            let page = reply["entries"]?.arrayValue ?? []
            total = reply["total"]?.intValue ?? total
            if request.format == .jsonl && !session.globals.json { Terminal.out(lines: page.map(\.text)) }
            entries += page
            let next = reply["cursor"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            guard request.all, let next, !page.isEmpty else {
                cursor = next
                break
            }
            guard next != cursor else {
                throw Refusal(zh: "entryd 两次返回同一个游标，已停止", en: "entryd returned the same cursor twice; stopping")
            }
            cursor = next
        }
        // A --limit beyond the daemon's max-page-size gets fewer entries than asked: say so (on stderr).
        if !request.all, let limit = request.limit, cursor != nil, Int64(entries.count) < limit {
            Terminal.message(
                session.globals.locale == .zh
                    ? "entryd 每页最多返回 \(entries.count) 条（max-page-size），少于 --limit \(limit)：用 --all 列出全部，或用 export"
                    : "entryd returns at most \(entries.count) entries a page (max-page-size), fewer than --limit \(limit): use --all for every entry, or export"
            )
        }
        if session.globals.json {
            return Terminal.out(lines: [
                params(("entries", .array(entries)), ("cursor", cursor.json), ("total", .int(total))).text
            ])
        }
        switch request.format {
        case .jsonl: break
        case .json: Terminal.out(lines: [JSON.array(entries).text])
        case .csv: Terminal.out(ListOutput.csv(entries, labels: session.fieldLabels(form: request.form)))
        case .table:
            var lines = ListOutput.table(
                entries, text: session.text, showDeleted: request.includeDeleted,
                showAppointment: request.showAppointment)
            lines.append(session.text.entriesFooter(entries.count, Int(total)))
            Terminal.out(lines: lines)
            if let cursor {
                Terminal.message(
                    Localized(
                        zh: "后面还有条目：加 --cursor \(cursor)，或 --all",
                        en: "more entries follow: add --cursor \(cursor), or --all")(session.globals.locale))
            }
        }
    }
}
