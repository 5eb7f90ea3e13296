import Foundation
import Testing
import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer

/// The built `entryctl` binary: exit codes, stderr and stdout, as a user sees them;
/// and what documents it: the man pages and the bash completion.
///
/// Commands that need a daemon talk to ``FakeDaemon``, which answers exactly as
/// doc/protocol.md says entryd does; the real daemon is covered by the integration tests
/// (the completion's field names and picker values come from a real one).
@Suite(.serialized) struct EntryctlCLITests {
    typealias Run = EntryctlProcess

    // MARK: - Without a daemon

    /// `--help` is a tested artifact: compared with Tests/Snapshots/EntryctlCLITests/help.txt.
    /// Run with `SNAPSHOT_RECORD=1` to write the snapshot after a deliberate change.
    @Test("--help lists commands, global options and exit codes (exit 0)")
    func help() throws {
        let outcome = try Run.entryctl(["--help"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stderr.isEmpty)
        let snapshot = Run.packageRoot.appendingPathComponent("Tests/Snapshots/EntryctlCLITests/help.txt")
        if ProcessInfo.processInfo.environment["SNAPSHOT_RECORD"] == "1" {
            try FileManager.default.createDirectory(
                at: snapshot.deletingLastPathComponent(), withIntermediateDirectories: true)
            try outcome.stdout.write(to: snapshot, atomically: true, encoding: .utf8)
        }
        #expect(outcome.stdout == (try String(contentsOf: snapshot, encoding: .utf8)))
        for word in ["add", "list", "watch", "call", "--socket PATH", "--locale zh|en", "64", "65", "69", "75"] {
            #expect(outcome.stdout.contains(word), "help lacks \(word)")
        }
        #expect(try Run.entryctl(["-h"]).stdout == outcome.stdout)
        #expect(try Run.entryctl(["help"]).stdout == outcome.stdout)
        #expect(try Run.entryctl(["help", "help"]).stdout == outcome.stdout)
        // The same in English: its own snapshot.
        let en = try Run.entryctl(["--locale", "en", "--help"])
        let enSnapshot = Run.packageRoot.appendingPathComponent("Tests/Snapshots/EntryctlCLITests/help.en.txt")
        if ProcessInfo.processInfo.environment["SNAPSHOT_RECORD"] == "1" {
            try en.stdout.write(to: enSnapshot, atomically: true, encoding: .utf8)
        }
        #expect(en.stdout == (try String(contentsOf: enSnapshot, encoding: .utf8)))
        #expect(try Run.entryctl(["--help"], environment: ["ENTRYCTL_LOCALE": "en"]).stdout == en.stdout)
        #expect(en.stdout != outcome.stdout)
    }

    /// The environment that makes entryctl speak English (its default is zh).
    static let english = ["ENTRYCTL_LOCALE": "en"]

    /// Whether `line` is English only: no Chinese, and two or more English
    /// words once command lines, options, placeholders, paths, codes and the
    /// system's own error texts (after a path: `PATH (origin): strerror`) are set aside.
    static func englishOnly(_ line: String) -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty || trimmed.hasPrefix("entryctl ") || trimmed.hasPrefix("ssh ") || trimmed.hasPrefix("/") {
            return false
        }
        if trimmed.unicodeScalars.contains(where: {
            (0x3000...0x9FFF).contains($0.value) || (0xFF00...0xFFEF).contains($0.value)
        }) {
            return false
        }
        let words = trimmed.split(separator: " ").filter { token in
            !token.contains { "-/$._=[]|{}<>'`@:0123456789".contains($0) } && token.count >= 3
                && token.allSatisfy { $0.isLetter && $0.isASCII } && token != token.uppercased()
        }
        return words.count >= 2
    }

