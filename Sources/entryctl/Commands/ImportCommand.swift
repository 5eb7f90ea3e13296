import EntryModel
import EntryProtocol
import EntryClient
import Foundation

// MARK: - import (io.entryd.Entries.Import in batches)

/// The validated options of `import`.
struct ImportRequest {
    enum Format: String, CaseIterable { case jsonl, csv, json }

    /// The file, `-` for standard input (also when none is given).
    var file: String
    /// Whether FILE was given (without it, standard input must hold something).
    var fileGiven: Bool
    /// `--format`, else what the file name says; `nil`: sniffed from the first line.
    var format: Format?
    var form: String?
    var atomic: Bool
    var dryRun: Bool
    var rejects: String?
    var batch: Int?
    /// `--new-ids`: rows without an id get a new UUIDv7 from the daemon, not a derived id.
    var newIDs: Bool
    /// `--ignore-unknown-columns`: skip CSV columns that are no field (named on stderr) instead of refusing the file.
    var ignoreUnknownColumns = false
    /// `--map COLUMN=FIELD`, as given (read against the form's fields once it is known).
    var map: [String] = []
}

/// One input row on its way to the daemon.
struct InputRow {
    /// What it was in the input, for the rejects report.
    enum Echo {
        case csv([String])
        case json(JSON)
        case text(String)
    }

    /// The Import element `{"id", "fields", "deleted"?}`.
    var element: JSON
    /// The form the row names (JSON `form` member), when `--form` is not given.
    var form: String?
    /// 1-based line (CSV: where the record starts; JSON array: element number).
    var line: Int
    var echo: Echo
    /// Problems found before sending (unreadable line): the row is rejected as it is.
    var problems: [JSON] = []
}

