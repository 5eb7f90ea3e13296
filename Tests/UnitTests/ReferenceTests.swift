import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// The repository's root directory, found from this file's path.
func repositoryRoot(_ file: String = #filePath) -> URL {
    URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}

/// Reference data (Reference/): embedded tables, lookups, search, display.
@Suite struct ReferenceTests {
    let data = ReferenceData.shared

    @Test(
        "embedded tables equal data/*.tsv byte for byte",
        arguments: [
            ("data/countries.tsv", EmbeddedTables.countries),
            ("data/cn_divisions.tsv", EmbeddedTables.cnDivisions),
            ("data/cn_divisions_retired.tsv", EmbeddedTables.cnDivisionsRetired),
        ])
    func embeddedTablesEqualFiles(path: String, embedded: String) throws {
        let file = try Data(contentsOf: repositoryRoot().appendingPathComponent(path))
        #expect(Data(embedded.utf8) == file)
    }

    @Test("tables load with the row counts of data/README.md")
    func rowCounts() {
        #expect(data.countries.count == 250)
        #expect(data.provinces.count == 34)
        #expect(data.cities.count == 450)
        #expect(data.countries.map(\.alpha2) == data.countries.map(\.alpha2).sorted())
        #expect(data.cities(ofProvince: "440000").count == 21)
        #expect(data.cities(ofProvince: "810000").isEmpty)
        #expect(data.dataVersion.hasPrefix("countries 20"))
        #expect(
            data.dataVersion.contains("(iso-codes 4.15.0, CLDR 42.0/ICU 72.1, GB/T 2659-2000 + 30 documented names"))
        #expect(data.dataVersion == EmbeddedTables.dataVersion)
    }

    @Test("rows carry every column")
    func rowContents() throws {
        let cn = try #require(data.country(alpha2: "CN"))
        #expect(
            cn
                == Country(
                    alpha2: "CN", alpha3: "CHN", numeric: "156", nameEN: "China", nameZH: "中国",
                    flag: "🇨🇳",
                    aliases: [
                        "People's Republic of China", "PRC", "P.R. China", "中华人民共和国", "中國",
                        "中華人民共和國", "中国大陆", "中國大陸",
                    ],
                    pinyin: ["zhongguo", "zhonghuarenmingongheguo", "zhongguodalu"],
                    initials: ["zg", "zhrmghg", "zgdl"],
                    callingCode: "86", isUserAssigned: false))
        #expect(data.country(alpha2: "XK")?.isUserAssigned == true)
        #expect(data.country(alpha2: "AQ")?.callingCode == "")
        let gd = try #require(data.division(code: "440000"))
        #expect(gd.level == .province && gd.parentCode == nil && gd.isoCode == "CN-GD" && gd.shortZH == "广东")
        let gz = try #require(data.division(code: "440100"))
        #expect(gz.parentCode == "440000" && gz.level == .city && gz.pinyin == "guangzhou" && gz.initials == "gz")
        #expect(data.division(code: "420600")?.formerNames == ["襄樊市", "襄樊"])
        #expect(data.division(code: "371200") == nil)
        let laiwu = try #require(data.retiredDivision(code: "371200"))
        #expect(laiwu.nameZH == "莱芜市" && laiwu.parentCode == "370000" && laiwu.replacedBy == ["370100"])
    }

    @Test(
        "countries resolve from codes, names, aliases and flags",
        arguments: [
            ("CN", "CN"), ("cn", "CN"), ("CHN", "CN"), ("chn", "CN"), ("156", "CN"), ("China", "CN"),
            ("中国", "CN"), ("🇨🇳", "CN"), ("ＣＮ", "CN"), (" china ", "CN"),
            ("People's Republic of China", "CN"), ("4", "AF"), ("004", "AF"), ("20", "AD"),
            ("Türkiye", "TR"), ("Turkiye", "TR"), ("TURKEY", "TR"), ("Cote d'Ivoire", "CI"),
            ("cote divoire", "CI"), ("Ivory Coast", "CI"), ("UK", "GB"), ("usa", "US"), ("Macau", "MO"),
            ("中国香港", "HK"), ("刚果（布）", "CG"), ("刚果布", "CG"), ("Falkland Islands", "FK"),
            ("Malvinas", "FK"), ("Kosovo", "XK"), ("XKX", "XK"),
            // Abbreviations and official names people write (issue 14): PRC no longer suggests North Korea.
            ("PRC", "CN"), ("P.R.C.", "CN"), ("中华人民共和国", "CN"), ("ROC", "TW"), ("U.K.", "GB"), ("U.S.A.", "US"),
            ("UAE", "AE"), ("U.A.E.", "AE"), ("ROK", "KR"), ("DPRK", "KP"), ("大韩民国", "KR"),
        ])
    func resolveCountry(input: String, alpha2: String) {
        #expect(data.resolveCountry(input) == .found(data.country(alpha2: alpha2)!))
    }

    @Test("the committed country table is what scripts/gen-countries makes from its sources")
    func countryTableIsGenerated() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "scripts/gen-countries", "--check"]
        process.currentDirectoryURL = repositoryRoot()
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        try? output.fileHandleForReading.close()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        let version = try String(
            contentsOf: repositoryRoot().appendingPathComponent("data/countries.version"), encoding: .utf8)
        #expect(data.dataVersion.hasPrefix(version.trimmingCharacters(in: .newlines) + "; "))
    }

    @Test(
        "aliases from each source find their country",
        arguments: [
            // iso-codes: official names, inverted names, withdrawn codes of renamed countries (iso_3166-3).
            ("Czech Republic", "CZ"), ("Republic of Türkiye", "TR"), ("Korea, Republic of", "KR"), ("Burma", "MM"),
            ("Zaire", "CD"), ("Upper Volta", "BF"), ("Dahomey", "BJ"), ("Southern Rhodesia", "ZW"),
            ("New Hebrides", "VU"),
            // iso-codes zh_CN, zh_TW and zh_HK translations.
            ("大韩民国", "KR"), ("朝鲜民主主义人民共和国", "KP"), ("斯威士兰", "SZ"), ("紐西蘭", "NZ"), ("中華民國", "TW"),
            ("南韓", "KR"), ("瓜地马拉", "GT"), ("新西蘭", "NZ"),
            // CLDR 42 (ICU 72): en with its short and variant forms, zh, zh_Hant, zh_Hant_HK.
            ("Turkey", "TR"), ("Türkiye", "TR"), ("Swaziland", "SZ"), ("Myanmar (Burma)", "MM"), ("UK", "GB"),
            ("Ivory Coast", "CI"), ("Cape Verde", "CV"), ("Congo - Kinshasa", "CD"), ("Congo (Republic)", "CG"),
            ("Hong Kong SAR China", "HK"), ("Aotearoa New Zealand", "NZ"), ("象牙海岸", "CI"), ("香港", "HK"),
            ("中國", "CN"), ("台灣", "TW"), ("剛果（金夏沙）", "CD"), ("科索沃", "XK"), ("Kosovo", "XK"),
            ("St Lucia", "LC"), ("DRC", "CD"),  // CLDR's `St. Lucia` and `Congo (DRC)`: suggestions before, found now
            // The policy's own choices and hand aliases (data/COUNTRY-NAMES.md).
            ("Republic of the Congo", "CG"), ("刚果（布）", "CG"), ("Macau", "MO"), ("England", "GB"), ("中国大陆", "CN"),
            ("中國香港", "HK"), ("Macedonia", "MK"), ("Ceylon", "LK"), ("俄国", "RU"), ("韓國", "KR"), ("朝鮮", "KP"),
            // Pinyin of the Chinese name and of Simplified aliases.
            ("zhongguo", "CN"), ("hanguo", "KR"), ("chaoxian", "KP"), ("xianggang", "HK"), ("meiguo", "US"),
            ("balesitan", "PS"), ("jianpuzhai", "KH"),
        ])
    func countryAliasSources(input: String, alpha2: String) {
        #expect(data.resolveCountry(input) == .found(data.country(alpha2: alpha2)!))
    }

    @Test(
        "a name two countries claim is ambiguous with both, as data/COUNTRY-NAMES.md settles it",
        arguments: [
            ("Korea", ["KP", "KR"]), ("korea", ["KP", "KR"]), ("Congo", ["CD", "CG"]), ("刚果", ["CD", "CG"]),
            ("聖馬丁", ["MF", "SX"]),
        ])
    func ambiguousCountry(input: String, codes: [String]) {
        #expect(data.resolveCountry(input) == .ambiguous(codes.map { data.country(alpha2: $0)! }))
    }

    @Test(
        "a name equal to one country's own name is not ambiguous",
        arguments: [
            ("Guinea", "GN"), ("Sudan", "SD"), ("Samoa", "WS"), ("Dominica", "DM"), ("Niger", "NE"),
        ])
    func ownNameWins(input: String, alpha2: String) {
        #expect(data.resolveCountry(input) == .found(data.country(alpha2: alpha2)!))
    }

    @Test(
        "country pinyin: polyphonic characters read as in place names, and every reading splits by its initials",
        arguments: [
            ("CN", "zhongguo", "zg"), ("KR", "hanguo", "hg"), ("KP", "chaoxian", "cx"), ("PE", "bilu", "bl"),
            ("KH", "jianpuzhai", "jpz"), ("CV", "fodejiao", "fdj"), ("NP", "niboer", "nbe"),
            ("PS", "balesitan", "blst"),
            ("HN", "hongdulasi", "hdls"), ("AT", "aodili", "adl"), ("HT", "haidi", "hd"), ("HR", "keluodiya", "kldy"),
            ("TD", "zhade", "zd"), ("QA", "kataer", "kte"), ("SA", "shatealabo", "stalb"), ("CY", "saipulusi", "spls"),
            ("HK", "zhongguoxianggang", "zgxg"), ("EC", "eguaduoer", "egde"), ("AZ", "asaibaijiang", "asbj"),
            ("MZ", "mosangbike", "msbk"), ("BL", "shengbatailemidao", "sbtlmd"),
        ])
    func countryPinyin(alpha2: String, pinyin: String, initials: String) throws {
        let country = try #require(data.country(alpha2: alpha2))
        #expect(country.pinyin.first == pinyin && country.initials.first == initials)
    }

    @Test(
        "aliases have pinyin too, with polyphonic characters pinned",
        arguments: [
            ("TD", "chade"), ("KZ", "hasakesitangongheguo"), ("HK", "xianggang"),
            ("HK", "zhongguoxianggangtebiexingzhengqu"),
            ("TW", "taiwan"), ("MO", "aomen"), ("GT", "guadimala"), ("SZ", "siweishilan"), ("AU", "aozhou"),
        ])
    func aliasPinyin(alpha2: String, pinyin: String) throws {
        #expect(try #require(data.country(alpha2: alpha2)).pinyin.dropFirst().contains(pinyin))
    }

    @Test("every country's pinyin readings split into syllables by their initials")
    func everyCountryPinyinSplits() {
        for c in data.countries {
            #expect(!c.pinyin.isEmpty && c.pinyin.count == c.initials.count, "\(c.alpha2)")
            for (pinyin, initials) in zip(c.pinyin, c.initials) {
                #expect(
                    PinyinSyllables.starts(of: pinyin, initials: initials)?.count == initials.count,
                    "\(c.alpha2) \(pinyin)")
            }
        }
    }

    @Test("country search finds pinyin and initials: zg is 中国, hg 韩国, xg 香港")
    func countrySearchByPinyin() {
        #expect(data.searchCountries(matching: "zg").first?.alpha2 == "CN")
        #expect(data.searchCountries(matching: "zhongguo").first?.alpha2 == "CN")
        #expect(data.searchCountries(matching: "hg").first?.alpha2 == "KR")
        #expect(data.searchCountries(matching: "xg").first?.alpha2 == "HK")
        #expect(data.searchCountries(matching: "riben").map(\.alpha2) == ["JP"])
        // Codes still come first: `mg` is Madagascar's alpha-2 before 美国 (meiguo) and 蒙古 (menggu).
        #expect(data.searchCountries(matching: "mg").prefix(3).map(\.alpha2) == ["MG", "MN", "US"])
    }

    @Test("every country resolves from each of its codes and names")
    func everyCountryResolves() {
        for c in data.countries {
            for input in [c.alpha2, c.alpha3, c.nameEN, c.nameZH, c.flag] + (c.numeric.isEmpty ? [] : [c.numeric]) {
                #expect(data.resolveCountry(input) == .found(c), "\(input)")
            }
        }
    }

    @Test("pasted input with invisible format characters resolves like the clean text")
    func formatCharactersIgnored() {
        let cn = data.country(alpha2: "CN")!
        for input in ["\u{FEFF}CN", "\u{200B}CN", "C\u{200D}N", "中\u{200B}国"] {
            #expect(data.resolveCountry(input) == .found(cn), "\(input.unicodeScalars.map(\.value))")
        }
        #expect(data.resolveProvince("\u{FEFF}广东") == .found(data.division(code: "440000")!))
    }

    @Test("the exact-code shortcut answers as the name index does, for every code and province")
    func exactCodeShortcutAgreesWithIndex() {
        for c in data.countries {
            #expect(data.resolveCountry(c.alpha2) == data.resolveCountryByIndex(c.alpha2), "\(c.alpha2)")
        }
        for p in data.provinces {
            #expect(data.resolveProvince(p.code) == data.resolveProvinceByIndex(p.code), "\(p.code)")
            // A province code is no city, and a city code no province: both take the index path.
            #expect(
                data.resolveCity(p.code, province: nil) == data.resolveCityByIndex(p.code, province: nil), "\(p.code)")
        }
        for city in data.cities {
            #expect(data.resolveProvince(city.code) == data.resolveProvinceByIndex(city.code), "\(city.code)")
            for province in [nil, city.parentCode, "440000", "110000"] {
                #expect(
                    data.resolveCity(city.code, province: province)
                        == data.resolveCityByIndex(city.code, province: province),
                    "\(city.code) in \(province ?? "any")")
            }
        }
    }

    @Test("country input that is padded wrongly or unknown is not found")
    func countryNotFound() {
        guard case .notFound = data.resolveCountry("04") else {
            Issue.record("04 resolved")
            return
        }
        guard case .notFound(let suggestions) = data.resolveCountry("Chna") else {
            Issue.record("found")
            return
        }
        #expect(suggestions.first?.alpha2 == "CN")
        guard case .ambiguous(let rows) = data.resolveCountry("刚果") else {
            Issue.record("not ambiguous")
            return
        }
        #expect(rows.map(\.alpha2) == ["CD", "CG"])
    }

    @Test(
        "provinces resolve from code, names, ISO 3166-2, aliases and pinyin",
        arguments: [
            ("440000", "440000"), ("广东省", "440000"), ("广东", "440000"), ("Guangdong", "440000"),
            ("guangdong", "440000"), ("CN-GD", "440000"), ("cn-gd", "440000"), ("Nei Mongol", "150000"),
            ("Inner Mongolia", "150000"), ("内蒙古", "150000"), ("neimenggu", "150000"), ("Macao", "820000"),
            ("Macau", "820000"), ("Tibet", "540000"), ("Xizang", "540000"), ("Tibet (Xizang)", "540000"),
            ("Shanxi", "140000"), ("shanxi", "140000"), ("Shaanxi", "610000"), ("陕西", "610000"),
            ("Hong Kong", "810000"), ("xianggang", "810000"), ("吉林", "220000"),
        ])
    func resolveProvince(input: String, code: String) {
        #expect(data.resolveProvince(input) == .found(data.division(code: code)!))
    }

    @Test(
        "cities resolve from code, names, pinyin, aliases and former names",
        arguments: [
            ("440100", nil, "440100"), ("广州市", nil, "440100"), ("广州", "440000", "440100"),
            ("Guangzhou", nil, "440100"), ("guangzhou", "440000", "440100"), ("Guangzhou", "440000", "440100"),
            ("Harbin", nil, "230100"), ("Ha'erbin", nil, "230100"), ("haerbin", nil, "230100"),
            ("Xi'an", nil, "610100"), ("xian", nil, "610100"), ("Urumqi", nil, "650100"), ("Ürümqi", nil, "650100"),
            ("襄樊", nil, "420600"), ("襄樊市", nil, "420600"), ("荷泽市", nil, "371700"), ("石咀山市", nil, "640200"),
            ("朝阳", "210000", "211300"), ("朝阳", "110000", "110105"), ("Suzhou", "320000", "320500"),
            ("Taizhou", "330000", "331000"), ("吉林", nil, "220200"), ("Lüliang", nil, "141100"),
            ("lvliang", nil, "141100"),
        ] as [(String, String?, String)])
    func resolveCity(input: String, province: String?, code: String) {
        #expect(data.resolveCity(input, province: province) == .found(data.division(code: code)!))
    }

    @Test("every division resolves from its code and full Chinese name")
    func everyDivisionResolves() {
        for p in data.provinces {
            #expect(data.resolveProvince(p.code) == .found(p))
            #expect(data.resolveProvince(p.nameZH) == .found(p))
            #expect(data.resolveProvince(p.nameEN) == .found(p))
        }
        for c in data.cities {
            #expect(data.resolveCity(c.code, province: nil) == .found(c))
            #expect(data.resolveCity(c.nameZH, province: nil) == .found(c))
            #expect(data.resolveCity(c.shortZH, province: c.parentCode) == .found(c))
        }
    }

    @Test(
        "ambiguous city names list every candidate",
        arguments: [
            ("朝阳", ["110105", "211300"]), ("Chaoyang", ["110105", "211300"]), ("Suzhou", ["320500", "341300"]),
            ("Fuzhou", ["350100", "361000"]), ("Wuxi", ["320200", "500238"]),
        ])
    func ambiguousCity(input: String, codes: [String]) {
        #expect(data.resolveCity(input, province: nil) == .ambiguous(codes.map { data.division(code: $0)! }))
    }

    @Test("a city of another province is a wrong parent")
    func wrongParent() {
        #expect(data.resolveCity("杭州", province: "440000") == .wrongParent([data.division(code: "330100")!]))
        #expect(data.resolveCity("330100", province: "440000") == .wrongParent([data.division(code: "330100")!]))
    }

    @Test(
        "typos get near matches",
        arguments: [
            ("Guangzou", "440100"), ("广洲", "440100"), ("Guangzhuo", "440100"), ("Hangzou", "330100"),
        ])
    func citySuggestions(input: String, code: String) {
        guard case .notFound(let suggestions) = data.resolveCity(input, province: nil) else {
            Issue.record("\(input) resolved")
            return
        }
        #expect(suggestions.first?.code == code)
        #expect(suggestions.count <= 5)
    }

    @Test("a retired code is not accepted and suggests its successors")
    func retiredCityCode() {
        #expect(data.resolveCity("371200", province: nil) == .notFound(suggestions: [data.division(code: "370100")!]))
        #expect(data.resolveCity("莱芜", province: "370000") != .found(data.division(code: "370100")!))
    }

    @Test(
        "display names: current, retired and unknown codes",
        arguments: [
            ("440100", EntryLocale.zh, "广州市"), ("440100", .en, "Guangzhou"), ("440000", .en, "Guangdong"),
            ("371200", .zh, "莱芜市（已撤销）"), ("371200", .en, "Laiwu (retired)"), ("999999", .zh, "999999"),
        ])
    func displayName(code: String, locale: EntryLocale, expected: String) {
        #expect(data.displayName(forDivisionCode: code, locale: locale) == expected)
    }

    @Test("search ranks exact, then prefix, then substring matches")
    func search() {
        #expect(data.searchProvinces(matching: "").count == 34)
        #expect(data.searchProvinces(matching: "gd").map(\.code) == ["440000"])
        #expect(data.searchProvinces(matching: "shanxi").map(\.code) == ["140000", "610000"])
        #expect(
            data.searchCities(matching: "guang", province: nil).prefix(3).map(\.code) == ["440100", "510800", "511600"])
        #expect(
            data.searchCities(matching: "州", province: "440000").map(\.code) == [
                "440100", "441300", "441400", "445100",
            ])
        #expect(data.searchCountries(matching: "cn").first?.alpha2 == "CN")
        #expect(data.searchCountries(matching: "türk").map(\.alpha2) == ["TC", "TM", "TR"])
        #expect(data.searchCountries(matching: "Türkiye").map(\.alpha2) == ["TR"])
        #expect(data.searchCountries(matching: "ivoire").map(\.alpha2) == ["CI"])
    }

    @Test("search ranks initials and the starts of words and syllables; two letters inside a word match nothing")
    func searchByWordStarts() {
        let codes = { (rows: [Division]) in rows.map(\.code) }
        // Initials: 赣州, 广州, 甘孜, not 通州 (ton*gz*hou) or 常州.
        #expect(codes(data.searchCities(matching: "gz", province: nil)) == ["360700", "440100", "513300"])
        // Grenada by its code, then 关岛 (guan|dao) by its initials and 瓜德罗普, 瓜地马拉 by theirs'
        // start; not the 18 kingdoms (Kin*gd*om).
        #expect(data.searchCountries(matching: "gd").map(\.alpha2) == ["GD", "GU", "GP", "GT"])
        #expect(data.searchCountries(matching: "kingdom").contains { $0.alpha2 == "GB" })
        // A syllable's start: 舟山 and 周口 (prefix) before 广州 (guang|zhou).
        let zhou = codes(data.searchCities(matching: "zhou", province: nil))
        #expect(Array(zhou.prefix(2)) == ["330900", "411600"] && zhou.contains("440100"))
        // `an` begins a syllable of 西安 (xi|an) and 静安 (jing|an); inside guang or nan it is not shown.
        let an = codes(data.searchCities(matching: "an", province: nil))
        #expect(an.contains("610100") && an.contains("310106") && !an.contains("440100") && !an.contains("450100"))
        #expect(an.firstIndex(of: "340800")! < an.firstIndex(of: "610100")!)  // anqing (prefix) before xi|an
        // Three letters or more may match inside a word, ranked last.
        let ang = codes(data.searchCities(matching: "ang", province: nil))
        #expect(ang.contains("440100"))
        let ning = codes(data.searchCities(matching: "ning", province: nil))
        #expect(ning.firstIndex(of: "330200")! < ning.firstIndex(of: "450100")!)  // ningbo (prefix) before nan|ning
        // Codes and Chinese characters still match anywhere.
        #expect(codes(data.searchCities(matching: "0100", province: "440000")) == ["440100"])
        #expect(codes(data.searchCities(matching: "安", province: nil)).contains("610100"))
        #expect(data.searchProvinces(matching: "gd").map(\.code) == ["440000"])
    }

    @Test("every division's pinyin splits into syllables by its initials")
    func pinyinSyllables() {
        for d in data.provinces + data.cities {
            #expect(
                PinyinSyllables.starts(of: d.pinyin, initials: d.initials)?.count == d.initials.count,
                "\(d.pinyin) \(d.initials)")
        }
        #expect(PinyinSyllables.starts(of: "xian", initials: "xa") == [0, 2])
        #expect(PinyinSyllables.starts(of: "guangan", initials: "ga") == [0, 5])
        #expect(PinyinSyllables.starts(of: "haerbin", initials: "heb") == [0, 2, 4])
        #expect(PinyinSyllables.starts(of: "guangzhou", initials: "gx") == nil)
    }

    @Test(
        "suggestions put what people meant first: cut short, a later word, an abbreviation, then typos",
        arguments: [
            ("S Korea", "KR"), ("N. Korea", "KP"), ("Untied States", "US"),
            ("germny", "DE"), ("Grmany", "DE"), ("PRCC", "CN"), ("Chna", "CN"), ("Sth Africa", "ZA"),
            ("Austia", "AT"), ("Inda", "IN"), ("Emirates", "AE"), ("Phillipines", "PH"),
        ])
    func countrySuggestionOrder(input: String, alpha2: String) {
        guard case .notFound(let suggestions) = data.resolveCountry(input) else {
            Issue.record("\(input) resolved")
            return
        }
        #expect(suggestions.first?.alpha2 == alpha2, "\(suggestions.map(\.alpha2))")
        #expect(!suggestions.prefix(1).contains { $0.alpha2 == "KP" } || alpha2 == "KP")
    }

    @Test("a city cut short is suggested before a city one edit away")
    func citySuggestionOrder() {
        guard case .notFound(let guangz) = data.resolveCity("guangz", province: nil) else {
            Issue.record("resolved")
            return
        }
        #expect(guangz.map(\.code) == ["440100", "511600"])  // 广州 (prefix) before 广安 (guangan, two edits)
        guard case .notFound(let south) = data.resolveCountry("South Kora") else {
            Issue.record("resolved")
            return
        }
        #expect(south.first?.alpha2 == "KR")
        #expect(NameKey("People's Republic of China").isAbbreviated(by: MatchKey("PRCC")))
        #expect(NameKey("Saint Lucia").isAbbreviated(by: MatchKey("stlucia")))
        #expect(!NameKey("United States").isAbbreviated(by: MatchKey("untied states")))
        #expect(!NameKey("Saint Lucia").isAbbreviated(by: MatchKey("lucia")))
    }

    // MARK: Chinese variants (ICU Traditional-Simplified) and pinyin order

    @Test(
        "Traditional and variant characters find the code of the Simplified name",
        arguments: [
            ("country", "臺灣", "TW"), ("country", "台灣", "TW"), ("country", "澳門", "MO"), ("country", "香港特別行政區", "HK"),
            ("country", "美國", "US"), ("country", "韓國", "KR"), ("country", "中華人民共和國", "CN"), ("country", "中國", "CN"),
            ("province", "廣東", "440000"), ("province", "廣東省", "440000"), ("province", "黑龍江", "230000"),
            ("province", "臺灣", "710000"), ("province", "台灣省", "710000"), ("province", "澳門", "820000"),
            ("province", "香港特別行政區", "810000"), ("province", "內蒙古", "150000"), ("province", "内蒙古", "150000"),
            ("province", "寧夏", "640000"), ("city", "廣州", "440100"), ("city", "烏魯木齊", "650100"),
            ("city", "廈門市", "350200"), ("city", "長沙", "430100"), ("city", "齊齊哈爾", "230200"),
        ])
    func traditionalNamesResolve(kind: String, input: String, code: String) {
        let found: String?
        switch kind {
        case "country": if case .found(let c) = data.resolveCountry(input) { found = c.alpha2 } else { found = nil }
        case "province": if case .found(let d) = data.resolveProvince(input) { found = d.code } else { found = nil }
        default: if case .found(let d) = data.resolveCity(input, province: nil) { found = d.code } else { found = nil }
        }
        #expect(found == code, "\(input)")
        // The keys fold; names shown stay Simplified.
        #expect(MatchKey(input) == MatchKey(ChineseVariants.simplified(input)))
        #expect(data.displayName(forDivisionCode: "440000", locale: .zh) == "广东省")
    }

    @Test("a Traditional name that matches nothing gets the suggestions of its Simplified form")
    func traditionalTyposGetSuggestions() {
        // 廣洲: Traditional 廣 and a wrong 洲 (广州 is meant).
        guard case .notFound(let near) = data.resolveCity("廣洲", province: nil) else {
            Issue.record("廣洲 resolved")
            return
        }
        #expect(near.first?.code == "440100")
        // Cut short: 黑龍 begins 黑龙江.
        guard case .notFound(let province) = data.resolveProvince("黑龍") else {
            Issue.record("黑龍 resolved")
            return
        }
        #expect(province.first?.code == "230000")
        guard case .notFound(let country) = data.resolveCountry("美國國") else {
            Issue.record("美國國 resolved")
            return
        }
        #expect(country.first?.alpha2 == "US")
    }

    @Test("folding merges no two names of the tables: every Chinese name still finds its own row")
    func foldingKeepsNamesApart() {
        for country in data.countries {
            guard case .found(let found) = data.resolveCountry(country.nameZH) else {
                Issue.record("\(country.nameZH)")
                continue
            }
            #expect(found.alpha2 == country.alpha2)
        }
        for province in data.provinces {
            guard case .found(let found) = data.resolveProvince(province.nameZH) else {
                Issue.record("\(province.nameZH)")
                continue
            }
            #expect(found.code == province.code)
        }
        for city in data.cities {
            guard case .found(let found) = data.resolveCity(city.nameZH, province: city.parentCode) else {
                Issue.record("\(city.nameZH)")
                continue
            }
            #expect(found.code == city.code)
        }
    }

    @Test("text without Han characters never changes; Han text folds to Simplified, phrases included")
    func simplifiedFold() {
        #expect(ChineseVariants.simplified("Türkiye") == "Türkiye")
        #expect(ChineseVariants.simplified("") == "")
        #expect(ChineseVariants.simplified("香港特別行政區 HK") == "香港特别行政区 HK")
        #expect(ChineseVariants.simplified("裏") == "里")
        #expect(ChineseVariants.simplified("广州") == "广州")
        #expect(!ChineseVariants.icuVersion.isEmpty)
    }

    @Test("polyphonic place names are found by their curated pinyin and initials")
    func polyphonicPlaceNames() {
        let cases: [(query: String, code: String)] = [
            ("changsha", "430100"), ("cs", "430100"), ("xiamen", "350200"), ("xm", "350200"), ("luan", "341500"),
            ("lu'an", "341500"), ("la", "341500"), ("bengbu", "340300"), ("bb", "340300"), ("chongqing", "500000"),
            ("cq", "500000"), ("leshan", "511100"), ("ls", "511100"), ("lishui", "331100"), ("ls", "331100"),
        ]
        for (query, code) in cases {
            let rows =
                data.searchCities(matching: query, province: nil, locale: .zh)
                + data.searchProvinces(matching: query, locale: .zh)
            #expect(rows.contains { $0.code == code }, "\(query) → \(code)")
        }
        // The curated readings, not ICU's character-by-character ones (长 zhang, 厦 sha, 六 liu, 蚌 bang).
        for (code, pinyin) in [
            ("430100", "changsha"), ("350200", "xiamen"), ("341500", "luan"), ("340300", "bengbu"),
            ("500000", "chongqing"), ("511100", "leshan"), ("331100", "lishui"),
        ] {
            #expect(data.division(code: code)?.pinyin == pinyin)
        }
        for query in ["zhangsha", "shamen", "liuan", "bangbu"] {
            #expect(
                !data.searchCities(matching: query, province: nil, locale: .zh).contains {
                    ["430100", "350200", "341500", "340300"].contains($0.code)
                },
                "\(query)")
        }
    }

    @Test("zh picker lists are in pinyin order by the curated key; en lists keep table order")
    func pinyinPickerOrder() {
        let provinces = data.searchProvinces(matching: "", locale: .zh).map(\.nameZH)
        #expect(Array(provinces.prefix(4)) == ["安徽省", "澳门特别行政区", "北京市", "重庆市"])
        #expect(data.searchProvinces(matching: "", locale: .en).map(\.code) == data.provinces.map(\.code))
        // 湖南: 常德 chang|de, 长沙 chang|sha, 郴州 chen|zhou: 长 read chang as in 长沙, not zhang.
        let hunan = data.searchCities(matching: "", province: "430000", locale: .zh).map(\.shortZH)
        #expect(Array(hunan.prefix(3)) == ["常德", "长沙", "郴州"])
        // Syllable by syllable: 西安 xi|an before 厦门 xia|men (as letters, xiamen < xian).
        let all = data.searchCities(matching: "", province: nil, locale: .zh).map(\.shortZH)
        #expect(all.firstIndex(of: "西安")! < all.firstIndex(of: "厦门")!)
        #expect(
            all.count == 450
                && Set(all.indices.map { data.searchCities(matching: "", province: nil, locale: .zh)[$0].code }).count
                    == 450
        )
        // Within a rank too: gz in zh is 赣州 gan|zhou, 甘孜 gan|zi, 广州 guang|zhou.
        #expect(
            data.searchCities(matching: "gz", province: nil, locale: .zh).map(\.code) == ["360700", "513300", "440100"])
        // Countries by the pinyin of their Chinese name: 阿 (a) first, 美国 before 中国.
        let countries = data.searchCountries(matching: "", locale: .zh).map(\.nameZH)
        #expect(countries.count == 250 && countries.first?.hasPrefix("阿") == true)
        #expect(countries.firstIndex(of: "美国")! < countries.firstIndex(of: "中国")!)
        #expect(data.searchCountries(matching: "", locale: .en).map(\.alpha2) == data.countries.map(\.alpha2))
    }

    @Test("countries with pinyin and initials columns are found by them and listed in their pinyin order in zh")
    func countryPinyinColumns() {
        // A table of the shape of data/countries.tsv: `;`-lists, the Chinese name's reading first.
        let table = """
            alpha2\talpha3\tnumeric\tname_en\tname_zh\tpinyin\tinitials\tflag\taliases\tcalling_code\tiso_status
            CN\tCHN\t156\tChina\t中国\tzhongguo;zhonghuarenmingongheguo\tzg;zhrmghg\t🇨🇳\t\t86\tofficial
            KR\tKOR\t410\tKorea, Republic of\t韩国\thanguo;dahanminguo\thg;dhmg\t🇰🇷\t\t82\tofficial
            US\tUSA\t840\tUnited States\t美国\tmeiguo\tmg\t🇺🇸\t\t1\tofficial

            """
        let data = ReferenceData(
            countries: table, divisions: EmbeddedTables.cnDivisions,
            retired: EmbeddedTables.cnDivisionsRetired, dataVersion: "test")
        #expect(data.searchCountries(matching: "zg").map(\.alpha2) == ["CN"])
        #expect(data.searchCountries(matching: "zhrmghg").map(\.alpha2) == ["CN"])
        #expect(data.searchCountries(matching: "guo", locale: .zh).map(\.alpha2) == ["KR", "US", "CN"])
        #expect(data.searchCountries(matching: "", locale: .zh).map(\.alpha2) == ["KR", "US", "CN"])
        #expect(data.searchCountries(matching: "", locale: .en).map(\.alpha2) == ["CN", "KR", "US"])
        guard case .found(let korea) = data.resolveCountry("hanguo") else {
            Issue.record("hanguo")
            return
        }
        #expect(korea.alpha2 == "KR")
    }
}
