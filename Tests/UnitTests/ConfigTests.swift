import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// entryd.conf: every key, defaults, drop-in order, refusals with file:line:key (Config/).
@Suite struct ConfigTests {
    /// A fresh directory for one test's files.
    static func directory() throws -> String {
        let dir = NSTemporaryDirectory() + "entryd-config-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    static func write(_ text: String, to path: String) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test("no file gives the embedded defaults")
    func defaults() throws {
        let c = try DaemonConfiguration.parse(text: "", path: "/etc/entryd/entryd.conf")
        #expect(c.socketPath == nil)
        #expect(c.socketMode == 0o660)
        #expect(c.databasePath == nil)
        #expect(c.locale == .zh)
        #expect(c.formsDirectory == nil)
        #expect(c.logLevel == .info)
        #expect(c.limits == Limits())
        #expect(
            c.limits.maxMessageBytes == 4 << 20 && c.limits.maxConnections == 1024 && c.limits.idleTimeoutSeconds == 300
        )
        #expect(c.limits.maxBatch == 10_000 && c.limits.maxClockSkewMs == 300_000)
        #expect(c.access == AccessPolicy(grants: [:], defaultRole: .read))
        #expect(c.peers.isEmpty)
        #expect(c.sources == ["/etc/entryd/entryd.conf"])
    }

