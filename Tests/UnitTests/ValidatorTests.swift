import Foundation
import Testing
@testable import EntryModel
import EntryArguments
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

// Nested in FormsTests so that `swift test --filter 'Reference|Forms'` runs it.
extension FormsTests {
    /// Lenient parsing and validation of entries (Forms/Validator*.swift).
    @Suite struct ValidatorTests {
        let form = FormRegistry.builtIn.forms[0]
        let validator = Validator()
        /// 2026-11-30 12:00 UTC: already 2026-12-01 in UTC+14.
        let now = Date(timeIntervalSince1970: 1_796_040_000)

        /// A complete valid entry, to which each case adds or replaces fields.
        let base = [
            "name": "李雷", "birthday": "1990-05-17", "country": "CN", "province": "440000",
            "city": "440100", "contact_method": "phone", "phone": "+8613800138000",
        ]

        func check(_ changes: [String: String], locale: EntryLocale = .en) -> ValidationResult {
            validator.validate(form: form, input: base.merging(changes) { $1 }, locale: locale, now: now)
        }

        @Test(
            "lenient input maps to the canonical value",
            arguments: [
                ("name", "  Ｌｉ　Lei\u{301} ", "Ｌｉ　Leí"),
                ("birthday", "1990-05-17", "1990-05-17"), ("birthday", "1990/5/17", "1990-05-17"),
                ("birthday", "1990.5.17", "1990-05-17"), ("birthday", "19900517", "1990-05-17"),
                ("birthday", "1990年5月17日", "1990-05-17"), ("birthday", "1990年5月17", "1990-05-17"),
                ("birthday", "１９９０－０５－１７", "1990-05-17"), ("birthday", "2000-02-29", "2000-02-29"),
                ("birthday", "1900-01-01", "1900-01-01"), ("birthday", "2026-12-01", "2026-12-01"),
                ("appointment", "2027-03-09 14:30", "2027-03-09 14:30"),
                ("appointment", "2027-03-09T14:30", "2027-03-09 14:30"),
                ("appointment", "2027/3/9 9:00", "2027-03-09 09:00"),
                ("appointment", "2027年3月9日 14:30", "2027-03-09 14:30"),
                ("appointment", "2027年3月9日14:30", "2027-03-09 14:30"),
                ("appointment", "2027-03-09 02:30:00", "2027-03-09 02:30"),
                ("appointment", "２０２７-０３-０９　１４：３０", "2027-03-09 14:30"),
                ("country", "cn", "CN"), ("country", "CHN", "CN"), ("country", "156", "CN"), ("country", "China", "CN"),
                ("country", "中国", "CN"), ("country", "🇨🇳", "CN"), ("country", "ＣＮ", "CN"),
                ("province", "广东", "440000"), ("province", "广东省", "440000"), ("province", "Guangdong", "440000"),
                ("province", "CN-GD", "440000"), ("province", "440000", "440000"),
                ("city", "广州", "440100"), ("city", "广州市", "440100"), ("city", "Guangzhou", "440100"),
                ("city", "guangzhou", "440100"),
                ("contact_method", "PHONE", "phone"), ("contact_method", "电话", "phone"),
                ("contact_method", "Phone", "phone"),
                ("phone", "13800138000", "+8613800138000"), ("phone", "+86 138-0013-8000", "+8613800138000"),
                ("phone", "0086 138 0013 8000", "+8613800138000"), ("phone", "8613800138000", "+8613800138000"),
                ("phone", "＋８６ １３８００１３８０００", "+8613800138000"), ("phone", "+1 (212) 555-0100", "+12125550100"),
                ("email", "Li.Lei+x@Example.COM", "Li.Lei+x@example.com"),
                ("email", "李雷@例子.中国", "李雷@xn--fsqu00a.xn--fiqs8s"),
                // Found by trying the product as a new user would:
                ("birthday", "1990 年 5 月 17 日", "1990-05-17"), ("country", "中华人民共和国", "CN"), ("country", "中國", "CN"),
                ("phone", "+1 212 555 0123", "+12125550123"), ("phone", "19912345678", "+8619912345678"),
                // Dates written in words (issue 14): 号 for 日, Chinese numerals with 〇/零 and 十.
                ("birthday", "2000年01月01号", "2000-01-01"), ("birthday", "2000年1月1日", "2000-01-01"),
                ("birthday", "二〇〇〇年一月一日", "2000-01-01"), ("birthday", "二零零零年十二月三十一日", "2000-12-31"),
                ("birthday", "一九九〇年五月十七号", "1990-05-17"), ("birthday", "二〇〇〇年十月二十日", "2000-10-20"),
                ("birthday", "二〇〇〇 年 十一 月 十 日", "2000-11-10"), ("appointment", "二〇二七年三月九日 14:30", "2027-03-09 14:30"),
            ])
        func canonical(field: String, input: String, expected: String) {
            let result = check(field == "email" ? [field: input] : [field: input, "email": ""])
            #expect(result.problems == [])
            #expect(result.fields[field] == expected)
        }

