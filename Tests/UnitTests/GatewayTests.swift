@preconcurrency import Glibc
import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
import EntryClient

/// The gateway role (entryd-web, issue 18): the `actor` a gateway names is
/// recorded as `web:NAME`; no one else may send `actor`; a gateway never gets
/// the peer-only methods. Over a real socket and ``ClientConnection``, so pipelined
/// Adds (``EntryService/begin(_:)``) are covered too.
@Suite struct GatewayTests {
    static let gateway = Caller(
        pid: getpid(), uid: getuid(), gid: getgid(), userName: "entryd-web", role: .admin, isGateway: true)
    static let admin = Caller(pid: getpid(), uid: 0, gid: 0, userName: "root", role: .admin)

    static func add(_ name: String, actor: JSON? = nil, id: String? = nil) -> VarlinkCall {
        var members: [(String, JSON)] = [("fields", GroupCommitSessionTests.fields(name))]
        if let id { members.append(("id", .string(id))) }
        if let actor { members.append(("actor", actor)) }
        return VarlinkCall(method: "io.entryd.Entries.Add", parameters: .object(members))
    }

    /// The actors of an entry's changes, oldest first.
    static func actors(_ conn: VarlinkConnection, _ id: String) throws -> [String?] {
        try conn.call("io.entryd.Entries.History", .object([("id", .string(id))]))["changes"]?.arrayValue?.map {
            $0["actor"]?.stringValue
        } ?? []
    }

    static func total(_ conn: VarlinkConnection) throws -> Int64? {
        try conn.call("io.entryd.Entries.List")["total"]?.intValue
    }

    /// The error name and its parameters of a call expected to fail.
    static func failure(_ conn: VarlinkConnection, _ call: VarlinkCall) throws -> (String?, JSON) {
        try conn.send(call)
        let reply = try conn.receive()
        return (reply.error, reply.parameters)
    }