    @Test("a missing default file is fine, a missing --config file is an error")
    func missingFiles() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The default file may be missing: embedded defaults, plus any drop-ins beside it.
        let none = try DaemonConfiguration.load(path: nil, defaultPath: dir + "/entryd.conf")
        #expect(none == DaemonConfiguration())
        try Self.write("locale = en\n", to: dir + "/entryd.conf.d/50-local.conf")
        let dropInOnly = try DaemonConfiguration.load(path: nil, defaultPath: dir + "/entryd.conf")
        #expect(dropInOnly.locale == .en && dropInOnly.sources == [dir + "/entryd.conf.d/50-local.conf"])
        #expect(throws: ConfigurationError.self) { try DaemonConfiguration.load(path: dir + "/nope.conf") }
        do {
            _ = try DaemonConfiguration.load(path: dir + "/nope.conf")
        } catch {
            #expect(error.path == dir + "/nope.conf" && error.line == 0)
            #expect(error.message.contains("cannot read"))
        }
    }

    @Test("every key is parsed, with units and relative paths")
    func everyKey() throws {
        let text = """
            socket = /run/test/entryd.sock
            socket-mode = 0600
            database = data/entries.db
            locale = en
            forms = forms
            log-level = debug
            max-message-size = 1M
            max-connections = 7
            idle-timeout = 2min
            max-batch = 50
            max-clock-skew = 1h

            [roles]
            read = carol
            write = alice, @staff
            admin = @wheel
            gateway = entryd-web, @web-gateways
            default-role = none

            [peer office]
            address = exec:ssh office entryctl bridge
            interval = 0

            [peer lab]
            address = unix:/run/lab/entryd.sock
            """
        let c = try DaemonConfiguration.parse(text: text, path: "/etc/entryd/entryd.conf")
        #expect(c.socketPath == "/run/test/entryd.sock")
        #expect(c.socketMode == 0o600)
        #expect(c.databasePath == "/etc/entryd/data/entries.db")
        #expect(c.locale == .en)
        #expect(c.formsDirectory == "/etc/entryd/forms")
        #expect(c.logLevel == .debug)
        #expect(c.limits.maxMessageBytes == 1 << 20)
        #expect(c.limits.maxConnections == 7)
        #expect(c.limits.idleTimeoutSeconds == 120)
        #expect(c.limits.maxBatch == 50)
        #expect(c.limits.maxClockSkewMs == 3_600_000)
        #expect(c.access.grants[.read] == ["carol"])
        #expect(c.access.grants[.write] == ["alice", "@staff"])
        #expect(c.access.grants[.admin] == ["@wheel"])
        #expect(c.access.gateways == ["entryd-web", "@web-gateways"])
        #expect(c.access.defaultRole == Role.none)
        #expect(
            c.peers == [
                PeerConfig(name: "office", address: "exec:ssh office entryctl bridge", intervalSeconds: 0),
                PeerConfig(name: "lab", address: "unix:/run/lab/entryd.sock", intervalSeconds: 60),
            ])
    }

    @Test("the shipped config/entryd.conf parses and documents every key")
    func shippedFile() throws {
        let path = #filePath.replacingOccurrences(of: "/Tests/UnitTests/ConfigTests.swift", with: "/config/entryd.conf")
        let c = try DaemonConfiguration.load(path: path)
        #expect(c.formsDirectory?.hasSuffix("/config/forms") == true)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for key in ConfigKey.all.map(\.name) {
            #expect(text.contains("\n# \(key) =") || text.contains("\n\(key) ="), "config/entryd.conf lacks \(key)")
        }
    }

    @Test("drop-ins apply after the main file in lexical order; later values win")
    func dropInOrder() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.write(
            "max-batch = 10\nmax-connections = 5\n[roles]\nwrite = alice\n[peer office]\naddress = unix:/a\ninterval = 30\n",
            to: dir + "/entryd.conf")
        try Self.write("max-batch = 20\n[peer office]\ninterval = 90\n", to: dir + "/entryd.conf.d/10-first.conf")
        try Self.write("max-batch = 30\n[roles]\nwrite = bob\n", to: dir + "/entryd.conf.d/20-second.conf")
        try Self.write("max-batch = 99\n", to: dir + "/entryd.conf.d/30-ignored.conf.disabled")
        let c = try DaemonConfiguration.load(path: dir + "/entryd.conf")
        #expect(c.limits.maxBatch == 30)
        #expect(c.limits.maxConnections == 5)
        #expect(c.access.grants[.write] == ["bob"])
        #expect(c.peers == [PeerConfig(name: "office", address: "unix:/a", intervalSeconds: 90)])
        #expect(
            c.sources == [
                dir + "/entryd.conf", dir + "/entryd.conf.d/10-first.conf", dir + "/entryd.conf.d/20-second.conf",
            ])
    }

    @Test("a bad drop-in is reported with its own file and line")
    func badDropIn() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.write("max-batch = 10\n", to: dir + "/entryd.conf")
        try Self.write("# local\n\nmax-batch = lots\n", to: dir + "/entryd.conf.d/50-local.conf")
        #expect(
            throws: ConfigurationError(
                path: dir + "/entryd.conf.d/50-local.conf", line: 3, key: "max-batch",
                message: "give a whole number from 1 to 1000000, not 'lots'")
        ) {
            try DaemonConfiguration.load(path: dir + "/entryd.conf")
        }
    }

    /// Each kind of bad file, with the line and key the error must name.
    static let badFiles: [(text: String, line: Int, key: String, says: String)] = [
        ("locale = zh\nbogus = 1", 2, "bogus", "unknown key at the top level"),
        ("[roles]\nread = a\nsuperuser = b", 3, "superuser", "unknown key in [roles]"),
        ("[peer x]\naddress = unix:/a\nport = 22", 3, "port", "unknown key in [peer x]"),
        ("\n[limits]\nmax-batch = 1", 2, "[limits]", "unknown section"),
        ("[peer bad name!]\naddress = unix:/a", 1, "[peer bad name!]", "a peer name"),
        ("[peer lonely]\ninterval = 5", 1, "[peer lonely]", "has no address"),
        ("[peer p]\naddress = tcp:host:1", 2, "address", "unix:/ABSOLUTE/PATH or exec:COMMAND"),
        ("[peer p]\naddress = exec:", 2, "address", "exec:COMMAND"),
        ("[peer p]\naddress = unix:/a\ninterval = -1", 3, "interval", "0 to 86400 seconds"),
        ("socket = /" + String(repeating: "s", count: 120), 1, "socket", "at most 107 bytes"),
        ("socket-mode = 0644x", 1, "socket-mode", "octal"),
        ("socket-mode = 0440", 1, "socket-mode", "owner's read and write"),
        ("database =", 1, "database", "path of the database"),
        ("db =", 1, "db", "PostgreSQL URI"),
        ("instance = hub 1", 1, "instance", "e.g. hub-1"),
        ("instance = " + String(repeating: "h", count: 65), 1, "instance", "1 to 64 letters"),
        ("locale = fr", 1, "locale", "zh or en"),
        ("forms =", 1, "forms", "directory"),
        ("log-level = loud", 1, "log-level", "error, warning, notice, info or debug"),
        ("max-message-size = 100", 1, "max-message-size", "4096 to 67108864 bytes"),
        ("max-message-size = 65M", 1, "max-message-size", "4096 to 67108864 bytes"),
        ("max-connections = 0", 1, "max-connections", "1 to 65536"),
        ("max-connections = 1.5", 1, "max-connections", "1 to 65536"),
        ("idle-timeout = 2d", 1, "idle-timeout", "1 to 86400 seconds"),
        ("max-batch = 1000001", 1, "max-batch", "1 to 1000000"),
        ("max-clock-skew = 0", 1, "max-clock-skew", "1 to 86400 seconds"),
        ("[roles]\nwrite = alice, bad user", 2, "write", "'bad user' is not one"),
        ("[roles]\nadmin = @", 2, "admin", "'@' is not one"),
        ("[roles]\ngateway = entryd-web, web user", 2, "gateway", "'web user' is not one"),
        ("[roles]\ngateway = @", 2, "gateway", "'@' is not one"),
        ("[roles]\ndefault-role = root", 2, "default-role", "none, submit, read, write or admin"),
        ("locale = zh\nthis line is wrong", 2, "", "expected '[section]' or 'key = value'"),
        // Debian's libinih joins an indented line to the key before it: refused, not a path with a newline.
        ("socket = /run/x.sock\n  this is not ini", 2, "", "an indented line would continue 'socket' of line 1"),
        ("[peer p]\naddress = unix:/a\n\tinterval = 5", 3, "", "would continue 'address' of line 2"),
        ("socket = /run/x\u{01}.sock", 1, "", "'socket': the value contains a control character (U+0001)"),
        ("[roles]\nread = alice\u{7F}", 2, "", "control character (U+007F)"),
        ("max-conections = 5", 1, "max-conections", "did you mean 'max-connections'?"),
    ]

    @Test("each kind of bad file is refused with file:line:key", arguments: 0..<badFiles.count)
    func badFile(_ index: Int) throws {
        let bad = Self.badFiles[index]
        do {
            _ = try DaemonConfiguration.parse(text: bad.text, path: "/etc/entryd/entryd.conf")
            Issue.record("accepted: \(bad.text)")
        } catch {
            #expect(error.path == "/etc/entryd/entryd.conf")
            #expect(error.line == bad.line)
            #expect(error.key == bad.key)
            #expect(error.message.contains(bad.says), "\(error)")
            let prefix =
                bad.key.isEmpty
                ? "/etc/entryd/entryd.conf:\(bad.line): " : "/etc/entryd/entryd.conf:\(bad.line): \(bad.key): "
            #expect(error.description.hasPrefix(prefix))
        }
    }

    @Test("every problem of a file is reported, in line order, not only the first")
    func everyProblem() throws {
        let text = "max-connections = 0\nidle-timeout = forever\nmax-conections = 5\n[limits]\nsocket = /run/x.sock\n"
        do {
            _ = try DaemonConfiguration.parse(text: text, path: "/e/entryd.conf")
            Issue.record("accepted")
        } catch {
            let lines = error.description.split(separator: "\n").map(String.init)
            #expect(lines.count == 4, "\(error)")
            #expect(lines.map { $0.split(separator: ":")[1] } == ["1", "2", "3", "4"], "\(error)")
            #expect(lines[2].contains("did you mean 'max-connections'?"))
            #expect(lines[3].contains("[limits]: unknown section"))
        }
        // Lines inih cannot read are all named first (the file is not applied at all).
        do {
            _ = try DaemonConfiguration.parse(text: "locale = zh\nnot ini\nsocket = /a\n  b\n", path: "/e/entryd.conf")
            Issue.record("accepted")
        } catch {
            #expect(error.line == 2)
            #expect(error.more.map(\.line) == [4], "\(error)")
        }
    }

    @Test("a typo gets the one nearest key within two edits, or none")
    func nearestKey() {
        let names = ConfigKey.all.filter { $0.section == .main }.map(\.name)
        #expect(MatchKey.nearest("max-conections", among: names) == "max-connections")
        #expect(MatchKey.nearest("IDLE-TIMEOUT", among: names) == "idle-timeout")
        #expect(MatchKey.nearest("sockt", among: names) == "socket")
        #expect(MatchKey.nearest("colour", among: names) == nil)
        #expect(MatchKey.nearest("", among: names) == nil)
        #expect(MatchKey.nearest("lsit", among: ["list", "edit", "get"]) == "list", "a swap of two letters")
        #expect(MatchKey.nearest("-x", among: ["-h", "-o"]) == nil, "too short to guess")
    }

    @Test("the rendered configuration parses back to the same settings")
    func renderedRoundTrip() throws {
        let text =
            "locale = en\nmax-batch = 42\nidle-timeout = 90\n[roles]\nwrite = alice, @staff\ngateway = web, @gw\ndefault-role = none\n[peer o]\naddress = unix:/x\ninterval = 7\n"
        let c = try DaemonConfiguration.parse(text: text, path: "/e/a.conf")
        let out = c.rendered(socket: "/run/s.sock", database: "/var/lib/db", forms: nil)
        var back = try DaemonConfiguration.parse(text: out, path: "/e/b.conf")
        #expect(back.socketPath == "/run/s.sock" && back.databasePath == "/var/lib/db")
        back.socketPath = nil
        back.databasePath = nil
        back.sources = c.sources
        var expected = c
        expected.access.grants[.submit] = []
        expected.access.grants[.read] = []
        expected.access.grants[.admin] = []
        #expect(back == expected)
    }
}