enum ImportCommand {
    static let command = Command(
        name: "import",
        summary: Localized(
            zh: "从 JSON 行或 CSV 分批添加条目；被拒绝的行写入报告。",
            en: "Add entries from JSON lines or CSV in batches; rejected rows go to a report."),
        arguments: "[FILE|-]",
        options: [
            OptionSpec(
                ["--format"], value: "FORMAT",
                help: Localized(
                    zh: "jsonl、csv 或 json（默认：.csv 为 CSV，.json 为 JSON 数组，.jsonl 为 JSON 行，否则看第一行）。",
                    en:
                        "jsonl, csv or json (default: .csv is CSV, .json a JSON array, .jsonl JSON lines, else by the first line)."
                )),
            EntryCommands.formOption,
            OptionSpec(
                ["--atomic"],
                help: Localized(
                    zh: "全部或全不：整个文件一次 Import 调用（最多为守护进程的 max-batch 行）。",
                    en: "All or nothing: the whole file in one Import call (at most the daemon's max-batch rows).")),
            OptionSpec(
                ["--dry-run"],
                help: Localized(
                    zh: "校验每一行（io.entryd.Forms.Check），不存储任何内容。",
                    en: "Validate every row (io.entryd.Forms.Check) without storing anything.")),
            OptionSpec(
                ["--rejects"], value: "FILE",
                help: Localized(
                    zh: "把被拒绝的行及其问题写入 FILE（与输入相同的格式和编码）。",
                    en: "Write the rejected rows with their problems to FILE (the input's format and encoding).")),
            OptionSpec(
                ["--batch"], value: "N",
                help: Localized(
                    zh: "每次 Import 调用的行数（默认 1000，最多为守护进程的 max-batch）。",
                    en: "Rows per Import call (default 1000, at most the daemon's max-batch).")),
            OptionSpec(
                ["--new-ids"],
                help: Localized(
                    zh: "没有 id 的行获得新 id（大文件更快；重新运行会再次添加）。",
                    en: "Rows without an id get new ids (faster for large files; a re-run adds them again).")),
            OptionSpec(
                ["--ignore-unknown-columns"],
                help: Localized(
                    zh: "CSV：跳过不是表单字段的列（在标准错误中列出）；不加时这样的列会使整个文件被拒绝。",
                    en:
                        "CSV: skip columns that are no field of the form (named on stderr); without it they refuse the file."
                )),
            OptionSpec(
                ["--map"], value: "COLUMN=FIELD",
                help: Localized(
                    zh: "CSV：把列 COLUMN 读作字段 FIELD（字段名或标签；- 表示跳过这一列）；可以给多次。",
                    en:
                        "CSV: read column COLUMN as field FIELD (a name or label; - skips the column); may be given many times."
                ), repeatable: true),
        ],
        details: [
            Localized(
                zh: "值可以是规范的或宽松的，与 add 接受的相同（1990年5月17日、中国、广州、电话）。",
                en: "Values may be canonical or lenient, as add accepts them (1990年5月17日, 中国, 广州, 电话)."),
            Localized(
                zh: "JSON 行：每行一个对象，{\"id\"?, \"fields\": {...}, \"deleted\"?}（即 export 写出的格式）。",
                en: "JSON lines: one object per line, {\"id\"?, \"fields\": {...}, \"deleted\"?} (what export writes)."),
            Localized(
                zh: "CSV：表头为字段名或中文、英文标签，另加 id 和 deleted 列；跳过 BOM。",
                en:
                    "CSV: a header of field names, or labels in zh or en, plus id and deleted columns; a BOM is skipped."
            ),
            Localized(
                zh: "表头也可以是表单文件中字段的别名（aliases.zh = 电话, 手机, 手机号），",
                en: "A header may also be one of the field's aliases in the form file (aliases.zh = 电话, 手机, 手机号),"),
            Localized(
                zh: "或用 --map COLUMN=FIELD 把任意列读作字段；--dry-run 显示每列是如何对应的。",
                en: "or any column read as a field with --map COLUMN=FIELD; --dry-run shows how each column was mapped."
            ),
            Localized(
                zh: "编码：UTF-8（有无 BOM 均可）、UTF-16（有无 BOM 均可），以及字节不是 UTF-8 时的",
                en: "Encodings: UTF-8 (with or without BOM), UTF-16 (with or without BOM), and GB18030/GBK (Excel in"),
            Localized(
                zh: "GB18030/GBK（中国的 Excel）。不属于其中任何一种的字节会使文件在其所在行和字节偏移处被拒绝",
                en: "China) when the bytes are not UTF-8. Bytes in none of them refuse the file at their line and byte"),
            Localized(
                zh: "（绝不替换为 U+FFFD），并说明之前的批次已存储到哪一行；",
                en: "offset (never replaced by U+FFFD), saying up to which line rows were stored by earlier batches;"),
            Localized(
                zh: "请先转换这样的文件（iconv -f ENCODING -t UTF-8 FILE > FILE.utf8.csv）再重新导入。",
                en: "convert such a file first (iconv -f ENCODING -t UTF-8 FILE > FILE.utf8.csv) and import it again."),
            Localized(
                zh: "JSON 必须是 UTF-8。CSV 的拒绝报告使用输入的编码（输入全是 ASCII 时为 UTF-8）。",
                en:
                    "JSON must be UTF-8. A CSV rejects report is written in the input's encoding (UTF-8 while it was ASCII)."
            ),
            Localized(
                zh: "分隔符是 ','；表头中 ';' 或制表符更多时用它们（许多国家的 Excel）。",
                en:
                    "The separator is ',', or ';' or a tab when the header holds more of them (Excel in many countries)."
            ),
            Localized(
                zh: "不给 FILE（或给 -）时读标准输入。--format 和文件名都无法判断格式时，",
                en: "Without FILE (or with -) standard input is read. When neither --format nor the file name tells,"),
            Localized(
                zh: "看第一行：'{' 开头为 JSON 行，'[' 开头为 JSON 数组，其他为 CSV 表头。",
                en: "the first line does: '{' starts JSON lines, '[' a JSON array, anything else is a CSV header."),
            Localized(
                zh: "没有 id 的行获得由表单和值导出的 id；id 已存在且值相同的行",
                en: "A row without an id gets one derived from its form and values, and a row whose id exists with the"),
            Localized(
                zh: "计为未变：再次运行同样的导入不会重复添加。导出的 id",
                en: "same values counts as unchanged: running the same import again adds nothing twice. Derived ids are"
            ),
            Localized(
                zh: "不按时间排序，会减慢向大数据库的插入：--new-ids 以不能重新运行换取速度。",
                en: "not time-ordered, which slows inserts into a large database: --new-ids trades re-runs for speed."),
            Localized(
                zh: "有行被拒绝时退出码为 65（每行附行号和问题）；此时 --atomic 不存储任何内容。",
                en: "Exit 65 when any row is rejected (each with its line and problems); --atomic then stores nothing."),
        ],
        examples: [
            "entryctl import entries.jsonl",
            "entryctl import --format csv --rejects rejected.csv 名单.csv",
            "entryctl export | entryctl --socket /run/other.sock import -",
            "entryctl import < 名单.csv",
            "entryctl import --dry-run --map 联系人=name --map 电话=phone 名单.csv",
        ],
        prepare: { input in
            let given = input.scanned.positionals
            if given.count > 1 { throw UsageError(zh: "多余的参数“\(given[1])”", en: "unexpected argument '\(given[1])'") }
            let file = given.first ?? "-"
            if given.isEmpty && isatty(0) == 1 {
                throw UsageError(
                    zh: "缺少 FILE：请给出文件，或用 - 表示标准输入，或用管道输入数据（entryctl import < FILE）",
                    en: "missing FILE: give a file, - for standard input, or pipe the data in (entryctl import < FILE)")
            }
            var format = try input.choice("--format", of: ImportRequest.Format.allCases.map(\.rawValue)).flatMap(
                ImportRequest.Format.init)
            if format == nil {
                let lower = file.lowercased()
                format =
                    lower.hasSuffix(".csv")
                    ? .csv
                    : lower.hasSuffix(".json")
                        ? .json
                        : lower.hasSuffix(".jsonl") || lower.hasSuffix(".ndjson") ? .jsonl : nil
            }
            if input.has("--atomic") && input.has("--dry-run") {
                throw UsageError(zh: "--atomic 和 --dry-run 只能给一个", en: "give --atomic or --dry-run, not both")
            }
            let request = ImportRequest(
                file: file, fileGiven: !given.isEmpty, format: format, form: input.value("--form"),
                atomic: input.has("--atomic"),
                dryRun: input.has("--dry-run"), rejects: input.value("--rejects"),
                batch: try input.integer("--batch", in: 1...1_000_000).map(Int.init), newIDs: input.has("--new-ids"),
                ignoreUnknownColumns: input.has("--ignore-unknown-columns"), map: input.scanned.values("--map"))
            if request.ignoreUnknownColumns && format != nil && format != .csv {
                throw UsageError(
                    zh: "--ignore-unknown-columns 只用于 CSV 输入", en: "--ignore-unknown-columns is for CSV input")
            }
            if !request.map.isEmpty && format != nil && format != .csv {
                throw UsageError(zh: "--map 只用于 CSV 输入", en: "--map is for CSV input")
            }
            return { session in try ImportRun(request, session).run() }
        })
}

