import Foundation
import EntryModel
import EntryProtocol
import EntryClient

/// `entryctl conflicts` in words a front desk reads: the entry by its name,
/// birthday and form, the field by its label, each value as the form shows it
/// (a deleted register: 已删除 / 未删除, deleted / not deleted), and the time
/// and node of each side. Only existing calls: `Get` and `GetForm` once per
/// entry and form, `Check` for a value's display form; a call that fails
/// (an erased entry, a form this node lacks) leaves the ids as they are.
final class ConflictPeople {
    private let session: DaemonConnection
    private let locale: EntryLocale
    private var entries: [String: JSON?] = [:]
    private var forms: [String: JSON?] = [:]

    init(session: DaemonConnection, locale: EntryLocale) {
        self.session = session
        self.locale = locale
    }

    private func entry(_ id: String) -> JSON? {
        if let known = entries[id] { return known }
        let got = try? session.call(.entriesGet, params(("id", .string(id)), ("locale", session.locale)))["entry"]
        entries[id] = got
        return got
    }

    private func form(_ name: String) -> JSON? {
        if let known = forms[name] { return known }
        let got = try? session.call(.formsGetForm, params(("name", .string(name)), ("locale", session.locale)))["form"]
        forms[name] = got
        return got
    }

    /// The lines of conflict `c` (a `Conflict` of ListConflicts).
    func describe(_ c: JSON) -> [String] {
        func s(_ key: String) -> String { c[key]?.stringValue ?? "" }
        let say = { (zh: String, en: String) in Localized(zh: zh, en: en)(self.locale) }
        let entryID = s("entry")
        let entry = entry(entryID)
        let formName = entry?["form"]?.stringValue ?? ""
        let form = formName.isEmpty ? nil : form(formName)
        let field = s("field")
        let definition = form?["fields"]?.arrayValue?.first { $0["name"]?.stringValue == field }

        var who: [String] = []
        if let name = entry?["display"]?["name"]?.stringValue ?? entry?["fields"]?["name"]?.stringValue, !name.isEmpty {
            who.append(name)
        }
        if let birthday = entry?["fields"]?["birthday"]?.stringValue, !birthday.isEmpty {
            who.append(say("生日 \(birthday)", "born \(birthday)"))
        }
        if let title = form?["title"]?.stringValue, !title.isEmpty { who.append(title) }
        if entry?["deleted"]?.boolValue == true { who.append(say("当前已删除", "now deleted")) }
        who.append(entryID)

        let label: String
        if field == "deleted" {
            label = say("删除状态（deleted）", "deleted")
        } else if let text = definition?["label"]?.stringValue, !text.isEmpty, text != field {
            label = locale == .zh ? "\(text)（\(field)）" : "\(text) (\(field))"
        } else {
            label = field
        }

        func value(_ key: String) -> String {
            let raw = s(key)
            if field == "deleted" { return raw == "true" ? say("已删除", "deleted") : say("未删除", "not deleted") }
            if raw.isEmpty { return say("（空）", "(empty)") }
            if entry?["fields"]?[field]?.stringValue == raw, let shown = entry?["display"]?[field]?.stringValue {
                return shown
            }
            if !formName.isEmpty,
                let checked = try? session.call(
                    .formsCheck,
                    params(
                        ("form", .string(formName)), ("fields", .object([(field, .string(raw))])),
                        ("locale", session.locale))),
                let shown = checked["display"]?[field]?.stringValue, !shown.isEmpty
            {
                return shown
            }
            return FailureReport.describe(raw, locale: locale)
        }
        func side(_ key: String, _ hlc: String, _ node: String) -> String {
            let time = HLC(s(hlc)).map {
                Terminal.localTime(Date(timeIntervalSince1970: Double($0.milliseconds) / 1000))
            }
            let at = time.map { say("\($0) 写入", "written \($0)") } ?? ""
            let by = say("节点 …\(s(node).suffix(8))", "node …\(s(node).suffix(8))")
            return value(key) + "  "
                + say(
                    "（\([at, by].filter { !$0.isEmpty }.joined(separator: "，"))）",
                    "(\([at, by].filter { !$0.isEmpty }.joined(separator: ", ")))")
        }
        let resolved = c["resolved"]?.boolValue == true
        return [
            say(
                "冲突 \(s("id"))（\(resolved ? "已解决" : "未解决")）", "conflict \(s("id")) (\(resolved ? "resolved" : "open"))"),
            say("  条目：", "  entry: ") + who.joined(separator: locale == .zh ? "，" : ", "),
            say("  字段：", "  field: ") + label,
            say("  保留：", "  kept:  ") + side("kept", "keptHlc", "keptNode"),
            say("  落败：", "  lost:  ") + side("lost", "lostHlc", "lostNode"),
        ]
    }
}
