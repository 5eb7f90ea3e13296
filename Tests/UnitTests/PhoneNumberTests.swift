import Foundation
import Testing
import CPhoneNumber
@testable import EntryModel

// Nested in FormsTests so that `swift test --filter Forms` runs it.
extension FormsTests {
    /// Phone numbers through libphonenumber (Forms/PhoneNumber.swift, Sources/CPhoneNumber).
    @Suite struct PhoneNumberTests {
        /// A form whose phone field takes any valid number, and a country field for the default region.
        static let anyType = FormDefinition(
            name: "p", titles: [.en: "P"],
            fields: [
                FieldDefinition(name: "country", type: .country, labels: [.en: "Country", .zh: "国家"]),
                FieldDefinition(name: "phone", type: .phone, labels: [.en: "Phone", .zh: "电话"]),
            ])

        func check(
            _ phone: String, country: String = "CN", form: FormDefinition = anyType,
            locale: EntryLocale = .en
        ) -> ValidationResult {
            Validator().validate(form: form, input: ["country": country, "phone": phone], locale: locale)
        }

        /// The rows of Tests/interop/phone_golden.tsv: its header, then input, region, outcome, type.
        static func golden() throws -> (header: String, rows: [[String]]) {
            let text = try String(
                contentsOf: repositoryRoot().appendingPathComponent("Tests/interop/phone_golden.tsv"), encoding: .utf8)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            return (
                String(lines.first ?? ""),
                lines.dropFirst().map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
            )
        }

        @Test("every row of the golden list (PyPI phonenumbers 8.12.57) comes out the same through the C shim")
        func goldenList() throws {
            let (_, rows) = try Self.golden()
            #expect(rows.count > 7000)
            #expect(Set(rows.map { $0[1] }).count >= 40)
            let kinds: [cphone_outcome: String] = [
                CPHONE_NOT_A_NUMBER: "not-a-number", CPHONE_INVALID_COUNTRY_CODE: "invalid-country-code",
                CPHONE_TOO_SHORT: "too-short", CPHONE_TOO_LONG: "too-long", CPHONE_INVALID_LENGTH: "invalid-length",
                CPHONE_INVALID: "invalid",
            ]
            var mismatches: [String] = []
            for row in rows {
                let read = PhoneNumber.library(row[0], region: row[1])
                let outcome = read.outcome == CPHONE_VALID ? read.e164 : kinds[read.outcome] ?? "?"
                let type = read.outcome == CPHONE_VALID ? read.type.rawValue : ""
                if [outcome, type] != [row[2], row[3]] { mismatches.append("\(row) → \(outcome) \(type)") }
            }
            #expect(mismatches == [], "\(mismatches.count) rows differ, e.g. \(mismatches.prefix(5))")
        }

        @Test(
            "every number of the format list (PyPI phonenumbers 8.12.57) formats the same, international and national")
        func formatGoldenList() throws {
            let text = try String(
                contentsOf: repositoryRoot().appendingPathComponent("Tests/interop/phone_format_golden.tsv"),
                encoding: .utf8)
            let rows = text.split(separator: "\n").dropFirst().map { $0.split(separator: "\t").map(String.init) }
            #expect(rows.count > 500)
            #expect(
                rows.contains { $0[0].hasPrefix("+800") } && rows.contains { $0[0].hasPrefix("+3902") }
                    && rows.contains { $0[0].hasPrefix("+2250") })
            var mismatches: [String] = []
            for row in rows
            where [PhoneNumber.format(row[0]), PhoneNumber.format(row[0], national: true)] != [row[1], row[2]] {
                mismatches.append(
                    "\(row) → \(PhoneNumber.format(row[0]) ?? "nil") / \(PhoneNumber.format(row[0], national: true) ?? "nil")"
                )
            }
            #expect(mismatches == [], "\(mismatches.count) rows differ, e.g. \(mismatches.prefix(5))")
        }

        @Test("the ASCII shortcuts for white space and decimal digits agree with Unicode's properties")
        func characterShortcuts() {
            var checked = 0
            for value in UInt32(0)..<0x1_0000 {
                guard let scalar = Unicode.Scalar(value) else { continue }
                let p = scalar.properties
                #expect(PhoneNumber.isWhitespace(scalar) == p.isWhitespace, "U+\(String(value, radix: 16))")
                let digit = p.numericType == .decimal ? p.numericValue.map { Unicode.Scalar(UInt8(48 + Int($0))) } : nil
                #expect(PhoneNumber.decimalDigit(scalar) == digit, "U+\(String(value, radix: 16))")
                checked += 1
            }
            #expect(checked > 60_000)
            #expect(PhoneNumber.isScientificNotation("1.38001E+10") && PhoneNumber.isScientificNotation(" 8.6138e12 "))
            #expect(!PhoneNumber.isScientificNotation("+86 138 0013 8000") && !PhoneNumber.isScientificNotation("E12"))
        }

