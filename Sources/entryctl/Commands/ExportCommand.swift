import EntryModel
import EntryProtocol
import EntryClient
import Foundation

// MARK: - export (io.entryd.Entries.List, page by page)

/// The validated options of `export`.
struct ExportRequest {
    enum Format: String, CaseIterable { case jsonl, csv, json }

    var format: Format
    var form: String?
    /// Filter members by wire name, as `list` sends them.
    var filter: [(String, JSON)]
    var includeDeleted: Bool
    var output: String?
    var labels: Bool
    var excel: Bool
    var display: Bool
    /// `--codes`: canonical codes even in an export for people (`--labels`, `--excel`).
    var codes = false

    /// Whether picker values (country, province, city, choice) and `deleted` are
    /// written as labels people read: a spreadsheet export (`--labels`,
    /// `--excel`) unless `--codes`.
    var valueLabels: Bool { format == .csv && (labels || excel) && !codes }

    /// The `List` parameters for the page after `cursor`: oldest first, so
    /// entries added during the export come last (or not at all), never twice.
    func parameters(form: String?, cursor: String?, locale: JSON) -> JSON {
        params(
            ("form", form.json), ("filter", filter.isEmpty ? nil : .object(filter)), ("order", .string("created")),
            ("descending", .bool(false)), ("limit", .int(Int64(ExportCommand.pageSize))), ("cursor", cursor.json),
            ("includeDeleted", includeDeleted ? .bool(true) : nil), ("locale", locale))
    }
}

enum ExportCommand {
    /// Entries asked for per List call (the daemon clamps it to its max-page-size).
    static let pageSize = 1000

