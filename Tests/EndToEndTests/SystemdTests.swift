import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// entryd under (a stand-in for) systemd: notify messages, socket activation,
/// reload and --check-config, with the real binary.
@Suite struct SystemdTests {
    static var entryd: String { productsDirectory() + "/entryd" }

    /// `Status.limits["max-batch"]` over `connection`.
    static func maxBatch(_ connection: VarlinkConnection) throws -> Int64? {
        try connection.call("io.entryd.Sync.Status")["limits"]?["max-batch"]?.intValue
    }

    @Test(
        "NOTIFY_SOCKET: STATUS, READY=1 once calls work, WATCHDOG=1 every WATCHDOG_USEC/2, RELOADING=1 then READY=1 on SIGHUP, STOPPING=1 on SIGTERM"
    )
    func notifications() throws {
        let dir = try serviceTestDirectory("notify")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = dir + "/entryd.conf"
        try "max-batch = 100\n".write(toFile: config, atomically: true, encoding: .utf8)
        let notify = try NotifySocket()
        let socket = dir + "/entryd.sock"
        let watchdogUSec = 300_000
        let daemon = try ServiceProcess(
            executable: Self.entryd, arguments: ["--config", config, "--socket", socket, "--db", dir + "/entries.db"],
            environment: ["NOTIFY_SOCKET": notify.name, "WATCHDOG_USEC": String(watchdogUSec)], directory: dir)

        // READY=1 comes after the STATUS= of start-up, and by then the socket answers at once.
        let ready = notify.wait(for: "READY=1")
        try #require(ready.found != nil, "no READY=1; stderr: \(daemon.stderr)")
        #expect(ready.before.flatMap { $0 }.contains { $0.hasPrefix("STATUS=migrating") })
        let early = try VarlinkConnection(path: socket)
        #expect(try early.call("org.varlink.service.GetInfo")["product"]?.stringValue == "entryd")
        #expect(try Self.maxBatch(early) == 100)

        // Watchdog pings at half the interval.
        var pings: [Date] = []
        while pings.count < 5, let m = notify.receive(timeout: 2) {
            if m.lines == ["WATCHDOG=1"] { pings.append(m.at) }
        }
        try #require(pings.count == 5, "watchdog pings: \(pings.count)")
        let gaps = zip(pings.dropFirst(), pings).map { $0.timeIntervalSince($1) }.sorted()
        let median = gaps[gaps.count / 2]
        #expect(median > 0.10 && median < 0.30, "median gap \(median) s for WATCHDOG_USEC=\(watchdogUSec)")

        // SIGHUP with a changed file: RELOADING=1 (with MONOTONIC_USEC), then READY=1; the open connection stays.
        let office = JSON.object([("peer", .string("office"))])
        #expect(throws: WireError(name: "io.entryd.Sync.PeerNotFound", parameters: office)) {
            try early.call("io.entryd.Sync.SyncPeer", office)
        }
        #expect(!daemon.stderr.contains("connected"))
        try "max-batch = 200\nlog-level = debug\n[peer office]\naddress = unix:\(dir)/no-such.sock\ninterval = 0\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        let reloading = notify.wait(for: "RELOADING=1")
        try #require(reloading.found != nil)
        #expect(reloading.found!.contains { $0.hasPrefix("MONOTONIC_USEC=") && UInt64($0.dropFirst(15)) != nil })
        #expect(notify.wait(for: "READY=1").found != nil)
        #expect(try Self.maxBatch(early) == 200)
        // The new peer is configured (unreachable, but known), and the new log level is in force.
        do {
            _ = try early.call("io.entryd.Sync.SyncPeer", office)
            Issue.record("SyncPeer to a missing socket succeeded")
        } catch let e as WireError {
            #expect(e.name == "io.entryd.Sync.PeerUnreachable")
        }
        try VarlinkConnection(path: socket).close()
        usleep(100_000)
        #expect(daemon.stderr.contains("user='\(Accounts.userName(getuid()))' role=admin: connected"))

        // A bad file is refused with a log line naming file:line:key; the old configuration stays.
        try "max-batch = 200\nmax-batch = many\n".write(toFile: config, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        #expect(notify.wait(for: "RELOADING=1").found != nil)
        #expect(notify.wait(for: "READY=1").found != nil)
        #expect(try Self.maxBatch(early) == 200)
        #expect(daemon.stderr.contains("reload refused, keeping the configuration in force: \(config):2: max-batch:"))

        daemon.signal(SIGTERM)
        #expect(notify.wait(for: "STOPPING=1").found != nil)
        early.close()
        #expect(daemon.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: socket))
    }