/// One run of `import`: reads rows, sends batches, counts, reports.
final class ImportRun {
    let request: ImportRequest
    /// The format read: the request's, or the one the first line showed.
    private var format: ImportRequest.Format = .jsonl
    /// The CSV separator (the header's), also used by the rejects report.
    private var separator: Unicode.Scalar = ","
    let session: DaemonConnection
    private var input: ByteInput!
    private var csv: CSVReader?
    /// The line end of the CSV input, for its rejects report (CRLF when it had none).
    private var csvLineEnd: String { csv?.firstLineEnd ?? CSVWriter.lineEnd }
    private var lines: LineReader?
    private var jsonRows: [JSON] = []
    private var jsonIndex = 0
    private var csvHeader: [String] = []
    private var columns: [DataColumns.Column] = []
    /// How the CSV header was mapped (shown by `--dry-run`).
    private var mapping: DataColumns.HeaderMapping?
    private var defaultForm = ""
    /// The fields of the default (or `--form`) form, to read labels used as JSON keys.
    private var formNames: [DataColumns.FieldNames] = []
    private var batchSize = 1000
    private var maxBatch = 10_000
    private var maxMessageBytes = 4 << 20
    private var report: OutputFile?
    /// The encoding of the rejects report: a CSV input's (UTF-8 while it was all ASCII), else UTF-8.
    private var reportEncoding: InputEncoding = .utf8
    private var rows = 0, added = 0, unchanged = 0, valid = 0, rejected = 0
    /// Added rows that look like another live entry (Import's `duplicates`), and the first few of them.
    private var duplicateRows = 0
    private var duplicateSamples: [(line: Int, id: String, like: [String])] = []
    /// The input line of the last row sent in an Import call (stored or rejected); `nil` before the first call.
    private var lastSentLine: Int?
    /// The first rejects, shown on stderr when there is no --rejects report.
    private var shownRejects: [Localized] = []
    private let progress: ProgressLine

    init(_ request: ImportRequest, _ session: DaemonConnection) {
        self.request = request
        self.session = session
        progress = ProgressLine(label: Localized(zh: "导入", en: "import"), locale: session.globals.locale)
    }

    func run() throws {
        do {
            try read()
        } catch let error as InputEncodingError {
            var lines = [
                Localized(
                    zh: error.message(file: request.file, locale: .zh),
                    en: error.message(file: request.file, locale: .en))
            ]
            if let last = lastSentLine, !request.dryRun, !request.atomic {
                // Earlier batches were sent and stay stored; the rows read after them were not sent.
                // Derived ids make the import re-runnable: what is stored counts as unchanged then.
                lines.append(
                    Localized(
                        zh: "第 \(last) 行及之前的行已在之前的批次中发送：新增 \(added)，未变 \(unchanged)，拒绝 \(rejected)；"
                            + "第 \(last) 行之后的行都未存储。转换后重新导入整个文件即可：已存储的行计为未变"
                            + (request.newIDs ? "（但 --new-ids 会再次添加它们：去掉 --new-ids 或只导入第 \(last) 行之后的行）" : ""),
                        en: "the rows up to line \(last) were sent in earlier batches and are stored: added \(added), "
                            + "unchanged \(unchanged), rejected \(rejected); no row after line \(last) was stored. "
                            + "Import the whole file again once converted: the stored rows count as unchanged"
                            + (request.newIDs
                                ? " (but --new-ids adds them again: drop it, or import only the rows after line \(last))"
                                : "")))
            } else if !request.dryRun {
                lines.append(Localized(zh: "未存储任何行", en: "no row was stored"))
            }
            throw RowsRejected(lines: lines)
        }
    }

