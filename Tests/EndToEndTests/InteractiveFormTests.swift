import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// `entryctl add -i` / `edit -i` in a real terminal (tmux) against a real entryd:
/// keys in with send-keys, the screen read with capture-pane.
@Suite(.serialized) struct InteractiveFormTests {
    /// Starts `entryctl ARGS` in tmux; its stdout and exit status go to files in the daemon's directory.
    func start(_ daemon: Daemon, _ arguments: String, environment: [String: String] = [:]) throws -> Tmux {
        let entryctl = productsDirectory() + "/entryctl"
        let command =
            "sh -c '\(entryctl) --socket \(daemon.socket) \(arguments) >\(daemon.directory)/out; "
            + "echo $? >\(daemon.directory)/rc; sleep 5'"
        return try Tmux(
            socket: daemon.directory + "/tmux.sock", command: command,
            environment: ["LANG": "C.UTF-8", "TZ": "UTC", "TERM": "xterm-256color"].merging(environment) { $1 })
    }

    /// Waits for the exit status file and returns (status, stdout).
    func finish(_ daemon: Daemon, _ tmux: Tmux) throws -> (Int32, String) {
        let rc = daemon.directory + "/rc"
        try tmux.waitFor("entryctl to exit") { _ in
            FileManager.default.fileExists(atPath: rc)
                && ((try? String(contentsOfFile: rc, encoding: .utf8)) ?? "").hasSuffix("\n")
        }
        let status =
            Int32((try String(contentsOfFile: rc, encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines))
            ?? -1
        return (status, (try? String(contentsOfFile: daemon.directory + "/out", encoding: .utf8)) ?? "")
    }

    /// The stored entry's canonical fields, read back with `entryctl --json get`.
    func storedFields(_ daemon: Daemon, _ id: String) throws -> [String: String] {
        let got = try daemon.entryctl(["--json", "get", id])
        #expect(got.status == 0, "\(got.stderr)")
        var fields: [String: String] = [:]
        for (k, v) in (try JSON.parse(got.stdout))["entry"]?["fields"]?.objectValue ?? [] { fields[k] = v.stringValue }
        return fields
    }

    @Test("fills the whole registration form by keys, searching 广州 after choosing 广东, and stores it canonically")
    func fillsRegistration() throws {
        let daemon = try Daemon()
        defer { daemon.stop() }
        let tmux = try start(daemon, "add -i")
        defer { tmux.kill() }
        let began = Date()
        try tmux.waitFor(text: "姓名")
        let first = try tmux.screen()
        #expect(
            first.last { !$0.isEmpty }?.contains("(↑/S-Tab 上一项)") == true, "previous is disabled on the first field")
        #expect((try tmux.run(["capture-pane", "-p", "-e"])).contains("\u{1B}["), "colour when NO_COLOR is unset")

        try tmux.type("李雷")
        try tmux.press("Tab", "Space")  // birthday: the wheel opens on today
        try tmux.waitFor(text: "-- 生日 --")
        try tmux.type("19900517")
        try tmux.waitFor(text: "-- 生日 -- 1990-05-17")
        try tmux.press("Enter")  // commit, on to country
        try tmux.type("中国")
        try tmux.waitFor(text: "> CN  🇨🇳 中国")
        try tmux.press("Enter")
        try tmux.type("广东")  // province: typing opens the picker and searches
        try tmux.waitFor(text: "> 440000  广东省")
        try tmux.press("Enter")
        try tmux.press("Space")  // city: only Guangdong's cities
        try tmux.waitFor(text: "-- 城市 (1/")
        try tmux.type("广州")
        try tmux.waitFor(text: "> 440100  广州市")
        try tmux.press("Enter")
        try tmux.press("Space")  // contact method: first row highlighted
        try tmux.waitFor(text: "电话")
        try tmux.press("Enter")
        try tmux.waitFor(text: ">*  手机号码")  // phone shown and required, email hidden
        #expect(!(try tmux.screen()).contains { $0.contains("邮箱") })
        try tmux.type("138 0013 8000")
        try tmux.press("Tab", "Space")  // appointment: date-time wheel on 30-minute steps
        try tmux.waitFor(text: "-- 预约时间 --")
        try tmux.type("203612010945")
        try tmux.waitFor(text: "2036-12-01 09:30")
        try tmux.press("Enter")
        try tmux.waitFor(text: "(↓/Tab 下一项)")  // next is disabled on the last field
        try tmux.press("C-s")  // Done (Enter on the last field would reopen its picker)
        let (status, out) = try finish(daemon, tmux)
        let seconds = Date().timeIntervalSince(began)
        print("InteractiveFormTests: filled the registration form by keys in \(String(format: "%.1f", seconds)) s")
        #expect(status == 0)
        let id = out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!id.isEmpty)
        #expect(
            try storedFields(daemon, id) == [
                "name": "李雷", "birthday": "1990-05-17", "country": "CN", "province": "440000", "city": "440100",
                "contact_method": "phone", "phone": "+8613800138000", "appointment": "2036-12-01 09:30",
            ])
    }

    @Test("edit -i changes the province, which resets the city; a missing city returns to the form marked")
    func editsWithCascade() throws {
        let daemon = try Daemon()
        defer { daemon.stop() }
        let added = try daemon.entryctl([
            "--json", "add", "name=韩梅梅", "birthday=1991-02-03", "country=CN", "province=广东",
            "city=广州", "contact_method=email", "email=meimei@example.com",
        ])
        let id = try JSON.parse(added.stdout)["entry"]?["id"]?.stringValue ?? ""
        let tmux = try start(daemon, "edit -i \(id)", environment: ["NO_COLOR": "1"])
        defer { tmux.kill() }
        try tmux.waitFor(text: "广州市")
        try tmux.press("Down", "Down", "Down", "Enter")  // province
        try tmux.type("北京")
        try tmux.waitFor(text: "> 110000  北京市")
        try tmux.press("Enter")
        try tmux.waitFor(text: ">*! 城市")  // reset, required, marked
        try tmux.press("C-s")  // submit: refused, back to the form
        try tmux.waitFor(text: "个问题")
        try tmux.press("Space")
        try tmux.waitFor(text: "> 110114  昌平区")  // Beijing lists its districts, in pinyin order (zh): chang|ping first
        try tmux.press("Enter", "C-s")
        let (status, out) = try finish(daemon, tmux)
        #expect(status == 0)
        #expect(out.trimmingCharacters(in: .whitespacesAndNewlines) == id)
        let fields = try storedFields(daemon, id)
        #expect(fields["province"] == "110000" && fields["city"] == "110114" && fields["email"] == "meimei@example.com")
    }

    @Test("Esc asks before discarding; y discards with exit 1")
    func discards() throws {
        let daemon = try Daemon()
        defer { daemon.stop() }
        let tmux = try start(daemon, "--locale en add -i")
        defer { tmux.kill() }
        try tmux.waitFor(text: "Name")
        try tmux.type("Jane")
        try tmux.press("Escape")
        try tmux.waitFor(text: "Discard your changes?")
        try tmux.type("y")
        let (status, out) = try finish(daemon, tmux)
        #expect(status == 1)
        #expect(out.isEmpty)
    }

    @Test("redraws for the new size on SIGWINCH; NO_COLOR draws no attributes, colour does")
    func resizeAndColour() throws {
        let daemon = try Daemon()
        defer { daemon.stop() }
        let tmux = try start(daemon, "add -i", environment: ["NO_COLOR": "1"])
        defer { tmux.kill() }
        try tmux.waitFor(text: "姓名")
        #expect(!(try tmux.run(["capture-pane", "-p", "-e"])).contains("\u{1B}["), "no SGR without colour")
        try tmux.run(["resize-window", "-x", "60", "-y", "15"])
        try tmux.waitFor("the footer on row 15") { $0.count >= 15 && $0[14].contains("上一项") }
        try tmux.type("李")
        try tmux.run(["resize-window", "-x", "100", "-y", "30"])
        try tmux.waitFor("the footer on row 30") { $0.count >= 30 && $0[29].contains("上一项") }
        #expect(try tmux.screen()[1].contains("李"))
    }

    @Test("refuses politely with exit 64 when stdin is not a terminal")
    func refusesWithoutTerminal() throws {
        let daemon = try Daemon()
        defer { daemon.stop() }
        let result = try daemon.entryctl(["add", "-i"], input: "")
        #expect(result.status == 64)
        #expect(result.stderr.contains("add -i 需要终端"), "\(result.stderr)")
        #expect(
            try daemon.entryctl(["--locale", "en", "add", "-i"], input: "").stderr.contains("add -i needs a terminal"))
        #expect(result.stdout.isEmpty)
    }
}
