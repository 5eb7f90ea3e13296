import EntryModel
import EntryProtocol
import EntryClient

/// Text renderings of the daemon's `Entry` and `Change` objects for people.
enum EntryView {
    /// An entry as `key  value` lines: id, version, form, deleted, then each set
    /// field as `label  display value` in form order (fields the form does not
    /// list follow by name), then `region`, created, updated, synced-to.
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
        for (name, label) in orderedFields(Array(fields.keys), labels: labels) {
            pairs.append((label, display[name] ?? fields[name] ?? ""))
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

    /// One change as one line, for `watch`:
    /// `#SEQ TIME OP ENTRY by ACTOR: field=value, … (reason: …)`.
    static func changeLine(_ change: JSON) -> String {
        var line = "#\(change["seq"]?.intValue.map(String.init) ?? "?") \(Terminal.localTime(change["at"]?.stringValue ?? ""))"
        line += " \(change["op"]?.stringValue ?? "?") \(change["entry"]?.stringValue ?? "?") by \(change["actor"]?.stringValue ?? "?")"
        let fields = change["fields"]?.objectValue ?? []
        if !fields.isEmpty {
            line += ": " + fields.map { "\($0.0)=\($0.1.stringValue ?? $0.1.text)" }.joined(separator: ", ")
        }
        if let reason = change["reason"]?.stringValue, !reason.isEmpty { line += " (reason: \(reason))" }
        return DisplayWidth.sanitized(line)
    }

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