    /// Reads the input and sends its rows (``run()`` words an encoding error).
    private func read() throws {
        // The limits and the form first: a missing daemon or form fails before reading.
        let status = try session.call(.syncStatus)
        maxBatch = Int(status["limits"]?["max-batch"]?.intValue ?? 10_000)
        maxMessageBytes = Int(status["limits"]?["max-message-size"]?.intValue ?? (4 << 20))
        batchSize = max(1, min(request.batch ?? 1000, maxBatch))
        let form = try ExportCommand.formFields(session, form: request.form)
        defaultForm = form.name
        formNames = form.fields
        let columnMap: [String: String]
        do {
            columnMap = try DataColumns.columnMap(request.map, fields: form.fields, locale: session.globals.locale)
        } catch {
            throw UsageError(zh: error.message, en: error.message)
        }
        do {
            input = try ByteInput(path: request.file)
        } catch {
            throw Refusal(
                zh: "无法读取“\(request.file)”：\(error.reason(in: .zh))",
                en: "cannot read '\(request.file)': \(error.reasonText)",
                exitCode: .noInput)
        }
        let start = try input.peekFirstLine()
        if !request.fileGiven && start.line.isEmpty {
            throw UsageError(
                zh: "缺少 FILE：标准输入为空（请给出文件，或用管道输入数据：entryctl import < FILE）",
                en: "missing FILE: standard input is empty (give a file, or pipe the data in: entryctl import < FILE)")
        }
        format =
            request.format
            ?? {
                switch InputSniffer.format(firstLine: start.line) {
                case .jsonLines: .jsonl
                case .jsonArray: .json
                case .csv: .csv
                }
            }()
        if format != .csv {
            // JSON is UTF-8 (RFC 8259): another encoding is refused, not converted.
            input.acceptsOnlyUTF8 = true
            if let encoding = input.encoding, encoding != .utf8 {
                throw InputEncodingError(.notUTF8(encoding), line: 1, byteOffset: 0)
            }
        }
        switch format {
        case .csv:
            let byte = InputSniffer.separator(header: start.line)
            separator = Unicode.Scalar(byte)
            let reader = CSVReader(input, separator: byte)
            csv = reader
            guard let header = try reader.next() else {
                throw RowsRejected(
                    Localized(zh: "“\(request.file)”为空：没有 CSV 表头", en: "'\(request.file)' is empty: no CSV header"))
            }
            let locale = session.globals.locale
            do {
                let resolved = try DataColumns.mapping(
                    header: header.fields, fields: form.fields, map: columnMap,
                    ignoreUnknown: request.ignoreUnknownColumns, locale: locale)
                columns = resolved.columns
                mapping = resolved
                if !resolved.unknown.isEmpty {
                    Terminal.message(
                        locale == .zh
                            ? "已跳过未知的列 " + resolved.unknown.map { "“\($0)”" }.joined(separator: "、")
                                + "（--ignore-unknown-columns）"
                            : "skipping unknown column\(resolved.unknown.count == 1 ? "" : "s") "
                                + resolved.unknown.map { "'\($0)'" }.joined(separator: ", ")
                                + " (--ignore-unknown-columns)")
                }
            } catch {
                if error.usage { throw UsageError(zh: error.message, en: error.message) }
                throw RowsRejected(
                    Localized(
                        zh: "\(request.file) 第 \(header.line) 行：" + error.message,
                        en: "\(request.file) line \(header.line): " + error.message))
            }
            csvHeader = header.fields
        case .jsonl:
            lines = LineReader(input)
        case .json:
            var bytes: [UInt8] = []
            while case let chunk = try input.read(), !chunk.isEmpty { bytes += chunk }
            if bytes.starts(with: utf8ByteOrderMark) { bytes.removeFirst(3) }
            guard let array = (try? JSON.parse(bytes))?.arrayValue else {
                throw RowsRejected(
                    Localized(
                        zh: "“\(request.file)”不是 JSON 数组（JSON 行请用 --format jsonl）",
                        en: "'\(request.file)' is not a JSON array (use --format jsonl for JSON lines)"))
            }
            jsonRows = array
        }
        if let path = request.rejects {
            report = try OutputFile(path: path)
            // A CSV report keeps its input's BOM and line ends (a spreadsheet opens it as it
            // opened the input), with the problems column headed in the chosen locale.
            // Its encoding is the input's, as far as the input has shown it.
            if format == .csv, let reader = csv {
                reportEncoding = input.encoding ?? .utf8
                if reader.hadByteOrderMark { try writeReport(utf8ByteOrderMark) }
                try writeReport(
                    CSVWriter.record(
                        csvHeader + [DataColumns.problemsHeader(session.globals.locale)],
                        lineEnd: csvLineEnd, separator: separator))
            }
        }
        do {
            try request.atomic ? importAtomically() : importInBatches()
            try report?.commit()
        } catch {
            progress.finish()
            report?.abandon()
            throw error
        }
        progress.finish()
        summarize()
        if let failure { throw failure }
    }