    @Test(
        "a gateway's changes carry the actor it names as web:NAME (Add, Update, Delete, Restore, Import, Erase); without actor, its own name"
    )
    func actorRecorded() throws {
        let daemon = try SocketDaemon(caller: Self.gateway)
        defer { daemon.stop() }
        let conn = try daemon.connect()
        defer { conn.close() }

        let added = try conn.call("io.entryd.Entries.Add", Self.add("Ada", actor: .string("ada")).parameters)["entry"]
        let id = try #require(added?["id"]?.stringValue)
        #expect(added?["createdBy"]?.stringValue == "web:ada")
        let version = try #require(added?["version"]?.stringValue)

        let updated = try conn.call(
            "io.entryd.Entries.Update",
            .object([
                ("id", .string(id)), ("ifVersion", .string(version)), ("fields", .stringMap(["name": "Ada L"])),
                ("actor", .string("grace")),
            ]))["entry"]
        #expect(updated?["updatedBy"]?.stringValue == "web:grace")
        #expect(updated?["createdBy"]?.stringValue == "web:ada")
        _ = try conn.call("io.entryd.Entries.Delete", .object([("id", .string(id)), ("actor", .string("张三"))]))
        _ = try conn.call("io.entryd.Entries.Restore", .object([("id", .string(id))]))
        #expect(try Self.actors(conn, id) == ["web:ada", "web:grace", "web:张三", "entryd-web"])

        // Without actor: the gateway's own user name, as for any caller.
        let own = try conn.call("io.entryd.Entries.Add", Self.add("Own").parameters)["entry"]
        #expect(own?["createdBy"]?.stringValue == "entryd-web")

        let imported = UUIDv7.generate()
        let result = try conn.call(
            "io.entryd.Entries.Import",
            .object([
                (
                    "entries",
                    .array([
                        .object([("id", .string(imported)), ("fields", GroupCommitSessionTests.fields("Imported"))])
                    ])
                ),
                ("actor", .string("ada.l_x-1@example")),
            ]))
        #expect(result["added"]?.intValue == 1)
        #expect(try Self.actors(conn, imported) == ["web:ada.l_x-1@example"])

        let erased = try conn.call(
            "io.entryd.Entries.Erase",
            .object([
                ("id", .string(imported)), ("reason", .string("subject's request")), ("actor", .string("ada")),
            ]))
        #expect(erased["erasure"]?["actor"]?.stringValue == "web:ada")

        // A read call may carry the actor too; it changes nothing.
        #expect(
            try conn.call("io.entryd.Entries.Get", .object([("id", .string(id)), ("actor", .string("ada"))]))["entry"]?[
                "id"]?.stringValue == id)
    }

    @Test(
        "a gateway is refused Apply, SyncPeer, HeldFrom and Backup with PermissionDenied(admin), but may call other admin methods"
    )
    func peerOnlyRefused() throws {
        let daemon = try SocketDaemon(caller: Self.gateway)
        defer { daemon.stop() }
        let conn = try daemon.connect()
        defer { conn.close() }
        let calls: [(String, JSON)] = [
            ("io.entryd.Sync.Apply", .object([("changes", .array([]))])),
            ("io.entryd.Sync.SyncPeer", .object([("peer", .string("office"))])),
            ("io.entryd.Sync.HeldFrom", .object([("node", .string("n1"))])),
            ("io.entryd.Entries.Backup", .object([])),
        ]
        #expect(Set(calls.map(\.0)) == Set(Method.allCases.filter(\.isPeerOnly).map(\.rawValue)))
        for (method, parameters) in calls {
            let (error, reply) = try Self.failure(conn, VarlinkCall(method: method, parameters: parameters))
            #expect(error == WireErrorName.permissionDenied.rawValue, "\(method)")
            #expect(reply["role"]?.stringValue == "admin" && reply["gateway"]?.boolValue == true, "\(method)")
        }
        // entryctl says why: the user is a gateway (root is admin otherwise), and what to do.
        let said = FailureReport(
            for: WireError(
                name: WireErrorName.permissionDenied.rawValue,
                parameters: .object([("role", .string("admin")), ("gateway", .bool(true))])), locale: .en)
        #expect(
            said.lines.joined(separator: "\n").contains("a gateway may not call Apply, SyncPeer, HeldFrom or Backup"),
            "\(said.lines)")
        // An admin method that is not peer-only: allowed.
        #expect(try conn.call("io.entryd.Sync.Compact")["removed"]?.intValue == 0)
    }

    @Test(
        "a caller that is not a gateway, even admin, sending actor gets PermissionDenied(gateway), pipelined or not; nothing is stored"
    )
    func actorFromOthersRefused() throws {
        let daemon = try SocketDaemon(caller: Self.admin)
        defer { daemon.stop() }
        let conn = try daemon.connect()
        defer { conn.close() }
        let (error, reply) = try Self.failure(conn, Self.add("Mallory", actor: .string("ada")))
        #expect(error == WireErrorName.permissionDenied.rawValue)
        #expect(reply["role"]?.stringValue == "gateway")

        // Pipelined: all in one write, answered in order.
        try conn.sendRaw(
            [Self.add("P1", actor: .string("ada")), Self.add("P2", actor: .string("bob"))].flatMap(\.encoded))
        for _ in 0..<2 {
            let r = try conn.receive()
            #expect(
                r.error == WireErrorName.permissionDenied.rawValue && r.parameters["role"]?.stringValue == "gateway")
        }
        // Any method, even a read.
        let (listError, listReply) = try Self.failure(
            conn, VarlinkCall(method: "io.entryd.Entries.List", parameters: .object([("actor", .string("ada"))])))
        #expect(listError == WireErrorName.permissionDenied.rawValue && listReply["role"]?.stringValue == "gateway")
        #expect(try Self.total(conn) == 0)
        // actor: null is an absent optional parameter.
        #expect(
            try conn.call("io.entryd.Entries.Add", Self.add("Plain", actor: .null).parameters)["entry"]?["createdBy"]?
                .stringValue == "root")
    }

    static let badActors: [JSON] = [
        .string(""), .string(String(repeating: "a", count: 65)), .string("a b"), .string("a\u{1}b"), .string("web:x"),
        .string("a\u{7F}"), .string("\u{301}a"), .string("ada/x"), .int(7),
    ]

    @Test("a gateway's bad actor is InvalidParameter(actor) and nothing is stored", arguments: 0..<badActors.count)
    func badActor(_ index: Int) throws {
        let daemon = try SocketDaemon(caller: Self.gateway)
        defer { daemon.stop() }
        let conn = try daemon.connect()
        defer { conn.close() }
        let (error, reply) = try Self.failure(conn, Self.add("Bad", actor: Self.badActors[index]))
        #expect(error == WireErrorName.invalidParameter.rawValue)
        #expect(reply["parameter"]?.stringValue == "actor")
        #expect(try Self.total(conn) == 0)
    }

    @Test("actor names: 1-64 letters, digits, marks after a letter, . _ - @")
    func actorNames() {
        #expect(ActorName.isValid("ada"))
        #expect(ActorName.isValid(String(repeating: "é", count: 64)))
        #expect(ActorName.isValid("e\u{301}"))
        #expect(ActorName.isValid("张三_2"))
        #expect(ActorName.isValid("ada@example.org"))
        #expect(!ActorName.isValid(String(repeating: "a", count: 65)))
        #expect(!ActorName.isValid("ada\n"))
        #expect(!ActorName.isValid("ada\u{200B}"))
        #expect(!ActorName.isValid("½"))
    }

    @Test("pipelined Adds with different actors on one connection each record their own")
    func pipelinedActors() throws {
        let daemon = try SocketDaemon(caller: Self.gateway)
        defer { daemon.stop() }
        let conn = try daemon.connect()
        defer { conn.close() }
        let actors: [String?] = ["ada", "bob", nil, "张三", "ada", nil, "carol"]
        let calls = actors.enumerated().map { i, a in Self.add("P\(i)", actor: a.map(JSON.string)) }
        try conn.sendRaw(calls.flatMap(\.encoded))
        var ids: [String] = []
        for actor in actors {
            let reply = try conn.receive()
            #expect(reply.error == nil, "\(reply.error ?? "")")
            let entry = reply.parameters["entry"]
            #expect(entry?["createdBy"]?.stringValue == actor.map { "web:" + $0 } ?? "entryd-web")
            ids.append(try #require(entry?["id"]?.stringValue))
        }
        for (id, actor) in zip(ids, actors) {
            #expect(try Self.actors(conn, id) == [actor.map { "web:" + $0 } ?? "entryd-web"])
        }
    }
}

