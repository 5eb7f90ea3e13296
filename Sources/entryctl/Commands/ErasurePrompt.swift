import Foundation
import EntryModel
import EntryProtocol
import EntryClient

/// What `entryctl erase --phone/--email/--name …` shows before asking: each
/// entry FindSubject found, by name, birthday, masked contact and what matched,
/// and a warning when one value is shared by several people (erasing by it
/// erases them all). Read with `Get` (one call per entry); an entry it cannot
/// read is listed by its id.
enum ErasurePrompt {
    /// One found entry as the prompt shows it.
    struct Person {
        let id: String
        let form: String
        let name: String
        let birthday: String
        /// The masked phone and e-mail (empty when the entry has none).
        let phone: String
        let email: String
        /// The masked phone and e-mail the entry has, as one text.
        var contact: String { [phone, email].filter { !$0.isEmpty }.joined(separator: ", ") }
        /// What matched, in the locale (the field's label), or nil: a value in the history or a conflict record.
        let matched: [String]
        /// The kinds of value that matched (`phone`, `email`, `name`).
        let matchedKinds: Set<String>
    }

    /// The digits of `text`.
    static func digits(_ text: String) -> String { String(text.filter(\.isASCII).filter(\.isNumber)) }

    /// Whether a stored phone number (canonical E.164, `+8613800138000`) is the
    /// number typed as `given` in any format: international (`+86 138…`,
    /// `0086 138…`) or national with or without the trunk prefix (`138…`,
    /// `07911 123456`). The whole national number must match, not a tail of
    /// it: two people whose numbers share their last digits are not one match.
    static func samePhone(stored: String, given: String) -> Bool {
        let have = digits(stored)
        var typed = Substring(digits(given))
        while typed.first == "0" { typed = typed.dropFirst() }
        guard typed.count >= 6, !have.isEmpty else { return false }
        return have == typed || have.hasSuffix(typed) && have.count - typed.count <= 3
    }