    // MARK: Reading

    /// The next input row, or `nil` at the end.
    func nextRow() throws -> InputRow? {
        switch format {
        case .csv:
            guard let record = try csv!.next() else { return nil }
            var row = InputRow(
                element: DataColumns.importElement(
                    record.fields, columns: columns,
                    spreadsheetSafe: csv!.hadByteOrderMark), form: nil,
                line: record.line, echo: .csv(record.fields))
            if record.fields.count != columns.count {
                row.problems = [
                    problem(
                        "", "invalid-format",
                        Localized(
                            zh: "这条记录有 \(record.fields.count) 个字段，表头有 \(columns.count) 个",
                            en: "the record has \(record.fields.count) fields, the header \(columns.count)"))
                ]
            }
            return row
        case .jsonl:
            guard let line = try lines!.next() else { return nil }
            guard let object = try? JSON.parse(line.bytes), case .object = object else {
                let text = String(decoding: line.bytes, as: UTF8.self)
                return InputRow(
                    element: .object([]), form: nil, line: line.line, echo: .text(text),
                    problems: [
                        problem(
                            "", "invalid-format", Localized(zh: "这一行不是 JSON 对象", en: "the line is not a JSON object"))
                    ])
            }
            return jsonRow(object, line: line.line)
        case .json:
            guard jsonIndex < jsonRows.count else { return nil }
            jsonIndex += 1
            let object = jsonRows[jsonIndex - 1]
            guard case .object = object else {
                return InputRow(
                    element: .object([]), form: nil, line: jsonIndex, echo: .json(object),
                    problems: [
                        problem(
                            "", "invalid-format",
                            Localized(zh: "这个元素不是 JSON 对象", en: "the element is not a JSON object"))
                    ])
            }
            return jsonRow(object, line: jsonIndex)
        }
    }

    /// A row from a JSON object: `id`, `fields`, `deleted` and `form` are read, the rest ignored.
    /// Keys of `fields` may be field labels in zh or en, as CSV headers may
    /// (for the default or `--form` form): they are sent as field names.
    func jsonRow(_ object: JSON, line: Int) -> InputRow {
        var members: [(String, JSON)] = []
        var repeated: Localized?
        for key in ["id", "fields", "deleted"] {
            guard var v = object[key], !v.isNull else { continue }
            if key == "fields", case .object(let typed) = v,
                (request.form ?? object["form"]?.stringValue ?? defaultForm) == defaultForm
            {
                var spelled: [String: String] = [:]
                v = .object(
                    typed.map { typedKey, value in
                        let name = DataColumns.fieldName(for: typedKey, in: formNames) ?? typedKey
                        if let first = spelled[name], repeated == nil {
                            repeated = Localized(
                                zh: "字段“\(name)”给了两次（作为“\(first)”和“\(typedKey)”）",
                                en: "field '\(name)' is given twice (as '\(first)' and '\(typedKey)')")
                        }
                        spelled[name] = typedKey
                        return (name, value)
                    })
            }
            members.append((key, v))
        }
        if let repeated {
            return InputRow(
                element: .object(members.filter { $0.0 != "fields" } + [("fields", .object([]))]),
                form: object["form"]?.stringValue, line: line, echo: .json(object),
                problems: [problem("fields", "invalid-format", repeated)])
        }
        if object["fields"] == nil {
            // A flat object ({"name": …, "birthday": …}) would otherwise be refused field by field as empty.
            return InputRow(
                element: .object(members + [("fields", .object([]))]), form: object["form"]?.stringValue,
                line: line, echo: .json(object),
                problems: [
                    problem(
                        "fields", "invalid-format",
                        Localized(
                            zh: "这个元素没有 \"fields\" 对象：每个条目请写成 {\"fields\": {\"name\": …}}"
                                + "（即 `entryctl export --format json` 写出的形式），\"id\" 和 \"deleted\" 可选",
                            en: "the element has no \"fields\" object: write each entry as {\"fields\": {\"name\": …}} "
                                + "(the shape `entryctl export --format json` writes), with optional \"id\" and \"deleted\""
                        ))
                ])
        }
        return InputRow(element: .object(members), form: object["form"]?.stringValue, line: line, echo: .json(object))
    }