    @Test(
        "systemd-socket-activate -l SOCKET entryd serves calls through the passed socket and leaves it in place",
        .enabled(
            if: which("systemd-socket-activate") != nil,
            "skipped: systemd-socket-activate is missing; scripts/setup installs it (Debian package systemd)"))
    func socketActivation() throws {
        let activate = try #require(which("systemd-socket-activate"))
        let dir = try serviceTestDirectory("activate")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let socket = dir + "/activated.sock"
        let daemon = try ServiceProcess(
            executable: activate,
            arguments: ["-l", socket, Self.entryd, "--config", "/dev/null", "--db", dir + "/entries.db"],
            environment: [:], directory: dir)
        let c = try connectWhenListening(socket)
        let status = try c.call("io.entryd.Sync.Status")
        #expect(status["database"]?.stringValue == dir + "/entries.db")
        let info = try c.call("org.varlink.service.GetInfo")
        #expect(info["product"]?.stringValue == "entryd")
        #expect(daemon.stderr.contains("listening on '\(socket)' (passed by systemd)"))
        c.close()
        #expect(daemon.stop() == 0)
        // The socket belongs to the manager: entryd does not remove it.
        #expect(FileManager.default.fileExists(atPath: socket))
    }

    @Test(
        "entryd's command line: --flag=value, and usage errors with a suggestion (exit 64)",
        arguments: [
            (
                ["--sockt", "/x.sock"],
                "entryd: unknown option '--sockt'; did you mean '--socket'?\nTry 'entryd --help'.\n"
            ),
            (
                ["--check-config", "--socket"],
                "entryd: option '--socket' needs a value (--socket PATH)\nTry 'entryd --help'.\n"
            ),
            (["--check-config=yes"], "entryd: option '--check-config' takes no value\nTry 'entryd --help'.\n"),
            (["--", "--check-config"], "entryd: unknown option '--'\nTry 'entryd --help'.\n"),
            (["entries.db"], "entryd: unexpected argument 'entries.db'\nTry 'entryd --help'.\n"),
            (
                ["--max-batch=0"],
                "entryd: --max-batch must be a whole number from 1 to 1000000, not '0'\nTry 'entryd --help'.\n"
            ),
            (
                ["--restore", "a.db", "--restore=b.db"],
                "entryd: option '--restore' is given twice\nTry 'entryd --help'.\n"
            ),
            // A peer's name labels log lines and metrics: the file's rule, no quotes or line breaks.
            (
                ["--peer", "a\"b\rc=exec:cat"],
                "entryd: --peer: a peer name is 1-64 letters, digits, '.', '_' or '-', not 'a\"b\rc'\nTry 'entryd --help'.\n"
            ),
            (
                ["--peer", "o=exec:cat", "--peer=o=unix:/run/o.sock"],
                "entryd: --peer: peer 'o' is given twice\nTry 'entryd --help'.\n"
            ),
        ])
    func usageErrors(arguments: [String], stderr: String) throws {
        let r = try runProcess(Self.entryd, ["--config", "/dev/null"] + arguments)
        #expect(r.status == 64 && r.stderr == stderr, "\(r)")
    }

