import Foundation
import Testing
import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer

/// `entryctl` against ``FakeDaemon``: what it sends, what it prints, how it exits.
@Suite(.serialized) struct EntryctlDaemonTests {
    typealias Run = EntryctlProcess

    /// Serves the fixtures: GetForm, Get (one id), Add/Check (country "Chna" is
    /// refused), Update (checks ifVersion), List (two pages), Status, and a
    /// StorageFailed for io.example.Fail.
    static func daemon() throws -> FakeDaemon {
        try FakeDaemon { call in
            let p = call.parameters
            switch call.method {
            case "io.entryd.Forms.GetForm":
                return FakeDaemon.reply(Fixtures.object(("form", Fixtures.form)))
            case "io.entryd.Entries.Get":
                guard p["id"]?.stringValue == Fixtures.id else {
                    return FakeDaemon.reply(
                        Fixtures.object(("id", p["id"] ?? .null)), error: "io.entryd.Entries.EntryNotFound")
                }
                return FakeDaemon.reply(Fixtures.object(("entry", Fixtures.entry)))
            case "io.entryd.Entries.Add":
                guard p["fields"]?["country"]?.stringValue != "Chna" else {
                    return [
                        VarlinkReply(
                            error: WireError(
                                mapping: EntryError.validationFailed([
                                    Problem(
                                        field: "country", code: .notInList, message: "没有找到国家或地区“Chna”。",
                                        suggestions: ["CN"]),
                                    Problem(field: "phone", code: .required, message: "请填写电话号码。"),
                                ])))
                    ]
                }
                return FakeDaemon.reply(Fixtures.object(("entry", Fixtures.entry)))
            case "io.entryd.Entries.Update":
                if let v = p["ifVersion"]?.stringValue, v != Fixtures.entry["version"]?.stringValue {
                    return [
                        VarlinkReply(
                            error: WireError(
                                mapping: EntryError.versionMismatch(id: Fixtures.id, version: "0000018f3a2b0001")))
                    ]
                }
                return FakeDaemon.reply(Fixtures.object(("entry", Fixtures.entry)))
            case "io.entryd.Entries.List":
                if p["cursor"]?.stringValue == "page2" {
                    return FakeDaemon.reply(
                        Fixtures.object(("entries", .array([Fixtures.secondEntry])), ("total", .int(2))))
                }
                return FakeDaemon.reply(
                    Fixtures.object(
                        ("entries", .array([Fixtures.entry])), ("cursor", .string("page2")), ("total", .int(2))))
            case "io.example.Fail":
                return [VarlinkReply(error: WireError(mapping: EntryError.storageFailed("disk full")))]
            default:
                return [VarlinkReply(error: .methodNotFound(call.method))]
            }
        }
    }

    /// Runs entryctl against a fresh fake daemon; returns the outcome and the calls it got.
    static func run(_ arguments: [String], viaEnvironment: Bool = false) throws -> (Run.Outcome, [VarlinkCall]) {
        let fake = try daemon()
        defer { fake.stop() }
        let outcome =
            viaEnvironment
            ? try Run.entryctl(arguments, environment: ["ENTRYD_SOCKET": fake.path])
            : try Run.entryctl(["--socket", fake.path] + arguments)
        return (outcome, fake.calls)
    }