    /// The numbers of a date as typed (`1990-05-17`, `1990年5月17日`: 1990, 5, 17).
    static func numbers(_ text: String) -> [Int] { text.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) } }

    /// A phone number (its display form, `+86 138 0013 8000`) with the middle
    /// of its national number hidden: `138****8000`, and `+44 791****3456` for
    /// another country (the country code stays, China's is left out).
    static func maskPhone(_ display: String) -> String {
        var groups = display.split(separator: " ").map(String.init)
        var prefix = ""
        if groups.count > 1, groups[0].hasPrefix("+") {
            prefix = groups[0] == "+86" ? "" : groups[0] + " "
            groups.removeFirst()
        }
        let national = digits(groups.joined())
        guard national.count >= 7 else {
            return prefix + String(repeating: "*", count: max(0, national.count - 2)) + national.suffix(2)
        }
        return prefix + national.prefix(3) + "****" + national.suffix(4)
    }

    /// An e-mail address with its local part hidden but the first character: `a***@example.com`.
    static func maskEmail(_ email: String) -> String {
        guard let at = email.lastIndex(of: "@"), at != email.startIndex else { return "***" }
        return String(email[email.startIndex]) + "***" + email[at...]
    }

    /// The prompt's lines for `targets`, found by `given` (option name without
    /// `--` and its value), in `locale`.
    static func lines(
        _ targets: [(id: String, form: String)], given: [(String, String?)], session: DaemonConnection,
        locale: EntryLocale
    ) -> [String] {
        let say = { (zh: String, en: String) in Localized(zh: zh, en: en)(locale) }
        func value(_ key: String) -> String? { given.first { $0.0 == key }?.1 ?? nil }
        var forms: [String: JSON] = [:]
        func load(_ form: String) {
            if forms[form] == nil {
                forms[form] =
                    (try? session.call(.formsGetForm, params(("name", .string(form)), ("locale", session.locale)))[
                        "form"]) ?? .object([])
            }
        }
        func title(_ form: String) -> String {
            load(form)
            return forms[form]?["title"]?.stringValue ?? form
        }
        func label(_ form: String, _ field: String) -> String {
            load(form)
            return forms[form]?["fields"]?.arrayValue?.first { $0["name"]?.stringValue == field }?["label"]?
                .stringValue ?? field
        }
        /// The form's fields of `type` (`phone`, `email`), or the field named
        /// like the type when the form cannot be read.
        func fields(_ form: String, ofType type: String) -> [String] {
            load(form)
            let named = (forms[form]?["fields"]?.arrayValue ?? []).filter { $0["type"]?.stringValue == type }
                .compactMap { $0["name"]?.stringValue }
            return named.isEmpty ? [type] : named
        }
        let people: [Person] = targets.map { t in
            let entry = try? session.call(.entriesGet, params(("id", .string(t.id)), ("locale", session.locale)))[
                "entry"]
            func f(_ k: String) -> String { entry?["fields"]?[k]?.stringValue ?? "" }
            // Chosen by id, the target's form is not known until the entry is read.
            let form = t.form.isEmpty ? entry?["form"]?.stringValue ?? "" : t.form
            func d(_ k: String) -> String { entry?["display"]?[k]?.stringValue ?? f(k) }
            var matched: [String] = []
            var kinds: Set<String> = []
            // Every phone and e-mail field of the entry's form, not only the one named so.
            if let phone = value("phone") {
                for field in fields(form, ofType: "phone") where samePhone(stored: f(field), given: phone) {
                    matched.append(label(form, field))
                    kinds.insert("phone")
                }
            }
            if let email = value("email") {
                let typed = email.trimmingCharacters(in: .whitespaces).lowercased()
                for field in fields(form, ofType: "email") where !typed.isEmpty && f(field).lowercased() == typed {
                    matched.append(label(form, field))
                    kinds.insert("email")
                }
            }
            if let birthday = value("birthday"), numbers(f("birthday")) == numbers(birthday), value("name") != nil {
                matched.append(label(form, "name") + say("与", " and ") + label(form, "birthday"))
                kinds.insert("name")
            }
            return Person(
                id: t.id, form: form, name: d("name"), birthday: f("birthday"),
                phone: f("phone").isEmpty ? "" : maskPhone(d("phone")),
                email: f("email").isEmpty ? "" : maskEmail(d("email")), matched: matched, matchedKinds: kinds)
        }
        var lines: [String] = []
        for (k, p) in people.enumerated() {
            var parts = [p.name.isEmpty ? say("（无姓名）", "(no name)") : p.name]
            if !p.birthday.isEmpty { parts.append(say("生日 \(p.birthday)", "born \(p.birthday)")) }
            if !p.contact.isEmpty { parts.append(p.contact) }
            let what =
                given.isEmpty
                ? say("按 ID 选中", "chosen by id")
                : p.matched.isEmpty
                    ? say("匹配的是历史记录或冲突记录中的值", "matched: a value in its history or a conflict record")
                    : say("匹配：\(p.matched.joined(separator: "、"))", "matched: \(p.matched.joined(separator: ", "))")
            lines.append("  \(k + 1). " + parts.joined(separator: say("，", ", ")))
            lines.append("     " + what + say("；表单 ", "; form ") + title(p.form) + say("；ID ", "; id ") + p.id)
        }
        // One value, several people (by name and birthday): erasing by it erases every one of them.
        for kind in ["phone", "email"] {
            let holders = people.filter { $0.matchedKinds.contains(kind) }
            let distinct = Set(holders.map { "\($0.name)\u{1F}\($0.birthday)" })
            guard distinct.count > 1 else { continue }
            let masked = kind == "phone" ? holders[0].phone : holders[0].email
            let what = label(holders[0].form, kind)
            lines.append(
                say(
                    "注意：\(what) \(masked) 由 \(distinct.count) 个不同的人共用（姓名或生日不同），以上每个人都会被清除。"
                        + "只想清除其中一人时，请回答 no，再用条目 ID 清除：entryctl erase ID --reason …",
                    "Note: \(what) \(masked) is shared by \(distinct.count) different people (other name or birthday); "
                        + "every one of them above would be erased. To erase only one, answer no and erase by id: "
                        + "entryctl erase ID --reason …"))
        }
        return lines
    }
}
