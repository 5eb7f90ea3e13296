import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// Access control with real users: a client run as `nobody` through setpriv(1),
/// its role from entryd.conf, changed by a reload.
@Suite struct SystemdRolesTests {
    static let fields = [
        "name=Nobody Test", "birthday=1990-05-17", "country=US", "contact_method=email", "email=nobody@example.com",
    ]

    /// Runs the built entryctl as nobody:nogroup without supplementary groups.
    static func asNobody(_ socket: String, _ arguments: [String]) throws -> ProcessResult {
        try runProcess(
            which("setpriv") ?? "/usr/bin/setpriv",
            [
                "--reuid=nobody", "--regid=nogroup", "--clear-groups", productsDirectory() + "/entryctl", "--socket",
                socket,
            ] + arguments,
            environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"])
    }

    @Test(
        "nobody is allowed a read and refused a write (PermissionDenied names 'write'); granted write by a reload, its change is recorded as 'nobody'",
        .enabled(
            if: getuid() == 0 && which("setpriv") != nil,
            "skipped: needs root and setpriv(1) (util-linux) to run a client as nobody; CI runs as root"))
    func nobody() throws {
        let dir = try serviceTestDirectory("roles")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = dir + "/entryd.conf"
        // socket-mode 0666 so that nobody can connect; the roles alone decide.
        try "socket-mode = 0666\n[roles]\ndefault-role = read\nwrite = @entryd-test-writers\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        let socket = dir + "/entryd.sock"
        let notify = try NotifySocket()
        let daemon = try ServiceProcess(
            executable: productsDirectory() + "/entryd",
            arguments: ["--config", config, "--socket", socket, "--db", dir + "/entries.db"],
            environment: ["NOTIFY_SOCKET": notify.name], directory: dir)
        try #require(notify.wait(for: "READY=1").found != nil, "\(daemon.stderr)")

        let read = try Self.asNobody(socket, ["list"])
        #expect(read.status == 0, "\(read.stderr)")
        let refused = try Self.asNobody(socket, ["add"] + Self.fields)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("权限不足：需要“write”角色"), "\(refused.stderr)")

        // The wire error itself, as `entryctl call` prints the raw reply.
        let raw = try Self.asNobody(socket, ["call", "io.entryd.Entries.Add", #"{"fields":{}}"#])
        #expect(
            raw.stdout.contains(#"{"error":"org.varlink.service.PermissionDenied","parameters":{"role":"write"}}"#),
            "\(raw.stdout)")

        // Root is admin whatever the configuration says; nothing was stored by nobody.
        let root = try VarlinkConnection(path: socket)
        #expect(try root.call("io.entryd.Entries.List")["total"]?.intValue == 0)

        // Grant write to nobody and reload: the next connection may write.
        try "socket-mode = 0666\n[roles]\ndefault-role = read\nwrite = nobody\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        #expect(notify.wait(for: "RELOADING=1").found != nil)
        #expect(notify.wait(for: "READY=1").found != nil)
        let added = try Self.asNobody(socket, ["add"] + Self.fields)
        #expect(added.status == 0, "\(added.stderr)")

        let list = try root.call("io.entryd.Entries.List")
        let entry = try #require(list["entries"]?.arrayValue?.first)
        #expect(entry["createdBy"]?.stringValue == "nobody")
        let id = try #require(entry["id"]?.stringValue)
        let history = try root.call("io.entryd.Entries.History", .object([("id", .string(id))]))
        #expect(history["changes"]?.arrayValue?.map { $0["actor"]?.stringValue } == ["nobody"])
        root.close()
        #expect(daemon.stop() == 0)
    }

    @Test(
        "a submit caller on a real socket is refused every method but Add, Check, GetForm, Options and the service calls; as read, Status hides the database and peer addresses",
        .enabled(
            if: getuid() == 0 && which("setpriv") != nil,
            "skipped: needs root and setpriv(1) (util-linux) to run a client as nobody; CI runs as root"))
    func submitOnEveryMethod() throws {
        let dir = try serviceTestDirectory("submit")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = dir + "/entryd.conf"
        let peer = "[peer office]\naddress = exec:ssh office entryctl bridge\ninterval = 0\n"
        try ("socket-mode = 0666\n[roles]\ndefault-role = none\nsubmit = nobody\n" + peer).write(
            toFile: config, atomically: true, encoding: .utf8)
        let socket = dir + "/entryd.sock"
        let notify = try NotifySocket()
        let daemon = try ServiceProcess(
            executable: productsDirectory() + "/entryd",
            arguments: ["--config", config, "--socket", socket, "--db", dir + "/entries.db"],
            environment: ["NOTIFY_SOCKET": notify.name], directory: dir)
        try #require(notify.wait(for: "READY=1").found != nil, "\(daemon.stderr)")

        var allowed: [String] = []
        for method in Method.allCases {
            let r = try Self.asNobody(socket, ["call", method.rawValue, "{}"])
            let denied =
                #"{"error":"org.varlink.service.PermissionDenied","parameters":{"role":"\#(method.role.name)"}}"#
            if r.stdout.contains(denied) {
                #expect(r.status != 0, "\(method.rawValue): \(r)")
            } else {
                #expect(
                    !r.stdout.contains("PermissionDenied") && !r.stderr.contains("权限不足"), "\(method.rawValue): \(r)")
                allowed.append(method.rawValue)
            }
        }
        #expect(
            Set(allowed) == [
                "org.varlink.service.GetInfo", "org.varlink.service.GetInterfaceDescription",
                "io.entryd.Entries.Add", "io.entryd.Forms.Check", "io.entryd.Forms.GetForm", "io.entryd.Forms.Options",
            ])
        // It adds an entry and cannot read it back.
        let added = try Self.asNobody(socket, ["add"] + Self.fields)
        #expect(added.status == 0, "\(added.stderr)")
        let list = try Self.asNobody(socket, ["list"])
        #expect(list.status == 1 && list.stderr.contains("权限不足：需要“read”角色"), "\(list.stderr)")
        let root = try VarlinkConnection(path: socket)
        #expect(
            try root.call("io.entryd.Entries.List")["entries"]?.arrayValue?.first?["createdBy"]?.stringValue == "nobody"
        )

