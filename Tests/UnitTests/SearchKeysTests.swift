import CICU
import Foundation
import Testing
@testable import EntryModel

/// The derived search keys (issue 33 items 3 and 7): folding, name suffixes,
/// pinyin, initials, phones, e-mails, the duplicate key, and search texts.
@Suite struct SearchKeysTests {
    @Test("Traditional and Simplified, full-width, case and spaces fold alike")
    func folding() {
        #expect(SearchKeys.fold("黃志明") == "黄志明")
        #expect(SearchKeys.fold("黄志明") == "黄志明")
        #expect(SearchKeys.fold("ＪＯＨＮ　Ｓｍｉｔｈ") == "john smith")
        #expect(SearchKeys.fold("  Anna \t  Maria\u{200B} ") == "anna maria")
        #expect(SearchKeys.fold("\u{3000}") == "")
        // no space beside a Han character: a space typed into a Chinese name is not part of it
        #expect(SearchKeys.fold("李 小龙") == "李小龙" && SearchKeys.fold("黃　志明") == "黄志明")
        #expect(SearchKeys.fold("李 Xiaolong") == "李xiaolong" && SearchKeys.fold("Li  Xiao") == "li xiao")
        #expect(SearchKeys.nameKeys("李 小龙").contains("s:李小龙"))
    }

    @Test("a Han name: every character suffix, the pinyin, its syllable suffixes and the initials")
    func hanName() {
        let keys = SearchKeys.nameKeys("黃志明")
        #expect(keys == SearchKeys.nameKeys("黄志明"))
        for key in ["s:黄志明", "s:志明", "s:明", "s:huangzhiming", "s:zhiming", "s:ming", "s:hzm"] {
            #expect(keys.contains(key), "\(key) in \(keys)")
        }
        #expect(!keys.contains { $0.contains("黃") })
        #expect(keys == keys.sorted())
    }

    @Test("a Latin name: the name and each word suffix, lower case, no pinyin")
    func latinName() {
        #expect(SearchKeys.nameKeys("Anna-Maria  SMITH") == ["s:anna-maria smith", "s:maria smith", "s:smith"])
        #expect(SearchKeys.nameKeys(" ") == [])
    }

    @Test("a very long name: keys cut at 512 bytes, at most 64 suffixes, still found by a long prefix")
    func longName() throws {
        let name = String(repeating: "黃", count: 2000)
        let keys = SearchKeys.nameKeys(name)
        #expect(keys.allSatisfy { $0.utf8.count <= SearchKeys.maxKeyBytes }, "\(keys.map(\.utf8.count).max() ?? 0)")
        #expect(keys.count <= 2 * 64 + 1)
        let query = String(repeating: "黄", count: SearchKeys.maxQueryLength)
        let prefix = try #require(try SearchKeys.prefixes(forQuery: query).first)
        #expect(keys.contains { $0.hasPrefix(prefix) })
        #expect(SearchKeys.emailKey(String(repeating: "a", count: 600) + "@x.org")!.utf8.count == 512)
    }

    @Test("phones: E.164 digits and the national significant number")
    func phones() {
        #expect(SearchKeys.phoneKeys("+8613612345678") == ["t:8613612345678", "t:13612345678"])
        #expect(SearchKeys.phoneKeys("+447911123456") == ["t:447911123456", "t:7911123456"])
        #expect(SearchKeys.phoneKeys("+12025550123") == ["t:12025550123", "t:2025550123"])
        #expect(SearchKeys.phoneKeys("13612345678") == [])
        #expect(SearchKeys.phoneKeys("+86 136") == [])
    }