/// Roles from SO_PEERCRED identities (Config/AccessPolicy.swift).
@Suite struct ConfigAccessTests {
    let policy = AccessPolicy(
        grants: [.read: ["carol"], .write: ["alice", "@staff"], .admin: ["@wheel"]], defaultRole: .none)

    @Test("root and the daemon's own user are admin whatever the lists say")
    func rootAndSelf() {
        #expect(policy.roles(uid: 0, userName: "root", groups: [], daemonUID: 999) == [.admin])
        #expect(policy.roles(uid: 999, userName: "entryd", groups: [], daemonUID: 999) == [.admin])
    }

    @Test("users and groups get the strongest roles that name them, else the default")
    func grants() {
        #expect(policy.roles(uid: 1001, userName: "carol", groups: ["users"], daemonUID: 999) == [.read])
        #expect(policy.roles(uid: 1002, userName: "alice", groups: ["users"], daemonUID: 999) == [.write])
        #expect(policy.roles(uid: 1003, userName: "dave", groups: ["users", "staff"], daemonUID: 999) == [.write])
        #expect(policy.roles(uid: 1001, userName: "carol", groups: ["wheel"], daemonUID: 999) == [.admin])
        #expect(policy.roles(uid: 1004, userName: "eve", groups: ["users"], daemonUID: 999) == [Role.none])
        #expect(AccessPolicy().roles(uid: 1004, userName: "eve", groups: [], daemonUID: 999) == [.read])
        // "@staff" names a group, never a user called "@staff" or "staff".
        #expect(policy.roles(uid: 1005, userName: "staff", groups: [], daemonUID: 999) == [Role.none])
    }

