import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// The main job end to end: the real entryd driven by the real entryctl.
@Suite(.serialized) struct EntryLifecycleTests {
    static let liLei = [
        "name=李雷", "birthday=1990年5月17日", "country=中国", "province=广东", "city=广州",
        "contact_method=phone", "phone=13800138000",
    ]

    /// The entries of `entryctl list --format json` with extra arguments.
    func listJSON(_ d: Daemon, _ args: [String] = []) throws -> [JSON] {
        let r = try d.entryctl(["list", "--format", "json", "--all"] + args)
        try #require(r.status == 0, "\(r.stderr)")
        return try #require(try JSON.parse(r.stdout).arrayValue)
    }

    @Test(
        "add from lenient input, list with each filter, update with a stale version, delete, restore, history, restart")
    func lifecycle() throws {
        let d = try Daemon()
        let add = try d.entryctl(["--json", "add"] + Self.liLei)
        try #require(add.status == 0, "\(add.stderr)")
        let entry = try JSON.parse(add.stdout)["entry"] ?? JSON.parse(add.stdout)
        let id = try #require(entry["id"]?.stringValue)
        let version = try #require(entry["version"]?.stringValue)
        #expect(
            entry["fields"]
                == JSON.stringMap([
                    "name": "李雷", "birthday": "1990-05-17", "country": "CN", "province": "440000",
                    "city": "440100", "contact_method": "phone", "phone": "+8613800138000",
                ]))
        #expect(entry["display"]?["country"]?.stringValue == "🇨🇳 中国")
        #expect(entry["display"]?["region"]?.stringValue == "广东省-广州市")
        #expect(entry["display"]?["birthday"]?.stringValue == "1990-05-17")

        let other = try d.entryctl([
            "add", "name=Jane Doe", "birthday=1985-12-01", "country=US", "contact_method=email",
            "email=jane@EXAMPLE.com",
        ])
        #expect(other.status == 0, "\(other.stderr)")
        let third = try d.entryctl([
            "add", "name=韩梅梅", "birthday=2001-03-04", "country=CN", "province=浙江", "city=杭州",
            "contact_method=email", "email=hmm@example.cn",
        ])
        #expect(third.status == 0, "\(third.stderr)")

