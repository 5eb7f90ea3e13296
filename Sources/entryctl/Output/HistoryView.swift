import EntryModel
import EntryProtocol
import EntryClient

/// A form's fields as `history` shows them: labels in the locale, and values as
/// people read them (`CN` → 中国, `440100` → 广州市, a choice's label).
struct FieldDisplay {
    /// (name, label) in navigation order.
    var labels: [(name: String, label: String)] = []
    /// Each field's wire `FieldType`.
    var types: [String: String] = [:]
    /// For each choice field, its options' labels by value.
    var choices: [String: [String: String]] = [:]

    /// The field's label, or its name when the form does not list it.
    func label(_ field: String) -> String { labels.first { $0.name == field }?.label ?? field }

    /// A stored value of `field` for people; an unknown code as it is.
    func display(_ field: String, _ value: String, locale: EntryLocale) -> String {
        let reference = ReferenceData.shared
        switch types[field] {
        case "country": return reference.countryLabel(alpha2: value, locale: locale) ?? value
        case "province", "city": return reference.displayName(forDivisionCode: value, locale: locale)
        case "choice": return choices[field]?[value] ?? value
        default: return value
        }
    }
}

/// `history` for people: each change as a heading and `label  old → new` lines.
enum HistoryView {
    /// The words of a heading, by locale.
    static func opName(_ op: String, _ locale: EntryLocale) -> String {
        guard locale == .zh else { return op }
        return ["create": "新建", "update": "修改", "delete": "删除", "restore": "恢复", "erase": "清除"][op] ?? op
    }

    /// The changes of one entry (oldest first, as `History` answers) as blocks:
    /// `#SEQ  TIME  OP  by ACTOR  node NODE` (time local, to the second), then
    /// each field it changed as `label  old → new` with labels and values in
    /// `locale` (a create: `label  value`), then its reason. The old value is
    /// the one the change's `base` HLC names, so a change that lost a conflict
    /// shows what it replaced on its own node (`…` when that change is not
    /// listed). Members of a field group the change wrote unchanged are left out.
    static func lines(_ changes: [JSON], names: FieldDisplay, locale: EntryLocale) -> [String] {
        var setBy: [String: [String: String]] = [:]  // hlc → fields it set
        for change in changes {
            if let hlc = change["hlc"]?.stringValue { setBy[hlc] = EntryView.stringMap(change["fields"]) }
        }
        let empty = locale == .zh ? "（空）" : "(empty)"
        return changes.flatMap { change -> [String] in
            func s(_ key: String) -> String { change[key]?.stringValue ?? "?" }
            let seq = change["seq"]?.intValue.map(String.init) ?? "?"
            let by = locale == .zh ? "操作人" : "by"
            let node = locale == .zh ? "节点" : "node"
            let head =
                "#\(seq)  \(Terminal.localTime(s("at")))  \(opName(s("op"), locale))  \(by) \(s("actor"))  \(node) \(s("node"))"
            var lines = [DisplayWidth.sanitized(head)]
            let fields = EntryView.stringMap(change["fields"])
            let base = EntryView.stringMap(change["base"])
            let ordered = EntryView.orderedFields(Array(fields.keys), labels: names.labels)
            let creates = change["op"]?.stringValue == "create"
            lines += Terminal.keyValueLines(
                ordered.compactMap { name, label in
                    func shown(_ value: String?) -> String {
                        guard let value, !value.isEmpty else { return empty }
                        return names.display(name, value, locale: locale)
                    }
                    let new = shown(fields[name])
                    guard let hlc = base[name], !hlc.isEmpty else {
                        // A field that was never set, cleared again (a hidden field the rule clears): nothing happened.
                        if !creates, (fields[name] ?? "").isEmpty { return nil }
                        return (label, creates ? new : "\(empty) → \(new)")
                    }
                    guard let old = setBy[hlc]?[name] else { return (label, "… → \(new)") }
                    // A field group is written whole (doc/design.md "Sync"); members the change left as they were are not shown.
                    return old == fields[name] && fields.count > 1 ? nil : (label, "\(shown(old)) → \(new)")
                }, indent: "    ")
            if let reason = change["reason"]?.stringValue, !reason.isEmpty {
                lines.append("    \(locale == .zh ? "原因" : "reason"): " + DisplayWidth.sanitized(reason))
            }
            return lines
        }
    }
}
