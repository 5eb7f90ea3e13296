import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryClient

/// Issue 15, schema drift: CSV columns of fields the form does not define, and
/// the store's Import of entries that hold them.
@Suite struct ClientDriftColumnsTests {
    static let fields = [DataColumns.FieldNames(name: "name", zh: "姓名", en: "Name")]

    @Test(
        "an export writes a marked column per unknown field (unknown.note; note（本表单没有此字段）, note (not in this form)), and import reads each back as that field"
    )
    func unknownColumns() throws {
        let entry = try JSON.parse(
            #"{"id": "x", "fields": {"name": "李雷", "note": "VIP"}, "deleted": false, "version": "v", "updatedAt": "t"}"#
        )
        for (labels, locale, header) in [
            (false, EntryLocale.en, "unknown.note"), (true, .zh, "note（本表单没有此字段）"),
            (true, .en, "note (not in this form)"),
        ] {
            let written = DataColumns.exportHeader(
                fields: Self.fields, unknown: ["note"], labels: labels, locale: locale, display: false)
            #expect(written[2] == header)
            let row = DataColumns.exportRow(entry, fields: Self.fields, unknown: ["note"], display: false)
            #expect(row[0...2] == ["x", "李雷", "VIP"])
            let (columns, unknown) = try DataColumns.resolve(header: written, fields: Self.fields)
            #expect(unknown.isEmpty)
            #expect(columns[2] == .field("note"))
            #expect(
                DataColumns.importElement(row, columns: columns, spreadsheetSafe: false)["fields"]?["note"]?.stringValue
                    == "VIP")
        }
        // A column that is both the field and its marked copy is a repeat.
        #expect(throws: DataColumns.HeaderError.self) {
            try DataColumns.resolve(
                header: ["name", "note", "unknown.note"],
                fields: Self.fields + [.init(name: "note", zh: "备注", en: "Note")])
        }
    }

    @Test(
        "Display renders a field the form does not define as it is and names it; a value not in the lists is named, a retired code is not"
    )
    func displayAndUnknown() throws {
        let form = try #require(FormRegistry.builtIn.form(named: "registration"))
        let fields = [
            "name": "Ann", "country": "ZZ", "contact_method": "wechat", "note": "VIP", "province": "370000",
            "city": "371200",
        ]
        let display = Display.render(form: form, fields: fields, locale: .en)
        #expect(display["note"] == "VIP" && display["contact_method"] == "wechat" && display["country"] == "ZZ")
        let unknown = Display.unknown(form: form, fields: fields)
        #expect(unknown.fields == ["note"])
        #expect(unknown.values == ["contact_method", "country"])
    }

    @Test(
        "Import never clears a field the form does not define: a row without it, or with the stored value, is unchanged; a new row with it is refused"
    )
    func importKeepsUnknown() throws {
        let place = TestDatabase()
        let store = try StoreKind.sqlite.open(place)
        defer { store.close() }
        let origin = WriteOrigin(actor: "t")
        let id = UUIDv7.generate(milliseconds: 1_800_000_000_000)
        _ = try store.create(
            form: "f", id: id, fields: ["name": "a", "note": "VIP"], layout: FieldLayout(), origin: origin)
        let problem = Problem(field: "note", code: .unknownField, message: "note is not a field")
        let rows = [
            ImportRow(index: 0, id: id, fields: ["name": "a"], deleted: false, problems: [], formFields: ["name"]),
            ImportRow(
                index: 1, id: id, fields: ["name": "a"], deleted: false, problems: [], unknown: ["note": "VIP"],
                unknownProblems: [problem], formFields: ["name"]),
            ImportRow(
                index: 2, id: id, fields: ["name": "a"], deleted: false, problems: [], unknown: ["note": "other"],
                unknownProblems: [problem], formFields: ["name"]),
            ImportRow(
                index: 3, id: nil, fields: ["name": "b"], deleted: false, problems: [], unknown: ["note": "VIP"],
                unknownProblems: [problem], formFields: ["name"]),
            ImportRow(index: 4, id: id, fields: ["name": "b"], deleted: false, problems: [], formFields: ["name"]),
        ]
        let result = try store.importEntries(
            form: "f", rows: rows, layout: FieldLayout(), atomic: false, origin: origin)
        #expect(result.unchanged == 2 && result.added == 0)
        #expect(result.rejected.map(\.index) == [2, 3, 4])
        #expect(result.rejected.first?.problems == [problem])
        #expect(try store.get(id)?.fields == ["name": "a", "note": "VIP"])
    }
}