    @Test("get prints the entry with the form's labels and display values (exit 0)")
    func get() throws {
        let (outcome, calls) = try Self.run(["get", Fixtures.id], viaEnvironment: true)
        #expect(outcome.status == 0, "\(outcome)")
        let lines = outcome.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "ID         \(Fixtures.id)")
        for line in [
            "已删除     否", "姓名       李雷", "国家/地区  🇨🇳 中国", "电话       +86 138 0013 8000",
            "省市       广东省-广州市", "更新       2026-11-30 09:00:00 (bob)",
        ] {
            #expect(lines.contains(line), "missing '\(line)' in\n\(outcome.stdout)")
        }
        #expect(calls.map(\.method) == ["io.entryd.Entries.Get", "io.entryd.Forms.GetForm"])
        #expect(calls.first?.parameters == Fixtures.object(("id", .string(Fixtures.id)), ("locale", .string("zh"))))
    }

    @Test("--json prints the reply parameters as one JSON line")
    func json() throws {
        let (outcome, _) = try Self.run(["--locale", "en", "get", Fixtures.id, "--json"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(try JSON.parse(outcome.stdout) == Fixtures.object(("entry", Fixtures.entry)))
        #expect(outcome.stdout.filter { $0 == "\n" }.count == 1)
    }

    @Test("a missing entry is exit 1 with the id")
    func notFound() throws {
        let (outcome, _) = try Self.run(["--locale", "en", "get", "no-such-id"])
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stderr == "entryctl: no entry with id 'no-such-id'\n")
        // In zh (the default) too: the words for a wire error are entryctl's, in both languages.
        let (zh, _) = try Self.run(["get", "no-such-id"])
        #expect(zh.stderr == "entryctl: 没有 id 为“no-such-id”的条目\n", "\(zh)")
    }

    @Test("add sends FIELD=VALUE split at the first '=', empty values included")
    func addSends() throws {
        let (outcome, calls) = try Self.run(["add", "name=李雷", "note=a=b", "email=", "--form", "registration"])
        #expect(outcome.status == 0, "\(outcome)")
        // Labels as field names need the form first (GetForm); then the one Add.
        let add = try #require(calls.first { $0.method == "io.entryd.Entries.Add" }, "\(calls.map(\.method))")
        #expect(add.parameters["fields"] == .stringMap(["name": "李雷", "note": "a=b", "email": ""]))
        #expect(add.parameters["form"] == .string("registration"))
    }

    @Test("rejected values list every problem with suggestions (exit 65)")
    func validation() throws {
        let (outcome, _) = try Self.run(["add", "name=李雷", "country=Chna", "contact_method=phone"])
        #expect(outcome.status == 65, "\(outcome)")
        #expect(outcome.stdout.isEmpty)
        #expect(
            outcome.stderr == """
                entryctl: 提交的值未被接受（2 个问题）：
                  country: [not-in-list] 没有找到国家或地区“Chna”。（是否指：CN 🇨🇳 中国？）
                  phone: [required] 请填写电话号码。

                """)
        // In English when asked for.
        let (english, _) = try Self.run(["--locale", "en", "add", "name=李雷", "country=Chna", "contact_method=phone"])
        #expect(english.stderr.hasPrefix("entryctl: the values were not accepted (2 problems):"))
    }

    @Test("a stale --if-version is exit 1 and says the current version")
    func versionMismatch() throws {
        let (outcome, calls) = try Self.run([
            "--locale", "en", "update", Fixtures.id, "city=深圳", "--if-version", "0000018f3a2b0000", "--reason", "搬家",
        ])
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stderr.contains("its current version is 0000018f3a2b0001"))
        #expect(outcome.stderr.contains("--if-version 0000018f3a2b0001"))
        let update = try #require(calls.first { $0.method == "io.entryd.Entries.Update" }, "\(calls.map(\.method))")
        #expect(update.parameters["ifVersion"] == .string("0000018f3a2b0000"))
        #expect(update.parameters["reason"] == .string("搬家"))
    }

    @Test("list --all follows the cursor and prints an aligned table")
    func listTable() throws {
        let (outcome, calls) = try Self.run(["list", "--all", "--country", "中国", "--order", "name"])
        #expect(outcome.status == 0, "\(outcome)")
        let lists = calls.filter { $0.method == "io.entryd.Entries.List" }
        #expect(lists.count == 2)
        #expect(lists.last?.parameters["cursor"] == .string("page2"))
        #expect(lists.first?.parameters["filter"] == Fixtures.object(("country", .string("中国"))))
        #expect(lists.first?.parameters["order"] == .string("name"))
        let lines = outcome.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        let table = lines.prefix(3)
        #expect(table.allSatisfy { $0.last != " " }, "\(outcome.stdout)")
        #expect(table[1].hasPrefix("\(Fixtures.id)  李雷      1990-05-17  🇨🇳 中国    广东省-广州市"))
        #expect(table[2].contains("ann@example.com"))
        #expect(lines[3] == "共 2 条，显示 2 条")
    }

    @Test("list --format csv writes RFC 4180 with the form's field order")
    func listCSV() throws {
        let (outcome, _) = try Self.run(["list", "--all", "--format", "csv"])
        #expect(outcome.status == 0, "\(outcome)")
        let records = outcome.stdout.components(separatedBy: "\r\n")
        #expect(records.count == 4 && records[3].isEmpty)
        #expect(
            records[0]
                == "id,form,version,deleted,createdAt,updatedAt,name,birthday,country,province,city,contact_method,phone,email"
        )
        #expect(records[2].contains(",\"Lee, Ann\",1985-01-02,US,,,email,,ann@example.com"))
    }

    @Test("call prints the raw reply; a storage failure is exit 75")
    func call() throws {
        let (ok, _) = try Self.run(["call", "io.entryd.Entries.Get", #"{"id":"\#(Fixtures.id)"}"#])
        #expect(ok.status == 0, "\(ok)")
        #expect(try JSON.parse(ok.stdout) == Fixtures.object(("entry", Fixtures.entry)))
        let (failed, _) = try Self.run(["--locale", "en", "call", "io.example.Fail"])
        #expect(failed.status == 75, "\(failed)")
        #expect(
            failed.stdout == #"{"error":"io.entryd.Entries.StorageFailed","parameters":{"reason":"disk full"}}"# + "\n")
        #expect(failed.stderr.hasPrefix("entryctl: entryd's storage failed (disk full)"))
    }
}