        @Test(
            "what is not an E.164 number is not formatted",
            arguments: [
                "", "+", "8613800138000", "+0086138", "+86", "+861", "+86138001380001234567", "+86 138 0013 8000",
                "+999123456", "+86１３８",
            ])
        func formatRefuses(value: String) {
            #expect(PhoneNumber.format(value) == nil)
        }

        @Test("the library version is the Debian package's, the version the golden list was made with")
        func libraryVersion() throws {
            #expect(PhoneNumber.libraryVersion == "8.12.57")
            #expect(try Self.golden().header.hasPrefix("# phonenumbers \(PhoneNumber.libraryVersion):"))
        }

        @Test(
            "numbers as people type them give one E.164 value",
            arguments: [
                ("CN", "13800138000", "+8613800138000"), ("CN", "8613800138000", "+8613800138000"),
                ("CN", "+86 138-0013-8000", "+8613800138000"), ("CN", "0086 138 0013 8000", "+8613800138000"),
                ("CN", "(010) 6552-9988", "+861065529988"), ("CN", "+86 010 6552 9988", "+861065529988"),
                ("GB", "+44 (0)20 7946 0958", "+442079460958"), ("GB", "020 7946 0958", "+442079460958"),
                ("DE", "+49 030 1234567", "+49301234567"), ("DE", "030 1234567", "+49301234567"),
                ("US", "(212) 555-0100", "+12125550100"), ("US", "1 212 555 0100", "+12125550100"),
                ("IT", "06 6988 4857", "+390669884857"), ("CN", "１３８００１３８０００", "+8613800138000"),
                ("CN", "+44 20 7946 0958", "+442079460958"),
                ("CN", "+86 138\u{2013}0013\u{2013}8000", "+8613800138000"),
                ("CN", "(+86)13800138000", "+8613800138000"), ("US", "( +86 ) 138 0013 8000", "+8613800138000"),
            ])
        func canonical(country: String, input: String, expected: String) {
            let result = check(input, country: country)
            #expect(result.problems == [])
            #expect(result.fields["phone"] == expected)
        }