        // As read (a reload), Status answers with the database and the peer's address withheld.
        try ("socket-mode = 0666\n[roles]\ndefault-role = none\nread = nobody\n" + peer).write(
            toFile: config, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        #expect(notify.wait(for: "RELOADING=1").found != nil)
        #expect(notify.wait(for: "READY=1").found != nil)
        let status = try Self.asNobody(socket, ["call", "io.entryd.Sync.Status", "{}"])
        #expect(status.status == 0, "\(status)")
        let shown = try JSON.parse(Array(status.stdout.utf8))
        #expect(shown["database"]?.stringValue == "", "\(status.stdout)")
        #expect(shown["peers"]?.arrayValue?.first?["address"]?.stringValue == "", "\(status.stdout)")
        #expect(shown["peers"]?.arrayValue?.first?["name"]?.stringValue == "office")
        let shownByStatus = try Self.asNobody(socket, ["--locale", "en", "status"])
        #expect(shownByStatus.status == 0, "\(shownByStatus)")
        #expect(
            shownByStatus.stdout.contains("(shown to the admin role only)")
                && !shownByStatus.stdout.contains("entries.db") && !shownByStatus.stdout.contains("ssh office"),
            "\(shownByStatus.stdout)")
        let full = try root.call("io.entryd.Sync.Status")
        #expect(full["database"]?.stringValue == dir + "/entries.db")
        #expect(full["peers"]?.arrayValue?.first?["address"]?.stringValue == "exec:ssh office entryctl bridge")
        root.close()
        #expect(daemon.stop() == 0)
    }
}
