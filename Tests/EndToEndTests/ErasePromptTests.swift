import EntryLedger
import EntryModel
import Foundation
import Testing

/// `entryctl erase --phone/--email/--name …` asks before it erases: the prompt
/// names each person FindSubject found (name, birthday, masked contact, what
/// matched) and warns when one value is shared by several people.
@Suite struct ErasePromptTests {
    static func person(_ name: String, _ birthday: String, _ contact: [String]) -> [String] {
        ["--json", "add", "name=\(name)", "birthday=\(birthday)", "country=CN", "province=广东", "city=广州"] + contact
    }

    func add(_ d: Daemon, _ arguments: [String]) throws -> String {
        let r = try d.entryctl(arguments)
        try #require(r.status == 0, "\(r.stderr)")
        return try #require(try JSON.parse(r.stdout)["entry"]?["id"]?.stringValue)
    }

    @Test(
        "the erase prompt lists name, birthday, masked contact and what matched; a shared phone is said; no erases nothing"
    )
    func promptNamesPeople() throws {
        let d = try Daemon()
        defer { d.stop() }
        let phone = ["contact_method=phone", "phone=13800138000"]
        let li = try add(d, Self.person("李雷", "1990-05-17", phone))
        let han = try add(d, Self.person("韩梅梅", "1992-03-04", phone))
        let wang = try add(
            d, Self.person("王芳", "1985-11-02", ["contact_method=email", "email=wang.fang@example.com"]))

        let zh = try d.entryctl(
            ["--locale", "zh", "erase", "--phone", "138 0013 8000", "--reason", "本人要求"], input: "no\n")
        #expect(zh.status == 1, "\(zh)")
        for word in [
            "将彻底清除 2 个条目", "李雷", "韩梅梅", "生日 1990-05-17", "生日 1992-03-04", "138****8000", "匹配：手机号码；表单 登记",
            "由 2 个不同的人共用", li, han, "输入 yes 继续",
        ] {
            #expect(zh.stderr.contains(word), "missing \(word) in\n\(zh.stderr)")
        }
        #expect(!zh.stderr.contains("13800138000") && !zh.stderr.contains("王芳"), "\(zh.stderr)")
        for id in [li, han] { #expect(try d.entryctl(["get", id]).status == 0, "not erased after no") }

        let en = try d.entryctl(
            ["--locale", "en", "erase", "--email", "Wang.Fang@example.com", "--reason", "request"], input: "no\n")
        #expect(en.status == 1, "\(en)")
        for word in ["王芳", "born 1985-11-02", "w***@example.com", "matched: Email", wang] {
            #expect(en.stderr.contains(word), "missing \(word) in\n\(en.stderr)")
        }
        #expect(!en.stderr.contains("wang.fang@") && !en.stderr.contains("shared by"), "\(en.stderr)")

        let byName = try d.entryctl(
            ["--locale", "en", "erase", "--name", "李雷", "--birthday", "1990年5月17日", "--reason", "request"],
            input: "no\n")
        #expect(byName.stderr.contains("matched: Name and Birthday") && byName.stderr.contains(li), "\(byName.stderr)")
        #expect(!byName.stderr.contains(han), "\(byName.stderr)")

        // International formats match the stored number as a whole, in the form's phone field.
        let intl = try d.entryctl(
            ["--locale", "zh", "erase", "--phone", "0086 138-0013-8000", "--reason", "本人要求"], input: "no\n")
        #expect(intl.stderr.components(separatedBy: "匹配：手机号码").count == 3, "\(intl.stderr)")

        // By id: who the entry is, too, not only its id.
        let byID = try d.entryctl(["--locale", "en", "erase", wang, "--reason", "request"], input: "no\n")
        #expect(byID.status == 1, "\(byID)")
        for word in ["王芳", "born 1985-11-02", "w***@example.com", "chosen by id", "form Registration", wang] {
            #expect(byID.stderr.contains(word), "missing \(word) in\n\(byID.stderr)")
        }
        #expect(try d.entryctl(["get", wang]).status == 0, "not erased after no")

        // yes: both people who share the phone are erased
        let yes = try d.entryctl(
            ["--locale", "en", "erase", "--phone", "13800138000", "--reason", "request"], input: "yes\n")
        #expect(yes.status == 0, "\(yes)")
        for id in [li, han] { #expect(try d.entryctl(["get", id]).status != 0) }
        #expect(try d.entryctl(["get", wang]).status == 0)
    }

    @Test(
        "erase --verify while the purge after the erasure is pending: --no-wait says so and fails, without it entryctl waits for the purge and then finds 0 hits"
    )
    func verifyWaitsForPurge() throws {
        let d = try Daemon()
        defer { d.stop() }
        let id = try add(
            d, Self.person("Qwzpurgetest", "1971-02-03", ["contact_method=phone", "phone=13900171235"]))
        // A reader of the database file in a read transaction: no truncating checkpoint, so no step
        // of the purge, runs until it ends.
        let reader = try SQLiteConnection(path: d.database, readOnly: true)
        try reader.execute("BEGIN")
        try reader.statement("SELECT COUNT(*) FROM changes").query { _ in }
        let erased = try d.entryctl(["erase", id, "--reason", "request", "--yes"])
        #expect(erased.status == 0, "\(erased)")
        let verify = ["erase", "--verify", id, "--value", "+8613900171235", "--value", "Qwzpurgetest"]
        let pending = try d.entryctl(["--locale", "en"] + verify + ["--no-wait"])
        #expect(
            pending.status == 1 && pending.stderr.contains("the purge after the erasure is still pending"), "\(pending)"
        )
        let zh = try d.entryctl(["--locale", "zh"] + verify + ["--no-wait"])
        #expect(zh.status == 1 && zh.stderr.contains("清除后的清理尚未完成"), "\(zh)")
        try reader.execute("COMMIT")
        let done = try d.entryctl(["--locale", "en"] + verify)
        #expect(
            done.status == 0 && done.stdout.contains("0 hit(s) in all") == false
                && done.stdout.contains("0 hits in all"), "\(done)")
    }
}
