import Foundation
import EntryModel
import EntryProtocol

/// The columns of the CSV files `entryctl export` writes and `entryctl import` reads.
///
/// An export has, in this order: `id`; one column per form field in form order;
/// one column per field the exported entries hold that the form does not
/// define (schema drift: a peer's form has it, or this node's form file dropped
/// it), by name, its header marked (``unknownHeader(_:labels:locale:)``:
/// `unknown.note`, or with `--labels` `note（本表单没有此字段）` /
/// `note (not in this form)`); `deleted` (`true` or `false`); `version` and `updatedAt` (for people: import
/// ignores them); with `--display`, one display column per field and one for
/// the region. Headers are field names, or with `--labels` the labels in the
/// locale (meta columns then read `ID`, `已删除`/`Deleted` …). Values are
/// canonical codes, or for people (`--labels`, `--excel`) the labels of picker
/// values (``exportRow(_:fields:display:valueLabels:locale:)``).
///
/// An import accepts, per header (trimmed, case-insensitive): a field name, or
/// its label in `zh` or `en`; `id`/`ID`/`编号`; `deleted`/`已删除`/`删除`; and it
/// skips the export's informational columns (version, updated/created time,
/// form, display columns, and the `problems` column of a rejects report). A
/// marked column of a field the form does not define is read back as that
/// field: the daemon takes it as a field of the form where the form has it,
/// and elsewhere only confirms an entry that holds the same value (so an
/// export imports back into its node unchanged, and nothing is cleared).
/// Any other header is an error naming every such column, so a misspelt column
/// never drops data silently; asked to (`--ignore-unknown-columns`), they are
/// skipped instead.
package enum DataColumns {
    /// What an input column holds.
    package enum Column: Sendable, Equatable {
        /// The entry id (empty: the daemon makes one).
        case id
        /// The deleted flag.
        case deleted
        /// The value of the named field.
        case field(String)
        /// Informational: not sent.
        case ignored
    }

    /// A form field's name and its labels in both locales (from `GetForm`).
    package struct FieldNames: Sendable, Equatable {
        /// The field name, e.g. `birthday`.
        package var name: String
        /// The label in `zh`, e.g. `生日`.
        package var zh: String
        /// The label in `en`, e.g. `Birthday`.
        package var en: String
        /// The field type as the wire names it (`country`, `choice` …); empty when not known.
        package var type: String
        /// Other column headers that name this field in an import, in any
        /// language (the form file's `aliases.zh` and `aliases.en`; the wire
        /// `Field.headerAliases`).
        package var aliases: [String]
        /// A field's name, labels, type and header aliases.
        package init(name: String, zh: String, en: String, type: String = "", aliases: [String] = []) {
            self.name = name
            self.zh = zh
            self.en = en
            self.type = type
            self.aliases = aliases
        }
    }

    /// The header of the column of a report of rejected rows that holds each
    /// row's problems, in `locale` (`问题`, `problems`); both are ignored when
    /// the fixed report is imported again.
    package static func problemsHeader(_ locale: EntryLocale) -> String { locale == .zh ? "问题" : "problems" }

    static let idHeaders: Set<String> = ["id", "编号"]
    static let deletedHeaders: Set<String> = ["deleted", "已删除", "删除"]
    static let ignoredHeaders: Set<String> = [
        "version", "版本", "updatedat", "updated at", "updated", "更新时间", "更新", "createdat", "created at",
        "created", "创建时间", "创建", "form", "表单", "problems", "问题",
    ]

    /// The prefix of a machine header of a field the form does not define: `unknown.note`.
    static let unknownPrefix = "unknown."
    /// The marks after the name of a field the form does not define, in a header for people.
    static let unknownSuffixes = ["（本表单没有此字段）", " (not in this form)"]

    /// The header of a column of a field the form does not define: `unknown.NAME`,
    /// or for people (`labels`) `NAME（本表单没有此字段）` (zh) / `NAME (not in this form)` (en).
    /// ``resolve(header:fields:ignoreUnknown:locale:)`` reads each back as the field `NAME`.
    package static func unknownHeader(_ name: String, labels: Bool, locale: EntryLocale) -> String {
        labels ? name + unknownSuffixes[locale == .zh ? 0 : 1] : unknownPrefix + name
    }

    /// The field a header written by ``unknownHeader(_:labels:locale:)`` names; `nil` for any other header.
    static func unknownFieldName(_ raw: String) -> String? {
        let text = raw.trimmingCharacters(in: .whitespaces)
        var name: Substring?
        if text.lowercased().hasPrefix(unknownPrefix) { name = text.dropFirst(unknownPrefix.count) }
        for suffix in unknownSuffixes where text.hasSuffix(suffix) { name = text.dropLast(suffix.count) }
        guard let name, !name.isEmpty else { return nil }
        return String(name).trimmingCharacters(in: .whitespaces)
    }

    /// The export header.
    /// - Parameters:
    ///   - fields: the form's fields in form order.
    ///   - unknown: fields the exported entries hold that the form does not define, in column order.
    ///   - labels: labels in `locale` instead of field names.
    ///   - display: append display columns.
    package static func exportHeader(
        fields: [FieldNames], unknown: [String] = [], labels: Bool, locale: EntryLocale,
        display: Bool
    ) -> [String] {
        let zh = locale == .zh
        func label(_ f: FieldNames) -> String { labels ? (zh ? f.zh : f.en) : f.name }
        var header = ["id"] + fields.map(label) + unknown.map { unknownHeader($0, labels: labels, locale: locale) }
        header +=
            labels
            ? (zh ? ["已删除", "版本", "更新时间"] : ["Deleted", "Version", "Updated at"])
            : ["deleted", "version", "updatedAt"]
        if display {
            let shown = fields.map { f in labels ? label(f) + (zh ? "（显示）" : " (display)") : "display." + f.name }
            header += shown + [labels ? (zh ? "省市（显示）" : "Region (display)") : "display.region"]
        }
        if labels { header[0] = "ID" }
        return header
    }

    /// The field types whose values are codes with labels: what an export for people writes as labels.
    package static let labelledTypes: Set<String> = ["country", "province", "city", "choice"]

    /// The labels to write for picker values, by field name then code, from a
    /// field's picker rows (`{value, label, parent?}`, as `io.entryd.Forms.Options`
    /// sends them). A label that two rows of the same parent share (or that is
    /// another row's code) is left out, so its code is written: import must read
    /// back the same value. Rows of different parents may share a label (Chaoyang
    /// in Beijing and in Liaoning): import reads a city within the row's province.
    package static func valueLabels(options: [JSON]) -> [String: String] {
        var byLabel: [String: Int] = [:]
        let rows = options.compactMap { o -> (value: String, label: String, key: String)? in
            guard let value = o["value"]?.stringValue, let label = o["label"]?.stringValue, !label.isEmpty else {
                return nil
            }
            return (value, label, (o["parent"]?.stringValue ?? "") + "\u{0}" + label.lowercased())
        }
        let codes = Set(rows.map { $0.value.lowercased() })
        for row in rows { byLabel[row.key, default: 0] += 1 }
        var labels: [String: String] = [:]
        for row in rows
        where byLabel[row.key] == 1
            && (!codes.contains(row.label.lowercased()) || row.label.lowercased() == row.value.lowercased())
        {
            labels[row.value] = row.label
        }
        return labels
    }

    /// One export row for an entry of the wire shape `{id, fields, display, deleted, version, updatedAt}`.
    /// - Parameters:
    ///   - unknown: the columns of fields the form does not define, as in the
    ///     header; their values are written as stored.
    ///   - valueLabels: for people: each value that has a label here (by field
    ///     name, then code: ``valueLabels(options:)``) is written as its label,
    ///     and `deleted` as `是`/`否` (zh) or `Yes`/`No` (en); phones in the
    ///     international format (`+86 138 0013 8000`) and e-mail domains in
    ///     Unicode (`李雷@例子.中国`), as `display` shows them; `nil`: codes,
    ///     stored values and `true`/`false`.
    ///   - locale: the language of the `deleted` words.
    package static func exportRow(
        _ entry: JSON, fields: [FieldNames], unknown: [String] = [], display: Bool,
        valueLabels: [String: [String: String]]? = nil, locale: EntryLocale = .en
    ) -> [String] {
        let values = entry["fields"]
        var row = [entry["id"]?.stringValue ?? ""]
        row += fields.map { f in
            let value = values?[f.name]?.stringValue ?? ""
            guard let valueLabels, !value.isEmpty else { return value }
            switch f.type {
            // For people, as `display` shows them; import reads both forms back to the stored value.
            case "email": return EmailAddress.display(value)
            case "phone": return PhoneNumber.format(value) ?? value
            default: return valueLabels[f.name]?[value] ?? value
            }
        }
        row += unknown.map { values?[$0]?.stringValue ?? "" }
        let deleted = entry["deleted"]?.boolValue == true
        let flag =
            valueLabels == nil
            ? (deleted ? "true" : "false")
            : locale == .zh ? (deleted ? "是" : "否") : (deleted ? "Yes" : "No")
        row += [flag, entry["version"]?.stringValue ?? "", entry["updatedAt"]?.stringValue ?? ""]
        if display {
            let shown = entry["display"]
            row += fields.map { shown?[$0.name]?.stringValue ?? "" } + [shown?["region"]?.stringValue ?? ""]
        }
        return row
    }

    /// Maps an input header to columns.
    /// - Parameters:
    ///   - ignoreUnknown: skip columns that are none of the known ones (they
    ///     become ``Column/ignored`` and are listed in `unknown`) instead of
    ///     refusing the header.
    ///   - locale: the language of the error's message.
    /// - Returns: a column per header cell, and the unknown headers skipped.
    /// - Throws: ``HeaderError`` naming every unknown column (with a did-you-mean
    ///   among the field names and labels, and the option to skip them), a
    ///   repeated column, or a header that names no field.
    package static func resolve(
        header: [String], fields: [FieldNames], ignoreUnknown: Bool = false,
        locale: EntryLocale = .en
    ) throws(HeaderError) -> (columns: [Column], unknown: [String]) {
        let mapped = try mapping(header: header, fields: fields, ignoreUnknown: ignoreUnknown, locale: locale)
        return (mapped.columns, mapped.unknown)
    }

    /// How ``mapping(header:fields:map:ignoreUnknown:locale:)`` matched a header cell.
    package enum Match: String, Sendable, Equatable {
        /// `import --map COLUMN=FIELD`.
        case map
        /// A field name (`phone`), or `id`/`deleted`.
        case name
        /// A field's label in `zh` or `en` (`手机号码`, `Phone`), or `ID`/`编号`/`已删除`.
        case label
        /// One of the field's header aliases from the form file (`电话`, `mobile`).
        case alias
        /// A column of a field the form does not define, marked by export (``unknownHeader(_:labels:locale:)``).
        case marked
        /// An informational column of an export (version, times, display columns): skipped.
        case informational
        /// Named no field: skipped with `--ignore-unknown-columns` (else the header is refused).
        case unknown

        /// How the column was matched, for people: `别名`/`alias`, `--map` …
        package func words(_ locale: EntryLocale) -> String {
            let zh = locale == .zh
            switch self {
            case .map: return "--map"
            case .name: return zh ? "字段名" : "field name"
            case .label: return zh ? "标签" : "label"
            case .alias: return zh ? "表头别名" : "header alias"
            case .marked: return zh ? "本表单没有此字段" : "not in this form"
            case .informational: return zh ? "导出的说明列" : "informational column of an export"
            case .unknown: return zh ? "不是表单的字段" : "no field of the form"
            }
        }
    }

    /// How every column of an input header was mapped.
    package struct HeaderMapping: Sendable, Equatable {
        /// A column per header cell, in order.
        package var columns: [Column]
        /// The header cells, as given.
        package var header: [String]
        /// How each column was matched, in order.
        package var matches: [Match]
        /// The header cells that named nothing (skipped with `--ignore-unknown-columns`).
        package var unknown: [String] {
            zip(header, matches).compactMap { $1 == .unknown ? $0 : nil }
        }

        /// One line per column for `import --dry-run`, in `locale`:
        /// `  电话 → phone（别名）` / `  电话 → phone (alias)`, `  备注：未使用（不是表单的字段）`.
        package func lines(locale: EntryLocale) -> [String] {
            zip(zip(header, columns), matches).map { pair, match in
                let (cell, column) = pair
                let target: String? =
                    switch column {
                    case .id: "id"
                    case .deleted: "deleted"
                    case .field(let name): name
                    case .ignored: nil
                    }
                let why = match.words(locale)
                if let target {
                    return "  \(cell) → \(target)" + (locale == .zh ? "（\(why)）" : " (\(why))")
                }
                return locale == .zh ? "  \(cell)：未使用（\(why)）" : "  \(cell): not used (\(why))"
            }
        }

        /// The mapping for `--json`: `[{"column", "field"?, "by"}]`, `field` absent for a column not used.
        package var json: JSON {
            .array(
                zip(zip(header, columns), matches).map { pair, match in
                    var members: [(String, JSON)] = [("column", .string(pair.0))]
                    switch pair.1 {
                    case .id: members.append(("field", .string("id")))
                    case .deleted: members.append(("field", .string("deleted")))
                    case .field(let name): members.append(("field", .string(name)))
                    case .ignored: break
                    }
                    members.append(("by", .string(match.rawValue)))
                    return .object(members)
                })
        }
    }

    /// Parses `import --map` values, `COLUMN=FIELD` each (split at the last
    /// `=`; FIELD a field name, label or header alias, as
    /// ``fieldName(for:in:)`` reads it, or `id`/`deleted`; `-` skips the
    /// column, e.g. the second of two phone columns).
    /// - Returns: the field (or `id`, `deleted`) by column header, trimmed.
    /// - Throws: ``HeaderError`` (a usage error) for a value without `=`, a
    ///   column mapped twice, or a FIELD that is no field of the form (with
    ///   the nearest field name or label).
    package static func columnMap(
        _ specs: [String], fields: [FieldNames],
        locale: EntryLocale = .en
    ) throws(HeaderError) -> [String: String] {
        let zh = locale == .zh
        var map: [String: String] = [:]
        for spec in specs {
            guard let eq = spec.lastIndex(of: "=") else {
                throw HeaderError(
                    message: zh
                        ? "--map 的值“\(spec)”应为 列名=字段，例如 --map 电话=phone"
                        : "--map '\(spec)' must be COLUMN=FIELD, e.g. --map 电话=phone", usage: true)
            }
            let column = spec[..<eq].trimmingCharacters(in: .whitespaces)
            let typed = spec[spec.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            guard !column.isEmpty, !typed.isEmpty else {
                throw HeaderError(
                    message: zh
                        ? "--map 的值“\(spec)”应为 列名=字段，例如 --map 电话=phone"
                        : "--map '\(spec)' must be COLUMN=FIELD, e.g. --map 电话=phone", usage: true)
            }
            let key = typed.lowercased()
            guard
                let field = (typed == "-" ? "-" : nil) ?? fieldName(for: typed, in: fields, aliases: true)
                    ?? (idHeaders.contains(key) ? "id" : deletedHeaders.contains(key) ? "deleted" : nil)
            else {
                let near = nearestName(to: typed, in: fields)
                let known = fields.map(\.name).joined(separator: zh ? "、" : ", ")
                throw HeaderError(
                    message: zh
                        ? "--map \(spec)：表单没有字段“\(typed)”" + (near.map { "（是否指“\($0)”？）" } ?? "") + "；字段有 \(known)"
                        : "--map \(spec): the form has no field '\(typed)'"
                            + (near.map { " (did you mean '\($0)'?)" } ?? "")
                            + "; the fields are \(known)", usage: true)
            }
            guard map.updateValue(field, forKey: column) == nil else {
                throw HeaderError(
                    message: zh ? "--map 给了列“\(column)”两次" : "--map gives column '\(column)' twice", usage: true)
            }
        }
        return map
    }

    /// Maps an input header to columns, saying how each was matched.
    /// - Parameters:
    ///   - map: `--map` (``columnMap(_:fields:locale:)``): field by header cell, before any other rule.
    ///   - ignoreUnknown: skip columns that are none of the known ones instead of refusing the header.
    ///   - locale: the language of the error's message.
    /// - Throws: ``HeaderError``: as ``resolve(header:fields:ignoreUnknown:locale:)``,
    ///   and a usage error for a `--map` column the header does not have (with the nearest header cell).
    package static func mapping(
        header: [String], fields: [FieldNames], map: [String: String] = [:],
        ignoreUnknown: Bool = false, locale: EntryLocale = .en
    ) throws(HeaderError) -> HeaderMapping {
        let zh = locale == .zh
        let trimmed = header.map { $0.trimmingCharacters(in: .whitespaces) }
        for column in map.keys.sorted() where !trimmed.contains(column) {
            let near = MatchKey.nearest(column, among: trimmed)
            throw HeaderError(
                message: zh
                    ? "--map 的列“\(column)”不在表头中" + (near.map { "（是否指“\($0)”？）" } ?? "")
                        + "；表头是 " + trimmed.joined(separator: "、")
                    : "--map column '\(column)' is not in the header" + (near.map { " (did you mean '\($0)'?)" } ?? "")
                        + "; the header is " + trimmed.joined(separator: ", "), usage: true)
        }
        var columns: [Column] = []
        var matches: [Match] = []
        var seen = Set<String>()
        for raw in header {
            let key = raw.trimmingCharacters(in: .whitespaces).lowercased()
            let column: Column
            let match: Match
            if let mapped = map[raw.trimmingCharacters(in: .whitespaces)] {
                column =
                    mapped == "id" ? .id : mapped == "deleted" ? .deleted : mapped == "-" ? .ignored : .field(mapped)
                match = .map
            } else if idHeaders.contains(key) {
                (column, match) = (.id, key == "id" ? .name : .label)
            } else if deletedHeaders.contains(key) {
                (column, match) = (.deleted, key == "deleted" ? .name : .label)
            } else if let f = fields.first(where: { $0.name.lowercased() == key }) {
                (column, match) = (.field(f.name), .name)
            } else if let f = fields.first(where: { $0.zh.lowercased() == key || $0.en.lowercased() == key }) {
                (column, match) = (.field(f.name), .label)
            } else if let f = fields.first(where: { $0.aliases.contains { $0.lowercased() == key } }) {
                (column, match) = (.field(f.name), .alias)
            } else if case let folded = MatchKey(raw),
                let f = fields.first(where: { [$0.zh, $0.en].contains { MatchKey($0) == folded } })
            {
                // Traditional characters, full-width letters, other spacing: `國家`, `聯繫方式`.
                (column, match) = (.field(f.name), .label)
            } else if case let folded = MatchKey(raw),
                let f = fields.first(where: { $0.aliases.contains { MatchKey($0) == folded } })
            {
                (column, match) = (.field(f.name), .alias)
            } else if let name = unknownFieldName(raw) {
                (column, match) = (.field(name), .marked)
            } else if ignoredHeaders.contains(key) || key.hasPrefix("display.") || key.hasSuffix("（显示）")
                || key.hasSuffix("(display)")
            {
                (column, match) = (.ignored, .informational)
            } else {
                (column, match) = (.ignored, .unknown)
            }
            let identity: String? =
                switch column {
                case .id: "id"
                case .deleted: "deleted"
                case .field(let name): name
                case .ignored: nil
                }
            if let identity {
                guard seen.insert(identity).inserted else {
                    throw HeaderError(
                        message: zh
                            ? "列“\(raw)”与前面的列重复（都是 \(identity)）；只导入其中一列时，用 --map \(raw)=- 跳过这一列，或用 --map 把它对应到别的字段"
                            : "column '\(raw)' repeats '\(identity)'; to import one of them, skip this one with --map \(raw)=- or map it to another field with --map"
                    )
                }
            }
            columns.append(column)
            matches.append(match)
        }
        let result = HeaderMapping(columns: columns, header: header, matches: matches)
        let unknown = result.unknown
        if !unknown.isEmpty && !ignoreUnknown {
            let named = unknown.map { raw in
                let near = nearestName(to: raw, in: fields)
                return zh
                    ? "“\(raw)”" + (near.map { "（是否指“\($0)”？）" } ?? "")
                    : "'\(raw)'" + (near.map { " (did you mean '\($0)'?)" } ?? "")
            }
            let known = fields.map { "\($0.name) (\($0.zh), \($0.en))" }.joined(separator: zh ? "、" : ", ")
            throw HeaderError(
                message: zh
                    ? "未知的列 \(named.joined(separator: "、"))：可用的列是 id、deleted 和字段 \(known)；"
                        + "要把列对应到字段，加 --map 列名=字段；要跳过未知的列，加 --ignore-unknown-columns"
                    : "unknown column\(unknown.count == 1 ? "" : "s") \(named.joined(separator: ", ")): the columns are id, "
                        + "deleted and the fields \(known); to map one to a field, give --map COLUMN=FIELD; "
                        + "to skip unknown columns, give --ignore-unknown-columns")
        }
        guard columns.contains(where: { if case .field = $0 { true } else { false } }) else {
            throw HeaderError(
                message: zh
                    ? "表头中没有表单的字段（第一行是表头吗？）"
                    : "the header names no field of the form (is the first line a header?)")
        }
        return result
    }

    /// The field that `typed` stands for: a field name, or a field's label in
    /// `zh` or `en`, or with `aliases` one of its header aliases (trimmed,
    /// case-insensitive); names win over labels, labels over aliases. `nil`
    /// when it is none of them. Header aliases are for spreadsheet columns
    /// (`import`), not for `add NAME=VALUE`.
    package static func fieldName(for typed: String, in fields: [FieldNames], aliases: Bool = false) -> String? {
        let key = typed.trimmingCharacters(in: .whitespaces).lowercased()
        if let f = fields.first(where: { $0.name.lowercased() == key }) { return f.name }
        if let f = fields.first(where: { $0.zh.lowercased() == key || $0.en.lowercased() == key }) { return f.name }
        guard aliases else { return nil }
        return fields.first(where: { $0.aliases.contains { $0.lowercased() == key } })?.name
    }

    /// The field name or label nearest to a misspelt `typed`, for "did you
    /// mean" (``MatchKey/nearest(_:among:limit:)``): `brithday` → `birthday`,
    /// `Birthdya` → `Birthday`.
    static func nearestName(to typed: String, in fields: [FieldNames]) -> String? {
        // One spelling per key, the name before its labels: `birthday` and `Birthday`, or
        // `contact_method` and `Contact method`, would tie (MatchKey ignores case and separators).
        var names: [String] = []
        var keys = Set<String>()
        for f in fields {
            for n in [f.name, f.zh, f.en] {
                let key = String(n.lowercased().unicodeScalars.filter { !" _-.'".unicodeScalars.contains($0) })
                if keys.insert(key).inserted { names.append(n) }
            }
        }
        return MatchKey.nearest(typed, among: names)
    }

    /// Reads a `deleted` cell: `true`/`false`, `yes`/`no`, `1`/`0`, `是`/`否`, empty (false).
    /// - Returns: the flag, or `nil` for any other text.
    static func deletedFlag(_ text: String) -> Bool? {
        switch text.trimmingCharacters(in: .whitespaces).lowercased() {
        case "", "false", "no", "0", "否", "n", "f": return false
        case "true", "yes", "1", "是", "y", "t": return true
        default: return nil
        }
    }

    /// The Import element for one CSV record: `{"id"?, "fields", "deleted"?}`.
    /// Empty cells are left out (an absent optional field). A `deleted` cell that
    /// is not a flag is sent as it is, so the daemon rejects the row with a problem.
    /// With `spreadsheetSafe` (a file that starts with a byte order mark, as
    /// `export --excel` and spreadsheets write them), a cell that `--excel`
    /// neutralised (`'` before `=`, `+`, `-`, `@`, TAB or CR:
    /// ``CSVWriter/spreadsheetSafe(_:)``) is read without the `'`; a plain
    /// RFC 4180 file (no BOM, as `export --format csv` writes) keeps every cell
    /// as it is, so a name `'=1+1` exported plainly imports back unchanged.
    package static func importElement(_ record: [String], columns: [Column], spreadsheetSafe: Bool) -> JSON {
        var members: [(String, JSON)] = []
        var fields: [(String, JSON)] = []
        for (column, raw) in zip(columns, record) {
            let scalars = raw.unicodeScalars
            let cell =
                spreadsheetSafe && scalars.first == "'"
                    && scalars.dropFirst().first.map(CSVWriter.formulaStarts.contains) == true
                ? String(raw.dropFirst()) : raw
            switch column {
            case .id:
                let id = cell.trimmingCharacters(in: .whitespaces)
                if !id.isEmpty { members.append(("id", .string(id))) }
            case .deleted:
                if let flag = deletedFlag(cell) {
                    if flag { members.append(("deleted", .bool(true))) }
                } else {
                    members.append(("deleted", .string(cell)))
                }
            case .field(let name):
                if !cell.isEmpty { fields.append((name, .string(cell))) }
            case .ignored:
                break
            }
        }
        members.append(("fields", .object(fields)))
        return .object(members)
    }

    /// A header that `import` cannot map.
    package struct HeaderError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong with the header, in the locale asked for.
        package var message: String
        /// Whether the command line is at fault (a bad `--map`), not the file.
        package var usage: Bool
        /// A header error with its message; `usage` when the command line is at fault.
        package init(message: String, usage: Bool = false) {
            self.message = message
            self.usage = usage
        }
        /// The text shown to people.
        package var description: String { message }
    }
}

