import Foundation
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync

extension EntryService {
    /// `io.entryd.Entries.List(form?, filter?, order?, descending?, limit?,
    /// includeDeleted?, cursor?, locale?)`: one keyset page, `limit` capped at
    /// `max-page-size`, plus `cursor` when more may follow and `total`.
    /// - Throws: `FormNotFound`; `InvalidParameter(order|limit|cursor)`;
    ///   `ValidationFailed` for filter values (``applyFilter(_:to:locale:)``).
    func list(_ c: CallContext, _ p: Parameters) throws {
        let locale = try locale(p)
        var query = ListQuery()
        if let name = try p.optionalString("form") {
            guard forms.form(named: name) != nil else { throw EntryError.formNotFound(name) }
            query.form = name
        }
        if let filter = try p.optionalObject("filter") {
            try applyFilter(filter, to: &query, locale: locale)
        }
        if let order = try p.optionalString("order") {
            guard let o = ListOrder(rawValue: order) else { throw EntryError.invalidParameter("order") }
            query.order = o
        }
        query.descending = try p.optionalBool("descending") ?? query.order.defaultDescending
        // Names in zh sort by pinyin (ICU's zh collation), in en by code point (doc/design.md "Storage").
        query.nameCollation = locale == .zh ? .pinyin : .codePoint
        if let limit = try p.optionalInt("limit") {
            guard limit > 0 else { throw EntryError.invalidParameter("limit") }
            query.limit = Int(min(limit, Int64(limits.maxPageSize)))
        }
        query.includeDeleted = try p.optionalBool("includeDeleted") ?? false
        if let cursor = try p.optionalString("cursor") {
            guard
                let position = ListCursor.decode(
                    cursor, order: query.order, descending: query.descending,
                    collation: query.nameCollation)
            else {
                throw EntryError.invalidParameter("cursor")
            }
            query.after = position
        }
        let page = try store.list(query)
        let peerStates = configuredPeerStates()
        var members: [(String, JSON)] = [
            ("entries", .array(page.entries.map { entryJSON($0, locale: locale, peers: peerStates) }))
        ]
        if let next = page.next {
            members.append(
                (
                    "cursor",
                    .string(
                        ListCursor.encode(
                            next, order: query.order, descending: query.descending, collation: query.nameCollation))
                ))
        }
        members.append(("total", .int(Int64(page.total))))
        try reply(c, members)
    }

