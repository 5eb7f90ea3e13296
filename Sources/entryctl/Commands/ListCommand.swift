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

    /// The `List` parameters for one page starting at `cursor`.
    func parameters(cursor: String?, locale: JSON) -> JSON {
        params(("form", form.json), ("filter", filter.isEmpty ? nil : .object(filter)), ("order", order.json),
               ("descending", descending.map(JSON.bool)), ("limit", limit.map(JSON.int)), ("cursor", cursor.json),
               ("includeDeleted", includeDeleted ? .bool(true) : nil), ("locale", locale))
    }
}

enum ListCommand {
    /// Calls `List` for one page; a refused filter is reported in the terms the
    /// user typed: the problem of `bornFrom` is the problem of `--born-from`.
    /// - Throws: as ``DaemonSession/call(_:_:)``.
    static func page(_ session: DaemonSession, _ parameters: JSON) throws -> JSON {
        do {
            return try session.call("io.entryd.Entries.List", parameters)
        } catch let error as WireError where error.name == WireErrorName.validationFailed {
            let problems = (error.parameters["problems"]?.arrayValue ?? []).map { problem -> JSON in
                guard case .object(var members) = problem,
                      let field = problem["field"]?.stringValue, let filter = filters.first(where: { $0.member == field })
                else { return problem }
                members = members.map { key, value in
                    switch key {
                    case "field": return (key, .string(filter.option))
                    case "message": return (key, .string((value.stringValue ?? "").replacingOccurrences(of: field, with: filter.option)))
                    default: return (key, value)
                    }
                }
                return .object(members)
            }
            throw WireError(name: error.name, parameters: .object([("problems", .array(problems))]))
        }
    }

    /// Filter options and the `Filter` member each sets.
    static let filters: [(option: String, member: String, value: String, help: String)] = [
        ("--country", "country", "C", "Only entries of this country (CN, 中国, China …)."),
        ("--province", "province", "P", "Only this province (广东, 440000 …)."),
        ("--city", "city", "C", "Only this city (广州, 440100 …)."),
        ("--born-from", "bornFrom", "DATE", "Born on or after DATE (YYYY-MM-DD)."),
        ("--born-to", "bornTo", "DATE", "Born on or before DATE (YYYY-MM-DD)."),
        ("--search", "text", "TEXT", "Name contains TEXT (case-insensitive)."),
    ]

    static let command = Command(
        name: "list", summary: "List entries as a table, JSON, JSON lines or CSV.", arguments: "",
        options: filters.map { OptionSpec([$0.option], value: $0.value, help: $0.help) } + [
            EntryCommands.formOption,
            OptionSpec(["--order"], value: "ORDER", help: "Sort by created (default), updated, birthday or name."),
            OptionSpec(["--asc"], help: "Ascending (default for birthday and name)."),
            OptionSpec(["--desc"], help: "Descending (default for created and updated)."),
            OptionSpec(["--limit"], value: "N", help: "Entries per page (the daemon's default when not given)."),
            OptionSpec(["--cursor"], value: "CURSOR", help: "Start at the page a previous list pointed to."),
            OptionSpec(["--all"], help: "Follow the cursors to the last page."),
            OptionSpec(["--deleted", "--include-deleted"], help: "Include deleted entries."),
            OptionSpec(["--format"], value: "FORMAT",
                       help: "table (default), json (one array), jsonl (an entry per line) or csv (RFC 4180)."),
        ],
        details: [
            "The table shows ID, name, birthday, country, region, contact and update time, in the --locale language.",
            "CSV columns: id, form, version, deleted, createdAt, updatedAt, then the form's field names.",
            "--json prints the reply parameters {entries, cursor, total} (all pages merged with --all).",
        ],
        examples: [
            "entryctl list --country 中国 --province 广东 --order birthday",
            "entryctl list --search 李 --born-from 1990-01-01 --all --format csv > entries.csv",
        ],
        prepare: { input in
            if !input.scanned.positionals.isEmpty { throw UsageError("unexpected argument '\(input.scanned.positionals[0])'") }
            if input.has("--asc") && input.has("--desc") { throw UsageError("give --asc or --desc, not both") }
            let format = try input.choice("--format", of: ListRequest.Format.allCases.map(\.rawValue)).flatMap(ListRequest.Format.init)
            if input.globals.json, let format, format != .table {
                throw UsageError("give --json or --format \(format.rawValue), not both")
            }
            let request = ListRequest(
                form: input.value("--form"),
                filter: filters.compactMap { f in input.value(f.option).map { (f.member, .string($0)) } },
                order: try input.choice("--order", of: ["created", "updated", "birthday", "name"]),
                descending: input.has("--desc") ? true : input.has("--asc") ? false : nil,
                limit: try input.integer("--limit"), cursor: input.value("--cursor"),
                all: input.has("--all"), includeDeleted: input.has("--deleted"), format: format ?? .table)
            return { session in try run(request, session) }
        })

    /// Fetches one page, or every page with `--all`, and prints them.
    static func run(_ request: ListRequest, _ session: DaemonSession) throws {
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
            guard request.all, let next, !page.isEmpty else { cursor = next; break }
            guard next != cursor else { throw Refusal("entryd returned the same cursor twice; stopping") }
            cursor = next
        }
        // A --limit beyond the daemon's max-page-size gets fewer entries than asked: say so (on stderr).
        if !request.all, let limit = request.limit, cursor != nil, Int64(entries.count) < limit {
            Terminal.message(session.globals.locale == .zh
                ? "entryd 每页最多返回 \(entries.count) 条（max-page-size），少于 --limit \(limit)：用 --all 列出全部，或用 export"
                : "entryd returns at most \(entries.count) entries a page (max-page-size), fewer than --limit \(limit): use --all for every entry, or export")
        }
        if session.globals.json {
            return Terminal.out(lines: [params(("entries", .array(entries)), ("cursor", cursor.json), ("total", .int(total))).text])
        }
        switch request.format {
        case .jsonl: break
        case .json: Terminal.out(lines: [JSON.array(entries).text])
        case .csv: Terminal.out(ListOutput.csv(entries, labels: session.fieldLabels(form: request.form)))
        case .table:
            var lines = ListOutput.table(entries, text: session.text, showDeleted: request.includeDeleted)
            lines.append(session.text.entriesFooter(entries.count, Int(total)))
            Terminal.out(lines: lines)
            if let cursor { Terminal.message("more entries follow: add --cursor \(cursor), or --all") }
        }
    }
}