        @Test(
            "a national number takes the calling code of the entry's country",
            arguments: [
                ("GB", "07400 123456", "+447400123456"), ("IT", "312 345 6789", "+393123456789"),
                ("US", "212-555-0100", "+12125550100"), ("AQ", "13800138000", "+8613800138000"),
            ])
        func nationalNumbers(country: String, input: String, expected: String) {
            let result = check(["country": country, "province": "", "city": "", "phone": input])
            #expect(result.problems == [])
            #expect(result.fields["phone"] == expected)
        }

        /// Input changes, the field of the one problem expected, and its code.
        static let problemCases: [([String: String], String, ProblemCode)] = [
            (["name": ""], "name", ProblemCode.required),
            (["phone": ""], "phone", .required),
            (["contact_method": "email"], "email", .required),
            (["province": "", "city": ""], "province", .required),
            (["city": ""], "city", .required),
            (["colour": "red"], "colour", .unknownField),
            (["birthday": "17/05/1990"], "birthday", .invalidFormat),
            (["birthday": "1990-02-30"], "birthday", .invalidFormat),
            (["birthday": "1991-02-29"], "birthday", .invalidFormat),
            (["appointment": "2027-03-09 25:00"], "appointment", .invalidFormat),
            (["appointment": "2027-03-09 14:30:15"], "appointment", .invalidFormat),
            (["appointment": "tomorrow"], "appointment", .invalidFormat),
            (["name": "Li\nLei"], "name", .invalidFormat),
            (["phone": "138-0013-800x"], "phone", .invalidFormat),
            (["phone": "12345"], "phone", .invalidFormat),
            (["phone": "11111111111"], "phone", .invalidFormat),
            (["phone": "12000000000"], "phone", .invalidFormat),
            (["phone": "+1 12345"], "phone", .invalidFormat),
            (["phone": "+1 000 000 0000"], "phone", .invalidFormat),
            (["name": "a\u{202E}b"], "name", .invalidFormat),
            (["province": "北京", "city": "北京"], "city", .notInList),
            (["phone": "+86 0123 4567"], "phone", .invalidFormat),
            (["email": "li@@example.com", "contact_method": "email"], "email", .invalidFormat),
            (["email": "li@localhost"], "email", .invalidFormat),
            (["email": "li..lei@example.com"], "email", .invalidFormat),
            (["country": "Atlantis"], "country", .notInList),
            (["province": "Gondor"], "province", .notInList),
            (["city": "Minas Tirith"], "city", .notInList),
            (["contact_method": "fax"], "contact_method", .notInList),
            (["phone": "+999 1234 5678"], "phone", .notInList),
            (["birthday": "1899-12-31"], "birthday", .outOfRange),
            (["birthday": "2026-12-02"], "birthday", .outOfRange),
            (["appointment": "2027-03-09 14:15"], "appointment", .notOnInterval),
            (["province": "广东", "city": "杭州"], "city", .parentMismatch),
            (["province": "810000", "city": "广州"], "city", .parentMismatch),
            (["name": String(repeating: "名", count: 101)], "name", .tooLong),
            (["phone": "+86 1380013800012345"], "phone", .tooLong),
            (["email": String(repeating: "a", count: 65) + "@example.com"], "email", .tooLong),
            (["country": "US", "province": "", "city": "朝阳", "phone": "+12125550100"], "city", .ambiguous),
            (["country": "刚果"], "country", .ambiguous),
        ]

        @Test("every problem code is produced, for the right field", arguments: problemCases)
        func problems(changes: [String: String], field: String, code: ProblemCode) {
            for locale in EntryLocale.allCases {
                let result = check(changes, locale: locale)
                #expect(result.problems.map(\.field) == [field])
                #expect(result.problems.map(\.code) == [code])
                #expect(result.problems.allSatisfy { !$0.message.isEmpty })
            }
        }

        @Test(
            "every ProblemCode the validator gives has a case in problemCases (exists and erased are Import's: BadInputTests, ErasureTests)"
        )
        func allCodesCovered() {
            #expect(Set(Self.problemCases.map(\.2)) == Set(ProblemCode.allCases).subtracting([.exists, .erased]))
        }