    /// A wire-shaped Problem made by entryctl.
    /// Its message is in the session's locale, as the daemon's problems are.
    func problem(_ field: String, _ code: String, _ message: Localized) -> JSON {
        .object([
            ("field", .string(field)), ("code", .string(code)), ("message", .string(message(session.globals.locale))),
            ("suggestions", .array([])),
        ])
    }

    /// The form a row goes to: `--form`, else its own `form`, else the default form.
    func form(of row: InputRow) -> String { request.form ?? row.form ?? defaultForm }

    /// Gives a row without an id its derived id (``DataColumns/derivedID(form:fields:)``).
    /// With `--new-ids` the row is left as it is (the daemon makes a UUIDv7).
    func withID(_ row: InputRow) -> InputRow {
        guard !request.newIDs, row.element["id"] == nil, case .object(var members) = row.element else { return row }
        let fields: [(String, String)] = {
            guard case .object(let f)? = row.element["fields"] else { return [] }
            return f.map { ($0.0, $0.1.stringValue ?? $0.1.text) }
        }()
        members.insert(("id", .string(DataColumns.derivedID(form: form(of: row), fields: fields))), at: 0)
        var copy = row
        copy.element = .object(members)
        return copy
    }

    // MARK: Sending

    func importInBatches() throws {
        var pending: [InputRow] = []
        var pendingForm = ""
        func flush() throws {
            guard !pending.isEmpty else { return }
            try request.dryRun ? check(pending, form: pendingForm) : send(pending, form: pendingForm)
            pending.removeAll(keepingCapacity: true)
            progress.update(
                count: rows, fraction: input.totalBytes.map { $0 > 0 ? Double(input.bytesRead) / Double($0) : 1 })
        }
        while let raw = try nextRow() {
            if !raw.problems.isEmpty {
                rows += 1
                try reject(raw, raw.problems)
                continue
            }
            let row = withID(raw)
            let rowForm = form(of: row)
            if rowForm != pendingForm || pending.count >= batchSize {
                try flush()
                pendingForm = rowForm
            }
            rows += 1
            pending.append(row)
        }
        try flush()
    }

    /// One Import call (split in halves while the message would pass max-message-size).
    func send(_ batch: [InputRow], form: String, atomic: Bool = false) throws {
        let parameters = params(
            ("form", .string(form)), ("entries", .array(batch.map(\.element))),
            ("atomic", atomic ? .bool(true) : nil), ("locale", session.locale))
        let size = VarlinkCall(.entriesImport, parameters: parameters).encoded.count
        if size >= maxMessageBytes {
            guard batch.count > 1, !atomic else {
                throw atomic
                    ? Refusal(
                        zh: "--atomic：文件构成的消息有 \(size) 字节，超过守护进程的 max-message-size（\(maxMessageBytes)）；请拆分文件或调大限制",
                        en:
                            "--atomic: the file makes a message of \(size) bytes, over the daemon's max-message-size (\(maxMessageBytes)); split the file or raise the limit"
                    )
                    : Refusal(
                        zh: "第 \(batch[0].line) 行单独一行就超过了守护进程的 max-message-size（\(maxMessageBytes) 字节）",
                        en:
                            "row at line \(batch[0].line) alone is larger than the daemon's max-message-size (\(maxMessageBytes) bytes)"
                    )
            }
            let half = batch.count / 2
            try send(Array(batch[..<half]), form: form)
            try send(Array(batch[half...]), form: form)
            return
        }
        let reply = try session.call(.entriesImport, parameters)
        lastSentLine = max(lastSentLine ?? 0, batch.map(\.line).max() ?? 0)
        added += Int(reply["added"]?.intValue ?? 0)
        unchanged += Int(reply["unchanged"]?.intValue ?? 0)
        for r in reply["rejected"]?.arrayValue ?? [] {
            guard let index = r["index"]?.intValue, index >= 0, index < batch.count else { continue }
            try reject(batch[Int(index)], r["problems"]?.arrayValue ?? [])
        }
        for r in DuplicateWarning.list(reply) {
            guard let index = r["index"]?.intValue, index >= 0, index < batch.count else { continue }
            duplicateRows += 1
            if duplicateSamples.count < Self.duplicateSamplesShown {
                duplicateSamples.append(
                    (
                        batch[Int(index)].line, r["id"]?.stringValue ?? "",
                        DuplicateWarning.list(r).compactMap { $0["id"]?.stringValue }
                    ))
            }
        }
    }

    /// How many rows that look like other entries the summary names.
    static let duplicateSamplesShown = 5