        // The table shows display values, lined up.
        let table = try d.entryctl(["list"])
        #expect(table.status == 0)
        #expect(
            table.stdout.contains("🇨🇳 中国") && table.stdout.contains("广东省-广州市") && table.stdout.contains("1990-05-17"))

        // Each filter, with lenient values.
        func names(_ args: [String]) throws -> Set<String> {
            Set(try listJSON(d, args).compactMap { $0["fields"]?["name"]?.stringValue })
        }
        #expect(try names([]) == ["李雷", "Jane Doe", "韩梅梅"])
        #expect(try names(["--country", "china"]) == ["李雷", "韩梅梅"])
        #expect(try names(["--province", "Guangdong"]) == ["李雷"])
        #expect(try names(["--city", "杭州市"]) == ["韩梅梅"])
        #expect(try names(["--born-from", "1990/1/1"]) == ["李雷", "韩梅梅"])
        #expect(try names(["--born-to", "19901231"]) == ["李雷", "Jane Doe"])
        #expect(try names(["--search", "jane"]) == ["Jane Doe"])
        #expect(try names(["--search", "梅"]) == ["韩梅梅"])
        #expect(try names(["--limit", "1"]).count == 3)  // --all follows the cursor

        // A bad filter value is refused with a problem, exit 65.
        let badFilter = try d.entryctl(["list", "--country", "Atlantis"])
        #expect(badFilter.status == 65)

        // Update with the current version works; with the stale one it is refused.
        let upd = try d.entryctl(["--json", "update", id, "city=深圳", "--if-version", version])
        #expect(upd.status == 0, "\(upd.stderr)")
        let stale = try d.entryctl(["update", id, "city=珠海", "--if-version", version])
        #expect(stale.status == 1)
        #expect(stale.stderr.contains("VersionMismatch") || stale.stderr.contains("version"))
        // An invalid update is refused with every problem and changes nothing.
        let invalid = try d.entryctl(["update", id, "city=杭州", "birthday=1990-02-30"])
        #expect(invalid.status == 65)
        #expect(invalid.stderr.contains("parent-mismatch") && invalid.stderr.contains("invalid-format"))

        // Delete and restore show the entry in the language asked for, labels and values alike.
        let deleted = try d.entryctl(["--locale", "en", "delete", id])
        #expect(
            deleted.status == 0 && deleted.stdout.contains("China") && !deleted.stdout.contains("中国"),
            "\(deleted.stdout)")
        #expect(try names([]) == ["Jane Doe", "韩梅梅"])
        #expect(try names(["--deleted"]).contains("李雷"))
        let restored = try d.entryctl(["--locale", "en", "restore", id])
        #expect(
            restored.status == 0 && restored.stdout.contains("China") && !restored.stdout.contains("中国"),
            "\(restored.stdout)")
        #expect(try names([]).contains("李雷"))

        let history = try d.entryctl(["--json", "history", id])
        #expect(history.status == 0)
        let ops = (try JSON.parse(history.stdout)["changes"]?.arrayValue ?? []).compactMap { $0["op"]?.stringValue }
        #expect(ops == ["create", "update", "delete", "restore"])

        let before = try listJSON(d, ["--deleted"])
        #expect(d.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: d.socket))
        try d.start()
        #expect(try listJSON(d, ["--deleted"]) == before)
        let got = try d.entryctl(["--json", "get", id])
        #expect((try JSON.parse(got.stdout))["entry"]?["fields"]?["city"]?.stringValue == "440300")
        #expect(d.stop() == 0)
    }

    @Test(
        "a reason with a control character is refused by the real entryd, entryctl says why (exit 65), nothing changes")
    func reasonWithControlCharacters() throws {
        let d = try Daemon()
        let add = try d.entryctl(["--json", "add"] + Self.liLei)
        try #require(add.status == 0, "\(add.stderr)")
        let id = try #require((try JSON.parse(add.stdout)["entry"] ?? JSON.parse(add.stdout))["id"]?.stringValue)
        let before = try d.entryctl(["--json", "history", id])
        for (command, reason) in [
            (["update", id, "name=韩梅梅"], "line\nbreak"), (["delete", id], "tab\there"),
            (["update", id, "name=韩梅梅"], "ls\u{2028}x"),
        ] {
            let r = try d.entryctl(["--locale", "en"] + command + ["--reason", reason])
            #expect(r.status == 65, "\(command) \(reason.debugDescription): \(r.stderr)")
            #expect(r.stderr.contains("reason: [invalid-format] The reason must not contain control characters"))
        }
        let after = try d.entryctl(["--json", "history", id])
        #expect(after.stdout == before.stdout && after.status == 0)
        let kept = try d.entryctl(["update", id, "name=韩梅梅", "--reason", "客户来电更正"])
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(try d.entryctl(["--json", "history", id]).stdout.contains("客户来电更正"))
    }

    @Test("a second entryd on a live socket refuses to start; a stale socket file is replaced")
    func socketOwnership() throws {
        let d = try Daemon()
        let second = try runProcess(
            productsDirectory() + "/entryd",
            ["--config", "/dev/null", "--socket", d.socket, "--db", d.directory + "/other.db"])
        #expect(second.status == 69)
        #expect(second.stderr.contains("already serving"))
        #expect(
            !FileManager.default.fileExists(atPath: d.directory + "/other.db"), "a refused start left a database behind"
        )
        // A second daemon on the same database, on another socket, is refused too.
        let sameDB = try runProcess(
            productsDirectory() + "/entryd",
            ["--config", "/dev/null", "--socket", d.directory + "/second.sock", "--db", d.database])
        #expect(sameDB.status == 69)
        #expect(sameDB.stderr.contains("in use by another entryd"))
        #expect(!FileManager.default.fileExists(atPath: d.directory + "/second.sock"))
        #expect(try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 0)
        // kill -9 leaves the socket file; the next start removes it.
        #expect(d.stop(signal: SIGKILL) == SIGKILL)
        #expect(FileManager.default.fileExists(atPath: d.socket))
        try d.start()
        #expect(try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 0)
        #expect(d.stop() == 0)
    }

    @Test("entryctl forms shows when the city is required (its province has cities), as check enforces it")
    func formsShowsCityRule() throws {
        let d = try Daemon()
        let forms = try d.entryctl(["--locale", "en", "forms"])
        #expect(forms.status == 0)
        let city = forms.stdout.split(separator: "\n").first { $0.drop { $0 == " " }.hasPrefix("city ") }
        #expect(city?.contains("when province has cities") == true, "\(forms.stdout)")
        let refused = try d.entryctl([
            "check", "name=X", "birthday=1990-01-01", "country=CN", "province=北京",
            "contact_method=phone", "phone=13800138000",
        ])
        #expect(refused.status == 65 && refused.stderr.contains("city: [required]"))
        #expect(d.stop() == 0)
    }

    /// The problems of a List call with `filter` that must be refused with
    /// `ValidationFailed` (an issue is recorded when it is not).
    func listProblems(_ c: VarlinkConnection, _ filter: [(String, JSON)], locale: String) -> [JSON] {
        do {
            _ = try c.call(
                "io.entryd.Entries.List", .object([("filter", .object(filter)), ("locale", .string(locale))]))
            Issue.record("List accepted the filter \(filter.map(\.0))")
        } catch let e as WireError {
            #expect(e.name == "io.entryd.Entries.ValidationFailed")
            return e.parameters["problems"]?.arrayValue ?? []
        } catch {
            Issue.record("List failed: \(error)")
        }
        return []
    }

    @Test(
        "List by name in zh pages in pinyin order (阿 a … 张 zhang, 赵 zhao) with no entry twice or missing; a zh cursor is refused in en"
    )
    func listByNameInPinyin() throws {
        let d = try Daemon()
        let c = try d.connect()
        let names = ["张三", "李四", "王五", "阿明", "赵六", "陈七", "周八", "吴九", "郑十", "Alice"]
        for name in names {
            _ = try c.call(
                "io.entryd.Entries.Add",
                .object([
                    (
                        "fields",
                        .stringMap([
                            "name": name, "birthday": "1990-05-17", "country": "US", "contact_method": "email",
                            "email": "a@example.com",
                        ])
                    )
                ]))
        }
        func pages(_ locale: String, descending: Bool) throws -> (names: [String], ids: [String]) {
            var names: [String] = []
            var ids: [String] = []
            var cursor: String?
            repeat {
                var parameters: [(String, JSON)] = [
                    ("order", .string("name")), ("descending", .bool(descending)),
                    ("limit", .int(3)), ("locale", .string(locale)),
                ]
                if let cursor { parameters.append(("cursor", .string(cursor))) }
                let page = try c.call("io.entryd.Entries.List", .object(parameters))
                #expect(page["total"]?.intValue == 10)
                for entry in page["entries"]?.arrayValue ?? [] {
                    names.append(entry["fields"]?["name"]?.stringValue ?? "")
                    ids.append(entry["id"]?.stringValue ?? "")
                }
                cursor = page["cursor"]?.stringValue
            } while cursor != nil
            return (names, ids)
        }
        let zh = ["阿明", "陈七", "李四", "王五", "吴九", "张三", "赵六", "郑十", "周八", "Alice"]
        let ascending = try pages("zh", descending: false)
        #expect(ascending.names == zh)
        #expect(Set(ascending.ids).count == 10)
        #expect(try pages("zh", descending: true).names == zh.reversed())
        // en keeps code-point order: Latin first, then Han by code point.
        #expect(
            try pages("en", descending: false).names
                == names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        // A cursor made in one name order is not read in the other.
        let first = try c.call(
            "io.entryd.Entries.List",
            .object([("order", .string("name")), ("limit", .int(3)), ("locale", .string("zh"))]))
        let cursor = try #require(first["cursor"]?.stringValue)
        #expect(throws: WireError.invalidParameter("cursor")) {
            _ = try c.call(
                "io.entryd.Entries.List",
                .object([
                    ("order", .string("name")), ("limit", .int(3)), ("locale", .string("en")),
                    ("cursor", .string(cursor)),
                ]))
        }
    }

    @Test(
        "List refuses a bad filter naming every problem (updatedSince, dates, a city outside the province); Options names an unknown parent; a limit beyond Double is InvalidParameter"
    )
    func listFilterErrors() throws {
        let d = try Daemon()
        let c = try d.connect()
        let bad = listProblems(
            c, [("country", .string("Atlantis")), ("updatedSince", .string("yesterday"))], locale: "en")
        #expect(Set(bad.compactMap { $0["field"]?.stringValue }) == ["country", "updatedSince"])
        #expect(
            bad.first { $0["field"]?.stringValue == "updatedSince" }?["message"]?.stringValue
                == "The updatedSince filter 'yesterday' is not a valid RFC 3339 time; use 2026-01-31T08:00:00Z.")
        #expect(
            listProblems(c, [("bornFrom", .string("1990-13-01"))], locale: "zh").first?["message"]?.stringValue
                == "筛选条件 bornFrom 的值“1990-13-01”不是有效的日期，例如 1990-05-17 或 1990年5月17日。")
        // A city outside the province filter is a parent mismatch (one row matched, not several).
        let problem = listProblems(c, [("province", .string("110000")), ("city", .string("440100"))], locale: "en")
            .first
        #expect(problem?["code"]?.stringValue == "parent-mismatch" && problem?["field"]?.stringValue == "city")
        #expect(problem?["message"]?.stringValue == "The city filter '440100' is not in the chosen province (Beijing).")
        // A retired city code (which stored entries keep) filters; outside its province it is a mismatch.
        #expect(
            try c.call("io.entryd.Entries.List", .object([("filter", .object([("city", .string("371200"))]))]))[
                "total"]?.intValue == 0)
        #expect(
            try c.call(
                "io.entryd.Entries.List",
                .object([
                    (
                        "filter",
                        .object([
                            ("province", .string("370000")),
                            ("city", .string("371200")),
                        ])
                    )
                ]))["total"]?.intValue == 0)
        #expect(throws: WireError.self) {
            _ = try c.call(
                "io.entryd.Entries.List",
                .object([
                    (
                        "filter",
                        .object([
                            ("province", .string("440000")),
                            ("city", .string("371200")),
                        ])
                    )
                ]))
        }
        #expect(throws: WireError.invalidParameter("parent")) {
            _ = try c.call(
                "io.entryd.Forms.Options", .object([("field", .string("city")), ("parent", .string("zzz"))]))
        }
        // A number beyond Double: InvalidParameter naming it, and the connection stays.
        try c.sendRaw(Array(#"{"method":"io.entryd.Entries.List","parameters":{"limit":1e309}}"#.utf8) + [0])
        let reply = try c.receive()
        #expect(
            reply.error == "org.varlink.service.InvalidParameter"
                && reply.parameters["parameter"]?.stringValue == "limit")
        #expect(try c.call("io.entryd.Sync.Status")["entries"]?.intValue == 0)
        #expect(d.stop() == 0)
    }

    @Test("status labels its lines in the chosen locale (zh: 节点, 条目, 库：; en: node, entries, libraries:)")
    func statusInBothLanguages() throws {
        let d = try Daemon()
        #expect(try d.entryctl(["add"] + Self.liLei).status == 0)
        let zh = try d.entryctl(["--locale", "zh", "status"])
        try #require(zh.status == 0, "\(zh.stderr)")
        let zhLines = zh.stdout.split(separator: "\n").map(String.init)
        #expect(zhLines.contains { $0.hasPrefix("条目") && $0.hasSuffix(" 1") }, "\(zh.stdout)")
        for heading in ["节点", "数据代次", "参考数据版本", "表单：", "限制：", "库："] {
            #expect(zhLines.contains { $0.hasPrefix(heading) }, "missing \(heading) in\n\(zh.stdout)")
        }
        #expect(!zhLines.contains { $0.hasPrefix("entries") || $0.hasPrefix("node") }, "\(zh.stdout)")
        #expect(!zh.stdout.contains("化身"), "incarnation is 数据代次 in zh: \(zh.stdout)")
        let en = try d.entryctl(["--locale", "en", "status"])
        try #require(en.status == 0, "\(en.stderr)")
        let enLines = en.stdout.split(separator: "\n").map(String.init)
        #expect(enLines.contains { $0.hasPrefix("entries") && $0.hasSuffix(" 1") }, "\(en.stdout)")
        for heading in ["node", "dataVersion", "forms:", "limits:", "libraries:"] {
            #expect(enLines.contains { $0.hasPrefix(heading) }, "missing \(heading) in\n\(en.stdout)")
        }
        #expect(d.stop() == 0)
    }
}