    @Test(
        "phones: the national key drops the calling code PyPI phonenumbers reads, for every number of the format list")
    func phoneKeysGoldenList() throws {
        let text = try String(
            contentsOf: repositoryRoot().appendingPathComponent("Tests/interop/phone_format_golden.tsv"),
            encoding: .utf8)
        let rows = text.split(separator: "\n").dropFirst().map { $0.split(separator: "\t").map(String.init) }
        #expect(rows.count > 500)
        var mismatches: [String] = []
        for row in rows {
            // The international format starts with `+`, the calling code and a space (`+44 7911 123456`).
            let code = row[1].dropFirst().prefix { $0 != " " }
            let digits = row[0].dropFirst()
            let expected = ["t:" + digits, "t:" + digits.dropFirst(code.count)]
            if SearchKeys.phoneKeys(row[0]) != expected {
                mismatches.append("\(row[0]) → \(SearchKeys.phoneKeys(row[0]))")
            }
        }
        #expect(mismatches == [], "\(mismatches.count) numbers differ, e.g. \(mismatches.prefix(5))")
        // No calling code starts with 0, and a lone calling code has no national number.
        #expect(SearchKeys.phoneKeys("+0123456") == ["t:0123456"])
        #expect(SearchKeys.phoneKeys("+80012345678") == ["t:80012345678", "t:12345678"])  // non-geographic
        #expect(SearchKeys.phoneKeys("+3906123") == ["t:3906123", "t:06123"])  // Italy's leading zero
        #expect(SearchKeys.phoneKeys("+1") == ["t:1"])
        #expect(SearchKeys.phoneKeys("+44") == ["t:44"])
    }

    @Test("derive: the name, phone and duplicate keys in one pass, the duplicate keys among them")
    func deriveMatchesParts() {
        let fields = ["name": "黃志明", "birthday": "1990-02-03", "phone": "+8613612345678", "email": "A@Example.com"]
        let derived = SearchKeys.derive(fields: fields, layout: .registration)
        let parts = Set(SearchKeys.nameKeys("黃志明")).union(SearchKeys.phoneKeys("+8613612345678"))
        #expect(derived.duplicates == ["b:黄志明\u{1F}1990-02-03", "m:a@example.com", "t:8613612345678"])
        #expect(derived.duplicates == SearchKeys.duplicateKeys(fields: fields, layout: .registration))
        #expect(derived.all == parts.union(derived.duplicates).sorted())
        // Without a birthday there is no `b:` key, and the name's keys remain.
        let noBirthday = SearchKeys.derive(fields: fields.filter { $0.key != "birthday" }, layout: .registration)
        #expect(noBirthday.duplicates == ["m:a@example.com", "t:8613612345678"])
        #expect(noBirthday.all.contains("s:huangzhiming"))
    }

    @Test("pinyin by cached character readings equals ICU over the whole text, context rules left to ICU")
    func pinyinByCharacterMatchesICU() {
        // Han-Latin's context rules: their characters are read by ICU over the whole text.
        #expect(cicu_pinyin_is_contextual(0x91CD) == 1)  // 重 (重庆 chóng qìng, alone zhòng)
        #expect(cicu_pinyin_is_contextual(0x738B) == 0)  // 王
        #expect(ChineseVariants.pinyinByCharacter("重庆") == nil)
        #expect(ChineseVariants.pinyinSyllables("重庆") == ["chong", "qing"])
        #expect(ChineseVariants.pinyinByCharacter("王a") == nil && ChineseVariants.pinyinByCharacter("12") == nil)
        #expect(ChineseVariants.pinyinByCharacter("用户12") == ["yong", "hu12"])
        // Every pair of neighbouring characters of the CJK Unified Ideographs block and of
        // extension A, every 5th of extension B, and the names of the reference data.
        var texts: [String] = []
        func pairs(_ range: ClosedRange<UInt32>, step: Int) {
            for v in stride(from: range.lowerBound, to: range.upperBound, by: step) {
                texts.append(String(String.UnicodeScalarView([Unicode.Scalar(v)!, Unicode.Scalar(v + 1)!])))
            }
        }
        pairs(0x4E00...0x9FFF, step: 1)
        pairs(0x3400...0x4DBF, step: 1)
        pairs(0x20000...0x2A6DF, step: 5)
        texts += ReferenceData.shared.cities.map(\.nameZH) + ["黄志明", "欧阳娜娜", "司马相如", "单雄信", "曾国藩"]
        // Digits beside Han characters (the bench's names `用户123`) are written next to a reading.
        for v in stride(from: UInt32(0x4E00), to: 0x9FFF, by: 97) {
            let c = String(Unicode.Scalar(v)!)
            let d = String(Unicode.Scalar(v + 13)!)
            texts += [c + "1", "2" + c, c + "34" + d, c + d + "5", "6" + c + d + "78"]
        }
        var compared = 0
        var differ: [String] = []
        for text in texts {
            guard let fast = ChineseVariants.pinyinByCharacter(text) else { continue }
            compared += 1
            if fast != ChineseVariants.wholePinyinSyllables(text) { differ.append(text) }
        }
        #expect(compared > 30_000)
        #expect(differ.isEmpty, "\(differ.count) texts differ, e.g. \(differ.prefix(5))")
    }

