import EntryModel
import EntryProtocol
import EntryClient

/// The renderings of `list`: a terminal table and CSV.
enum ListOutput {
    /// The table: ID (full, so it can be pasted), name, birthday, country (with
    /// flag), region, contact (the phone or email that contact_method picks),
    /// updated (local time); plus a deleted column when deleted entries are listed,
    /// and the appointment (as stored: a wall-clock time, no zone) after the
    /// name when asked for (`list --appointment`, `--order appointment`).
    /// Display values are used, so the columns read in the requested locale.
    static func table(_ entries: [JSON], text: UIText, showDeleted: Bool, showAppointment: Bool = false) -> [String] {
        var columns = [
            TableColumn(text.id), TableColumn(text.name, maxWidth: 24), TableColumn(text.birthday),
            TableColumn(text.country, maxWidth: 24), TableColumn(text.region, maxWidth: 24),
            TableColumn(text.contact, maxWidth: 32), TableColumn(text.updated),
        ]
        if showAppointment { columns.insert(TableColumn(text.appointment), at: 1) }
        if showDeleted { columns.append(TableColumn(text.deleted)) }
        let rows = entries.map { entry -> [String] in
            let fields = EntryView.stringMap(entry["fields"])
            let display = EntryView.stringMap(entry["display"])
            func shown(_ name: String) -> String { display[name] ?? fields[name] ?? "" }
            var row = [
                entry["id"]?.stringValue ?? "", shown("name"), shown("birthday"), shown("country"),
                display["region"] ?? "", contact(fields: fields, shown: shown),
                Terminal.localTime(entry["updatedAt"]?.stringValue ?? ""),
            ]
            if showAppointment { row.insert(shown("appointment"), at: 1) }
            if showDeleted { row.append(entry["deleted"]?.boolValue == true ? text.yes : "") }
            return row
        }
        return TableRenderer(columns: columns).render(rows)
    }

    /// The contact the entry's `contact_method` names, else whichever of phone and email is set.
    static func contact(fields: [String: String], shown: (String) -> String) -> String {
        if let method = fields["contact_method"], !method.isEmpty, !shown(method).isEmpty { return shown(method) }
        return [shown("phone"), shown("email")].first { !$0.isEmpty } ?? ""
    }

    /// RFC 4180 CSV of canonical values. Columns: id, form, version, deleted,
    /// createdAt, updatedAt, then the fields in the form's order (`labels`),
    /// then any other field the entries hold, by name, its header marked as a
    /// field the form does not define (`unknown.note`:
    /// ``DataColumns/unknownHeader(_:labels:locale:)``, which import reads back).
    static func csv(_ entries: [JSON], labels: [(name: String, label: String)]) -> String {
        let meta = ["id", "form", "version", "deleted", "createdAt", "updatedAt"]
        let maps = entries.map { EntryView.stringMap($0["fields"]) }
        var seen = Set<String>()
        for map in maps { seen.formUnion(map.keys) }
        let known = labels.map(\.name)
        let unknown = seen.subtracting(known).sorted()
        let fieldNames = known + unknown
        let rows = zip(entries, maps).map { entry, fields in
            [
                entry["id"]?.stringValue ?? "", entry["form"]?.stringValue ?? "", entry["version"]?.stringValue ?? "",
                entry["deleted"]?.boolValue == true ? "true" : "false",
                entry["createdAt"]?.stringValue ?? "", entry["updatedAt"]?.stringValue ?? "",
            ]
                + fieldNames.map { fields[$0] ?? "" }
        }
        let headers = known + unknown.map { DataColumns.unknownHeader($0, labels: false, locale: .en) }
        return CSVWriter.document(header: meta + headers, rows: rows)
    }
}