    static let command = Command(
        name: "export",
        summary: Localized(
            zh: "逐页把所有匹配的条目写成 JSON 行、CSV 或 JSON。",
            en: "Write every matching entry as JSON lines, CSV or JSON, page by page."), arguments: "",
        options: [
            OptionSpec(
                ["--format"], value: "FORMAT",
                help: Localized(
                    zh:
                        "jsonl（默认：每行一个条目；有 --labels、--excel、--codes 或 -o NAME.csv 时为 csv；-o NAME.json 时为 json）、csv（RFC 4180）或 json（一个数组）。",
                    en:
                        "jsonl (default: an entry per line; csv with --labels, --excel or --codes, or -o NAME.csv; json with -o NAME.json), csv (RFC 4180) or json (one array)."
                )),
            EntryCommands.formOption,
        ] + ListCommand.filters.map { OptionSpec([$0.option], value: $0.value, help: $0.help) } + [
            OptionSpec(
                ["--include-deleted", "--deleted"],
                help: Localized(zh: "包括已删除的条目（deleted = true）。", en: "Include deleted entries (with deleted = true).")),
            OptionSpec(
                ["--output", "-o"], value: "FILE",
                help: Localized(
                    zh: "写入 FILE（结束时完整生成，权限 0600）而不是标准输出。",
                    en: "Write to FILE (made whole at the end, mode 0600) instead of stdout.")),
            OptionSpec(
                ["--labels"],
                help: Localized(
                    zh: "给人看的 CSV：表头为字段标签，值写成名称（中国、广东省、电话、否），语言按 --locale。",
                    en:
                        "CSV for people: header of field labels, values as labels (中国, 广东省, 电话, 否) in the --locale language."
                )),
            OptionSpec(
                ["--excel"],
                help: Localized(
                    zh: "给电子表格用的 CSV：带 UTF-8 字节顺序标记（中文显示正确），值写成名称，以 = + - @ TAB 或 CR 开头的单元格前加 '（不执行公式，电话保持文本）；导入时去掉它。",
                    en:
                        "CSV for a spreadsheet: a UTF-8 byte order mark (Chinese text reads right), values as labels, and a ' before a cell starting with = + - @ TAB or CR (no formula runs; phones stay text); import removes it."
                )),
            OptionSpec(
                ["--codes"],
                help: Localized(
                    zh: "CSV：即使有 --labels 或 --excel 也写规范值（CN、440000、phone、false）。",
                    en: "CSV: canonical values (CN, 440000, phone, false) even with --labels or --excel.")),
            OptionSpec(
                ["--display"],
                help: Localized(
                    zh: "加上显示值（CSV：字段之后的列；JSON：display 对象）。",
                    en: "Add display values (CSV: columns after the fields; JSON: the display object).")),
        ],
        details: [
            Localized(
                zh: "用 List 每次读取 1000 个条目，最早的在前，读到即写出：",
                en: "Entries are read with List, 1000 at a time, oldest first, and written as they arrive:"),
            Localized(
                zh: "entryctl 和 entryd 都不会把整个导出放在内存中。",
                en: "neither entryctl nor entryd holds the whole export in memory."),
            Localized(
                zh: "JSON 行和 JSON：协议中的 Entry 对象（id、form、fields、deleted、version、",
                en: "JSON lines and JSON: the Entry objects of the protocol (id, form, fields, deleted, version,"),
            Localized(
                zh: "createdAt、updatedAt、createdBy、updatedBy、syncedTo），display 只在 --display 时输出。",
                en: "createdAt, updatedAt, createdBy, updatedBy, syncedTo), display only with --display."),
            Localized(
                zh: "CSV（一个表单：--form，否则默认表单）：id、按表单顺序的字段，然后是",
                en: "CSV (one form: --form, else the default form): id, the form's fields in form order, then"),
            Localized(
                zh: "条目中有而本节点表单未定义的字段（表头 unknown.NAME，或在 --labels 时为",
                en: "fields the entries hold that this node's form does not define (headers unknown.NAME, or"),
            Localized(
                zh: "NAME（本表单没有此字段）；先扫描一遍条目找出它们），",
                en: "NAME (not in this form) with --labels; a first pass over the entries finds them),"),
            Localized(
                zh: "deleted、version、updatedAt；值为规范值，或在 --labels、--excel 时（除非 --codes）为",
                en: "deleted, version, updatedAt; canonical values, or with --labels or --excel (unless --codes) the"),
            Localized(
                zh: "国家、省份、城市和选项的名称，deleted 写作 是/否（Yes/No），语言按 --locale；",
                en: "labels of countries, provinces, cities and choices and 是/否 (Yes/No) for deleted, in the --locale"),
            Localized(
                zh: "日期和其他值保持规范形式。'entryctl import' 能读回每种格式。",
                en: "language; dates and other values stay canonical. 'entryctl import' reads every format back."),
        ],
        examples: [
            "entryctl export -o entries.jsonl",
            "entryctl export --labels --excel --country CN -o 中国.csv",
            "entryctl export --excel --codes -o codes.csv",
        ],
        prepare: { input in
            if !input.scanned.positionals.isEmpty {
                throw UsageError(
                    zh: "多余的参数“\(input.scanned.positionals[0])”",
                    en: "unexpected argument '\(input.scanned.positionals[0])'")
            }
            let csvFlags = ["--labels", "--excel", "--codes"]
            // The output file's name says the format when --format does not (import reads it back the same way).
            let named: ExportRequest.Format? = input.value("--output").flatMap { path in
                switch (path as NSString).pathExtension.lowercased() {
                case "csv": return .csv
                case "json": return .json
                case "jsonl", "ndjson": return .jsonl
                default: return nil
                }
            }
            let implied: ExportRequest.Format = csvFlags.contains(where: input.has) ? .csv : named ?? .jsonl
            let format =
                try input.choice("--format", of: ExportRequest.Format.allCases.map(\.rawValue)).flatMap(
                    ExportRequest.Format.init) ?? implied
            for flag in csvFlags where input.has(flag) && format != .csv {
                throw UsageError(zh: "\(flag) 只用于 --format csv", en: "\(flag) is for --format csv")
            }
            let request = ExportRequest(
                format: format, form: input.value("--form"),
                filter: ListCommand.filters.compactMap { f in input.value(f.option).map { (f.member, .string($0)) } },
                includeDeleted: input.has("--include-deleted"), output: input.value("--output"),
                labels: input.has("--labels"), excel: input.has("--excel"), display: input.has("--display"),
                codes: input.has("--codes"))
            return { session in try run(request, session) }
        })

