import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntryServer

/// Possible duplicates (issue 33 item 4): the store's lookup on every store
/// kind, and who is told of them (Add, Check, Import by role).
@Suite struct DuplicateTests {
    let origin = WriteOrigin(actor: "tester")
    let layout = FieldLayout.registration

    /// A form with two phone fields and two e-mail fields.
    static let contacts = try! FormDefinition(
        ini: IniFile(
            text: """
                [form]
                name = contacts
                [field name]
                type = text
                [field birthday]
                type = date
                [field mobile]
                type = phone
                [field office]
                type = phone
                [field email]
                type = email
                [field work_email]
                type = email
                """, path: "contacts.conf"))

    static let registration = FormRegistry.builtIn.form(named: "registration")!

    @Test(
        "name with birthday, a phone in either of two fields, an e-mail in any case; deleted and excluded entries are not reported",
        arguments: StoreKind.allCases)
    func lookup(kind: StoreKind) throws {
        let db = TestDatabase()
        let store = try kind.open(db)
        defer { store.close() }
        let form = Self.contacts
        func add(_ fields: [String: String]) throws -> String {
            try store.create(form: form.name, id: nil, fields: fields, layout: form.layout, origin: origin).entry.id
        }
        let lei = try add(["name": "Li Lei", "birthday": "1990-05-17"])
        let office = try add(["name": "Front desk", "office": "+8613800138000"])
        let mail = try add(["name": "Han Meimei", "work_email": "Mei.Han@Example.com"])
        let gone = try add(["name": "Li Lei", "birthday": "1990-05-17", "mobile": "+8613800138000"])
        _ = try store.delete(id: gone, ifVersion: nil, layout: form.layout, origin: origin)
        let otherDay = try add(["name": "Li Lei", "birthday": "1991-05-17"])

        func found(_ fields: [String: String], excluding: String? = nil) throws -> [String: [DuplicateMatch]] {
            let list = try store.possibleDuplicates(form: form, fields: fields, excluding: excluding)
            return Dictionary(uniqueKeysWithValues: list.map { ($0.id, $0.matched) })
        }
        // The same folded name and birthday; another birthday is someone else.
        #expect(try found(["name": "LI LEI", "birthday": "1990-05-17"]) == [lei: [.nameBirthday]])
        #expect(try found(["name": "Li Lei"]).isEmpty, "a name alone is no match")
        // Names fold as pickers fold: Traditional and Simplified, full-width letters, spaces.
        let huang = try add(["name": "黃志明", "birthday": "1980-01-02"])
        #expect(try found(["name": "黄志明", "birthday": "1980-01-02"]) == [huang: [.nameBirthday]])
        #expect(try found(["name": "ＬＩ  ＬＥＩ", "birthday": "1990-05-17"]) == [lei: [.nameBirthday]])
        #expect(try found(["name": "Li Lei", "birthday": "1991-05-17"]) == [otherDay: [.nameBirthday]])
        // A phone held by another phone field of the stored entry.
        #expect(try found(["mobile": "+8613800138000"]) == [office: [.phone]])
        #expect(try found(["office": "+8613800138001"]).isEmpty, "another number")
        #expect(try found(["mobile": "+861380013800"]).isEmpty, "a part of a number is no match")
        // An e-mail without case, from either e-mail field.
        #expect(try found(["email": "mei.han@example.com"]) == [mail: [.email]])
        // Several at once, each with what matched, most recently updated first.
        let both = try store.possibleDuplicates(
            form: form, fields: ["name": "li lei", "birthday": "1990-05-17", "mobile": "+8613800138000"],
            excluding: nil)
        #expect(both.map(\.id) == [office, lei])
        #expect(both.map(\.name) == ["Front desk", "Li Lei"])
        // The entry being edited is never its own duplicate; the deleted one never counts.
        #expect(try found(["name": "Li Lei", "birthday": "1990-05-17"], excluding: lei).isEmpty)
        _ = try store.restore(id: gone, layout: form.layout, origin: origin)
        #expect(try found(["name": "Li Lei", "birthday": "1990-05-17"], excluding: lei) == [gone: [.nameBirthday]])
        let registrationMatch = try store.possibleDuplicates(
            form: Self.registration, fields: ["contact_method": "phone", "phone": "+8613800138000"], excluding: gone)
        #expect(registrationMatch.map(\.id) == [office], "entries of other forms count too")
    }

    @Test(
        "a value held by many: at most maxPossibleDuplicates named, the excluded entry never",
        arguments: StoreKind.allCases)
    func sharedByMany(kind: StoreKind) throws {
        let db = TestDatabase()
        let store = try kind.open(db)
        defer { store.close() }
        let form = Self.contacts
        var ids: [String] = []
        for i in 0..<(EntryStore.maxPossibleDuplicates + 10) {
            ids.append(
                try store.create(
                    form: form.name, id: nil, fields: ["name": "Desk \(i)", "office": "+8613800138000"],
                    layout: form.layout, origin: origin
                ).entry.id)
        }
        for excluding in [nil, ids.sorted()[0]] {
            let found = try store.possibleDuplicates(
                form: form, fields: ["mobile": "+8613800138000"], excluding: excluding)
            #expect(found.count == EntryStore.maxPossibleDuplicates)
            #expect(found.allSatisfy { $0.matched == [.phone] && $0.id != excluding && ids.contains($0.id) })
        }
    }