extension DataColumns {
    /// A stable id for an imported row that has none, so that importing the
    /// same file again adds nothing twice (the rows are then "unchanged").
    ///
    /// A name-based UUID version 8 (RFC 9562 §5.8) over the form name and the
    /// row's field cells as given (sorted by field name): two FNV-1a 64-bit
    /// hashes with different offset bases, each finished with the splitmix64
    /// mixer. Not a cryptographic hash: it only has to tell rows apart. Rows
    /// with identical cells get the same id, so a repeated row counts once.
    package static func derivedID(form: String, fields: [(String, String)]) -> String {
        var h1: UInt64 = 0xcbf2_9ce4_8422_2325
        var h2: UInt64 = 0x6c62_272e_07bb_0142
        func feed(_ bytes: some Sequence<UInt8>) {
            for b in bytes {
                h1 = (h1 ^ UInt64(b)) &* 0x0000_0100_0000_01b3
                h2 = (h2 ^ UInt64(b)) &* 0x0000_0100_0000_01b3
            }
            h1 = (h1 ^ 0xff) &* 0x0000_0100_0000_01b3
            h2 = (h2 ^ 0xfe) &* 0x0000_0100_0000_01b3
        }
        feed(form.utf8)
        for (name, value) in fields.sorted(by: { $0.0 < $1.0 }) {
            feed(name.utf8)
            feed(value.utf8)
        }
        func mix(_ x: UInt64) -> UInt64 {
            var z = x &+ 0x9e37_79b9_7f4a_7c15
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
        let a = mix(h1)
        let b = mix(h2 ^ a)
        var bytes =
            (0..<8).map { UInt8(truncatingIfNeeded: a >> (56 - 8 * UInt64($0))) }
            + (0..<8).map { UInt8(truncatingIfNeeded: b >> (56 - 8 * UInt64($0))) }
        bytes[6] = 0x80 | (bytes[6] & 0x0F)
        bytes[8] = 0x80 | (bytes[8] & 0x3F)
        return UUIDv7.format(bytes)
    }
}