        @Test("messages name the field in the locale and say what to do")
        func messages() {
            #expect(check(["name": ""], locale: .zh).problems[0].message == "请填写姓名。")
            #expect(check(["name": ""], locale: .en).problems[0].message == "Name is required; please fill it in.")
            #expect(
                check(["birthday": "2026-12-02"], locale: .en).problems[0].message
                    == "Birthday must not be after 2026-12-01.")
            #expect(
                check(["province": "广东", "city": "杭州"], locale: .zh).problems[0].message
                    == "城市不属于所选省份“广东省”，请选择该省份的城市或更改省份。")
            #expect(check(["colour": "red"], locale: .zh).problems[0].message == "表单“registration”没有字段“colour”，请删去它。")
        }

        @Test("near matches are suggested")
        func suggestions() {
            #expect(check(["country": "Chna"]).problems.first?.suggestions.first == "CN")
            #expect(check(["city": "Guangzou"]).problems.first?.suggestions.first == "440100")
            #expect(check(["city": "广洲"]).problems.first?.suggestions.first == "440100")
            let chaoyang = check(["province": "", "city": "朝阳"], locale: .zh).problems
            #expect(chaoyang.map(\.code) == [.required, .ambiguous])  // no province for 中国, and no way to infer it
            #expect(chaoyang.last?.suggestions == ["110105", "211300"])
            #expect(chaoyang.last?.message == "城市有多个匹配：北京市-朝阳区、辽宁省-朝阳市，请选择其一。")
            #expect(check(["province": "广东", "city": "杭州"]).problems.first?.suggestions == ["330100"])
            #expect(check(["contact_method": "fax"]).problems.first?.suggestions == ["phone", "email"])
            // Ranked by how people write (issue 14, bug 8): abbreviations and names cut short first.
            #expect(check(["country": "PRCC"]).problems.first?.suggestions.first == "CN")
            #expect(check(["country": "Sth Africa"]).problems.first?.suggestions.first == "ZA")
            #expect(check(["country": "St Lucia"]).fields["country"] == "LC")  // CLDR's `St. Lucia`
            // A name two countries claim (data/COUNTRY-NAMES.md) is ambiguous, with both, never one silently.
            let korea = check(["country": "Korea"]).problems.first
            #expect(korea?.code == .ambiguous && korea?.suggestions == ["KP", "KR"])
            #expect(check(["province": "", "city": "guangz"]).problems.last?.suggestions.first == "440100")
        }

        @Test("a unique city without a province sets the province")
        func inferProvince() {
            let result = check(["province": "", "city": "杭州"])
            #expect(result.problems == [])
            #expect(result.fields["province"] == "330000" && result.fields["city"] == "330100")
            let chaoyang = check(["province": "辽宁", "city": "朝阳"])
            #expect(chaoyang.problems == [] && chaoyang.fields["city"] == "211300")
        }

        @Test("a region in Traditional characters is stored as its code and shown in Simplified")
        func traditionalRegion() {
            let result = check(["country": "中國", "province": "廣東省", "city": "廣州市"], locale: .zh)
            #expect(result.problems == [])
            #expect(
                result.fields["country"] == "CN" && result.fields["province"] == "440000"
                    && result.fields["city"] == "440100")
            #expect(Display.render(form: form, fields: result.fields, locale: .zh)["region"] == "广东省-广州市")
            let xinjiang = check(["province": "新疆維吾爾自治區", "city": "烏魯木齊"])
            #expect(xinjiang.problems == [] && xinjiang.fields["city"] == "650100")
            // A Traditional typo: the problem names the field and suggests the Simplified row.
            let typo = check(["province": "廣東", "city": "廣洲"], locale: .zh)
            #expect(typo.problems.map(\.field) == ["city"] && typo.problems.first?.suggestions.first == "440100")
        }

        @Test(
            "the plain Chinese names of Hong Kong, Macau and Taiwan are countries too",
            arguments: [
                ("香港", "HK"), ("澳门", "MO"), ("澳門", "MO"), ("台湾", "TW"), ("臺灣", "TW"),
            ])
        func regionNames(input: String, expected: String) {
            let result = check(["country": input, "province": "", "city": ""])
            #expect(result.problems == [])
            #expect(result.fields["country"] == expected)
        }

        @Test("a municipality given as its own city is refused with its districts as suggestions")
        func municipalityAsCity() {
            let result = check(["province": "北京", "city": "北京"], locale: .zh)
            let problem = result.problems.first { $0.field == "city" }
            #expect(problem?.code == .notInList)
            #expect(problem?.suggestions.first == "110101")
            #expect(problem?.suggestions.allSatisfy { $0.hasPrefix("11") } == true)
            #expect(problem?.message.contains("北京市") == true)
        }

        @Test("Hong Kong, Macau and Taiwan take an empty city", arguments: ["810000", "香港", "Macao", "台湾"])
        func provinceWithoutCities(province: String) {
            let result = check(["country": "CN", "province": province, "city": ""])
            #expect(result.problems == [])
            #expect(result.fields["city"] == nil)
        }

        @Test("province is optional outside China, and allowed")
        func foreignCountry() {
            let none = check(["country": "US", "province": "", "city": "", "phone": "+12125550100"])
            #expect(none.problems == [] && none.fields["province"] == nil)
            let resident = check(["country": "DE", "phone": "+4915123456789"])
            #expect(resident.problems == [] && resident.fields["province"] == "440000")
        }

        @Test("the canonical map omits empty optional fields and includes the rest")
        func canonicalMap() {
            let result = check(["email": "", "appointment": " "])
            #expect(result.fields == base)
            #expect(result.isValid)
        }

        @Test("update keeps a stored retired city valid but refuses a retired code as new input")
        func updateWithRetiredCity() {
            var stored = base
            stored["province"] = "370000"
            stored["city"] = "371200"
            let rename = validator.validate(form: form, input: ["name": "韩梅梅"], current: stored, locale: .zh, now: now)
            #expect(rename.problems == [])
            #expect(rename.fields["city"] == "371200" && rename.fields["name"] == "韩梅梅")

            let again = validator.validate(
                form: form, input: ["city": "371200"], current: stored, locale: .zh, now: now)
            #expect(again.problems.map(\.code) == [.notInList])
            #expect(again.problems.first?.suggestions == ["370100"])
            #expect(again.problems.first?.message == "城市“莱芜市”是已撤销的区划，请选择现行的城市。")
        }

        @Test("update: changing a choice away clears the fields it alone showed, unless the same call sets them")
        func updateClearsHiddenFields() {
            let toEmail = validator.validate(
                form: form, input: ["contact_method": "email", "email": "a@b.cn"],
                current: base, locale: .en, now: now)
            #expect(toEmail.problems == [])
            #expect(toEmail.fields["phone"] == nil && toEmail.fields["email"] == "a@b.cn")
            let keepBoth = validator.validate(
                form: form, input: ["contact_method": "email", "email": "a@b.cn", "phone": "13800138000"],
                current: base, locale: .en, now: now)
            #expect(keepBoth.fields["phone"] == "+8613800138000")
            let sameChoice = validator.validate(
                form: form, input: ["contact_method": "phone", "name": "韩梅梅"],
                current: base, locale: .en, now: now)
            #expect(sameChoice.fields["phone"] == "+8613800138000")
            let other = validator.validate(form: form, input: ["name": "韩梅梅"], current: base, locale: .en, now: now)
            #expect(other.fields["phone"] == "+8613800138000")
        }

        @Test(
            "update: a country other than China clears the province and the city below it, unless the same call sets them"
        )
        func updateAbroadClearsRegion() {
            #expect(base["province"] != nil && base["city"] != nil && base["country"] == "CN")
            let abroad = validator.validate(form: form, input: ["country": "US"], current: base, locale: .en, now: now)
            #expect(abroad.problems == [])
            #expect(
                abroad.fields["country"] == "US" && abroad.fields["province"] == nil && abroad.fields["city"] == nil)
            let kept = validator.validate(
                form: form, input: ["country": "US", "province": "广东"], current: base, locale: .en, now: now)
            #expect(kept.fields["province"] == "440000")
            let stays = validator.validate(form: form, input: ["name": "韩梅梅"], current: base, locale: .en, now: now)
            #expect(stays.fields["province"] == base["province"] && stays.fields["city"] == base["city"])
        }

        @Test("update holds stored values to changed neighbours")
        func updateCrossField() {
            let moved = validator.validate(form: form, input: ["province": "浙江"], current: base, locale: .en, now: now)
            #expect(moved.problems.map(\.field) == ["city"] && moved.problems.map(\.code) == [.parentMismatch])
            let both = validator.validate(
                form: form, input: ["province": "浙江", "city": "杭州"], current: base, locale: .en, now: now)
            #expect(both.problems == [] && both.fields["city"] == "330100")
            let toEmail = validator.validate(
                form: form, input: ["contact_method": "email"], current: base, locale: .en, now: now)
            #expect(toEmail.problems.map(\.field) == ["email"] && toEmail.problems.map(\.code) == [.required])
            let cleared = validator.validate(
                form: form, input: ["appointment": "", "email": "a@b.cn"], current: base, locale: .en, now: now)
            #expect(cleared.problems == [] && cleared.fields["email"] == "a@b.cn")
        }

        @Test("clearing the province alone under a stored city is refused, not undone in silence")
        func clearingProvinceUnderStoredCity() {
            #expect(base["city"] != nil && base["province"] != nil)
            let alone = validator.validate(form: form, input: ["province": ""], current: base, locale: .en, now: now)
            #expect(alone.problems.map(\.field) == ["province"] && alone.problems.map(\.code) == [.required])
            #expect(alone.problems.first?.message.contains("cannot be cleared alone") == true)
            let zh = validator.validate(form: form, input: ["province": " "], current: base, locale: .zh, now: now)
            #expect(zh.problems.first?.message.hasPrefix("不能只清空") == true)
            // Clearing both, or leaving the province out (the city sets it), is fine.
            let both = validator.validate(
                form: form, input: ["province": "", "city": "", "country": "US"], current: base, locale: .en, now: now)
            #expect(both.problems == [] && both.fields["province"] == nil && both.fields["city"] == nil)
            var cityOnly = base
            cityOnly["province"] = nil
            let inferred = validator.validate(
                form: form, input: ["name": "Li"], current: cityOnly, locale: .en, now: now)
            #expect(inferred.problems == [] && inferred.fields["province"] == base["province"])
        }

        @Test("not-before = now: now in UTC−12, the registration form's appointment")
        func notBeforeNow() throws {
            #expect(form.field(named: "appointment")?.notBefore == "now")
            // 2026-11-30 12:00 UTC is 2026-11-30 00:00 in UTC−12.
            #expect(DateText.earliestNow(at: now) == "2026-11-30 00:00")
            #expect(DateText.earliestNow(at: Date(timeIntervalSince1970: 0)) == "1969-12-31 12:00")
            #expect(check(["appointment": "2026-11-30 00:00"]).problems == [])
            let past = check(["appointment": "2026-11-29 23:30"])
            #expect(past.problems.map(\.field) == ["appointment"] && past.problems.map(\.code) == [.outOfRange])
            #expect(
                past.problems.first?.message == "Appointment is in the past; choose a time from 2026-11-30 00:00 on.")
            let zh = check(["appointment": "2020-01-01 09:00"], locale: .zh)
            #expect(zh.problems.first?.message == "预约时间已经过去，请选择 2026-11-30 00:00 之后的时间。")
            // Update: a stored past value is kept, sent again or not; a new past one is refused.
            var stored = base
            stored["appointment"] = "2020-01-01 09:00"
            let other = validator.validate(form: form, input: ["name": "Li"], current: stored, locale: .en, now: now)
            #expect(other.problems == [] && other.fields["appointment"] == "2020-01-01 09:00")
            let same = validator.validate(
                form: form, input: ["appointment": "2020/1/1 9:00"], current: stored, locale: .en, now: now)
            #expect(same.problems == [])
            let moved = validator.validate(
                form: form, input: ["appointment": "2020-01-02 09:00"], current: stored, locale: .en, now: now)
            #expect(moved.problems.map(\.code) == [.outOfRange])
            let cleared = validator.validate(
                form: form, input: ["appointment": ""], current: stored, locale: .en, now: now)
            #expect(cleared.problems == [] && cleared.fields["appointment"] == nil)
            // A form without the key takes any date-time.
            let plain = try FormDefinition(ini: IniFile(text: "[form]\n[field at]\ntype = datetime\n", path: "p.conf"))
            #expect(
                validator.validate(form: plain, input: ["at": "2000-01-01 00:00"], locale: .en, now: now).problems == []
            )
        }

        @Test("a misspelt field name is refused with the nearest field names in the message")
        func misspeltFieldSuggested() {
            let result = check(["nmae": "张三", "brithday": "1990-01-01", "zzzzzzzz": "1"])
            let byField = Dictionary(result.problems.map { ($0.field, $0) }, uniquingKeysWith: { a, _ in a })
            #expect(byField["nmae"]?.code == .unknownField)
            #expect(
                byField["nmae"]?.message.hasSuffix("Did you mean name?") == true,
                "\(String(describing: byField["nmae"]))")
            #expect(byField["brithday"]?.message.hasSuffix("Did you mean birthday?") == true)
            #expect(byField["zzzzzzzz"]?.message.contains("Did you mean") == false)
            #expect(result.problems.allSatisfy { $0.suggestions.isEmpty || $0.code != .unknownField })
            #expect(Validator.nearFieldNames("nmae", in: form) == ["name"])
        }

        @Test("problems come in form order, unknown fields last")
        func problemOrder() {
            let result = check(["zzz": "1", "aaa": "2", "email": "x", "name": "", "country": "Atlantis"])
            #expect(result.problems.map(\.field) == ["name", "country", "email", "aaa", "zzz"])
        }

        @Test(
            "a contact method given by a synonym in either language resolves to its option",
            arguments: [
                ("手机", "phone"), ("手机号", "phone"), ("Mobile", "phone"), ("cell", "phone"), ("电话", "phone"),
                ("TEL", "phone"),
                ("ｍｏｂｉｌｅ", "phone"), ("邮件", "email"), ("邮箱", "email"), ("E-Mail", "email"), ("mail", "email"),
                ("电子邮件", "email"),
            ])
        func contactMethodSynonyms(input: String, expected: String) {
            let result = check(["contact_method": input, "email": "li@example.com"])
            #expect(result.problems == [])
            #expect(result.fields["contact_method"] == expected)
        }

        @Test("a form without aliases keeps its definition hash; aliases are content")
        func aliasesInHash() throws {
            let plain = try FormDefinition(
                ini: IniFile(text: "[form]\n[field k]\ntype = choice\noptions = a\n", path: "f.conf"))
            let aliased = try FormDefinition(
                ini: IniFile(
                    text: "[form]\n[field k]\ntype = choice\noptions = a\noption.a.aliases = x\n", path: "f.conf"))
            #expect(plain.definitionHash != aliased.definitionHash)
            #expect(
                aliased.fields[0].options == [ChoiceOption(value: "a", labels: [.en: "a", .zh: "a"], aliases: ["x"])])
        }

        @Test("impossible dates in Chinese numerals get the refusal of other impossible dates, in zh and en")
        func chineseNumeralDatesRefused() {
            for locale in EntryLocale.allCases {
                let impossible = check(["birthday": "二〇〇〇年二月三十日"], locale: locale).problems
                #expect(impossible.map(\.code) == [.invalidFormat])
                #expect(
                    impossible.first?.message
                        == check(["birthday": "2000-02-30"], locale: locale).problems.first?.message)
                for unreadable in ["二〇〇〇年十十月一日", "二〇〇〇年零十月一日", "二〇〇〇年一二十月一日", "二〇〇〇年一月一号日"] {
                    #expect(
                        check(["birthday": unreadable], locale: locale).problems.first?.message
                            == check(["birthday": "17/05/1990"], locale: locale).problems.first?.message,
                        "\(unreadable)")
                }
            }
            #expect(check(["birthday": "二〇〇〇年二月三十日"], locale: .zh).problems.first?.message == "生日：没有这一天，请检查月份和日期。")
        }

        @Test(
            "a phone number a spreadsheet wrote in scientific notation is refused with why and what to do",
            arguments: [
                "1.38001E+10", "1.38001e+10", "1,38001E+10", "8.6138E12", "+8.6138E+12", " 1.38E+10 ",
            ])
        func phoneInScientificNotation(input: String) {
            let en = check(["phone": input]).problems
            #expect(en.map(\.code) == [.invalidFormat])
            #expect(
                en.first?.message
                    == "Phone is in scientific notation (like 1.38001E+10): a spreadsheet took the number for a quantity and its last digits are lost; format the column as text and export it again."
            )
            #expect(
                check(["phone": input], locale: .zh).problems.first?.message
                    == "手机号码是科学计数法（如 1.38001E+10）：表格软件把号码当成了数字，末尾几位已经丢失；请把该列设为文本格式后重新导出。")
        }

        @Test(
            "other letters in a phone number keep the message about allowed characters",
            arguments: ["138E", "E+10", "1.3.8E+10", "138-0013-800x"])
        func phoneLettersNotScientific(input: String) {
            #expect(check(["phone": input]).problems.first?.message.hasPrefix("Phone may contain only digits") == true)
        }

        @Test("today is taken in UTC+14, from the given time")
        func todayInUTCPlus14() {
            #expect(DateText.latestToday(at: now) == "2026-12-01")
            #expect(DateText.latestToday(at: Date(timeIntervalSince1970: 1_796_040_000 - 13 * 3600)) == "2026-11-30")
        }

        @Test(
            "a control character (NUL too) in a value of a list, date, phone or e-mail field is refused, never cut short by a C library"
        )
        func controlCharactersInValues() {
            for (field, value) in [
                ("email", "boss@exa\u{0}mple.com"), ("email", "boss@bank.com\u{0}.attacker.net"),
                ("phone", "138\u{0}00138000"), ("country", "CN\u{0}"), ("city", "广州\u{1F}"),
                ("birthday", "1990-05\u{85}-17"), ("contact_method", "email\u{7F}"),
            ] {
                var changes = ["contact_method": "email", "phone": "", "email": "a@example.com"]
                changes[field] = value
                let result = check(changes)
                #expect(
                    result.problems.map { [$0.field, $0.code.rawValue] } == [[field, "invalid-format"]],
                    "\(field): \(result.problems)")
                #expect(result.problems.first?.message.contains("control characters") == true, "\(result.problems)")
            }
        }

        @Test("a list field's value longer than any name is too long before it is looked up")
        func hugeListValue() {
            let huge = String(repeating: "中国", count: 200)
            for field in ["country", "province", "city", "email", "phone"] {
                var changes = ["contact_method": "email", "phone": "", "email": "a@example.com"]
                changes[field] = huge
                let result = check(changes)
                #expect(
                    result.problems.map { [$0.field, $0.code.rawValue] } == [[field, "too-long"]],
                    "\(field): \(result.problems)")
            }
        }
    }
}

