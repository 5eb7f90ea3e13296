@preconcurrency import Glibc
import EntryModel
import EntryProtocol
import EntryServer
import Foundation
import Testing

/// The gateway role with the built entryd (issue 18): `[roles] gateway` names
/// the test's own user, which the gateway rule puts before "the daemon's own
/// user is admin"; a reload (SIGHUP) takes the gateway away again.
@Suite struct GatewayRoleTests {
    static let fields = JSON.stringMap([
        "name": "Ada Web", "birthday": "1990-05-17", "country": "US",
        "contact_method": "email", "email": "ada@example.com",
    ])

    static func add(_ conn: VarlinkConnection, actor: String?) throws -> VarlinkReply {
        var members: [(String, JSON)] = [("fields", fields)]
        if let actor { members.append(("actor", .string(actor))) }
        try conn.send(VarlinkCall(method: "io.entryd.Entries.Add", parameters: .object(members)))
        return try conn.receive()
    }

    /// entryd in `dir` whose entryd.conf names the test's user as gateway, ready.
    static func gatewayDaemon(in dir: String) throws -> (
        daemon: ServiceProcess, notify: NotifySocket, config: String, socket: String, me: String
    ) {
        let me = Accounts.userName(getuid())
        let config = dir + "/entryd.conf"
        try "[roles]\ngateway = \(me)\n".write(toFile: config, atomically: true, encoding: .utf8)
        let socket = dir + "/entryd.sock"
        let notify = try NotifySocket()
        let daemon = try ServiceProcess(
            executable: productsDirectory() + "/entryd",
            arguments: ["--config", config, "--socket", socket, "--db", dir + "/entries.db"],
            environment: ["NOTIFY_SOCKET": notify.name], directory: dir)
        try #require(notify.wait(for: "READY=1").found != nil, "\(daemon.stderr)")
        return (daemon, notify, config, socket, me)
    }