        @Test("digits that are a number only with + before them are refused with the + number suggested")
        func countryCodeWithoutPlus() {
            let result = check("8613800138000", country: "US")
            #expect(result.problems.map(\.code) == [.invalidFormat])
            #expect(result.problems.first?.suggestions == ["+8613800138000"])
            #expect(
                result.problems.first?.message
                    == "Phone seems to start with its country code but has no +; write it as +86 138 0013 8000.")
            #expect(
                check("8613800138000", country: "US", locale: .zh).problems.first?.message
                    == "电话似乎以国家代码开头但缺少 +，请写成 +86 138 0013 8000。")
        }

        @Test(
            "a Chinese number for an entry of another country, or 0086 where 00 is not the international prefix, is refused with the +86 number suggested"
        )
        func chineseNumberElsewhere() {
            for (country, input) in [
                ("US", "13800138000"), ("JP", "138 0013 8000"), ("US", "008613800138000"), ("HK", "0086 138 0013 8000"),
            ] {
                let problems = check(input, country: country).problems
                #expect(problems.map(\.code) == [.invalidFormat], "\(country) \(input)")
                #expect(problems.first?.suggestions == ["+8613800138000"], "\(country) \(input): \(problems)")
                #expect(problems.first?.message.contains("+86 138 0013 8000") == true, "\(problems)")
            }
            // A number valid in its own region is never second-guessed.
            #expect(check("(212) 555-0100", country: "US").problems.isEmpty)
        }

        @Test("digits that start with the region's code and read two ways are ambiguous, both suggested")
        func ambiguousCountryCode() {
            let result = check("4915123456789", country: "DE")
            #expect(result.problems.map(\.code) == [.ambiguous])
            #expect(result.problems.first?.suggestions == ["+4915123456789", "+494915123456789"])
            #expect(result.problems.first?.message.contains("+49 1512 3456789") == true)
            // Each suggestion is a value the field takes as it is.
            #expect(check("+4915123456789", country: "DE").fields["phone"] == "+4915123456789")
            #expect(check("+494915123456789", country: "DE").fields["phone"] == "+494915123456789")
        }

        @Test(
            "refusals name what is wrong",
            arguments: [
                (
                    "CN", "12345", ProblemCode.invalidFormat,
                    "Phone is too short; give the full number (with the area code for a landline)."
                ),
                (
                    "CN", "11111111111", .invalidFormat,
                    "Phone is not a valid number in China; check the number of digits and how it starts."
                ),
                (
                    "GB", "+44 20 7946 095", .invalidFormat,
                    "Phone is not a valid number in United Kingdom; check the number of digits and how it starts."
                ),
                ("CN", "+86 1380013800012345", .tooLong, "Phone has too many digits; check the number."),
                (
                    "CN", "+999 1234 5678", .notInList,
                    "Phone does not start with a known country calling code; check the digits after + or 00, or write it with + and the country code, e.g. +86 138 0013 8000."
                ),
                (
                    "CN", "138-0013-800x", .invalidFormat,
                    "Phone may contain only digits, spaces, hyphens, dots, parentheses and a leading +, e.g. +86 138 0013 8000."
                ),
                (
                    "CN", "138+0013 8000", .invalidFormat,
                    "Phone may contain only digits, spaces, hyphens, dots, parentheses and a leading +, e.g. +86 138 0013 8000."
                ),
                (
                    "CN", "138 0013 8000 ext. 12", .invalidFormat,
                    "Phone may contain only digits, spaces, hyphens, dots, parentheses and a leading +, e.g. +86 138 0013 8000."
                ),
                (
                    "CN", "1.38001E+10", .invalidFormat,
                    "Phone is in scientific notation (like 1.38001E+10): a spreadsheet took the number for a quantity and its last digits are lost; format the column as text and export it again."
                ),
            ])
        func refusals(country: String, input: String, code: ProblemCode, message: String) {
            let problems = check(input, country: country).problems
            #expect(problems.map(\.code) == [code])
            #expect(
                problems.first?.message.replacingOccurrences(of: "the United Kingdom", with: "United Kingdom")
                    == message)
        }

        @Test("the registration form's 手机号码 takes mobile numbers only; fixed-line-or-mobile counts as mobile")
        func mobileOnly() {
            let form = FormRegistry.builtIn.forms[0]
            #expect(form.field(named: "phone")?.phoneTypes == [.mobile])
            let phone = { (input: String, locale: EntryLocale) in
                check(input, form: form, locale: locale).problems.filter { $0.field == "phone" }
            }
            #expect(phone("010 6552 9988", .en).map(\.code) == [.outOfRange])
            #expect(
                phone("010 6552 9988", .en).first?.message
                    == "Phone: this is a landline number, and this field takes mobile numbers only; give a mobile number."
            )
            #expect(phone("010 6552 9988", .zh).first?.message == "手机号码：填写的是固定电话号码，此处只接受手机号码；请换一个手机号码。")
            #expect(
                phone("800 810 8888", .en).first?.message
                    == "Phone: this is a toll-free number, and this field takes mobile numbers only; give a mobile number."
            )
            #expect(check("13800138000", form: form).problems.filter { $0.field == "phone" } == [])
            #expect(check("+1 212 555 0100", country: "US", form: form).problems.filter { $0.field == "phone" } == [])
            // The same landline is fine where any type is taken.
            #expect(check("010 6552 9988").fields["phone"] == "+861065529988")
        }

        @Test("phone-types in a form file: listed types only, each a known name")
        func phoneTypesKey() throws {
            let file = { (types: String) in
                try FormDefinition(
                    ini: IniFile(text: "[form]\n[field p]\ntype = phone\nphone-types = \(types)\n", path: "f.conf"))
            }
            #expect(try file("mobile, fixed-line, voip").fields[0].phoneTypes == [.mobile, .fixedLine, .voip])
            #expect(throws: FormDefinitionError.self) { try file("mobile, fax") }
            #expect(throws: FormDefinitionError.self) { try file("unknown") }
            #expect(throws: FormDefinitionError.self) {
                try FormDefinition(
                    ini: IniFile(text: "[form]\n[field t]\ntype = text\nphone-types = mobile\n", path: "f.conf"))
            }
        }

        @Test("display shows the international format; a value the library cannot read stays as stored")
        func display() {
            let shown = Display.render(
                form: Self.anyType, fields: ["country": "CN", "phone": "+8613800138000"], locale: .zh)
            #expect(shown["phone"] == "+86 138 0013 8000")
            #expect(
                Display.render(form: Self.anyType, fields: ["phone": "+442079460958"], locale: .en)["phone"]
                    == "+44 20 7946 0958")
            #expect(PhoneNumber.format("+861065529988", national: true) == "010 6552 9988")
            #expect(
                Display.render(form: Self.anyType, fields: ["phone": "+9991234"], locale: .en)["phone"] == "+9991234")
        }
    }
}
