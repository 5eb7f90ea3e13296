import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// Form definitions, the registry, display and picker rows (Forms/).
@Suite struct FormsTests {
    let form = FormRegistry.builtIn.forms[0]

    @Test("the embedded registration form equals config/forms/registration.conf")
    func embeddedFormEqualsFile() throws {
        let file = try Data(contentsOf: repositoryRoot().appendingPathComponent("config/forms/registration.conf"))
        #expect(Data(EmbeddedForms.registration.utf8) == file)
    }

    @Test("the built-in registration form matches doc/design.md's table")
    func registrationForm() throws {
        #expect(form.name == FormRegistry.defaultFormName)
        #expect(form.title(in: .zh) == "登记" && form.title(in: .en) == "Registration")
        #expect(
            form.fields.map(\.name) == [
                "name", "birthday", "country", "province", "city", "contact_method", "phone", "email", "appointment",
            ])
        #expect(
            form.fields.map(\.type) == [.text, .date, .country, .province, .city, .choice, .phone, .email, .datetime])
        #expect(form.fields.map { $0.label(in: .zh) } == ["姓名", "生日", "国家", "省份", "城市", "联系方式", "手机号码", "邮箱", "预约时间"])
        #expect(form.fields.filter(\.required).map(\.name) == ["name", "birthday", "country", "contact_method"])
        #expect(form.field(named: "name")?.maxLength == 100)
        #expect(form.field(named: "birthday")?.min == "1900-01-01" && form.field(named: "birthday")?.max == "today")
        #expect(form.field(named: "province")?.requiredWhen == FieldCondition(field: "country", value: "CN"))
        #expect(form.field(named: "city")?.parent == "province")
        #expect(form.field(named: "phone")?.requiredWhen?.description == "contact_method=phone")
        #expect(form.field(named: "email")?.requiredWhen?.description == "contact_method=email")
        #expect(
            form.field(named: "appointment")?.minuteInterval == 30
                && form.field(named: "appointment")?.required == false)
        let options = try #require(form.field(named: "contact_method")?.options)
        #expect(options.map(\.value) == ["phone", "email"])
        #expect(options.map(\.labels) == [[.en: "Phone", .zh: "电话"], [.en: "Email", .zh: "邮箱"]])
        #expect(
            options[0].aliases.contains("手机") && options[0].aliases.contains("mobile")
                && options[1].aliases.contains("邮件"))
        #expect(try FormRegistry.builtIn.form(for: nil) == form)
        #expect(throws: EntryError.formNotFound("nope")) { try FormRegistry.builtIn.form(for: "nope") }
    }

    @Test("the definition hash ignores comments and layout but not content")
    func definitionHash() throws {
        let plain = try FormDefinition(
            ini: IniFile(text: "[form]\ntitle = T\n[field a]\ntype = text\n", path: "f.conf"))
        let commented = try FormDefinition(
            ini: IniFile(text: "; c\n[form]\ntitle=T ; x\n\n[field a]\n  type = text\n", path: "f.conf"))
        let changed = try FormDefinition(
            ini: IniFile(text: "[form]\ntitle = T\n[field a]\ntype = text\nrequired = yes\n", path: "f.conf"))
        #expect(plain.definitionHash == commented.definitionHash)
        #expect(plain.definitionHash != changed.definitionHash)
        #expect(form.definitionHash.count == 16 && form.definitionHash.allSatisfy(\.isHexDigit))
    }

    @Test(
        "bad form files are refused with file, line and key",
        arguments: [
            ("[form]\n[field a]\ntype = text\ncolour = red\n", 4, "colour"),
            ("[form]\n[field a]\ntype = number\n", 3, "type"),
            ("[form]\n[field a]\nlabel = A\n", 2, "type"),
            ("[form]\n[field a]\ntype = text\n[field a]\ntype = date\n", 4, nil),
            ("[form]\n[field a]\ntype = text\nrequired = maybe\n", 4, "required"),
            ("[form]\n[field a]\ntype = text\nrequired-when = b=x\n", 4, "required-when"),
            ("[form]\n[field c]\ntype = city\n", 2, "parent"),
            ("[form]\n[field c]\ntype = city\nparent = p\n", 4, "parent"),
            ("[form]\n[field p]\ntype = text\n[field c]\ntype = city\nparent = p\n", 6, "parent"),
            ("[form]\n[field d]\ntype = date\nmin = 1990-02-30\n", 4, "min"),
            ("[form]\n[field d]\ntype = datetime\nminute-interval = 7\n", 4, "minute-interval"),
            ("[form]\n[field d]\ntype = datetime\nnot-before = today\n", 4, "not-before"),
            ("[form]\n[field d]\ntype = date\nnot-before = now\n", 4, "not-before"),
            ("[form]\n[field t]\ntype = text\nmax-length = 0\n", 4, "max-length"),
            ("[form]\n[field t]\ntype = text\nmin = 1\n", 4, "min"),
            ("[form]\n[field k]\ntype = choice\n", 3, "options"),
            ("[form]\n[field k]\ntype = choice\noptions = a, b\noption.c = C\n", 5, "option.c"),
            (
                "[form]\n[field k]\ntype = choice\noptions = a\n[field t]\ntype = text\nrequired-when = k=z\n", 7,
                "required-when"
            ),
            ("[form]\nname = other\n[field t]\ntype = text\n", 2, "name"),
            ("[form]\n", 1, nil),
            ("[field t]\ntype = text\n", 0, nil),
            ("[fields]\ntype = text\n", 1, nil),
            ("[form]\n[field t]\ntype = text\ntype = date\n", 4, "type"),
            ("[form]\n[field k]\ntype = choice\noptions = a, b\noption.b.aliases = x, A\n", 5, "option.b.aliases"),
            (
                "[form]\n[field k]\ntype = choice\noptions = a, b\noption.a.aliases = x\noption.b.aliases = y, X\n", 6,
                "option.b.aliases"
            ),
            (
                "[form]\n[field k]\ntype = choice\noptions = a, b\noption.a = Same\noption.b.zh = same\n", 6,
                "option.b.zh"
            ),
            ("[form]\n[field k]\ntype = choice\noptions = a\noption.a.aliases = x, , y\n", 5, "option.a.aliases"),
            ("[form]\n[field k]\ntype = choice\noptions = a\noption.c.aliases = x\n", 5, "option.c.aliases"),
            ("[form]\n[field t]\ntype = text\noption.a.aliases = x\n", 4, "option.a.aliases"),
            ("[form]\n[field t]\ntype = text\naliases.zh = 电话, , 手机\n", 4, "aliases.zh"),
            ("[form]\n[field t]\ntype = text\naliases.fr = tél\n", 4, "aliases.fr"),
            (
                "[form]\n[field a]\ntype = text\nlabel = Name\n[field b]\ntype = text\naliases.en = NAME\n", 7,
                "aliases.en"
            ),
            (
                "[form]\n[field a]\ntype = text\naliases.zh = 电话\n[field b]\ntype = phone\naliases.zh = 手机, 电话\n", 7,
                "aliases.zh"
            ),
        ] as [(String, Int, String?)])
    func badDefinitions(text: String, line: Int, key: String?) {
        do {
            _ = try FormDefinition(ini: IniFile(text: text, path: "forms/f.conf"))
            Issue.record("accepted")
        } catch let error as FormDefinitionError {
            #expect(error.path == "forms/f.conf")
            #expect(error.line == line)
            #expect(error.key == key)
            #expect(!error.message.isEmpty)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test(
        "aliases.zh and aliases.en give a field other import headers; the wire sends both; they leave the form's version as it is"
    )
    func headerAliases() throws {
        let text = "[form]\ntitle = T\n[field phone]\ntype = phone\nlabel.zh = 手机号码\n"
        let plain = try FormDefinition(ini: IniFile(text: text, path: "f.conf"))
        let aliased = try FormDefinition(
            ini: IniFile(text: text + "aliases.zh = 电话, 手机 , 手机号\naliases.en = mobile, tel\n", path: "f.conf"))
        #expect(aliased.fields[0].headerAliases == [.zh: ["电话", "手机", "手机号"], .en: ["mobile", "tel"]])
        #expect(plain.fields[0].headerAliases.isEmpty)
        #expect(aliased.definitionHash == plain.definitionHash)
        // The built-in form has them: a spreadsheet's 电话 or 手机 column is the phone field.
        let builtIn = try #require(FormRegistry.builtIn.form(named: "registration")?.field(named: "phone"))
        #expect(
            builtIn.headerAliases[.zh]?.contains("电话") == true && builtIn.headerAliases[.zh]?.contains("手机") == true)
    }

    @Test("load reads *.conf in order and keeps the built-in form unless replaced")
    func loadDirectory() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("forms-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try "[form]\n[field b]\ntype = email\n".write(
            to: dir.appendingPathComponent("zeta.conf"), atomically: true, encoding: .utf8)
        try "[form]\n[field a]\ntype = text\n".write(
            to: dir.appendingPathComponent("alpha.conf"), atomically: true, encoding: .utf8)
        try "not a form".write(to: dir.appendingPathComponent("notes.txt"), atomically: true, encoding: .utf8)
        let registry = try FormRegistry.load(directory: dir.path)
        #expect(registry.forms.map(\.name) == ["registration", "alpha", "zeta"])
        #expect(registry.form(named: "alpha")?.fields.map(\.name) == ["a"])

        try "[form]\ntitle = Mine\n[field n]\ntype = text\n".write(
            to: dir.appendingPathComponent("registration.conf"), atomically: true, encoding: .utf8)
        #expect(try FormRegistry.load(directory: dir.path).form(named: "registration")?.title(in: .en) == "Mine")

        try "[form]\n[field a]\ntype text\n".write(
            to: dir.appendingPathComponent("alpha.conf"), atomically: true, encoding: .utf8)
        #expect(
            throws: FormDefinitionError(
                path: dir.appendingPathComponent("alpha.conf").path, line: 3,
                message: "expected '[section]' or 'key = value'")
        ) {
            try FormRegistry.load(directory: dir.path)
        }
        #expect(throws: FormDefinitionError.self) {
            try FormRegistry.load(directory: dir.appendingPathComponent("missing").path)
        }
    }

    @Test(
        "display renders flags, names, labels and the region",
        arguments: [
            (
                EntryLocale.zh,
                [
                    "country": "🇨🇳 中国", "province": "广东省", "city": "广州市", "contact_method": "电话",
                    "region": "广东省-广州市", "birthday": "1990-05-17", "phone": "+86 138 0013 8000",
                ]
            ),
            (
                .en,
                [
                    "country": "🇨🇳 China", "province": "Guangdong", "city": "Guangzhou", "contact_method": "Phone",
                    "region": "Guangzhou, Guangdong", "birthday": "1990-05-17", "phone": "+86 138 0013 8000",
                ]
            ),
        ])
    func display(locale: EntryLocale, expected: [String: String]) {
        let fields = [
            "country": "CN", "province": "440000", "city": "440100", "contact_method": "phone",
            "birthday": "1990-05-17", "phone": "+8613800138000",
        ]
        #expect(Display.render(form: form, fields: fields, locale: locale) == expected)
    }

    @Test("display of a province without city, and of a retired city")
    func displayRegion() {
        let hk = Display.render(form: form, fields: ["country": "HK", "province": "810000"], locale: .zh)
        #expect(hk["region"] == "香港特别行政区" && hk["country"] == "🇭🇰 中国香港")
        let laiwu = ["province": "370000", "city": "371200"]
        #expect(Display.render(form: form, fields: laiwu, locale: .zh)["region"] == "山东省-莱芜市（已撤销）")
        #expect(Display.render(form: form, fields: laiwu, locale: .en)["city"] == "Laiwu (retired)")
        #expect(Display.render(form: form, fields: [:], locale: .en).isEmpty)
        #expect(Display.region(province: nil, city: "440100", locale: .en) == "Guangzhou")
        #expect(Display.region(province: "", city: "", locale: .zh) == "")
        #expect(Display.render(form: form, fields: ["country": "ZZ"], locale: .en)["country"] == "ZZ")
    }

    @Test("options list picker rows, filtered by parent and query")
    func options() throws {
        let countries = try OptionRows.options(form: form, field: "country", locale: .zh)
        #expect(countries.count == 250)
        let cn = try #require(countries.first { $0.value == "CN" })
        #expect(cn.label == "中国" && cn.flag == "🇨🇳" && cn.aliases.contains("CHN") && cn.aliases.contains("China"))
        let cities = try OptionRows.options(form: form, field: "city", parent: "广东", locale: .en)
        #expect(
            cities.count == 21
                && cities.first
                    == OptionRow(
                        value: "440100", label: "Guangzhou", parent: "440000",
                        aliases: ["广州市", "广州", "guangzhou"])
        )
        #expect(try OptionRows.options(form: form, field: "city", parent: "810000", locale: .zh).isEmpty)
        #expect(try OptionRows.options(form: form, field: "city", locale: .zh).count == 450)
        #expect(
            try OptionRows.options(form: form, field: "city", query: "朝阳", locale: .zh).map(\.value) == [
                "110105", "211300",
            ])
        #expect(try OptionRows.options(form: form, field: "province", query: "gd", locale: .zh).map(\.label) == ["广东省"])
        #expect(
            try OptionRows.options(form: form, field: "city", query: "gz", locale: .zh).map(\.label) == [
                "赣州市", "甘孜藏族自治州", "广州市",
            ])
        #expect(
            try OptionRows.options(form: form, field: "city", query: "gz", locale: .en).map(\.label) == [
                "Ganzhou", "Guangzhou", "Garze",
            ])
        #expect(
            try OptionRows.options(form: form, field: "country", query: "gd", locale: .en).map(\.value) == [
                "GD", "GU", "GP", "GT",
            ])
        let china = try OptionRows.options(form: form, field: "country", query: "zg", limit: 1, locale: .zh)
        #expect(china.first?.label == "中国" && china.first?.aliases.contains("zhongguo") == true)
        #expect(try OptionRows.options(form: form, field: "country", query: "ch", limit: 2, locale: .en).count == 2)
        #expect(
            try OptionRows.options(form: form, field: "contact_method", query: "邮", locale: .en).map(\.value) == [
                "email"
            ])
        let mobile = try OptionRows.options(form: form, field: "contact_method", query: "手机", locale: .en)
        #expect(
            mobile.map(\.value) == ["phone"] && mobile[0].aliases.first == "电话" && mobile[0].aliases.contains("mobile"))
        #expect(
            try OptionRows.options(form: form, field: "contact_method", query: "mail", locale: .zh).map(\.label) == [
                "邮箱"
            ])
        #expect(throws: EntryError.fieldNotFound(form: "registration", field: "nope")) {
            try OptionRows.options(form: form, field: "nope", locale: .zh)
        }
        #expect(throws: EntryError.fieldNotFound(form: "registration", field: "birthday")) {
            try OptionRows.options(form: form, field: "birthday", locale: .zh)
        }
        #expect(throws: EntryError.invalidParameter("parent")) {
            try OptionRows.options(form: form, field: "city", parent: "Atlantis", locale: .zh)
        }
    }

    @Test(
        "a field definition is a value: changing a copy leaves the original and the form's field as they were; equal and hashed by every member"
    )
    func fieldDefinitionIsAValue() throws {
        let original = try #require(form.fields.first { $0.name == "phone" })
        var copy = original
        #expect(copy == original && copy.hashValue == original.hashValue)
        copy.labels[.zh] = "电话号码"
        copy.headerAliases[.zh] = ["手机"]
        copy.required = !original.required
        #expect(copy != original)
        #expect(original.labels[.zh] != "电话号码" && original.headerAliases[.zh] != ["手机"])
        #expect(form.fields.first { $0.name == "phone" } == original)
        // A field built member by member equals one built at once, and hashes alike.
        var rebuilt = FieldDefinition(name: original.name, type: original.type)
        rebuilt.labels = original.labels
        rebuilt.required = original.required
        rebuilt.requiredWhen = original.requiredWhen
        rebuilt.parent = original.parent
        rebuilt.minuteInterval = original.minuteInterval
        rebuilt.min = original.min
        rebuilt.max = original.max
        rebuilt.maxLength = original.maxLength
        rebuilt.options = original.options
        rebuilt.headerAliases = original.headerAliases
        rebuilt.phoneTypes = original.phoneTypes
        #expect(rebuilt == original && Set([rebuilt, original]).count == 1)
        rebuilt.headerAliases[.en] = ["Mobile no."]
        #expect(rebuilt != original && Set([rebuilt, original]).count == 2)
    }
}
