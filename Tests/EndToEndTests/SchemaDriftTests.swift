import EntryModel
import EntryLedger
import EntryProtocol
import Foundation
import Testing

/// Issue 15, schema drift: a node whose form lacks a field (`note`) or an
/// option (`contact_method` = `wechat`) that its stored entries hold loses
/// neither in any output — Get, List, `entryctl get`, export in each format,
/// backup — and no update, merge or import from something that does not know
/// them clears them.
@Suite(.serialized) struct SchemaDriftTests {
    /// The built-in registration form file.
    static let original = try! String(contentsOfFile: packageRoot + "/config/forms/registration.conf", encoding: .utf8)

    /// The registration form of a peer that knows more: a `note` field and a `wechat` contact method.
    static let wider =
        original.replacingOccurrences(of: "options = phone, email", with: "options = phone, email, wechat")
        + "\n[field note]\ntype = text\nlabel = Note\nlabel.zh = 备注\n"

    /// A daemon that stored one entry with `note` and `wechat` and one without
    /// under the wider form, then restarted with the built-in form (the form
    /// file dropped them): the daemon, and the ids of the drifted and the plain entry.
    func driftedDaemon() throws -> (Daemon, drifted: String, plain: String) {
        let directory = NSTemporaryDirectory() + "entryd-drift-" + String(UUID().uuidString.prefix(8))
        let forms = directory + "/forms"
        try FileManager.default.createDirectory(atPath: forms, withIntermediateDirectories: true)
        try Self.wider.write(toFile: forms + "/registration.conf", atomically: true, encoding: .utf8)
        let d = try Daemon(directory: directory, arguments: ["--forms", forms])
        let c = try d.connect()
        let drifted = try c.call(
            "io.entryd.Entries.Add",
            .object([
                (
                    "fields",
                    .stringMap([
                        "name": "韩梅梅", "birthday": "1991-02-03", "country": "CN", "province": "广东", "city": "广州",
                        "contact_method": "wechat", "note": "VIP, \"老客户\"",
                    ])
                )
            ]))["entry"]?["id"]?.stringValue
        let plain = try c.call(
            "io.entryd.Entries.Add",
            .object([
                (
                    "fields",
                    .stringMap([
                        "name": "李雷", "birthday": "1990-05-17", "country": "CN", "province": "广东", "city": "广州",
                        "contact_method": "phone", "phone": "13800138000",
                    ])
                )
            ]))["entry"]?["id"]?.stringValue
        c.close()
        d.stop()
        try Self.original.write(toFile: forms + "/registration.conf", atomically: true, encoding: .utf8)
        try d.start()
        return (d, try #require(drifted), try #require(plain))
    }

    @Test(
        "Get and List keep fields and values the form does not know: in fields, as they are in display, named in unknownFields and unknownValues"
    )
    func replies() throws {
        let (d, drifted, plain) = try driftedDaemon()
        let c = try d.connect()
        let entry = try #require(
            try c.call("io.entryd.Entries.Get", .object([("id", .string(drifted)), ("locale", .string("en"))]))["entry"]
        )
        #expect(entry["fields"]?["note"]?.stringValue == "VIP, \"老客户\"")
        #expect(entry["fields"]?["contact_method"]?.stringValue == "wechat")
        #expect(entry["display"]?["note"]?.stringValue == "VIP, \"老客户\"")
        #expect(entry["display"]?["contact_method"]?.stringValue == "wechat")
        #expect(entry["display"]?["country"]?.stringValue == "🇨🇳 China")
        #expect(entry["unknownFields"] == .array([.string("note")]))
        #expect(entry["unknownValues"] == .array([.string("contact_method")]))
        let page = try c.call("io.entryd.Entries.List", .object([("locale", .string("zh"))]))
        let listed = try #require(page["entries"]?.arrayValue)
        let same = try #require(listed.first { $0["id"]?.stringValue == drifted })
        #expect(
            same["unknownFields"] == .array([.string("note")])
                && same["display"]?["note"]?.stringValue == "VIP, \"老客户\"")
        // An entry the form knows whole is sent as before: neither member.
        let known = try #require(listed.first { $0["id"]?.stringValue == plain })
        #expect(known["unknownFields"] == nil && known["unknownValues"] == nil)
    }

    @Test(
        "entryctl get shows a field the form does not define after the others, marked, and marks a value not in the lists (zh and en)"
    )
    func getText() throws {
        let (d, drifted, _) = try driftedDaemon()
        let en = try d.entryctl(["--locale", "en", "get", drifted])
        try #require(en.status == 0, "\(en.stderr)")
        let lines = en.stdout.split(separator: "\n").map(String.init)
        let note = try #require(lines.firstIndex { $0.hasPrefix("note (not in this form)") }, "\(en.stdout)")
        #expect(lines[note].hasSuffix("VIP, \"老客户\""))
        let method = try #require(lines.firstIndex { $0.contains("wechat") }, "\(en.stdout)")
        #expect(lines[method].hasSuffix("wechat (not in this form's lists)") && method < note)
        let zh = try d.entryctl(["--locale", "zh", "get", drifted])
        #expect(zh.stdout.contains("note（本表单没有此字段）"), "\(zh.stdout)")
        #expect(zh.stdout.contains("wechat（不在本表单的选项中）"), "\(zh.stdout)")
    }

    @Test(
        "export keeps them in every format; a CSV has a marked column per unknown field and imports back into its node unchanged"
    )
    func exports() throws {
        let (d, drifted, plain) = try driftedDaemon()
        for format in ["jsonl", "json"] {
            let out = try d.entryctl(["export", "--format", format])
            try #require(out.status == 0, "\(out.stderr)")
            #expect(out.stdout.contains(#""note":"VIP, \"老客户\"""#), "\(format): \(out.stdout)")
            #expect(out.stdout.contains(#""unknownFields":["note"]"#), "\(format): \(out.stdout)")
        }
        let csvFile = d.directory + "/drift.csv"
        let csv = try d.entryctl(["export", "--format", "csv", "-o", csvFile])
        try #require(csv.status == 0, "\(csv.stderr)")
        let text = try String(contentsOfFile: csvFile, encoding: .utf8)
        let header = String(text.prefix { $0 != "\n" && $0 != "\r" })
        #expect(
            header.hasPrefix(
                "id,name,birthday,country,province,city,contact_method,phone,email,appointment,unknown.note,deleted"),
            "\(header)")
        #expect(text.contains(#"wechat,,,,"VIP, ""老客户""",false"#), "\(text)")
        let people = try d.entryctl(["--locale", "zh", "export", "--labels"])
        #expect(people.stdout.contains("note（本表单没有此字段）"), "\(people.stdout)")
        let peopleEn = try d.entryctl(["--locale", "en", "export", "--labels", "--excel"])
        #expect(peopleEn.stdout.contains("note (not in this form)"), "\(peopleEn.stdout)")

        // Each export imports back into the same node as unchanged: nothing refused, nothing cleared.
        try people.stdout.write(toFile: d.directory + "/people.csv", atomically: true, encoding: .utf8)
        let jsonl = try d.entryctl(["export"])
        try jsonl.stdout.write(toFile: d.directory + "/drift.jsonl", atomically: true, encoding: .utf8)
        for file in ["drift.csv", "people.csv", "drift.jsonl"] {
            let again = try d.entryctl(["--json", "import", d.directory + "/" + file])
            #expect(again.status == 0, "\(file): \(again.stdout) \(again.stderr)")
            let counts = try JSON.parse(again.stdout)
            #expect(counts["unchanged"]?.intValue == 2 && counts["added"]?.intValue == 0, "\(file): \(again.stdout)")
        }
        // A CSV without the note column (a client that does not know it) does not clear it either.
        let lean =
            text.split(whereSeparator: \.isNewline).map { line in
                line.split(separator: ",", omittingEmptySubsequences: false).prefix(10).joined(separator: ",")
            }.joined(separator: "\n") + "\n"
        let leanImport = try d.entryctl(["--json", "import", "--format", "csv", "-"], input: lean)
        #expect(
            try JSON.parse(leanImport.stdout)["unchanged"]?.intValue == 2, "\(leanImport.stdout) \(leanImport.stderr)")
        let c = try d.connect()
        #expect(
            try c.call("io.entryd.Entries.Get", .object([("id", .string(drifted))]))["entry"]?["fields"]?["note"]?
                .stringValue == "VIP, \"老客户\"")

        // On a node that never held the entry, the unknown field cannot be stored: that row is refused, naming it.
        let empty = try Daemon()
        let elsewhere = try empty.entryctl(["--json", "import", csvFile])
        #expect(elsewhere.status == 65, "\(elsewhere.stdout) \(elsewhere.stderr)")
        #expect(try JSON.parse(elsewhere.stdout)["added"]?.intValue == 1)
        #expect(elsewhere.stderr.contains("note"), "\(elsewhere.stderr)")
        _ = try empty.connect().call("io.entryd.Entries.Get", .object([("id", .string(plain))]))
    }

    @Test("an update from a client, a change from a peer and a backup that do not know a field keep it")
    func updatesAndBackup() throws {
        let (d, drifted, _) = try driftedDaemon()
        let updated = try d.entryctl(["update", drifted, "name=韩梅梅二"])
        try #require(updated.status == 0, "\(updated.stderr)")
        let c = try d.connect()
        func fields() throws -> JSON? {
            try c.call("io.entryd.Entries.Get", .object([("id", .string(drifted))]))["entry"]?["fields"]
        }
        #expect(try fields()?["note"]?.stringValue == "VIP, \"老客户\"")
        #expect(try fields()?["contact_method"]?.stringValue == "wechat")

        // A peer whose form lacks note changes the name and the contact group.
        let history = try #require(
            try c.call("io.entryd.Entries.History", .object([("id", .string(drifted))]))["changes"]?.arrayValue)
        let last = try #require(history.last?["hlc"]?.stringValue)
        let created = try #require(history.first?["hlc"]?.stringValue)
        // Stamped after the write it saw, also when the clock has not yet moved past
        // that write's millisecond (a tie would go to the greater node id, not to it).
        let lastMs = try #require(HLC(last)).milliseconds
        let now = max(UInt64(Date().timeIntervalSince1970 * 1000), lastMs + 1)
        let change = JSON.object([
            ("node", .string("0193a5e2-7c4b-7def-8a12-000000000015")),
            ("hlc", .string(HLC(milliseconds: now, counter: 0).description)), ("entry", .string(drifted)),
            ("form", .string("registration")), ("op", .string("update")),
            (
                "fields",
                .stringMap(["name": "Han Meimei", "contact_method": "email", "phone": "", "email": "han@example.com"])
            ),
            ("base", .stringMap(["name": last, "contact_method": created, "phone": "", "email": ""])),
            ("actor", .string("peer")), ("at", .string(Timestamp.rfc3339(milliseconds: now))),
        ])
        let applied = try c.call("io.entryd.Sync.Apply", .object([("changes", .array([change]))]))
        #expect(applied["applied"]?.intValue == 1, "\(applied)")
        #expect(try fields()?["name"]?.stringValue == "Han Meimei")
        #expect(try fields()?["note"]?.stringValue == "VIP, \"老客户\"")

        // The backup is a copy of the database: it holds the field as well.
        let file = d.directory + "/backup.db"
        let backup = try d.entryctl(["backup", file])
        try #require(backup.status == 0, "\(backup.stderr)")
        // Opened elsewhere than its node's database, the copy must be named a copy (a new node id).
        let copy = try EntryStore(path: file, readers: 1, copies: .newNode)
        defer { copy.close() }
        #expect(try copy.get(drifted)?.fields["note"] == "VIP, \"老客户\"")
    }
}