    @Test("the keys of an entry by its layout, and its duplicate keys")
    func entryKeys() {
        let fields = [
            "name": "黃志明", "birthday": "1990-05-17", "phone": "+8613612345678", "email": "Zhi.Ming@Example.COM",
        ]
        let keys = SearchKeys.keys(fields: fields, layout: .registration)
        #expect(keys.contains("t:13612345678"))
        #expect(keys.contains("m:zhi.ming@example.com"))
        #expect(keys.contains("b:黄志明\u{1F}1990-05-17"))
        #expect(keys.contains("s:huangzhiming"))
        #expect(
            SearchKeys.duplicateKeys(fields: fields, layout: .registration) == [
                "b:黄志明\u{1F}1990-05-17", "m:zhi.ming@example.com", "t:8613612345678",
            ])
        // No birthday: no b: key; a phone field unknown to the layout gives nothing.
        #expect(
            SearchKeys.duplicateKeys(fields: ["name": "x", "mobile": "+8613612345678"], layout: .registration) == [])
    }

    @Test("an entry's keys are its name keys, phone keys and duplicate keys, each value read once")
    func entryKeysAreTheParts() {
        let samples: [[String: String]] = [
            ["name": "黃志明", "birthday": "1990-05-17", "phone": "+8613612345678", "email": "Zhi.Ming@Example.COM"],
            ["name": "用户12", "birthday": "1990-05-17", "phone": "+8613800000012"],
            ["name": "Anna  Maria-Li", "email": "a@b.example"],
            ["birthday": "2001-01-01", "phone": "+441632960000"],
            ["name": "　", "birthday": "1990-05-17"],
            [:],
        ]
        for fields in samples {
            var parts = Set(fields["name"].map { SearchKeys.nameKeys($0) } ?? [])
            for field in FieldLayout.registration.phones {
                if let v = fields[field] { parts.formUnion(SearchKeys.phoneKeys(v)) }
            }
            parts.formUnion(SearchKeys.duplicateKeys(fields: fields, layout: .registration))
            #expect(SearchKeys.keys(fields: fields, layout: .registration) == parts.sorted(), "\(fields)")
            // The fields the keys are made of: changing any other leaves them as they are.
            var other = fields
            other["country"] = "CN"
            #expect(SearchKeys.keys(fields: other, layout: .registration) == parts.sorted())
            #expect(SearchKeys.sources(of: .registration).allSatisfy { $0 != "country" })
        }
    }

    @Test(
        "a phone query in any format matches by its digits",
        arguments: [
            ("+86 136 1234 5678", ["t:8613612345678"]),
            ("136-1234-5678", ["t:13612345678"]),
            ("008613612345678", ["t:008613612345678", "t:8613612345678"]),
            ("(136) 1234 5678", ["t:13612345678"]),
            ("07911 123456", ["t:07911123456", "t:7911123456"]),
            ("+1 (202) 555-0123", ["t:12025550123"]),
            ("+44 (0)7911 123456", ["t:447911123456"]),
            ("0044 (0)7911 123456", ["t:00447911123456", "t:447911123456"]),
            ("１３６１２３４", ["t:1361234"]),
        ])
    func phoneQueries(query: String, prefixes: [String]) throws {
        #expect(try SearchKeys.prefixes(forQuery: query) == prefixes)
    }

    @Test("e-mail and name queries; bad input is refused")
    func otherQueries() throws {
        #expect(try SearchKeys.prefixes(forQuery: "Zhi.Ming@") == ["m:zhi.ming@"])
        #expect(try SearchKeys.prefixes(forQuery: "黃志") == ["s:黄志"])
        #expect(try SearchKeys.prefixes(forQuery: "Huang Zhi") == ["s:huang zhi", "s:huangzhi"])
        #expect(throws: SearchKeys.QueryProblem.empty) { try SearchKeys.prefixes(forQuery: " \u{3000} ") }
        #expect(throws: SearchKeys.QueryProblem.controlCharacter) { try SearchKeys.prefixes(forQuery: "a\nb") }
        #expect(throws: SearchKeys.QueryProblem.tooLong) {
            try SearchKeys.prefixes(forQuery: String(repeating: "a", count: SearchKeys.maxQueryLength + 1))
        }
        #expect(SearchKeys.upperBound(of: "s:a") > "s:a\u{10FFFE}")
    }
}