    @Test("submit sits beside read: named in both, a caller holds both; write includes submit")
    func submitGrants() {
        let policy = AccessPolicy(
            grants: [.submit: ["@kiosks", "frank"], .read: ["carol"], .write: ["@staff"]], defaultRole: .none)
        #expect(policy.roles(uid: 1010, userName: "kiosk1", groups: ["kiosks"], daemonUID: 999) == [.submit])
        #expect(policy.roles(uid: 1001, userName: "carol", groups: ["kiosks"], daemonUID: 999) == [.submit, .read])
        #expect(policy.roles(uid: 1011, userName: "frank", groups: ["staff"], daemonUID: 999) == [.write])
        let both = Caller(pid: 1, uid: 1001, gid: 1001, userName: "carol", roles: [.read, .submit])
        #expect(both.roles == [.submit, .read] && both.roleNames == "submit+read")
        #expect(both.allows(.entriesAdd) && both.allows(.entriesList))
        #expect(!both.allows(.entriesUpdate) && !both.allows(.entriesImport) && !both.allows(.syncCompact))
        let config = try? DaemonConfiguration.parse(text: "[roles]\nsubmit = kiosk, @tablets\n", path: "/e/k.conf")
        #expect(config?.access.grants[.submit] == ["kiosk", "@tablets"])
        #expect(
            (try? DaemonConfiguration.parse(text: "[roles]\ndefault-role = submit\n", path: "/e/d.conf"))?.access
                .defaultRole == .submit)
    }

    @Test(
        "a caller named in gateway (user or @group) is a gateway with role admin, before the root rule; others are not")
    func gateways() {
        let policy = AccessPolicy(
            grants: [.read: ["web"], .admin: ["alice"]], defaultRole: .read, gateways: ["web", "root", "@gw"])
        #expect(policy.isGateway(userName: "web", groups: ["web"]))
        #expect(policy.roles(uid: 1006, userName: "web", groups: ["web"], daemonUID: 999) == [.admin])
        #expect(policy.isGateway(userName: "root", groups: ["root"]), "root can be named a gateway (tests run as root)")
        #expect(policy.isGateway(userName: "bob", groups: ["users", "gw"]))
        #expect(!policy.isGateway(userName: "alice", groups: ["users"]))
        #expect(!policy.isGateway(userName: "gw", groups: []), "@gw names a group, not a user")
        #expect(!AccessPolicy().isGateway(userName: "root", groups: ["root"]))
    }

    @Test("account look-ups: names of uid 0, of its groups, numbers for unknown ids")
    func accounts() {
        #expect(Accounts.userName(0) == "root")
        #expect(Accounts.groupName(0) == "root")
        #expect(Accounts.groupNames(userName: "root", gid: 0).first == "root")
        #expect(Accounts.userName(4_000_000_000) == "4000000000")
        #expect(Accounts.groupNames(userName: "no-such-user-here", gid: 4_000_000_000) == ["4000000000"])
    }
}