    /// The summary's lines about possible duplicates: how many added rows look
    /// like another live entry (stored before, or another row of the file), the
    /// first few with their ids, then how many more.
    func duplicateLines(_ locale: EntryLocale) -> [String] {
        guard duplicateRows > 0 else { return [] }
        var lines = [
            Localized(
                zh: "其中 \(duplicateRows) 行可能与已有条目（或文件中的另一行）是同一人：",
                en: "\(duplicateRows) added rows may be the same person as another entry (stored, or another row):")(
                    locale)
        ]
        for sample in duplicateSamples {
            let like = sample.like.joined(separator: locale == .zh ? "、" : ", ")
            lines.append(
                Localized(
                    zh: "  第 \(sample.line) 行（\(sample.id)）像 \(like)",
                    en: "  line \(sample.line) (\(sample.id)) is like \(like)")(locale))
        }
        if duplicateRows > duplicateSamples.count {
            let more = duplicateRows - duplicateSamples.count
            lines.append(Localized(zh: "  另有 \(more) 行", en: "  and \(more) more")(locale))
        }
        return lines
    }

    /// `--dry-run`: Check each row, pipelined (every call of the batch sent before the replies are read).
    func check(_ batch: [InputRow], form: String) throws {
        let connection = try session.open()
        var local: [Int: [JSON]] = [:]
        for (k, row) in batch.enumerated() {
            var problems: [JSON] = []
            if let id = row.element["id"] {
                if id.stringValue.flatMap(UUIDv7.canonical) == nil {
                    problems.append(
                        problem("id", "invalid-format", Localized(zh: "id 必须是 UUID", en: "id must be a UUID")))
                }
            }
            if let d = row.element["deleted"], d.boolValue == nil {
                problems.append(
                    problem(
                        "deleted", "invalid-format",
                        Localized(zh: "deleted 必须是 true 或 false", en: "deleted must be true or false")))
            }
            if !problems.isEmpty { local[k] = problems }
            try connection.send(
                VarlinkCall(
                    .formsCheck,
                    parameters: params(
                        ("form", .string(form)), ("fields", row.element["fields"] ?? .object([])),
                        ("locale", session.locale))))
        }
        for (k, row) in batch.enumerated() {
            let reply = try connection.receive()
            if let error = reply.error { throw WireError(name: error, parameters: reply.parameters) }
            let problems = (local[k] ?? []) + (reply.parameters["problems"]?.arrayValue ?? [])
            if problems.isEmpty { valid += 1 } else { try reject(row, problems) }
        }
    }

    /// `--atomic`: every row in one Import call, or nothing sent at all.
    func importAtomically() throws {
        var all: [InputRow] = []
        var early: [(InputRow, [JSON])] = []
        while let raw = try nextRow() {
            rows += 1
            if !raw.problems.isEmpty {
                early.append((raw, raw.problems))
                continue
            }
            all.append(withID(raw))
            if all.count > maxBatch {
                throw Refusal(
                    zh:
                        "--atomic 用一次 Import 调用发送整个文件，而文件超过了守护进程的 max-batch（\(maxBatch)）行；请拆分文件、调大 max-batch，或不用 --atomic 导入",
                    en:
                        "--atomic sends the whole file in one Import call, and it has more than the daemon's max-batch (\(maxBatch)) rows; split the file, raise max-batch, or import without --atomic"
                )
            }
        }
        let forms = Set(all.map { form(of: $0) })
        guard forms.count <= 1 else {
            throw Refusal(
                zh: "--atomic 只能用于一个表单，而文件中有 \(forms.count) 个（\(forms.sorted().joined(separator: "、"))）",
                en:
                    "--atomic needs one form, and the file names \(forms.count) (\(forms.sorted().joined(separator: ", ")))"
            )
        }
        for (row, problems) in early { try reject(row, problems) }
        guard early.isEmpty, let form = forms.first else { return }
        try send(all, form: form, atomic: true)
        if rejected > 0 {
            added = 0
            unchanged = 0
        }
        progress.update(count: rows, fraction: 1, force: true)
    }

    // MARK: Reporting

    /// Counts a rejected row and writes it to the report (or keeps it for stderr).
    func reject(_ row: InputRow, _ problems: [JSON]) throws {
        rejected += 1
        let texts = problems.map { p -> String in
            let field = p["field"]?.stringValue ?? ""
            let suggestions = p["suggestions"]?.arrayValue?.compactMap(\.stringValue) ?? []
            return (field.isEmpty ? "" : field + ": ") + (p["message"]?.stringValue ?? "")
                + " (\(p["code"]?.stringValue ?? "invalid"))"
                + (suggestions.isEmpty ? "" : " → " + suggestions.joined(separator: ", "))
        }
        if let report {
            switch row.echo {
            case .csv(let cells):
                try writeReport(
                    CSVWriter.record(cells + [texts.joined(separator: "; ")], lineEnd: csvLineEnd, separator: separator)
                )
            case .json(.object(var members)):
                members.removeAll { $0.0 == "problems" || $0.0 == "line" }
                members += [("line", .int(Int64(row.line))), ("problems", .array(problems))]
                try report.write(JSON.object(members).text + "\n")
            case .json(let other):
                try report.write(
                    params(("line", .int(Int64(row.line))), ("input", other), ("problems", .array(problems))).text
                        + "\n")
            case .text(let text):
                try report.write(
                    params(("line", .int(Int64(row.line))), ("input", .string(text)), ("problems", .array(problems)))
                        .text + "\n")
            }
        } else if shownRejects.count < 10 {
            shownRejects.append(
                Localized(
                    zh: "  第 \(row.line) 行：" + texts.joined(separator: "；"),
                    en: "  line \(row.line): " + texts.joined(separator: "; ")))
        }
    }

