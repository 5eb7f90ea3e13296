import EntryModel
import EntryProtocol
import EntryClient

/// Text renderings of the daemon's `Entry` and `Change` objects for people.
enum EntryView {
    /// An entry as `key  value` lines: id, version, form, deleted, then each set
    /// field as `label  display value` in form order (fields the form does not
    /// list follow by name, marked `note (not in this form)` / `note（本表单没有此字段）`;
    /// a value that is no row of this node's lists is marked `fax (not in this
    /// form's lists)`), then `region`, created, updated, synced-to. The marks
    /// follow the entry's `unknownFields` and `unknownValues` (a field missing
    /// from `labels` counts as unknown too, for a daemon that sends neither).
    ///
    /// - Parameters:
    ///   - entry: a wire `Entry` object.
    ///   - labels: the form's (name, label) pairs; empty shows field names.
    static func lines(_ entry: JSON, labels: [(name: String, label: String)], text: UIText) -> [String] {
        let fields = stringMap(entry["fields"])
        let display = stringMap(entry["display"])
        var pairs: [(String, String)] = [
            (text.id, entry["id"]?.stringValue ?? ""),
            (text.version, entry["version"]?.stringValue ?? ""),
            (text.form, entry["form"]?.stringValue ?? ""),
            (text.deleted, entry["deleted"]?.boolValue == true ? text.yes : text.no),
        ]
        let known = Set(labels.map(\.name))
        let unknownFields = Set(strings(entry["unknownFields"]))
        let unknownValues = Set(strings(entry["unknownValues"]))
        for (name, label) in orderedFields(Array(fields.keys), labels: labels) {
            let value = display[name] ?? fields[name] ?? ""
            if unknownFields.contains(name) || (!labels.isEmpty && !known.contains(name)) {
                pairs.append((label + text.notInForm, value))
            } else {
                pairs.append((label, unknownValues.contains(name) ? value + text.notInList : value))
            }
        }
        pairs.append((text.region, display["region"] ?? ""))
        pairs.append((text.created, stamp(entry["createdAt"], entry["createdBy"])))
        pairs.append((text.updated, stamp(entry["updatedAt"], entry["updatedBy"])))
        let synced = entry["syncedTo"]?.arrayValue?.compactMap(\.stringValue) ?? []
        pairs.append((text.syncedTo, synced.joined(separator: ", ")))
        return Terminal.keyValueLines(pairs)
    }

    /// `names` in form order with their labels; names the form lacks follow, sorted, labelled by name.
    static func orderedFields(_ names: [String], labels: [(name: String, label: String)]) -> [(String, String)] {
        let present = Set(names)
        var ordered = labels.filter { present.contains($0.name) }.map { ($0.name, $0.label) }
        let known = Set(labels.map(\.name))
        ordered += names.filter { !known.contains($0) }.sorted().map { ($0, $0) }
        return ordered
    }

    /// One change as one line, for `watch`, in `locale`:
    /// `#SEQ TIME OP ENTRY by ACTOR: field=value, … (reason: …)`, or in zh
    /// `#SEQ TIME OP ENTRY 由 ACTOR：field=value, …（原因：…）`. The op, field
    /// names and values are the wire's, as `watch --json` prints them.
    static func changeLine(_ change: JSON, locale: EntryLocale) -> String {
        let zh = locale == .zh
        var line =
            "#\(change["seq"]?.intValue.map(String.init) ?? "?") \(Terminal.localTime(change["at"]?.stringValue ?? ""))"
        line +=
            " \(change["op"]?.stringValue ?? "?") \(change["entry"]?.stringValue ?? "?") \(zh ? "由" : "by") \(change["actor"]?.stringValue ?? "?")"
        let fields = change["fields"]?.objectValue ?? []
        if !fields.isEmpty {
            line +=
                (zh ? "：" : ": ") + fields.map { "\($0.0)=\($0.1.stringValue ?? $0.1.text)" }.joined(separator: ", ")
        }
        if let reason = change["reason"]?.stringValue, !reason.isEmpty {
            line += zh ? "（原因：\(reason)）" : " (reason: \(reason))"
        }
        return DisplayWidth.sanitized(line)
    }

    /// A wire `[]string` array (or `nil`) as strings (non-string elements skipped).
    static func strings(_ json: JSON?) -> [String] { json?.arrayValue?.compactMap(\.stringValue) ?? [] }

    /// A wire `[string]string` object as a dictionary (non-string members skipped).
    static func stringMap(_ json: JSON?) -> [String: String] {
        var map: [String: String] = [:]
        for (key, value) in json?.objectValue ?? [] { if let s = value.stringValue { map[key] = s } }
        return map
    }

    /// `2026-11-30 16:15:02 (alice)`, or what of it is known.
    private static func stamp(_ at: JSON?, _ by: JSON?) -> String {
        let time = at?.stringValue.map(Terminal.localTime) ?? ""
        guard let actor = by?.stringValue, !actor.isEmpty else { return time }
        return time.isEmpty ? actor : "\(time) (\(actor))"
    }
}