    @Test(
        "entryd with gateway = the test's user: Add with actor ada is recorded as web:ada, Backup and Apply are PermissionDenied(admin); after a reload without gateway, actor is PermissionDenied(gateway) on the open connection too, and a reload that names it again lets an open connection name the actor"
    )
    func gatewayAndReload() throws {
        let dir = try serviceTestDirectory("gateway")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (daemon, notify, config, socket, me) = try Self.gatewayDaemon(in: dir)

        let gateway = try VarlinkConnection(path: socket)
        let added = try Self.add(gateway, actor: "ada")
        #expect(added.error == nil, "\(added.error ?? "")")
        let entry = added.parameters["entry"]
        #expect(entry?["createdBy"]?.stringValue == "web:ada")
        let id = try #require(entry?["id"]?.stringValue)
        let history = try gateway.call("io.entryd.Entries.History", .object([("id", .string(id))]))
        #expect(history["changes"]?.arrayValue?.map { $0["actor"]?.stringValue } == ["web:ada"])
        #expect(try Self.add(gateway, actor: nil).parameters["entry"]?["createdBy"]?.stringValue == me)
        for (method, parameters) in [
            ("io.entryd.Entries.Backup", JSON.object([])),
            ("io.entryd.Sync.Apply", .object([("changes", .array([]))])),
        ] {
            try gateway.send(VarlinkCall(method: method, parameters: parameters))
            let refused = try gateway.receive()
            #expect(
                refused.error == WireErrorName.permissionDenied.rawValue
                    && refused.parameters["role"]?.stringValue == "admin", "\(method)")
        }
        let bad = try Self.add(gateway, actor: "web:x")
        #expect(
            bad.error == WireErrorName.invalidParameter.rawValue && bad.parameters["parameter"]?.stringValue == "actor")

        // The gateway line removed: the same user is admin again (its own
        // user), no gateway, so `actor` is refused and nothing is stored.
        try "[roles]\n".write(toFile: config, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        #expect(notify.wait(for: "RELOADING=1").found != nil)
        #expect(notify.wait(for: "READY=1").found != nil)
        let plain = try VarlinkConnection(path: socket)
        let refused = try Self.add(plain, actor: "ada")
        #expect(
            refused.error == WireErrorName.permissionDenied.rawValue
                && refused.parameters["role"]?.stringValue == "gateway")
        // The connection opened while it was a gateway has lost that standing too.
        let revoked = try Self.add(gateway, actor: "ada")
        #expect(
            revoked.error == WireErrorName.permissionDenied.rawValue
                && revoked.parameters["role"]?.stringValue == "gateway")
        #expect(try plain.call("io.entryd.Entries.List")["total"]?.intValue == 2)

        // Named again: the connection opened meanwhile may name the actor at once.
        try "[roles]\ngateway = \(me)\n".write(toFile: config, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        #expect(notify.wait(for: "RELOADING=1").found != nil)
        #expect(notify.wait(for: "READY=1").found != nil)
        #expect(try Self.add(plain, actor: "bo").parameters["entry"]?["createdBy"]?.stringValue == "web:bo")
        gateway.close()
        plain.close()
        #expect(daemon.stop() == 0)
    }

    @Test(
        "a node whose user is a gateway at its peer: the sync's refusal says so (adding the user to admin there would not help), exit 1"
    )
    func syncRefusedAsGateway() throws {
        let dir = try serviceTestDirectory("gateway-peer")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let me = Accounts.userName(getuid())
        // The peer names this user as gateway, and admin too: still no Apply.
        try "[roles]\ngateway = \(me)\nadmin = \(me)\n".write(
            toFile: dir + "/peer.conf", atomically: true, encoding: .utf8)
        let notify = try NotifySocket()
        let peer = try ServiceProcess(
            executable: productsDirectory() + "/entryd",
            arguments: ["--config", dir + "/peer.conf", "--socket", dir + "/peer.sock", "--db", dir + "/peer.db"],
            environment: ["NOTIFY_SOCKET": notify.name], directory: dir)
        try #require(notify.wait(for: "READY=1").found != nil, "\(peer.stderr)")
        let here = try ServiceProcess(
            executable: productsDirectory() + "/entryd",
            arguments: [
                "--config", "/dev/null", "--socket", dir + "/here.sock", "--db", dir + "/here.db",
                "--peer", "clinic=unix:\(dir)/peer.sock", "--sync-interval", "0",
            ],
            environment: ["NOTIFY_SOCKET": notify.name], directory: dir)
        try #require(notify.wait(for: "READY=1").found != nil, "\(here.stderr)")
        let conn = try VarlinkConnection(path: dir + "/here.sock")
        #expect(try Self.add(conn, actor: nil).error == nil)
        conn.close()
        for (locale, words) in [("en", "listed under [roles] gateway"), ("zh", "列在对端 entryd.conf 的 [roles] gateway 中")]
        {
            let r = try runProcess(
                productsDirectory() + "/entryctl",
                ["--socket", dir + "/here.sock", "--locale", locale, "sync", "clinic"])
            #expect(r.status == 1 && r.stderr.contains(words) && !r.stderr.contains("add that user to admin"), "\(r)")
        }
        #expect(here.stop() == 0)
        #expect(peer.stop() == 0)
    }

    @Test(
        "connections accepted while a reload takes the gateway away end up without it, every one: none keeps the standing it was accepted under"
    )
    func reloadRacesAccept() throws {
        let dir = try serviceTestDirectory("gateway-race")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (daemon, notify, config, socket, _) = try Self.gatewayDaemon(in: dir)
        try "[roles]\n".write(toFile: config, atomically: true, encoding: .utf8)
        // Connections opened as fast as they go, before, during and after the reload.
        final class Opened: @unchecked Sendable {
            let lock = NSLock()
            var list: [VarlinkConnection] = []
            var value: [VarlinkConnection] { lock.withLock { list } }
        }
        let opened = Opened()
        let connecting = Thread {
            for _ in 0..<300 {
                if let c = try? VarlinkConnection(path: socket) { opened.lock.withLock { opened.list.append(c) } }
            }
        }
        connecting.start()
        daemon.signal(SIGHUP)
        #expect(notify.wait(for: "RELOADING=1").found != nil)
        #expect(notify.wait(for: "READY=1").found != nil)
        while opened.value.count < 300 { usleep(10_000) }
        var kept = 0
        for conn in opened.value {
            let reply = try Self.add(conn, actor: "ada")
            if reply.error == nil { kept += 1 }
            conn.close()
        }
        #expect(kept == 0, "\(kept) of 300 connections kept the gateway standing after the reload")
        #expect(daemon.stop() == 0)
    }
}