    @Test("many probes (an import) answer as one probe each, each other's rows included", arguments: StoreKind.allCases)
    func manyProbes(kind: StoreKind) throws {
        let db = TestDatabase()
        let store = try kind.open(db)
        defer { store.close() }
        let form = Self.contacts
        var ids: [String] = []
        for i in 0..<12 {
            let fields = ["name": "Person \(i % 6)", "birthday": "1990-01-0\(i % 6 + 1)", "email": "p\(i)@example.com"]
            ids.append(
                try store.create(form: form.name, id: nil, fields: fields, layout: form.layout, origin: origin).entry.id
            )
        }
        let probes = (0..<12).map { i in
            DuplicateProbe(
                fields: ["name": "Person \(i % 6)", "birthday": "1990-01-0\(i % 6 + 1)", "email": "P\(i)@EXAMPLE.com"],
                excluding: ids[i])
        }
        let many = try store.possibleDuplicates(form: form, probes: probes)
        #expect(many.count == 12)
        for i in 0..<12 {
            let one = try store.possibleDuplicates(form: form, probes: [probes[i]])[0]
            #expect(many[i] == one, "probe \(i)")
            #expect(one.map(\.id) == [ids[(i + 6) % 12]] && one.first?.matched == [.nameBirthday], "probe \(i)")
        }
        let bare = try store.possibleDuplicates(form: form, fields: ["email": "p3@example.com"], excluding: nil)
        #expect(bare.map(\.id) == [ids[3]] && bare.first?.matched == [.email])
    }

    /// The reply or the error of one call to `service` as a caller of `role`.
    static func call(_ service: EntryService, _ role: Role, _ method: Method, _ parameters: JSON) -> JSON? {
        MethodAccessTests.outcome(
            service, Caller(pid: 1, uid: 1234, gid: 1234, userName: "u", role: role), method, parameters
        )
        .reply
    }

    @Test("Add, Check and Import say duplicates to readers and writers only; a submit caller's replies are as before")
    func byRole() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 1)
        defer { store.close() }
        let service = EntryService(store: store, forms: .builtIn)
        let fields = JSON.stringMap([
            "name": "王芳", "birthday": "1990-05-17", "country": "CN", "province": "440000", "city": "440100",
            "contact_method": "phone", "phone": "138 0013 8000",
        ])
        let first = try #require(Self.call(service, .write, .entriesAdd, .object([("fields", fields)])))
        #expect(first["duplicates"] == nil, "the first of a person has none")
        let id = try #require(first["entry"]?["id"]?.stringValue)
        let second = try #require(Self.call(service, .write, .entriesAdd, .object([("fields", fields)])))
        let listed = try #require(second["duplicates"]?.arrayValue)
        #expect(listed.count == 1)
        #expect(listed[0]["id"]?.stringValue == id && listed[0]["form"]?.stringValue == "registration")
        #expect(listed[0]["name"]?.stringValue == "王芳")
        #expect(listed[0]["matched"]?.arrayValue?.compactMap(\.stringValue) == ["name-birthday", "phone"])
        let secondID = try #require(second["entry"]?["id"]?.stringValue)

        for role in [Role.read, .write, .admin] {
            let check = try #require(Self.call(service, role, .formsCheck, .object([("fields", fields)])))
            #expect(check["duplicates"]?.arrayValue?.count == 2, "\(role)")
            #expect(check["problems"]?.arrayValue?.isEmpty == true, "a duplicate is no problem")
            let editing = Self.call(service, role, .formsCheck, .object([("fields", fields), ("id", .string(id))]))
            #expect(editing?["duplicates"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [secondID])
        }
        // A kiosk: Check and Add exactly as before, no duplicates member at all.
        let kioskCheck = try #require(Self.call(service, .submit, .formsCheck, .object([("fields", fields)])))
        if case .object(let members) = kioskCheck { #expect(members.map(\.0) == ["fields", "display", "problems"]) }
        let kioskAdd = try #require(Self.call(service, .submit, .entriesAdd, .object([("fields", fields)])))
        if case .object(let members) = kioskAdd { #expect(members.map(\.0) == ["entry"]) }
        #expect(try store.counts().entries == 3)
        // A bad id is InvalidParameter, for every caller.
        let bad = MethodAccessTests.outcome(
            service, Caller(pid: 1, uid: 1, gid: 1, userName: "u", role: .submit), .formsCheck,
            .object([("fields", fields), ("id", .string("nope"))]))
        #expect(bad.error?.known == .invalidParameter && bad.error?.parameters["parameter"]?.stringValue == "id")

        // Import: the rows like stored entries or like each other, with their ids; others left out.
        let imported = try #require(
            Self.call(
                service, .write, .entriesImport,
                .object([
                    (
                        "entries",
                        .array([
                            .object([("fields", fields)]),
                            .object([("fields", GroupCommitSessionTests.fields("Someone Else", birthday: "1980-01-01"))]
                            ),
                            .object([
                                (
                                    "fields",
                                    .stringMap([
                                        "name": "Twin", "birthday": "2000-01-01", "country": "US",
                                        "contact_method": "email", "email": "twin@example.com",
                                    ])
                                )
                            ]),
                            .object([
                                (
                                    "fields",
                                    .stringMap([
                                        "name": "TWIN", "birthday": "2000-01-01", "country": "US",
                                        "contact_method": "email", "email": "other@example.com",
                                    ])
                                )
                            ]),
                        ])
                    )
                ])))
        #expect(imported["added"]?.intValue == 4, "\(imported)")
        let rows = try #require(imported["duplicates"]?.arrayValue)
        try #require(rows.compactMap { $0["index"]?.intValue } == [0, 1, 2, 3])
        // Row 1 shares the phone +8613800138000 with the others.
        #expect(rows[0]["duplicates"]?.arrayValue?.count == 4)
        #expect(rows[2]["duplicates"]?.arrayValue?.first?["id"]?.stringValue == rows[3]["id"]?.stringValue)
        #expect(rows[2]["duplicates"]?.arrayValue?.first?["matched"]?.arrayValue == [.string("name-birthday")])
    }
}