    /// Resolves the lenient filter values of doc/protocol.md `Filter` to canonical ones.
    /// - Throws: `ValidationFailed` naming each filter value that matches no
    ///   row (or several), with suggestions.
    func applyFilter(_ f: Parameters, to query: inout ListQuery, locale: EntryLocale) throws {
        var problems: [Problem] = []
        let reference = ReferenceData.shared
        if let text = try f.optionalString("country"), !text.isEmpty {
            switch reference.resolveCountry(text) {
            case .found(let c): query.country = c.alpha2
            case .ambiguous(let rows), .wrongParent(let rows):
                problems.append(FilterProblems.ambiguous("country", text, rows.map(\.alpha2), locale))
            case .notFound(let near):
                problems.append(FilterProblems.notInList("country", text, near.map(\.alpha2), locale))
            }
        }
        if let text = try f.optionalString("province"), !text.isEmpty {
            switch reference.resolveProvince(text) {
            case .found(let d): query.province = d.code
            case .ambiguous(let rows), .wrongParent(let rows):
                problems.append(FilterProblems.ambiguous("province", text, rows.map(\.code), locale))
            case .notFound(let near):
                problems.append(FilterProblems.notInList("province", text, near.map(\.code), locale))
            }
        }
        if let text = try f.optionalString("city"), !text.isEmpty {
            switch reference.resolveCity(text, province: query.province) {
            case .found(let d): query.city = d.code
            case .ambiguous(let rows):
                problems.append(FilterProblems.ambiguous("city", text, rows.map(\.code), locale))
            case .wrongParent(let rows):
                problems.append(FilterProblems.notInProvince(text, query.province ?? "", rows.map(\.code), locale))
            case .notFound(let near):
                // Stored entries may hold a retired city code (they stay valid): it filters too.
                if let retired = reference.retiredDivision(code: text.trimmingCharacters(in: .whitespaces)) {
                    if let province = query.province, retired.parentCode != province {
                        problems.append(FilterProblems.notInProvince(text, province, [], locale))
                    } else {
                        query.city = retired.code
                    }
                } else {
                    problems.append(FilterProblems.notInList("city", text, near.map(\.code), locale))
                }
            }
        }
        for key in ["bornFrom", "bornTo"] {
            guard let text = try f.optionalString(key), !text.isEmpty else { continue }
            guard let date = try? DateText.parseDate(MatchKey.foldFullWidth(text.trimmingCharacters(in: .whitespaces)))
            else {
                problems.append(FilterProblems.invalid(key, text, locale))
                continue
            }
            if key == "bornFrom" { query.bornFrom = date } else { query.bornTo = date }
        }
        // Appointments: a date (the whole day) or a date-time, read as Add reads them.
        for key in ["appointmentFrom", "appointmentTo"] {
            guard let text = try f.optionalString(key), !text.isEmpty else { continue }
            let cleaned = MatchKey.foldFullWidth(text.trimmingCharacters(in: .whitespaces))
            let bound: String
            if let date = try? DateText.parseDate(cleaned) {
                bound = date + (key == "appointmentFrom" ? " 00:00" : " 23:59")
            } else if let dateTime = try? DateText.parseDateTime(cleaned) {
                bound = dateTime
            } else {
                problems.append(FilterProblems.invalid(key, text, locale))
                continue
            }
            if key == "appointmentFrom" { query.appointmentFrom = bound } else { query.appointmentTo = bound }
        }
        if let from = query.appointmentFrom, let to = query.appointmentTo, from > to {
            problems.append(FilterProblems.reversed("appointmentFrom", "appointmentTo", from, to, locale))
        }
        if let text = try f.optionalString("text"), !FreeText.isLineSafe(text) {
            // No name holds one (Add refuses them), and PostgreSQL would refuse a NUL.
            problems.append(FilterProblems.controlCharacter("text", text, locale))
        } else if let text = try f.optionalString("text") {
            let trimmed = text.trimmingCharacters(in: .whitespaces).precomposedStringWithCanonicalMapping
            if !trimmed.isEmpty { query.text = foldedName(trimmed) }
        }
        if let text = try f.optionalString("search"), !text.isEmpty {
            do {
                query.search = try SearchKeys.prefixes(forQuery: text)
            } catch {
                problems.append(FilterProblems.badSearch(text, error, locale))
            }
        }
        if let text = try f.optionalString("updatedSince"), !text.isEmpty {
            if let ms = Timestamp.milliseconds(rfc3339: text) {
                query.updatedSince = Timestamp.rfc3339(milliseconds: ms)
            } else {
                problems.append(FilterProblems.invalid("updatedSince", text, locale))
            }
        }
        if !problems.isEmpty { throw EntryError.validationFailed(problems) }
    }
}

/// Problems for List filter values, which are not form fields.
enum FilterProblems {
    static func notInList(_ key: String, _ text: String, _ suggestions: [String], _ locale: EntryLocale) -> Problem {
        Problem(
            field: key, code: .notInList,
            message: locale == .zh
                ? "筛选条件 \(key) 的值“\(text)”不在列表中。" : "The \(key) filter '\(text)' is not in the list.",
            suggestions: suggestions)
    }

    /// A city filter outside the province filter (`parent-mismatch`), with the
    /// cities of that name elsewhere as suggestions.
    static func notInProvince(_ text: String, _ province: String, _ suggestions: [String], _ locale: EntryLocale)
        -> Problem
    {
        let name = ReferenceData.shared.displayName(forDivisionCode: province, locale: locale)
        return Problem(
            field: "city", code: .parentMismatch,
            message: locale == .zh
                ? "筛选条件 city 的值“\(text)”不属于所选省份“\(name)”。"
                : "The city filter '\(text)' is not in the chosen province (\(name)).",
            suggestions: suggestions)
    }

    /// A `search` text ``SearchKeys/prefixes(forQuery:)`` refuses: blank,
    /// with a control character, or too long (the message shows at most 64
    /// characters of it, control characters as `?`).
    static func badSearch(_ text: String, _ problem: SearchKeys.QueryProblem, _ locale: EntryLocale) -> Problem {
        let max = SearchKeys.maxQueryLength
        switch problem {
        case .empty:
            return Problem(
                field: "search", code: .required,
                message: locale == .zh
                    ? "搜索内容为空：请输入姓名、拼音、电话号码或电子邮箱。"
                    : "The search is empty: type a name, its pinyin, a phone number or an e-mail address.")
        case .tooLong:
            return Problem(
                field: "search", code: .tooLong,
                message: locale == .zh
                    ? "搜索内容超过 \(max) 个字符，请缩短。" : "The search is longer than \(max) characters; shorten it.")
        case .controlCharacter:
            let shown = String(
                String.UnicodeScalarView(
                    text.unicodeScalars.prefix(64).map { $0.properties.generalCategory == .control ? "?" : $0 }))
            return Problem(
                field: "search", code: .invalidFormat,
                message: locale == .zh
                    ? "搜索内容“\(shown)”含有控制字符（如换行），请删除。"
                    : "The search '\(shown)' has a control character (such as a line break); remove it.")
        }
    }