/// The fast paths for canonical input give what the general rules give.
@Suite struct ValidatorFastPathTests {
    @Test("today by day arithmetic equals the Gregorian calendar in UTC+14, across centuries and leap days")
    func todayMatchesCalendar() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 14 * 3600)!
        var rng = SplitMix64(seed: 7)
        // Random instants from 1601 to 2400, plus the edges of leap days and of the epoch.
        var instants = (0..<5_000).map { _ in Double(Int64(rng.next() % 25_000_000_000) - 11_600_000_000) }
        instants += [0, -1, 951_782_400 - 50_400, 951_868_800 - 50_400 - 1, 4_107_542_400, -2_203_891_200]
        for t in instants {
            let date = Date(timeIntervalSince1970: t)
            let c = calendar.dateComponents([.year, .month, .day], from: date)
            let expected = String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
            #expect(DateText.latestToday(at: date) == expected, "at \(t)")
        }
    }

    @Test("canonical dates: real days pass unchanged, impossible ones are refused as by the general parser")
    func canonicalDates() throws {
        for text in ["2024-02-29", "2000-02-29", "1990-05-17", "0001-01-01", "9999-12-31"] {
            #expect(try DateText.parseDate(text) == text)
        }
        for text in ["2023-02-29", "1900-02-29", "2024-04-31", "2024-13-01", "2024-00-10", "2024-01-00", "0000-01-01"] {
            #expect(throws: FieldFailure.self) { try DateText.parseDate(text) }
            // The general parser (spaces around the parts skip the fast path) agrees.
            let spaced = text.replacingOccurrences(of: "-", with: " - ")
            #expect(throws: FieldFailure.self) { try DateText.parseDate(spaced) }
        }
        #expect(try DateText.parseDate("2024 - 2 - 9") == "2024-02-09")
    }

    @Test("strings the NFC quick path passes are NFC and trimmed already")
    func nfcQuickPath() {
        var rng = SplitMix64(seed: 5)
        // Latin-1, Latin Extended, IPA, spacing modifiers, CJK, spaces; then marks and compatibility ideographs.
        let pools: [ClosedRange<UInt32>] = [
            0x20...0x2FF, 0x4E00...0x9FFF, 0x3400...0x4DBF, 0x300...0x36F, 0xF900...0xFAFF, 0xAC00...0xAC10,
        ]
        var passed = 0
        for _ in 0..<20_000 {
            let length = 1 + Int(rng.next() % 6)
            let scalars = (0..<length).compactMap { _ -> Unicode.Scalar? in
                let pool = pools[Int(rng.next() % UInt64(pools.count))]
                return Unicode.Scalar(pool.lowerBound + UInt32(rng.next() % UInt64(pool.count)))
            }
            let s = String(String.UnicodeScalarView(scalars))
            if Validator.isNFCWithoutOuterSpace(s) {
                passed += 1
                #expect(
                    s.precomposedStringWithCanonicalMapping.trimmingCharacters(in: .whitespacesAndNewlines) == s,
                    "\(s.unicodeScalars.map { String($0.value, radix: 16) })")
            }
        }
        #expect(passed > 1_000)
        #expect(!Validator.isNFCWithoutOuterSpace("e\u{301}"))
        #expect(!Validator.isNFCWithoutOuterSpace(" 张三"))
        #expect(Validator.isNFCWithoutOuterSpace("张三 Zoë"))
    }

    @Test("ASCII match keys equal the keys built with Unicode's tables")
    func asciiKeys() {
        var rng = SplitMix64(seed: 11)
        let alphabet = Array("aZ09 -'`.,_()\t\n!#~É".unicodeScalars.filter(\.isASCII))
        for _ in 0..<5_000 {
            let length = Int(rng.next() % 12)
            let s = String(
                String.UnicodeScalarView((0..<length).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }))
            #expect(NearestName.asciiKey(s) == MatchKey.unicodeKey(s), "for \(s.debugDescription)")
        }
        #expect(NearestName.asciiKey("Türkiye") == nil)
        #expect(MatchKey("Côte d'Ivoire") == MatchKey("cote divoire"))
        #expect(MatchKey("CN-GD").text == "cngd")
    }

    @Test("canonical phone numbers and option values pass unchanged; text checks keep refusing hidden characters")
    func canonicalValues() throws {
        let name = { (code: String) in code }
        #expect(
            try PhoneNumber.parse("+8613812345678", region: "CN", regionName: name, locale: .en) == "+8613812345678")
        #expect(
            try PhoneNumber.parse("+86 138-1234-5678", region: "CN", regionName: name, locale: .en) == "+8613812345678")
        for bad in ["a\u{0}b", "a\u{85}b", "a\u{2028}b", "a\u{2029}b", "a\u{202E}b", "x\u{FEFF}", "\u{9F}"] {
            #expect(throws: FieldFailure.self) { try ValidationRun.text(bad, maxLength: nil) }
        }
        #expect(try ValidationRun.text("Zoë\u{200D}", maxLength: 4) == "Zoë\u{200D}")
        #expect(throws: FieldFailure.self) { try ValidationRun.text("张三丰", maxLength: 2) }
        #expect(try ValidationRun.text("张三", maxLength: 2) == "张三")
    }

    @Test("a text of invisible characters alone is refused; real names with joiners and marks pass")
    func invisibleText() throws {
        for invisible in ["\u{3164}", "\u{1160}", "\u{301}", "\u{3164}\u{3164}", "\u{200D}", "\u{FE0F}"] {
            do {
                _ = try ValidationRun.text(invisible, maxLength: nil)
                Issue.record("accepted \(invisible.unicodeScalars.map { String($0.value, radix: 16) })")
            } catch {
                #expect(error.code == .invalidFormat && error.reason == .noVisibleCharacters)
            }
        }
        for name in ["Zoë\u{200D}", "e\u{301}", "李雷", "👍🏽", "O'Brien", "ㅤ李", "\u{E000}", "ا"] {
            #expect(try ValidationRun.text(name, maxLength: nil) == name)
        }
        let validator = Validator()
        let form = try #require(FormRegistry.builtIn.form(named: FormRegistry.defaultFormName))
        let result = validator.validate(form: form, input: ["name": "\u{3164}"], locale: .en)
        #expect(
            result.problems.first { $0.field == "name" }?.message
                == "Name has only invisible characters; enter something visible.")
    }

    @Test("a text is limited in scalars and bytes as well as characters: stacked combining marks are refused")
    func combiningMarkFlood() throws {
        // 5 base letters with 1,000,000 combining marks: 5 characters, 2 MB.
        let flood = "Alice" + String(repeating: "\u{301}", count: 1_000_000)
        #expect(flood.count == 5 && flood.utf8.count == 2_000_005)
        let started = ContinuousClock.now
        do {
            _ = try ValidationRun.text(flood, maxLength: 100)
            Issue.record("a 2 MB name of 5 characters was accepted")
        } catch {
            #expect(error.code == .tooLong && error.reason == .tooManyCodePoints(characters: 100, codePoints: 400))
        }
        #expect(ContinuousClock.now - started < .seconds(2), "refused in linear time")
        // Just over the scalar limit with few bytes: 100 characters of 4 scalars each pass, one mark more does not.
        let dense = String(repeating: "e\u{302}\u{303}\u{323}", count: 100)
        #expect(dense.count == 100 && dense.unicodeScalars.count == 400)
        #expect(try ValidationRun.text(dense, maxLength: 100) == dense)
        #expect(throws: FieldFailure.self) { try ValidationRun.text(dense + "\u{301}", maxLength: 100) }
        // Too many characters still says so (not the marks).
        do {
            _ = try ValidationRun.text(String(repeating: "名", count: 101), maxLength: 100)
            Issue.record("101 characters accepted")
        } catch { #expect(error.reason == .tooLong(maximum: 100)) }
        // Without max-length there is no limit to keep (the message size bounds it).
        #expect(try ValidationRun.text("Bob" + String(repeating: "\u{301}", count: 1000), maxLength: nil).count == 3)

        // Real names pass at the limit of 100: Chinese (with an Extension B character), Latin with accents
        // (precomposed and decomposed), Vietnamese, Hindi conjuncts, Arabic, and ZWJ emoji.
        for name in [
            String(repeating: "欧阳娜娜", count: 25), "𠮷野家" + String(repeating: "李", count: 97),
            "José María Núñez-Ibáñez", "Zoe\u{308} Ange\u{301}lique", "Nguyễn Thị Ngọc Ánh",
            "Nguye\u{302}\u{303}n Thi\u{323} Ngo\u{323}c", "क्षितिज श्रीवास्तव", "محمد عبد الله", "Ana 👩🏽‍⚕️",
            "👨‍👩‍👧‍👦 Family", String(repeating: "क्षि", count: 50),
        ] {
            #expect(try ValidationRun.text(name, maxLength: 100) == name, "\(name)")
        }

        // Messages, through the validator, in both languages.
        let form = try #require(FormRegistry.builtIn.form(named: FormRegistry.defaultFormName))
        let en = Validator().validate(form: form, input: ["name": flood], locale: .en)
        #expect(
            en.problems.first { $0.field == "name" }?.message
                == "Name has too many combining marks: at most 100 characters, and at most 400 Unicode code points counting the accents and other marks on them; remove the surplus marks."
        )
        let zh = Validator().validate(form: form, input: ["name": flood], locale: .zh)
        #expect(zh.problems.first { $0.field == "name" }?.code == .tooLong)
        #expect(
            zh.problems.first { $0.field == "name" }?.message.contains("最多 100 个字符，连同声调、重音等附加符号共不超过 400 个 Unicode 码位")
                == true)
    }

    @Test("tag characters (U+E0000–U+E007F) are refused inside a text, alone or hidden in a name")
    func tagCharacters() throws {
        // "Bob" with the hidden tag text "hi", a lone tag, the cancel tag, a subdivision flag.
        for bad in [
            "Bob\u{E0068}\u{E0069}", "\u{E0061}", "Li\u{E007F}",
            "Ann \u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}", "\u{E0001}x",
        ] {
            do {
                _ = try ValidationRun.text(bad, maxLength: 100)
                Issue.record("accepted \(bad.unicodeScalars.map { String($0.value, radix: 16) })")
            } catch {
                #expect(error.code == .invalidFormat && error.reason == .tagCharacters)
            }
        }
        // Their neighbours stay: variation selectors (U+FE0F, U+E0100) and private use (U+E000).
        for good in ["☺\u{FE0F} Li", "葛\u{E0100}", "\u{E000}x"] {
            #expect(try ValidationRun.text(good, maxLength: 100) == good)
        }
        let form = try #require(FormRegistry.builtIn.form(named: FormRegistry.defaultFormName))
        let en = Validator().validate(form: form, input: ["name": "Bob\u{E0068}"], locale: .en)
        #expect(
            en.problems.first { $0.field == "name" }?.message
                == "Name contains invisible tag characters (U+E0000–U+E007F); remove them.")
        let zh = Validator().validate(form: form, input: ["name": "Bob\u{E0068}"], locale: .zh)
        #expect(zh.problems.first { $0.field == "name" }?.message == "姓名含有不可见的标签字符（U+E0000–U+E007F），请删去。")
    }
}
