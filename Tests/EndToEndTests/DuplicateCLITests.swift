@preconcurrency import Glibc
import EntryModel
import EntryProtocol
import Foundation
import Testing

/// Possible duplicates end to end (issue 33 item 4): `entryctl add` warns and
/// still exits 0, `--json` carries them, `entryctl import` counts them, and
/// over a real socket a reader is told while a submit caller's Add and Check
/// answer as before.
@Suite(.serialized) struct DuplicateCLITests {
    static let person = [
        "name=王芳", "birthday=1990-05-17", "country=中国", "province=广东", "city=广州", "contact_method=phone",
        "phone=138 0013 8000",
    ]

    @Test("add the same person twice: stored, exit 0, a warning on stderr naming the first; --json carries duplicates")
    func addWarns() throws {
        let d = try Daemon()
        let first = try d.entryctl(["--json", "add"] + Self.person)
        try #require(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.isEmpty, "no warning for the first: \(first.stderr)")
        let firstID = try #require(try JSON.parse(first.stdout)["entry"]?["id"]?.stringValue)

        let second = try d.entryctl(["add"] + Self.person)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("王芳"), "the entry is printed: \(second.stdout)")
        #expect(
            second.stderr.contains("可能重复：王芳（\(firstID)，表单 registration）：姓名和生日相同、电话相同"),
            "\(second.stderr)")
        #expect(second.stderr.contains("entryctl get \(firstID)"), "\(second.stderr)")

        let english = try d.entryctl(
            [
                "--locale", "en", "add", "name=Someone Else", "birthday=1970-01-01", "country=CN", "province=广东",
                "city=广州", "contact_method=phone", "phone=+86 138 0013 8000",
            ])
        #expect(english.status == 0, "\(english.stderr)")
        #expect(english.stderr.contains("possible duplicate: 王芳 ("), "\(english.stderr)")
        #expect(english.stderr.contains("same phone") && !english.stderr.contains("same name"), "\(english.stderr)")

        let json = try d.entryctl(["--json", "add"] + Self.person)
        #expect(json.status == 0, "\(json.stderr)")
        let reply = try JSON.parse(json.stdout)
        let ids = reply["duplicates"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        #expect(ids.count == 3 && ids.contains(firstID), "\(json.stdout)")
        #expect(try d.connect().call("io.entryd.Entries.List")["total"]?.intValue == 4)
    }

    @Test("import: the summary counts the rows that look like stored entries or like each other, with their ids")
    func importSummary() throws {
        let d = try Daemon()
        let first = try d.entryctl(["--json", "add"] + Self.person)
        let firstID = try #require(try JSON.parse(first.stdout)["entry"]?["id"]?.stringValue)
        let csv = d.directory + "/people.csv"
        try """
        name,birthday,country,province,city,contact_method,phone,email
        王芳,1990-05-17,CN,440000,440100,phone,13800138000,
        Ada,1980-01-01,US,,,email,,ada@example.com
        Bob,1981-01-01,US,,,email,,bob@example.com
        Ada Two,1982-01-01,US,,,email,,ADA@example.com

        """.write(toFile: csv, atomically: true, encoding: .utf8)
        let r = try d.entryctl(["--locale", "en", "import", csv])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("added 4, unchanged 0, rejected 0"), "\(r.stdout)")
        #expect(r.stdout.contains("3 added rows may be the same person as another entry"), "\(r.stdout)")
        #expect(r.stdout.contains("line 2 (") && r.stdout.contains(") is like \(firstID)"), "\(r.stdout)")
        #expect(r.stdout.contains("line 3 (") && r.stdout.contains("line 5 ("), "\(r.stdout)")
        #expect(!r.stdout.contains("line 4 ("), "Bob is like nobody: \(r.stdout)")

        // The same file again: its rows are unchanged (derived ids), nothing added, nothing to warn of.
        let again = try JSON.parse(try d.entryctl(["--json", "import", csv]).stdout)
        #expect(again["unchanged"]?.intValue == 4 && again["duplicates"]?.intValue == 0, "\(again)")
        let more = d.directory + "/more.csv"
        try "name,birthday,country,contact_method,email\nRobert,1981-01-01,US,email,Bob@Example.com\n".write(
            toFile: more, atomically: true, encoding: .utf8)
        let summary = try JSON.parse(try d.entryctl(["--json", "import", more]).stdout)
        #expect(summary["added"]?.intValue == 1 && summary["duplicates"]?.intValue == 1, "\(summary)")
        let row = summary["duplicateRows"]?.arrayValue?.first
        #expect(row?["line"]?.intValue == 2 && row?["like"]?.arrayValue?.count == 1, "\(summary)")
    }

    @Test(
        "over a real socket: a reader's Check names the duplicates; a submit caller's Add and Check carry no duplicates member",
        .enabled(
            if: getuid() == 0 && which("setpriv") != nil,
            "skipped: needs root and setpriv(1) (util-linux) to run a client as nobody; CI runs as root"))
    func roles() throws {
        let d = try Daemon()
        defer { d.stop() }
        let config = d.directory + "/entryd.conf"
        try "socket-mode = 0666\n[roles]\ndefault-role = none\nsubmit = nobody\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        d.stop()
        let kiosk = try Daemon(directory: d.directory, arguments: ["--config", config])
        defer { kiosk.stop() }
        let first = try kiosk.entryctl(["--json", "add"] + Self.person)
        try #require(first.status == 0, "\(first.stderr)")
        let fields =
            #"{"fields":{"name":"王芳","birthday":"1990-05-17","country":"CN","province":"440000","city":"440100","contact_method":"phone","phone":"+8613800138000"}}"#
        let check = try SystemdRolesTests.asNobody(kiosk.socket, ["call", "io.entryd.Forms.Check", fields])
        #expect(check.status == 0 && check.stdout.contains("\"problems\":[]"), "\(check)")
        #expect(!check.stdout.contains("duplicates"), "\(check.stdout)")
        let add = try SystemdRolesTests.asNobody(kiosk.socket, ["call", "io.entryd.Entries.Add", fields])
        #expect(add.status == 0 && add.stdout.contains("\"entry\""), "\(add)")
        #expect(!add.stdout.contains("duplicates"), "\(add.stdout)")
        let addCLI = try SystemdRolesTests.asNobody(kiosk.socket, ["add"] + Self.person)
        #expect(addCLI.status == 0 && !addCLI.stderr.contains("可能重复"), "\(addCLI.stderr)")

        // The same caller as read (a reload): Check names both stored entries.
        try "socket-mode = 0666\n[roles]\ndefault-role = none\nread = nobody\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        kill(kiosk.pid, SIGHUP)
        var reader = try SystemdRolesTests.asNobody(kiosk.socket, ["call", "io.entryd.Forms.Check", fields])
        for _ in 0..<50 where !reader.stdout.contains("duplicates") {
            usleep(100_000)
            reader = try SystemdRolesTests.asNobody(kiosk.socket, ["call", "io.entryd.Forms.Check", fields])
        }
        let shown = try JSON.parse(Array(reader.stdout.utf8))
        #expect(shown["duplicates"]?.arrayValue?.count == 3, "\(reader.stdout)")
        #expect(shown["duplicates"]?.arrayValue?.first?["matched"]?.arrayValue?.count == 2, "\(reader.stdout)")
    }

    @Test("add -i: Done on a possible duplicate asks first; Enter goes back to the form, s shows it, a adds anyway")
    func interactiveAsks() throws {
        let daemon = try Daemon()
        defer { daemon.stop() }
        let first = try daemon.entryctl(
            [
                "--json", "add", "name=Jane Roe", "birthday=1990-05-17", "country=US", "contact_method=email",
                "email=jane@example.com",
            ])
        let firstID = try #require(try JSON.parse(first.stdout)["entry"]?["id"]?.stringValue, "\(first.stderr)")
        let form = InteractiveFormTests()
        let tmux = try form.start(daemon, "--locale en add -i")
        defer { tmux.kill() }
        try tmux.waitFor(text: "Name")
        try tmux.type("jane roe")
        try tmux.press("Tab", "Space")
        try tmux.waitFor(text: "-- Birthday --")
        try tmux.type("19900517")
        try tmux.waitFor(text: "-- Birthday -- 1990-05-17")
        try tmux.press("Enter")
        try tmux.type("US")
        try tmux.waitFor(text: "> US")
        try tmux.press("Enter")
        try tmux.press("Space")
        try tmux.waitFor(text: "Phone")
        try tmux.press("Down", "Enter")
        try tmux.type("someone@example.com")
        try tmux.press("C-s")
        try tmux.waitFor(text: "This entry may be the same person as a stored one:")
        // One line, however the terminal's width wraps it.
        let asked = try tmux.screen().joined()
        #expect(
            asked.contains("possible duplicate: Jane Roe (\(firstID), form registration): same name and birthday"),
            "\(asked)")
        // The default: nothing added, back to the form, which says so.
        try tmux.press("Enter")
        try tmux.waitFor(text: "not added: it may duplicate a stored entry")
        #expect(try daemon.connect().call("io.entryd.Entries.List")["total"]?.intValue == 1)
        // Done again: s shows the stored entry, then a adds anyway.
        try tmux.press("C-s")
        try tmux.waitFor(text: "This entry may be the same person as a stored one:")
        try tmux.type("s")
        try tmux.waitFor(text: "jane@example.com")
        try tmux.type("a")
        let (status, out) = try form.finish(daemon, tmux)
        #expect(status == 0)
        let id = out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!id.isEmpty && id != firstID)
        #expect(try daemon.connect().call("io.entryd.Entries.List")["total"]?.intValue == 2)
    }
}
