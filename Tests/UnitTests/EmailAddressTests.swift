import Foundation
import Testing
@testable import EntryModel

// Nested in FormsTests so that `swift test --filter Forms` runs it.
extension FormsTests {
    /// E-mail addresses with IDNA2008 domains through libidn2 (Forms/EmailAddress.swift).
    @Suite struct EmailAddressTests {
        let form = FormDefinition(
            name: "e", titles: [.en: "E"],
            fields: [
                FieldDefinition(name: "email", type: .email, labels: [.en: "Email", .zh: "邮箱"])
            ])

        func check(_ email: String, locale: EntryLocale = .en) -> ValidationResult {
            Validator().validate(form: form, input: ["email": email], locale: locale)
        }

        @Test(
            "Unicode, xn--, mixed-case and full-width-dot spellings of one mailbox give one stored value",
            arguments: [
                "李雷@例子.中国", "李雷@xn--fsqu00a.xn--fiqs8s", "李雷@XN--FSQU00A.XN--FIQS8S", "李雷@例子。中国",
                "李雷@例子．中国", "李雷@例子｡中国", "李雷@例子.xn--fiqs8s", " 李雷@例子.中国 ",
            ])
        func oneStoredValue(input: String) {
            let result = check(input)
            #expect(result.problems == [])
            #expect(result.fields["email"] == "李雷@xn--fsqu00a.xn--fiqs8s")
        }

        @Test("the local part is kept as typed; ASCII domains are lower-cased; TR46 maps the domain (non-transitional)")
        func localPartAndMapping() {
            #expect(check("Li.Lei+x@Example.COM").fields["email"] == "Li.Lei+x@example.com")
            #expect(check("Jane@BÜCHER.example").fields["email"] == "Jane@xn--bcher-kva.example")
            // Non-transitional: ß stays ß (xn--fa-hia), it does not become ss.
            #expect(check("a@faß.de").fields["email"] == "a@xn--fa-hia.de")
        }

        @Test("display shows the domain in Unicode; other values as stored")
        func display() {
            #expect(EmailAddress.display("李雷@xn--fsqu00a.xn--fiqs8s") == "李雷@例子.中国")
            #expect(
                Display.render(form: form, fields: ["email": "a@xn--fa-hia.de"], locale: .en)["email"] == "a@faß.de")
            #expect(EmailAddress.display("a@example.com") == "a@example.com")
        }

        @Test(
            "labels IDNA2008 does not allow are refused, naming the label",
            arguments: [
                ("a@xn--zz.com", "xn--zz"), ("a@ex_ample.com", "ex_ample"), ("a@-example.com", "-example"),
                ("a@example-.com", "example-"), ("a@☃.com", "☃"),
                ("a@" + String(repeating: "a", count: 64) + ".com", String(repeating: "a", count: 64)),
            ])
        func badLabels(input: String, label: String) {
            let problems = check(input).problems
            #expect(problems.map(\.code) == [.invalidFormat])
            #expect(
                problems.first?.message
                    == "Email has a domain part '\(label)' that is not a valid (internationalised) domain name: letters, digits and inner hyphens only, at most 63 bytes a label; check the spelling."
            )
            #expect(check(input, locale: .zh).problems.first?.message.contains("“\(label)”") == true)
        }

        @Test(
            "shapes that are no address are refused",
            arguments: ["a@@b.cn", "a@localhost", "a..b@b.cn", "a@b..cn", "a@b.123", "@b.cn", "a@"])
        func badShapes(input: String) {
            #expect(check(input).problems.map(\.code) == [.invalidFormat])
        }

        @Test("lengths per RFC 5321: local part 64 octets, whole address 254 in the stored form")
        func lengths() {
            let label = String(repeating: "a", count: 63)
            let local64 = String(repeating: "b", count: 64)
            #expect(check(local64 + "@example.com").problems == [])
            #expect(check(local64 + "b@example.com").problems.map(\.code) == [.tooLong])
            // 64 + 1 + (63 + 1 + 63 + 1 + 57 + 1 + 3) = 254 octets: the most allowed.
            let longest =
                local64 + "@" + [label, label, String(repeating: "c", count: 57), "com"].joined(separator: ".")
            #expect(longest.utf8.count == 254 && check(longest).problems == [])
            #expect(check("b" + longest).problems.map(\.code) == [.tooLong])
            // Counted in the stored (A-label) form: 例子 and 46 a's are 52 UTF-8 octets, 60 as an A-label.
            let unicode =
                local64 + "@" + [label, label, "例子" + String(repeating: "a", count: 46), "com"].joined(separator: ".")
            #expect(unicode.utf8.count == 249)
            #expect(check(unicode).problems.map(\.code) == [.tooLong])
        }
    }
}