    @Test(
        "under --locale zh no line entryctl prints is English only: --help of entryctl and every command, and the refusals"
    )
    func chineseEverywhere() throws {
        var outputs: [(String, String)] = []
        func run(_ arguments: [String]) throws {
            let outcome = try Run.entryctl(["--locale", "zh"] + arguments)
            outputs.append((arguments.joined(separator: " "), outcome.stdout + outcome.stderr))
        }
        try run(["--help"])
        for command in [
            "add", "get", "update", "delete", "restore", "history", "edit", "list", "export", "import", "options",
            "forms",
            "check", "status", "watch", "call", "peers", "sync", "conflicts", "resolve", "bridge", "backup",
            "erase", "erasures", "web-user",
        ] {
            try run([command, "--help"])
        }
        try run(["frobnicate"])  // unknown command
        try run(["list", "--frob"])  // bad option
        try run(["get"])  // missing argument
        try run(["list", "--limit", "0"])  // invalid value
        try run(["list", "--order", "size"])  // not one of the choices
        try run(["--timeout", "x", "status"])  // invalid global value
        try run(["import", "--atomic", "--dry-run", "x.csv"])  // options that exclude each other
        try run(["--socket", "/nonexistent/entryd.sock", "status"])  // daemon unreachable
        try run(["add", "name"])  // not FIELD=VALUE
        try run(["erase", "0193a5e2-7c4b-7def-8a12-3456789abcde"])  // no --reason
        try run(["erase", "--verify", "0193a5e2-7c4b-7def-8a12-3456789abcde"])  // no --value
        for (arguments, text) in outputs {
            #expect(!text.isEmpty, "\(arguments)")
            let english = text.split(separator: "\n").map(String.init).filter(Self.englishOnly)
            #expect(english.isEmpty, "entryctl --locale zh \(arguments):\n\(english.joined(separator: "\n"))")
        }
        // The check itself: an English sentence is caught, codes and command lines are not.
        #expect(
            Self.englishOnly("unknown command 'x'") && !Self.englishOnly("  entryctl import entries.jsonl")
                && !Self.englishOnly("  --limit N  最多 N 行。") && !Self.englishOnly("  0   成功"))
    }

    @Test(
        "every command has --help with usage, options and an example (exit 0)",
        arguments: [
            "add", "get", "update", "delete", "restore", "history", "list", "options", "forms", "check", "status",
            "watch", "call",
            "peers", "sync", "conflicts", "resolve", "erase", "erasures", "web-user",
        ])
    func commandHelp(command: String) throws {
        let outcome = try Run.entryctl([command, "--help"], environment: Self.english)
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stdout.contains("Usage: entryctl \(command)"))
        #expect(outcome.stdout.contains("Options:\n"))
        #expect(outcome.stdout.contains("Example"))
        #expect(try Run.entryctl(["help", command], environment: Self.english).stdout == outcome.stdout)
    }

    @Test("the add example is a realistic Chinese entry")
    func addExample() throws {
        let outcome = try Run.entryctl(["add", "-h"])
        #expect(
            outcome.stdout.contains(
                "entryctl add name=李雷 birthday=1990-05-17 country=中国 province=广东 city=广州 contact_method=phone phone=13800138000"
            ))
    }

    @Test("--version prints the version (exit 0)")
    func version() throws {
        let outcome = try Run.entryctl(["--version"])
        #expect(outcome.status == 0)
        #expect(outcome.stdout == "entryctl \(EntrydVersion.string)\n")
    }

    @Test("entryd --version prints its version, the libraries' and the reference data's (exit 0)")
    func daemonVersion() throws {
        let outcome = try runProcess(productsDirectory() + "/entryd", ["--version"])
        #expect(outcome.status == 0)
        #expect(
            outcome.stdout == "entryd \(EntrydVersion.string)\nlibphonenumber 8.12.57\nlibidn2 2.3.3\n"
                + "reference data: \(ReferenceData.shared.dataVersion)\n")
        #expect(outcome.stdout.contains("iso-codes 4.15.0, CLDR 42.0/ICU 72.1, GB/T 2659-2000"))
    }

    @Test("an unknown command is a usage error (exit 64)")
    func unknownCommand() throws {
        let outcome = try Run.entryctl(["frobnicate"], environment: Self.english)
        #expect(outcome.status == 64, "\(outcome)")
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr.hasPrefix("entryctl: unknown command 'frobnicate'"))
        #expect(outcome.stderr.contains("Usage: entryctl "))
        let typo = try Run.entryctl(["lsit"], environment: Self.english)
        #expect(
            typo.status == 64
                && typo.stderr.hasPrefix("entryctl: unknown command 'lsit' (did you mean 'list'? commands:"), "\(typo)")
        let option = try Run.entryctl(["list", "--contry", "CN"], environment: Self.english)
        #expect(
            option.status == 64
                && option.stderr.hasPrefix("entryctl: unknown option '--contry'; did you mean '--country'?"),
            "\(option)")
    }

    @Test(
        "usage errors come before any connection (exit 64)",
        arguments: [
            (["add", "name李雷"], "entryctl: 'name李雷' is not FIELD=VALUE", "Usage: entryctl add FIELD=VALUE..."),
            (["add", "=李雷"], "entryctl: '=李雷' has no field name", "Usage: entryctl add"),
            (["add"], "entryctl: missing FIELD=VALUE", "Usage: entryctl add"),
            (["get"], "entryctl: missing ID", "Usage: entryctl get ID"),
            (["list", "--limit", "zero"], "entryctl: --limit takes a whole number", "Usage: entryctl list"),
            (["list", "--frob"], "entryctl: unknown option '--frob'", "Usage: entryctl list"),
            (["--locale", "fr", "forms"], "entryctl: --locale is zh or en, not 'fr'", "Usage: entryctl forms"),
            ([], "entryctl: no command given", "Usage: entryctl"),
        ])
    func usageErrors(arguments: [String], message: String, usage: String) throws {
        // The socket does not exist: a 64 proves validation ran before connecting.
        let outcome = try Run.entryctl(["--socket", "/nonexistent/x.sock"] + arguments, environment: Self.english)
        #expect(outcome.status == 64, "\(outcome)")
        #expect(outcome.stderr.hasPrefix(message), "\(outcome)")
        #expect(outcome.stderr.contains(usage), "\(outcome)")
    }

    @Test("an unreachable socket names the path and how to start entryd (exit 69)")
    func unreachable() throws {
        let outcome = try Run.entryctl(
            ["--socket", "/nonexistent/x.sock", "get", "0193a5e2-7c4b-7def-8a12-3456789abcde"],
            environment: Self.english)
        #expect(outcome.status == 69, "\(outcome)")
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr.hasPrefix("entryctl: cannot reach entryd"))
        #expect(outcome.stderr.contains("/nonexistent/x.sock"))
        #expect(outcome.stderr.contains("entryd --socket PATH"))
        #expect(outcome.stderr.contains("systemctl start entryd.socket"))
    }

    @Test(
        "a socket path that is a regular file or a directory is named as not a socket, not 'Connection refused' (exit 69)"
    )
    func socketPathNotASocket() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("entryctl-notsock-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/plain.sock"
        try #require(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        for (path, kind, kindZh) in [(file, "a regular file", "是普通文件"), (dir, "a directory", "是目录")] {
            let outcome = try Run.entryctl(["--locale", "en", "--socket", path, "status"])
            #expect(outcome.status == 69, "\(outcome)")
            #expect(outcome.stderr.contains("\(path) (--socket): not a socket (\(kind))"), "\(outcome)")
            #expect(!outcome.stderr.contains("Connection refused"), "\(outcome)")
            #expect(!outcome.stderr.contains("Start the daemon"), "\(outcome)")
            let zh = try Run.entryctl(["--locale", "zh", "--socket", path, "status"])
            #expect(zh.status == 69 && zh.stderr.contains("\(path)（--socket）：不是套接字（\(kindZh)）"), "\(zh)")
            #expect(!zh.stderr.contains("启动守护进程"), "\(zh)")
        }
    }

    @Test("a daemon that accepts and never answers: --timeout ends the wait with exit 75 and says what to do")
    func silentDaemonTimesOut() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("entryctl-silent-\(getpid())").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Listening but never accepting: connect succeeds (the backlog), no reply ever comes.
        let fd = try UnixSocket.listen(path: dir + "/silent.sock", mode: 0o600)
        defer { close(fd) }
        let started = Date()
        let outcome = try Run.entryctl(
            ["--socket", dir + "/silent.sock", "--timeout", "1", "status"], environment: Self.english, timeout: 20)
        #expect(outcome.status == 75, "\(outcome)")
        #expect(outcome.stderr.contains("did not reply within the time allowed (--timeout"), "\(outcome)")
        #expect(Date().timeIntervalSince(started) < 10)
        let bad = try Run.entryctl(["--timeout", "soon", "status"], environment: Self.english)
        #expect(bad.status == 64 && bad.stderr.contains("--timeout takes whole seconds"), "\(bad)")
    }

    @Test("without --socket, every default path tried is reported (exit 69)")
    func unreachableDefaults() throws {
        let outcome = try Run.entryctl(
            ["status"], environment: ["ENTRYD_SOCKET": "/nonexistent/env.sock", "XDG_RUNTIME_DIR": "/nonexistent/run"])
        #expect(outcome.status == 69, "\(outcome)")
        for path in ["/nonexistent/env.sock", "/nonexistent/run/entryd.sock", "./entryd.sock"] {
            #expect(outcome.stderr.contains(path), "\(outcome)")
        }
    }

    // MARK: - Man pages and bash completion

    static let root = EntryctlProcess.packageRoot.path
    static let pages = ["doc/man/entryd.8", "doc/man/entryd-web.8", "doc/man/entryctl.1", "doc/man/entryd.conf.5"]

    /// The first of `names` found on the PATH (or in /usr/bin, /bin).
    static func tool(_ name: String) -> String? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    static let environment = ["PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "MANWIDTH": "80", "HOME": "/tmp"]

    @Test("each man page renders with man -l (or groff) without a warning", arguments: pages)
    func manPageRenders(page: String) throws {
        let file = Self.root + "/" + page
        if let man = Self.tool("man") {
            let r = try runProcess(man, ["--warnings", "-l", file], environment: Self.environment)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.isEmpty, "man -l \(page) warned: \(r.stderr)")
            #expect(r.stdout.contains("NAME") && r.stdout.contains("SEE ALSO"))
        }
        if let groff = Self.tool("groff") {
            let r = try runProcess(groff, ["-k", "-man", "-Tutf8", "-ww", "-z", file], environment: Self.environment)
            #expect(r.status == 0 && r.stderr.isEmpty, "groff \(page): \(r.stderr)")
        }
    }

    /// An alternating-font macro (`.BR`, `.IR`, …) joins its arguments with no
    /// space, so running text among them renders glued ("-)inbatcheswith"):
    /// no argument of one may be a common English word.
    @Test("no alternating-font macro of a man page carries running text", arguments: pages)
    func alternatingMacrosCarryNoText(page: String) throws {
        let words: Set<Substring> = [
            "a", "an", "and", "as", "at", "be", "by", "for", "from", "in", "is", "it", "its", "not", "of", "on",
            "or", "the", "to", "with",
        ]
        let text = try String(contentsOfFile: Self.root + "/" + page, encoding: .utf8)
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            // the arguments, a quoted one ("web\-user add") as one
            var parts: [Substring] = []
            var quoted = false
            var start = line.startIndex
            for k in line.indices {
                if line[k] == "\"" {
                    quoted.toggle()
                } else if line[k] == " " && !quoted {
                    if start < k { parts.append(line[start..<k]) }
                    start = line.index(after: k)
                }
            }
            if start < line.endIndex { parts.append(line[start...]) }
            guard let macro = parts.first, [".BR", ".RB", ".IR", ".RI", ".BI", ".IB"].contains(macro) else { continue }
            let glued = parts.dropFirst().filter { words.contains($0) }
            #expect(glued.isEmpty, "\(page):\(number + 1): \(line) renders \(glued) without spaces")
        }
    }

    @Test("entryctl(1) and the completion name every command of entryctl --help")
    func everyCommandDocumented() throws {
        let help = try runProcess(productsDirectory() + "/entryctl", ["--locale", "en", "--help"])
        let commands = help.stdout.components(separatedBy: "Commands:\n")[1].components(separatedBy: "\n\n")[0]
            .split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }.filter {
                $0 != "help"
            }
        #expect(commands.contains("export") && commands.contains("import") && commands.contains("backup"))
        let page = try String(contentsOfFile: Self.root + "/doc/man/entryctl.1", encoding: .utf8)
        let completion = try String(contentsOfFile: Self.root + "/completion/entryctl.bash", encoding: .utf8)
        for command in commands {
            let escaped = command.replacingOccurrences(of: "-", with: "\\-")  // web-user is web\-user in roff
            #expect(
                page.contains(".B \(command)") || page.contains(".BI \"\(command) ")
                    || page.contains(".BI \"\(escaped) "),
                "entryctl.1 lacks \(command)")
            #expect(
                completion.contains(" \(command) ") || completion.contains("\"\(command) ")
                    || completion.contains(" \(command)\""),
                "the completion lacks \(command)")
        }
    }

    /// Runs the completion function with COMP_WORDS set; returns COMPREPLY, one per line.
    func complete(_ words: [String], path: String = "/usr/bin:/bin") throws -> [String] {
        let quoted = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let script =
            "source '\(Self.root)/completion/entryctl.bash'; COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); "
            + "_entryctl; printf '%s\\n' \"${COMPREPLY[@]}\""
        var env = Self.environment
        env["PATH"] = path
        let r = try runProcess("/bin/bash", ["--norc", "-c", script], environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").map(String.init)
    }

    @Test("the bash completion parses and completes commands, options, fields and picker values")
    func completion() throws {
        let check = try runProcess("/bin/bash", ["-n", Self.root + "/completion/entryctl.bash"])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(try complete(["entryctl", "ex"]) == ["export"])
        #expect(try complete(["entryctl", "im"]) == ["import"])
        // A global option's value is not the command: --timeout 5 li → list.
        #expect(try complete(["entryctl", "--timeout", "5", "li"]) == ["list"])
        #expect(try complete(["entryctl", "--timeout", "5", "export", "--in"]) == ["--include-deleted"])
        #expect(try complete(["entryctl", "export", "--in"]) == ["--include-deleted"])
        #expect(try complete(["entryctl", "export", "--format", ""]) == ["jsonl", "csv", "json"])
        #expect(try complete(["entryctl", "--locale", ""]) == ["zh", "en"])

        // Field names and picker values come from the daemon.
        let d = try Daemon()
        let path = productsDirectory() + ":/usr/bin:/bin"
        #expect(try complete(["entryctl", "--socket", d.socket, "add", "bi"], path: path) == ["birthday="])
        let ctl = ["entryctl", "--socket", d.socket]
        // Names people read, not codes (city=深<Tab> once replaced 深 with 440300); codes when a code is typed.
        #expect(try complete(ctl + ["list", "--country", "中国"], path: path).first == "中国")
        #expect(
            try complete(ctl + ["--locale", "en", "list", "--country", "United"], path: path).contains(
                "United\\ States"))
        #expect(try complete(ctl + ["list", "--country", "CN"], path: path) == ["CN"])
        #expect(try complete(ctl + ["add", "province", "=", "广东"], path: path) == ["广东省"])
        #expect(try complete(ctl + ["add", "province", "=", "4400"], path: path) == ["440000"])
        #expect(try complete(ctl + ["add", "province", "=", "广东", "city", "=", "深"], path: path) == ["深圳市"])
        // The cities of the province on the line, however it was typed (province=gd city=<Tab> once offered nothing).
        let cities = try complete(ctl + ["add", "province", "=", "gd", "city", "=", ""], path: path)
        #expect(cities.contains("广州市") && cities.contains("深圳市") && !cities.contains("杭州市"), "\(cities)")
        // Every picker field, choices too, and only picker fields for `options`.
        #expect(try complete(ctl + ["add", "contact_method", "=", ""], path: path) == ["电话", "邮箱"])
        #expect(try complete(ctl + ["options", ""], path: path) == ["country", "province", "city", "contact_method"])
        #expect(try complete(ctl + ["add", "name", "=", "李"], path: path).isEmpty)
        // A --parent that names no province is refused in the option's terms, not the wire member's.
        let badParent = try d.entryctl(["--locale", "en", "options", "city", "--parent", "xx"])
        #expect(
            badParent.status == 64 && badParent.stderr.contains("--parent 'xx' names no single province"),
            "\(badParent)")
        // Peer names for sync.
        let peered = try Daemon(arguments: ["--peer", "laptop=unix:/nonexistent/l.sock", "--sync-interval", "0"])
        #expect(try complete(["entryctl", "--socket", peered.socket, "sync", ""], path: path) == ["laptop"])
        #expect(peered.stop() == 0)
        #expect(d.stop() == 0)
    }

    @Test(
        "add and update take a field's label in zh or en as its name; an unknown name gets a did-you-mean across names and labels; JSON lines keys too"
    )
    func labelsAsFieldNames() throws {
        let d = try Daemon()
        let added = try d.entryctl([
            "--json", "add", "姓名=李雷", "Birthday=1990-05-17", "国家=中国", "province=广东",
            "城市=广州", "Contact method=电话", "手机号码=13800138000",
        ])
        #expect(added.status == 0, "\(added)")
        let entry = try #require(try JSON.parse(added.stdout)["entry"])
        #expect(
            entry["fields"]
                == .stringMap([
                    "name": "李雷", "birthday": "1990-05-17", "country": "CN", "province": "440000",
                    "city": "440100", "contact_method": "phone", "phone": "+8613800138000",
                ]))
        let id = try #require(entry["id"]?.stringValue)
        let updated = try d.entryctl(["--json", "update", id, "城市=深圳", "PHONE=13900139000"])
        #expect(updated.status == 0, "\(updated)")
        #expect(try JSON.parse(updated.stdout)["entry"]?["fields"]?["city"]?.stringValue == "440300")
        #expect(try JSON.parse(updated.stdout)["entry"]?["fields"]?["phone"]?.stringValue == "+8613900139000")

        // Unknown: the problem names the nearest name or label, in the locale; nothing is stored.
        let typo = try d.entryctl([
            "--locale", "en", "add", "姓名=韩梅梅", "Brithday=1991-02-03", "country=CN", "contact_methd=email",
            "手机号码码=1",
        ])
        #expect(typo.status == 65, "\(typo)")
        #expect(
            typo.stderr.contains(
                "Form 'registration' has no field named or labelled 'Brithday'. Did you mean 'birthday'?"), "\(typo)")
        #expect(typo.stderr.contains("'contact_methd'. Did you mean 'contact_method'?"), "\(typo)")
        #expect(typo.stderr.contains("'手机号码码'. Did you mean '手机号码'?"), "a label is suggested: \(typo)")
        #expect(typo.stderr.contains("contact_method: [required]"), "the other problems are listed too: \(typo)")
        let zh = try d.entryctl(["update", id, "联络电话=1"])
        #expect(zh.status == 65, "\(zh)")
        #expect(zh.stderr.contains("表单“registration”没有名称或标签为“联络电话”的字段"), "\(zh)")
        // A header alias of the form names its field too (手机 and mobile are the phone's).
        let alias = try d.entryctl(["--json", "update", id, "手机=13900139001"])
        #expect(alias.status == 0, "\(alias)")
        #expect(try JSON.parse(alias.stdout)["entry"]?["fields"]?["phone"]?.stringValue == "+8613900139001")
        let both = try d.entryctl(["--locale", "en", "update", id, "mobile=13900139002", "phone=13900139003"])
        #expect(both.status == 64 && both.stderr.contains("field 'phone' is given twice"), "\(both)")
        let checked = try d.entryctl(["--locale", "en", "check", "姓名=韩梅梅", "Birthdy=1991-02-03"])
        #expect(checked.status == 65 && checked.stderr.contains("'Birthdy'. Did you mean 'birthday'?"), "\(checked)")
        #expect(!checked.stderr.contains("name: [required]"), "姓名 counts as name: \(checked)")
        let twice = try d.entryctl(["--locale", "en", "add", "name=a", "姓名=b"])
        #expect(
            twice.status == 64 && twice.stderr.contains("field 'name' is given twice (as 'name' and '姓名')"), "\(twice)")
        #expect(try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 1)

        // JSON lines with label keys.
        let line =
            #"{"fields":{"姓名":"Ada","Birthday":"1985-12-10","国家":"GB","联系方式":"email","Email":"ada@example.com"}}"#
        let imported = try d.entryctl(["--json", "import", "-"], input: line + "\n")
        #expect(imported.status == 0, "\(imported)")
        #expect(try JSON.parse(imported.stdout)["added"]?.intValue == 1)
        let listed = try d.entryctl(["list", "--search", "Ada", "--format", "json"])
        #expect(
            try JSON.parse(listed.stdout).arrayValue?.first?["fields"]?["email"]?.stringValue == "ada@example.com",
            "\(listed)")
        #expect(d.stop() == 0)
    }
}