    @Test("entryd reads --flag=value as --flag value, and the last of an option given twice")
    func flagEqualsValue() throws {
        let dir = try serviceTestDirectory("flags")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try runProcess(
            Self.entryd,
            [
                "--config=/dev/null", "--check-config", "--socket=\(dir)/a.sock", "--socket", dir + "/s.sock",
                "--db=\(dir)/e.db", "--max-batch=7", "--peer=office=unix:/run/o.sock",
            ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stdout.contains("\nmax-batch = 7\n") && r.stdout.contains("\nsocket = \(dir)/s.sock\n"), "\(r.stdout)")
        #expect(r.stdout.contains("[peer office]\naddress = unix:/run/o.sock\n"), "\(r.stdout)")
    }

    @Test("--check-config prints the effective configuration (exit 0) or names file:line:key (exit 78)")
    func checkConfig() throws {
        let dir = try serviceTestDirectory("check")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let good = dir + "/entryd.conf"
        try "max-connections = 12\n[roles]\nwrite = alice\n[peer office]\naddress = unix:/run/office.sock\n".write(
            toFile: good, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: good + ".d", withIntermediateDirectories: true)
        try "max-connections = 34\n".write(toFile: good + ".d/50-local.conf", atomically: true, encoding: .utf8)
        let ok = try runProcess(
            Self.entryd,
            [
                "--config", good, "--check-config", "--socket", dir + "/s.sock", "--db", dir + "/e.db", "--max-batch",
                "7",
            ])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains("# files: \(good), \(good).d/50-local.conf\n"))
        #expect(ok.stdout.contains("\nmax-connections = 34\n"))
        #expect(ok.stdout.contains("\nmax-batch = 7\n"))  // the flag overrides the file
        #expect(ok.stdout.contains("\nsocket = \(dir)/s.sock\n"))
        #expect(ok.stdout.contains("\nwrite = alice\n"))
        #expect(ok.stdout.contains("[peer office]\naddress = unix:/run/office.sock\ninterval = 60\n"))

        let bad = dir + "/bad.conf"
        try "# comment\nidle-timeout = forever\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let refused = try runProcess(Self.entryd, ["--config", bad, "--check-config"])
        #expect(refused.status == 78)
        #expect(refused.stderr.hasPrefix("entryd: \(bad):2: idle-timeout: give a whole number from 1 to 86400 seconds"))

        let missing = try runProcess(Self.entryd, ["--config", dir + "/none.conf", "--check-config"])
        #expect(missing.status == 78)
        #expect(missing.stderr.contains("\(dir)/none.conf:0: cannot read the file"))

        // A bad configuration also stops a normal start, before anything listens.
        let start = try runProcess(Self.entryd, ["--config", bad, "--socket", dir + "/x.sock", "--db", dir + "/x.db"])
        #expect(start.status == 78)
        #expect(start.stderr.contains("\(bad):2: idle-timeout"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/x.sock"))

        // Under journald (JOURNAL_STREAM set) the line carries its syslog priority: <3> for an error.
        let journal = try runProcess(
            Self.entryd, ["--config", bad, "--socket", dir + "/x.sock", "--db", dir + "/x.db"],
            environment: ["JOURNAL_STREAM": "8:12345", "PATH": "/usr/bin:/bin"])
        #expect(journal.status == 78)
        #expect(
            journal.stderr.hasPrefix("<3>bad configuration, not starting: \(bad):2: idle-timeout:"), "\(journal.stderr)"
        )
    }

    @Test(
        "a --db ($ENTRYD_DB, database in entryd.conf) whose directory does not exist is refused with exit 73 and nothing is created"
    )
    func missingDatabaseDirectory() throws {
        let dir = try serviceTestDirectory("nodbdir")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let typo = dir + "/no-such-dir/sub/entries.db"
        let refused = try runProcess(Self.entryd, ["--config", "/dev/null", "--socket", dir + "/s.sock", "--db", typo])
        #expect(refused.status == 73, "\(refused.stderr)")
        #expect(refused.stderr.contains("the directory of database '\(typo)' does not exist"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/no-such-dir"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/s.sock"))
        let viaEnvironment = try runProcess(
            Self.entryd, ["--config", "/dev/null", "--socket", dir + "/s.sock"],
            environment: ["ENTRYD_DB": typo, "PATH": "/usr/bin:/bin"])
        #expect(viaEnvironment.status == 73, "\(viaEnvironment.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/no-such-dir"))
        // `database` in entryd.conf, as its comment says: the directory must exist (exit 73).
        let conf = dir + "/entryd.conf"
        try "database = \(typo)\n".write(toFile: conf, atomically: true, encoding: .utf8)
        let viaConfig = try runProcess(Self.entryd, ["--config", conf, "--socket", dir + "/s.sock"])
        #expect(viaConfig.status == 73, "\(viaConfig.stderr)")
        #expect(viaConfig.stderr.contains("does not exist"), "\(viaConfig.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/no-such-dir"))
        let comment = try String(contentsOfFile: packageRoot + "/config/entryd.conf", encoding: .utf8)
        #expect(comment.contains("its directory must exist (exit 73 otherwise"))
    }

    @Test("SIGHUP reloads the forms: a removed field's stored value is kept, new input follows the new definition")
    func formReload() throws {
        let dir = try serviceTestDirectory("forms")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let forms = dir + "/forms"
        try FileManager.default.createDirectory(atPath: forms, withIntermediateDirectories: true)
        let original = try String(contentsOfFile: packageRoot + "/config/forms/registration.conf", encoding: .utf8)
        try original.write(toFile: forms + "/registration.conf", atomically: true, encoding: .utf8)
        let notify = try NotifySocket()
        let socket = dir + "/entryd.sock"
        let daemon = try ServiceProcess(
            executable: Self.entryd,
            arguments: ["--config", "/dev/null", "--forms", forms, "--socket", socket, "--db", dir + "/entries.db"],
            environment: ["NOTIFY_SOCKET": notify.name], directory: dir)
        try #require(notify.wait(for: "READY=1").found != nil, "\(daemon.stderr)")
        let c = try VarlinkConnection(path: socket)
        func fields(_ extra: [(String, JSON)]) -> JSON {
            .object(
                [
                    ("name", .string("Ann")), ("birthday", .string("1990-01-01")), ("country", .string("US")),
                    ("contact_method", .string("email")), ("email", .string("ann@example.com")),
                ] + extra)
        }
        let added = try c.call(
            "io.entryd.Entries.Add", .object([("fields", fields([("appointment", .string("2036-12-01 09:30"))]))]))
        let id = try #require(added["entry"]?["id"]?.stringValue)
        let hashBefore = try c.call("io.entryd.Sync.Status")["forms"]?["registration"]?.stringValue

        // The new definition drops the appointment field.
        let cut = try #require(original.range(of: "[field appointment]"))
        try String(original[..<cut.lowerBound]).write(
            toFile: forms + "/registration.conf", atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        #expect(notify.wait(for: "RELOADING=1").found != nil)
        #expect(notify.wait(for: "READY=1").found != nil)
        #expect(try c.call("io.entryd.Sync.Status")["forms"]?["registration"]?.stringValue != hashBefore)

        // The stored value stays, and survives an edit of another field.
        #expect(
            try c.call("io.entryd.Entries.Get", .object([("id", .string(id))]))["entry"]?["fields"]?["appointment"]?
                .stringValue == "2036-12-01 09:30")
        let updated = try c.call(
            "io.entryd.Entries.Update", .object([("id", .string(id)), ("fields", .object([("name", .string("Bea"))]))]))
        #expect(updated["entry"]?["fields"]?["name"]?.stringValue == "Bea")
        #expect(updated["entry"]?["fields"]?["appointment"]?.stringValue == "2036-12-01 09:30")
        // New input is held to the new definition.
        #expect(throws: WireError.self) {
            try c.call(
                "io.entryd.Entries.Add", .object([("fields", fields([("appointment", .string("2036-12-02 10:00"))]))]))
        }
        c.close()
        #expect(daemon.stop() == 0)
    }

    @Test(
        "a socket passed as fd 3 (LISTEN_FDS, LISTEN_PID) serves calls and keeps listening after entryd stops, for the next activation"
    )
    func passedSocketSurvivesStop() throws {
        let dir = try serviceTestDirectory("listenfds")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/passed.sock"
        // The test plays systemd: it owns the listening socket and hands entryd a copy as fd 3.
        let listening = try UnixSocket.listen(path: path, mode: 0o660)
        defer { close(listening) }
        let notify = try NotifySocket()
        let stderrPath = dir + "/stderr.log"
        try Data().write(to: URL(fileURLWithPath: stderrPath))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = [
            "-c", #"exec 3<&0 0</dev/null; LISTEN_PID=$$ LISTEN_FDS=1 LISTEN_FDNAMES=entryd.socket exec "$0" "$@""#,
            Self.entryd, "--config", "/dev/null", "--db", dir + "/entries.db",
        ]
        p.environment = ProcessInfo.processInfo.environment.merging(["NOTIFY_SOCKET": notify.name]) { $1 }
        p.standardInput = FileHandle(fileDescriptor: listening, closeOnDealloc: false)
        p.standardOutput = FileHandle.nullDevice
        let stderrHandle = FileHandle(forWritingAtPath: stderrPath)
        defer { try? stderrHandle?.close() }  // the child has its own copy
        p.standardError = stderrHandle
        try p.run()
        defer {
            if p.isRunning {
                kill(p.processIdentifier, SIGKILL)
                p.waitUntilExit()
            }
        }
        let log = { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
        try #require(notify.wait(for: "READY=1").found != nil, "\(log())")
        let c = try VarlinkConnection(path: path)
        #expect(try c.call("org.varlink.service.GetInfo")["product"]?.stringValue == "entryd")
        c.close()
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        #expect(log().contains("listening on '\(path)' (passed by systemd)"))
        // Still listening: a client connects (it waits in the backlog for the next start).
        #expect(FileManager.default.fileExists(atPath: path))
        let later = try VarlinkConnection(path: path)
        later.close()
    }
}
