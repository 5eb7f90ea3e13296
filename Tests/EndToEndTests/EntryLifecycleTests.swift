import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// The main job end to end: the real entryd driven by the real entryctl.
@Suite(.serialized) struct EntryLifecycleTests {
    static let liLei = ["name=李雷", "birthday=1990年5月17日", "country=中国", "province=广东", "city=广州",
                        "contact_method=phone", "phone=13800138000"]

    /// The entries of `entryctl list --format json` with extra arguments.
    func listJSON(_ d: Daemon, _ args: [String] = []) throws -> [JSON] {
        let r = try d.entryctl(["list", "--format", "json", "--all"] + args)
        try #require(r.status == 0, "\(r.stderr)")
        return try #require(try JSON.parse(r.stdout).arrayValue)
    }

    @Test("add from lenient input, list with each filter, update with a stale version, delete, restore, history, restart")
    func lifecycle() throws {
        let d = try Daemon()
        let add = try d.entryctl(["--json", "add"] + Self.liLei)
        try #require(add.status == 0, "\(add.stderr)")
        let entry = try JSON.parse(add.stdout)["entry"] ?? JSON.parse(add.stdout)
        let id = try #require(entry["id"]?.stringValue)
        let version = try #require(entry["version"]?.stringValue)
        #expect(entry["fields"] == JSON.stringMap(["name": "李雷", "birthday": "1990-05-17", "country": "CN", "province": "440000",
                                                   "city": "440100", "contact_method": "phone", "phone": "+8613800138000"]))
        #expect(entry["display"]?["country"]?.stringValue == "🇨🇳 中国")
        #expect(entry["display"]?["region"]?.stringValue == "广东省-广州市")
        #expect(entry["display"]?["birthday"]?.stringValue == "1990-05-17")

        let other = try d.entryctl(["add", "name=Jane Doe", "birthday=1985-12-01", "country=US", "contact_method=email",
                                    "email=jane@EXAMPLE.com"])
        #expect(other.status == 0, "\(other.stderr)")
        let third = try d.entryctl(["add", "name=韩梅梅", "birthday=2001-03-04", "country=CN", "province=浙江", "city=杭州",
                                    "contact_method=email", "email=hmm@example.cn"])
        #expect(third.status == 0, "\(third.stderr)")

        // The table shows display values, lined up.
        let table = try d.entryctl(["list"])
        #expect(table.status == 0)
        #expect(table.stdout.contains("🇨🇳 中国") && table.stdout.contains("广东省-广州市") && table.stdout.contains("1990-05-17"))

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
        #expect(try names(["--limit", "1"]) .count == 3)  // --all follows the cursor

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

        #expect(try d.entryctl(["delete", id]).status == 0)
        #expect(try names([]) == ["Jane Doe", "韩梅梅"])
        #expect(try names(["--deleted"]).contains("李雷"))
        #expect(try d.entryctl(["restore", id]).status == 0)
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

    @Test("a second entryd on a live socket refuses to start; a stale socket file is replaced")
    func socketOwnership() throws {
        let d = try Daemon()
        let second = try runProcess(productsDirectory() + "/entryd", ["--config", "/dev/null", "--socket", d.socket, "--db", d.directory + "/other.db"])
        #expect(second.status == 69)
        #expect(second.stderr.contains("already serving"))
        #expect(!FileManager.default.fileExists(atPath: d.directory + "/other.db"), "a refused start left a database behind")
        // A second daemon on the same database, on another socket, is refused too.
        let sameDB = try runProcess(productsDirectory() + "/entryd", ["--config", "/dev/null", "--socket", d.directory + "/second.sock", "--db", d.database])
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
}