/// Which method needs which role (EntryProtocol `Method.role`, `Method.isPeerOnly`).
@Suite struct MethodAccessTests {
    /// `interface.Method` for every `method` line of every served interface description.
    static var declaredMethods: Set<String> {
        var all = Set<String>()
        for description in InterfaceDescriptions.all {
            for line in description.text.split(separator: "\n") where line.hasPrefix("method ") {
                let name = line.dropFirst("method ".count).prefix { $0 != "(" }.trimmingCharacters(in: .whitespaces)
                all.insert(description.name + "." + name)
            }
        }
        return all
    }

    @Test("every method is served: none answers MethodNotFound, InterfaceNotFound or MethodNotImplemented")
    func servedMatchesTable() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 1)
        defer { store.close() }
        let service = EntryService(store: store, forms: .builtIn)
        let caller = Caller(pid: 1, uid: 0, gid: 0, userName: "test", role: .admin)
        let unserved: Set<String> = [
            WireErrorName.methodNotFound.rawValue, WireErrorName.interfaceNotFound.rawValue,
            WireErrorName.methodNotImplemented.rawValue,
        ]
        for method in Method.allCases {
            let context = CallContext(caller: caller, call: VarlinkCall(method), send: { _ in }, clientHungUp: { true })
            do { try service.handle(context) } catch {
                #expect(!unserved.contains(WireError(mapping: error).name), "\(method.rawValue): \(error)")
            }
        }
        #expect(Method(rawValue: "io.entryd.Entries.Nope") == nil)
    }

    @Test("every method of every served interface description (org.varlink.service included) is in the table")
    func interfacesMatchTable() {
        let declared = Self.declaredMethods
        #expect(declared.contains("org.varlink.service.GetInfo"))
        #expect(declared.contains("io.entryd.Sync.Compact"))
        #expect(declared == Set(Method.allCases.map(\.rawValue)))
    }

    @Test("peer-only methods are served and need at most admin; the roles are those of doc/design.md")
    func roles() {
        #expect(
            Set(Method.allCases.filter(\.isPeerOnly).map(\.rawValue))
                == [
                    "io.entryd.Sync.Apply", "io.entryd.Sync.SyncPeer", "io.entryd.Sync.HeldFrom",
                    "io.entryd.Entries.Backup",
                ])
        #expect(Method(rawValue: "io.entryd.Entries.Add")?.role == .write)
        #expect(Method(rawValue: "io.entryd.Entries.Get")?.role == .read)
        #expect(Method(rawValue: "io.entryd.Sync.Apply")?.role == .admin)
        #expect(Method(rawValue: "io.entryd.Entries.Erase")?.role == .admin)
        #expect(Method.allCases.allSatisfy { [.read, .write, .admin].contains($0.role) })
    }

    static let submitMethods: Set<String> = [
        "org.varlink.service.GetInfo", "org.varlink.service.GetInterfaceDescription", "io.entryd.Entries.Add",
        "io.entryd.Forms.Check", "io.entryd.Forms.GetForm", "io.entryd.Forms.Options",
    ]

    @Test("roles are sets of methods: read ⊂ write ⊂ admin, submit ⊂ write beside read, none empty")
    func roleSets() {
        func set(_ role: Role) -> Set<String> { Set(Method.allCases.filter { role.allows($0) }.map(\.rawValue)) }
        #expect(set(.submit) == Self.submitMethods)
        #expect(set(.none).isEmpty && set(.admin) == Set(Method.allCases.map(\.rawValue)))
        #expect(set(.read) == Set(Method.allCases.filter { $0.role == .read }.map(\.rawValue)))
        #expect(set(.read).isStrictSubset(of: set(.write)) && set(.write).isStrictSubset(of: set(.admin)))
        #expect(set(.submit).isStrictSubset(of: set(.write)))
        #expect(!set(.submit).isSubset(of: set(.read)) && !set(.read).isSubset(of: set(.submit)))
        #expect(Role.admin.includes(.submit) && Role.write.includes(.submit) && !Role.read.includes(.submit))
        #expect(Role.strongest([.read, .submit]) == [.submit, .read])
        #expect(Role.strongest([.submit, .write, .read]) == [.write])
        #expect(Role.strongest([.none, .read]) == [.read] && Role.strongest([]).isEmpty)
        // The least ladder role named by PermissionDenied allows the method, and nothing below it does.
        for method in Method.allCases {
            #expect(method.role.allows(method), "\(method.rawValue)")
            let below: [Role] = method.role == .admin ? [.write, .read] : method.role == .write ? [.read] : []
            #expect(!below.contains { $0.allows(method) }, "\(method.rawValue)")
        }
    }

    /// The reply or the error name and parameters of one call to `service` as `caller`.
    static func outcome(_ service: EntryService, _ caller: Caller, _ method: Method, _ parameters: JSON = .object([]))
        -> (reply: JSON?, error: WireError?)
    {
        var reply: JSON?
        let context = CallContext(
            caller: caller, call: VarlinkCall(method: method.rawValue, parameters: parameters),
            send: { reply = $0.parameters }, clientHungUp: { true })
        do {
            try service.handle(context)
            return (reply, nil)
        } catch {
            return (reply, WireError(mapping: error))
        }
    }

    @Test("a submit caller is refused every method but its own, each PermissionDenied naming the least ladder role")
    func submitCallerOnEveryMethod() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 1)
        defer { store.close() }
        let service = EntryService(store: store, forms: .builtIn)
        let kiosk = Caller(pid: 1, uid: 1234, gid: 1234, userName: "kiosk", role: .submit)
        var allowed: Set<String> = []
        for method in Method.allCases {
            let (_, error) = Self.outcome(service, kiosk, method)
            if error?.known == .permissionDenied {
                #expect(error?.parameters["role"]?.stringValue == method.role.name, "\(method.rawValue): \(error!)")
            } else {
                allowed.insert(method.rawValue)
            }
        }
        #expect(allowed == Self.submitMethods)
        // Its own methods work: a form, a check, an Add, which it cannot read back.
        let fields = GroupCommitSessionTests.fields("Kiosk Visitor")
        #expect(Self.outcome(service, kiosk, .formsGetForm).reply?["form"] != nil)
        #expect(Self.outcome(service, kiosk, .formsCheck, .object([("fields", fields)])).reply?["problems"] != nil)
        let added = Self.outcome(service, kiosk, .entriesAdd, .object([("fields", fields)]))
        let id = try #require(added.reply?["entry"]?["id"]?.stringValue, "\(String(describing: added.error))")
        let get = Self.outcome(service, kiosk, .entriesGet, .object([("id", .string(id))]))
        #expect(get.error?.known == .permissionDenied && get.reply == nil)
        #expect(try store.get(id)?.createdBy == "kiosk")
    }

    @Test("a peer's last error and notice keep their words without the address, its command or its path")
    func statusRedactionOfErrors() throws {
        let reply = try JSON.parse(
            #"{"node":"n","database":"/var/lib/entryd/entries.db","peers":["#
                + #"{"name":"office","address":"exec: ssh admin@office.example entryctl bridge","pulledSeq":1,"pushedSeq":2,"#
                + #""lastError":"exec: No such file or directory (ssh admin@office.example entryctl bridge)"},"#
                + #"{"name":"lab","address":"unix:/srv/lab/entryd.sock","pulledSeq":0,"pushedSeq":0,"#
                + #""notice":"connect '/srv/lab/entryd.sock': refused"}]}"#)
        let shown = StatusReply.redacted(reply)
        #expect(shown["database"]?.stringValue == "" && shown["node"]?.stringValue == "n")
        let peers = try #require(shown["peers"]?.arrayValue)
        #expect(peers.map { $0["address"]?.stringValue } == ["", ""])
        #expect(peers[0]["lastError"]?.stringValue == "exec: No such file or directory (…)")
        #expect(peers[1]["notice"]?.stringValue == "connect '…': refused")
        #expect(peers[0]["pushedSeq"]?.intValue == 2 && peers[1]["name"]?.stringValue == "lab")
        #expect(!shown.text.contains("office.example") && !shown.text.contains("/srv/lab"))
    }

    @Test("Status hides the database and peer addresses from callers below admin; the members stay")
    func statusRedaction() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 1)
        defer { store.close() }
        let service = EntryService(
            store: store, forms: .builtIn,
            peers: [PeerConfig(name: "office", address: "exec:ssh office entryctl bridge", intervalSeconds: 0)])
        func status(_ roles: [Role]) -> JSON? {
            Self.outcome(service, Caller(pid: 1, uid: 1234, gid: 1234, userName: "u", roles: roles), .syncStatus).reply
        }
        let full = try #require(status([.admin]))
        #expect(full["database"]?.stringValue == db.path)
        #expect(full["peers"]?.arrayValue?.first?["address"]?.stringValue == "exec:ssh office entryctl bridge")
        for roles: [Role] in [[.read], [.write], [.submit, .read]] {
            let shown = try #require(status(roles), "\(roles)")
            #expect(shown["database"]?.stringValue == "", "\(roles)")
            let peer = try #require(shown["peers"]?.arrayValue?.first)
            #expect(peer["address"]?.stringValue == "" && peer["name"]?.stringValue == "office", "\(roles)")
            #expect(shown["node"] == full["node"] && shown["forms"] == full["forms"], "the rest is unchanged")
            if case .object(let a) = shown, case .object(let b) = full { #expect(a.map(\.0) == b.map(\.0)) }
        }
        #expect(
            Self.outcome(service, Caller(pid: 1, uid: 1, gid: 1, userName: "k", role: .submit), .syncStatus).error?
                .known == .permissionDenied)
    }
}