    /// Appends UTF-8 `bytes` to the rejects report in ``reportEncoding``.
    private func writeReport(_ bytes: [UInt8]) throws { try report?.write(reportEncoding.encode(bytes)) }

    /// Appends `text` to the rejects report in ``reportEncoding``.
    private func writeReport(_ text: String) throws { try writeReport(Array(text.utf8)) }

    /// Prints the counts (stdout) and throws ``RowsRejected`` when rows were rejected.
    func summarize() {
        let seconds = max(progress.elapsed, 0.001)
        let rate = Int(Double(rows) / seconds)
        if session.globals.json {
            var members: [(String, JSON)] = [("rows", .int(Int64(rows)))]
            if request.dryRun {
                members.append(("valid", .int(Int64(valid))))
            } else {
                members += [("added", .int(Int64(added))), ("unchanged", .int(Int64(unchanged)))]
                members.append(("duplicates", .int(Int64(duplicateRows))))
                if !duplicateSamples.isEmpty {
                    members.append(
                        (
                            "duplicateRows",
                            .array(
                                duplicateSamples.map { sample in
                                    .object([
                                        ("line", .int(Int64(sample.line))), ("id", .string(sample.id)),
                                        ("like", .array(sample.like.map(JSON.string))),
                                    ])
                                })
                        ))
                }
            }
            members += [("rejected", .int(Int64(rejected))), ("seconds", .double((seconds * 1000).rounded() / 1000))]
            if request.dryRun, let mapping { members.append(("columns", mapping.json)) }
            Terminal.out(lines: [JSON.object(members).text])
        } else if request.dryRun {
            let locale = session.globals.locale
            if let mapping {
                Terminal.out(lines: [Localized(zh: "列的对应：", en: "columns:")(locale)] + mapping.lines(locale: locale))
            }
            Terminal.out(lines: [
                Localized(
                    zh: "试运行：\(rows) 行中 \(valid) 行有效，\(rejected) 行被拒绝；未存储任何内容",
                    en: "dry run: \(valid) valid, \(rejected) rejected of \(rows) rows; nothing stored")(locale)
            ])
        } else if request.atomic && rejected > 0 {
            Terminal.out(lines: [
                Localized(
                    zh: "atomic：未存储任何内容；\(rows) 行中 \(rejected) 行被拒绝",
                    en: "atomic: nothing stored; \(rejected) of \(rows) rows rejected")(session.globals.locale)
            ])
        } else {
            let time = String(format: "%.1f", seconds)
            Terminal.out(
                lines: [
                    Localized(
                        zh: "新增 \(added)，未变 \(unchanged)，拒绝 \(rejected)（\(rows) 行，用时 \(time) 秒，每秒 \(rate) 行）",
                        en:
                            "added \(added), unchanged \(unchanged), rejected \(rejected) (\(rows) rows in \(time) s, \(rate) rows/s)"
                    )(session.globals.locale)
                ] + duplicateLines(session.globals.locale))
        }
    }

    /// The failure to throw after ``summarize()``, if any row was rejected.
    var failure: RowsRejected? {
        guard rejected > 0 else { return nil }
        var lines = [
            Localized(
                zh: "\(rows) 行中 \(rejected) 行被拒绝" + (request.atomic ? "；--atomic：未存储任何内容" : ""),
                en: "\(rejected) of \(rows) rows rejected" + (request.atomic ? "; --atomic: nothing stored" : ""))
        ]
        if let path = request.rejects {
            lines.append(Localized(zh: "它们的问题在“\(path)”中", en: "their problems are in '\(path)'"))
        } else {
            lines += shownRejects
            if rejected > shownRejects.count {
                lines.append(
                    Localized(
                        zh: "  …… 还有 \(rejected - shownRejects.count) 行",
                        en: "  … and \(rejected - shownRejects.count) more"))
            }
            lines.append(
                Localized(
                    zh: "用 --rejects FILE 得到每个被拒绝行的报告。", en: "Use --rejects FILE for a report of every rejected row."))
        }
        return RowsRejected(lines: lines)
    }
}