    /// A filter member's text with a control character or a line or paragraph
    /// separator (``FreeText/isLineSafe(_:)``), shown with those as `?`.
    static func controlCharacter(_ key: String, _ text: String, _ locale: EntryLocale) -> Problem {
        let shown = String(
            String.UnicodeScalarView(text.unicodeScalars.prefix(64).map { FreeText.isBreaking($0) ? "?" : $0 }))
        return Problem(
            field: key, code: .invalidFormat,
            message: locale == .zh
                ? "筛选条件 \(key) 的值“\(shown)”含有控制字符（如换行），请删除。"
                : "The \(key) filter '\(shown)' has a control character (such as a line break); remove it.")
    }

    static func ambiguous(_ key: String, _ text: String, _ suggestions: [String], _ locale: EntryLocale) -> Problem {
        Problem(
            field: key, code: .ambiguous,
            message: locale == .zh
                ? "筛选条件 \(key) 的值“\(text)”对应多项，请选择其一。" : "The \(key) filter '\(text)' matches several rows; pick one.",
            suggestions: suggestions)
    }

    /// A range whose start (`from`, the member `fromKey`) is after its end
    /// (`to`): nothing could match, so it is refused rather than answered empty.
    static func reversed(_ fromKey: String, _ toKey: String, _ from: String, _ to: String, _ locale: EntryLocale)
        -> Problem
    {
        Problem(
            field: fromKey, code: .outOfRange,
            message: locale == .zh
                ? "筛选条件 \(fromKey)（\(from)）晚于 \(toKey)（\(to)），请交换两者。"
                : "The \(fromKey) filter (\(from)) is after \(toKey) (\(to)); swap them.")
    }

    /// A filter value that is not a date (`bornFrom`, `bornTo`: read as a birthday is;
    /// `appointmentFrom`, `appointmentTo`: a date or a date-time) or
    /// a time (`updatedSince`: RFC 3339); the message shows the value (cut at
    /// 64 characters) and the form expected.
    static func invalid(_ key: String, _ text: String, _ locale: EntryLocale) -> Problem {
        let shown = text.count > 64 ? String(text.prefix(64)) + "…" : text
        let isTime = key == "updatedSince"
        let isAppointment = key.hasPrefix("appointment")
        // Dates are read leniently (as Add reads a birthday); say so by example.
        return Problem(
            field: key, code: .invalidFormat,
            message: locale == .zh
                ? "筛选条件 \(key) 的值“\(shown)”不是有效的\(isTime ? "时间，格式应为 2026-01-31T08:00:00Z" : isAppointment ? "日期或日期时间，例如 2027-03-09 或 2027-03-09 14:30" : "日期，例如 1990-05-17 或 1990年5月17日")。"
                : "The \(key) filter '\(shown)' is not a valid \(isTime ? "RFC 3339 time; use 2026-01-31T08:00:00Z" : isAppointment ? "date or date-time; write e.g. 2027-03-09 or 2027-03-09 14:30" : "date; write e.g. 1990-05-17 or 1990-5-17")."
        )
    }
}

/// The opaque List cursor: base64url of a JSON array `[order, descending, value, id]`,
/// the keyset position after the last entry of a page; a name order in pinyin
/// (zh) adds a fifth member, `"pinyin"`, so that a cursor is never read in
/// another order than the one it was made in.
enum ListCursor {
    /// The cursor text: base64url without padding (RFC 4648 §5).
    static func encode(
        _ position: (value: String, id: String), order: ListOrder, descending: Bool,
        collation: NameCollation = .codePoint
    ) -> String {
        var items: [JSON] = [.string(order.rawValue), .bool(descending), .string(position.value), .string(position.id)]
        if order == .name && collation == .pinyin { items.append(.string(collation.rawValue)) }
        let json = JSON.array(items)
        return Data(json.encoded).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The position, or `nil` when the cursor is malformed or was made for
    /// another order, direction or name collation.
    static func decode(
        _ cursor: String, order: ListOrder, descending: Bool,
        collation: NameCollation = .codePoint
    ) -> (value: String, id: String)? {
        var b64 = cursor.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        guard cursor.count < 4096, let data = Data(base64Encoded: b64), let json = try? JSON.parse(data),
            let items = json.arrayValue, items.count == (order == .name && collation == .pinyin ? 5 : 4),
            items.count == 4 || items[4].stringValue == collation.rawValue, items[0].stringValue == order.rawValue,
            items[1].boolValue == descending, let value = items[2].stringValue, let id = items[3].stringValue
        else { return nil }
        return (value, id)
    }
}