    /// The form's fields with their labels in both locales, from GetForm; and the form's name.
    static func formFields(_ session: DaemonConnection, form: String?) throws -> (
        name: String, fields: [DataColumns.FieldNames]
    ) {
        let zh = try session.call(.formsGetForm, params(("name", form.json), ("locale", .string("zh"))))
        let en = try session.call(.formsGetForm, params(("name", form.json), ("locale", .string("en"))))
        let enLabels = Dictionary(
            (en["form"]?["fields"]?.arrayValue ?? []).compactMap { f -> (String, String)? in
                guard let name = f["name"]?.stringValue else { return nil }
                return (name, f["label"]?.stringValue ?? name)
            }, uniquingKeysWith: { a, _ in a })
        let fields = (zh["form"]?["fields"]?.arrayValue ?? []).compactMap { f -> DataColumns.FieldNames? in
            guard let name = f["name"]?.stringValue else { return nil }
            return DataColumns.FieldNames(
                name: name, zh: f["label"]?.stringValue ?? name, en: enLabels[name] ?? name,
                type: f["type"]?.stringValue ?? "",
                aliases: f["headerAliases"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        }
        guard let name = zh["form"]?["name"]?.stringValue, !fields.isEmpty else {
            throw Refusal(
                zh: "entryd 没有发来表单“\(form ?? "default")”的字段",
                en: "entryd sent no fields for form '\(form ?? "default")'")
        }
        return (name, fields)
    }

    /// Refuses to go on when `entry` holds a field that has no CSV column (it
    /// gained a field during the export): nothing is dropped without a word.
    static func checkColumns(_ entry: JSON, fields: [DataColumns.FieldNames], unknown: [String], locale: EntryLocale)
        throws
    {
        for (name, value) in entry["fields"]?.objectValue ?? [] where value.stringValue?.isEmpty == false {
            guard !fields.contains(where: { $0.name == name }) && !unknown.contains(name) else { continue }
            let id = entry["id"]?.stringValue ?? "?"
            throw Refusal(
                zh: "导出期间条目 \(id) 多了字段“\(name)”，CSV 中没有它的列；请重新导出",
                en:
                    "entry \(id) gained field '\(name)' during the export and the CSV has no column for it; export again"
            )
        }
    }

    /// `entry` without `display` unless it is wanted.
    static func trimmed(_ entry: JSON, display: Bool) -> JSON {
        guard !display, case .object(let members) = entry else { return entry }
        return .object(members.filter { $0.0 != "display" })
    }

    /// The fields that matching entries hold and `known` does not list, by
    /// name: a first pass over the List pages (schema drift: a CSV has a column
    /// per field, so none may be dropped), keeping only the names.
    static func unknownFieldNames(
        _ request: ExportRequest, _ session: DaemonConnection, form: String?,
        known: Set<String>
    ) throws -> [String] {
        var names = Set<String>()
        var cursor: String?
        while true {
            let reply = try ListCommand.page(
                session, request.parameters(form: form, cursor: cursor, locale: session.locale))
            let page = reply["entries"]?.arrayValue ?? []
            for entry in page {
                for (name, value) in entry["fields"]?.objectValue ?? []
                where !known.contains(name) && value.stringValue?.isEmpty == false {
                    names.insert(name)
                }
            }
            guard let next = reply["cursor"]?.stringValue, !next.isEmpty, !page.isEmpty else { break }
            guard next != cursor else {
                throw Refusal(zh: "entryd 两次返回同一个游标，已停止", en: "entryd returned the same cursor twice; stopping")
            }
            cursor = next
        }
        return names.sorted()
    }

    /// Follows List cursors and writes each page before asking for the next.
    /// A CSV export first finds the fields the form does not define
    /// (``unknownFieldNames(_:_:form:known:)``); an entry that gains another
    /// one during the export stops it, rather than losing that value.
    static func run(_ request: ExportRequest, _ session: DaemonConnection) throws {
        var form = request.form
        var fields: [DataColumns.FieldNames] = []
        var valueLabels: [String: [String: String]]?
        var unknown: [String] = []
        if request.format == .csv {
            let found = try formFields(session, form: request.form)
            form = found.name
            fields = found.fields
            unknown = try unknownFieldNames(request, session, form: form, known: Set(fields.map(\.name)))
            if request.valueLabels {
                // Every picker row of each labelled field, once: the labels are looked up locally.
                var labels: [String: [String: String]] = [:]
                for f in fields where DataColumns.labelledTypes.contains(f.type) {
                    let reply = try session.call(
                        .formsOptions,
                        params(
                            ("form", .string(found.name)), ("field", .string(f.name)), ("locale", session.locale)))
                    labels[f.name] = DataColumns.valueLabels(options: reply["options"]?.arrayValue ?? [])
                }
                valueLabels = labels
            }
        }
        let out = try OutputFile(path: request.output)
        let progress = ProgressLine(label: Localized(zh: "导出", en: "export"), locale: session.globals.locale)
        var count = 0
        try out.produce(progress: progress) {
            switch request.format {
            case .csv:
                if request.excel { try out.write(utf8ByteOrderMark) }
                try out.write(
                    CSVWriter.record(
                        DataColumns.exportHeader(
                            fields: fields, unknown: unknown, labels: request.labels, locale: session.globals.locale,
                            display: request.display)))
            case .json: try out.write("[")
            case .jsonl: break
            }
            var cursor: String?
            while true {
                let reply = try ListCommand.page(
                    session, request.parameters(form: form, cursor: cursor, locale: session.locale))
                let page = reply["entries"]?.arrayValue ?? []
                var chunk: [UInt8] = []
                for entry in page {
                    switch request.format {
                    case .jsonl:
                        trimmed(entry, display: request.display).write(to: &chunk)
                        chunk.append(UInt8(ascii: "\n"))
                    case .json:
                        chunk += Array((count == 0 ? "\n" : ",\n").utf8)
                        trimmed(entry, display: request.display).write(to: &chunk)
                    case .csv:
                        try checkColumns(entry, fields: fields, unknown: unknown, locale: session.globals.locale)
                        chunk += Array(
                            CSVWriter.record(
                                DataColumns.exportRow(
                                    entry, fields: fields, unknown: unknown, display: request.display,
                                    valueLabels: valueLabels,
                                    locale: session.globals.locale), spreadsheet: request.excel
                            ).utf8)
                    }
                    count += 1
                }
                try out.write(chunk)
                let total = reply["total"]?.intValue ?? 0
                progress.update(count: count, fraction: total > 0 ? Double(count) / Double(total) : nil)
                guard let next = reply["cursor"]?.stringValue, !next.isEmpty, !page.isEmpty else { break }
                guard next != cursor else {
                    throw Refusal(zh: "entryd 两次返回同一个游标，已停止", en: "entryd returned the same cursor twice; stopping")
                }
                cursor = next
            }
            if request.format == .json { try out.write(count == 0 ? "]\n" : "\n]\n") }
        }
        if let path = request.output {
            if session.globals.json {
                Terminal.out(lines: [params(("exported", .int(Int64(count))), ("file", .string(path))).text])
            } else {
                let time = String(format: "%.1f", progress.elapsed)
                Terminal.message(
                    Localized(
                        zh: "已导出 \(count) 个条目到“\(path)”，用时 \(time) 秒",
                        en: "exported \(count) entries to '\(path)' in \(time) s")(session.globals.locale))
            }
        }
    }
}
