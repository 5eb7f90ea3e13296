import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// Regressions from an adversarial review: each of these once hung, lost
/// output, overwrote the wrong file or answered the wrong error.
@Suite(.serialized) struct BreakerRegressionTests {
    @Test("SyncPeer to a socket that accepts and never answers gives PeerUnreachable after peer-timeout")
    func silentPeer() throws {
        let d = try Daemon(arguments: ["--peer-timeout", "1"])
        let silentPath = d.directory + "/silent.sock"
        let silent = try UnixSocket.listen(path: silentPath, mode: 0o600)
        defer { close(silent) }
        let started = Date()
        do {
            _ = try d.connect().call("io.entryd.Sync.SyncPeer", .object([("peer", .string("unix:" + silentPath))]))
            Issue.record("a silent peer synced")
        } catch let e as WireError {
            #expect(e.name == "io.entryd.Sync.PeerUnreachable")
        }
        #expect(Date().timeIntervalSince(started) < 10)
        // An address tried once is not remembered in Status.
        #expect(try d.connect().call("io.entryd.Sync.Status")["peers"]?.arrayValue?.isEmpty == true)
        // A relative socket path is refused (relative to the daemon's directory means nothing to a client).
        #expect(throws: WireError.invalidParameter("peer")) {
            _ = try d.connect().call("io.entryd.Sync.SyncPeer", .object([("peer", .string("unix:relative.sock"))]))
        }
        #expect(d.stop() == 0)
    }

    @Test("forms shows when the city is required (its province has cities), as the validator holds it")
    func formsShowsCityRule() throws {
        let d = try Daemon()
        let forms = try d.entryctl(["forms"])
        #expect(forms.status == 0)
        let city = forms.stdout.split(separator: "\n").first { $0.drop { $0 == " " }.hasPrefix("city ") }
        #expect(city?.contains("when province has cities") == true, "\(forms.stdout)")
        let refused = try d.entryctl(["check", "name=X", "birthday=1990-01-01", "country=CN", "province=北京",
                                      "contact_method=phone", "phone=13800138000"])
        #expect(refused.status == 65 && refused.stderr.contains("city: [required]"))
        #expect(d.stop() == 0)
    }

    @Test("export -o writes devices in place and follows symbolic links; never replaces them")
    func exportTargets() throws {
        let d = try Daemon()
        #expect(try d.entryctl(["add", "name=李雷", "birthday=1990-05-17", "country=CN", "province=广东", "city=广州",
                                "contact_method=phone", "phone=13800138000"]).status == 0)
        let toNull = try d.entryctl(["export", "-o", "/dev/null"])
        #expect(toNull.status == 0, "\(toNull.stderr)")
        var st = stat()
        #expect(stat("/dev/null", &st) == 0 && st.st_mode & S_IFMT == S_IFCHR)
        let target = d.directory + "/target.jsonl", link = d.directory + "/link.jsonl"
        FileManager.default.createFile(atPath: target, contents: Data())
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(try d.entryctl(["export", "-o", link]).status == 0)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == target)
        #expect((try String(contentsOfFile: target, encoding: .utf8)).contains("李雷"))
        let missingDirectory = try d.entryctl(["export", "-o", d.directory + "/nowhere/x.jsonl"])
        #expect(missingDirectory.status != 0 && missingDirectory.stderr.contains("does not exist"))
        #expect(d.stop() == 0)
    }

    /// The problems of a List call with `filter` that must be refused with
    /// `ValidationFailed` (an issue is recorded when it is not).
    func listProblems(_ c: VarlinkConnection, _ filter: [(String, JSON)], locale: String) -> [JSON] {
        do {
            _ = try c.call("io.entryd.Entries.List", .object([("filter", .object(filter)), ("locale", .string(locale))]))
            Issue.record("List accepted the filter \(filter.map(\.0))")
        } catch let e as WireError {
            #expect(e.name == "io.entryd.Entries.ValidationFailed")
            return e.parameters["problems"]?.arrayValue ?? []
        } catch {
            Issue.record("List failed: \(error)")
        }
        return []
    }

    @Test("a bad updatedSince is reported with every other filter problem; Options with an unknown parent names it")
    func filterErrors() throws {
        let d = try Daemon()
        let c = try d.connect()
        let bad = listProblems(c, [("country", .string("Atlantis")), ("updatedSince", .string("yesterday"))], locale: "en")
        #expect(Set(bad.compactMap { $0["field"]?.stringValue }) == ["country", "updatedSince"])
        #expect(bad.first { $0["field"]?.stringValue == "updatedSince" }?["message"]?.stringValue
                == "The updatedSince filter 'yesterday' is not a valid RFC 3339 time; use 2026-01-31T08:00:00Z.")
        #expect(listProblems(c, [("bornFrom", .string("1990-13-01"))], locale: "zh").first?["message"]?.stringValue
                == "筛选条件 bornFrom 的值“1990-13-01”不是有效的日期，格式应为 YYYY-MM-DD。")
        // A city outside the province filter is a parent mismatch (one row matched, not several).
        let problem = listProblems(c, [("province", .string("110000")), ("city", .string("440100"))], locale: "en").first
        #expect(problem?["code"]?.stringValue == "parent-mismatch" && problem?["field"]?.stringValue == "city")
        #expect(problem?["message"]?.stringValue == "The city filter '440100' is not in the chosen province (Beijing).")
        // A retired city code (which stored entries keep) filters; outside its province it is a mismatch.
        #expect(try c.call("io.entryd.Entries.List", .object([("filter", .object([("city", .string("371200"))]))]))["total"]?.intValue == 0)
        #expect(try c.call("io.entryd.Entries.List", .object([("filter", .object([("province", .string("370000")),
                                                                                   ("city", .string("371200"))]))]))["total"]?.intValue == 0)
        #expect(throws: WireError.self) {
            _ = try c.call("io.entryd.Entries.List", .object([("filter", .object([("province", .string("440000")),
                                                                                ("city", .string("371200"))]))]))
        }
        #expect(throws: WireError.invalidParameter("parent")) {
            _ = try c.call("io.entryd.Forms.Options", .object([("field", .string("city")), ("parent", .string("zzz"))]))
        }
        // A number beyond Double: InvalidParameter naming it, and the connection stays.
        try c.sendRaw(Array(#"{"method":"io.entryd.Entries.List","parameters":{"limit":1e309}}"#.utf8) + [0])
        let reply = try c.receive()
        #expect(reply.error == "org.varlink.service.InvalidParameter" && reply.parameters["parameter"]?.stringValue == "limit")
        #expect(try c.call("io.entryd.Sync.Status")["entries"]?.intValue == 0)
        #expect(d.stop() == 0)
    }
}
