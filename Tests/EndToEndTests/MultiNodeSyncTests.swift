import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// Sync between real daemons: a ring of three, conflicts, exec: through
/// `entryctl bridge`, interrupted syncs, and the live change feed.
@Suite(.serialized) struct MultiNodeSyncTests {
    func addOn(_ d: Daemon, name: String, city: String = "广州") throws -> String {
        let r = try d.entryctl([
            "--json", "add", "name=\(name)", "birthday=1990-05-17", "country=CN", "province=广东",
            "city=\(city)", "contact_method=phone", "phone=13800138000",
        ])
        try #require(r.status == 0, "\(r.stderr)")
        return try #require(try JSON.parse(r.stdout)["entry"]?["id"]?.stringValue)
    }

    /// `list --format json --all --deleted`, sorted by id, without the per-node `syncedTo`.
    func entries(_ d: Daemon) throws -> [JSON] {
        let r = try d.entryctl(["list", "--format", "json", "--all", "--deleted", "--limit", "1000"])
        try #require(r.status == 0, "\(r.stderr)")
        let list = try #require(try JSON.parse(r.stdout).arrayValue)
        return list.map { e in .object((e.objectValue ?? []).filter { $0.0 != "syncedTo" }) }
            .sorted { ($0["id"]?.stringValue ?? "") < ($1["id"]?.stringValue ?? "") }
    }

    func sync(_ d: Daemon, _ peer: String) throws -> JSON {
        let r = try d.entryctl(["--json", "sync", peer])
        try #require(r.status == 0, "sync \(peer): \(r.stderr)")
        return try JSON.parse(r.stdout)
    }

    @Test(
        "three daemons in a ring converge; a concurrent edit gives one conflict with both values; deletes, restores and a resolved conflict sync over the wire; exec: via entryctl bridge"
    )
    func ring() throws {
        let c = try Daemon()
        let bridge = "exec:\(productsDirectory())/entryctl --socket \(c.socket) bridge"
        let a = try Daemon()
        let b = try Daemon(arguments: ["--peer", "c-over-bridge=\(bridge)", "--sync-interval", "0"])
        var ids: [String] = []
        for (i, d) in [a, b, c].enumerated() {
            for k in 0..<5 { ids.append(try addOn(d, name: "节点\(i)-\(k)")) }
        }
        // a ← b, b ← c (through exec: and entryctl bridge), c ← a, until quiet.
        for _ in 0..<2 {
            _ = try sync(a, "unix:\(b.socket)")
            _ = try sync(b, "c-over-bridge")
            _ = try sync(c, "unix:\(a.socket)")
        }
        let reference = try entries(a)
        #expect(reference.count == 15)
        #expect(try entries(b) == reference)
        #expect(try entries(c) == reference)

        // The same field edited on two nodes before they sync: one conflict, both values kept.
        let id = ids[0]
        #expect(try a.entryctl(["update", id, "name=甲"]).status == 0)
        #expect(try b.entryctl(["update", id, "name=乙"]).status == 0)
        let pulled = try sync(a, "unix:\(b.socket)")
        #expect(pulled["conflicts"]?.intValue == 1)
        let list = try a.entryctl(["--json", "conflicts", "--entry", id])
        let conflicts = try #require(try JSON.parse(list.stdout)["conflicts"]?.arrayValue)
        #expect(conflicts.count == 1)
        let values = Set(
            conflicts.compactMap { [$0["kept"]?.stringValue, $0["lost"]?.stringValue] }.joined().compactMap { $0 })
        #expect(values == ["甲", "乙"])
        _ = try sync(b, "c-over-bridge")
        _ = try sync(c, "unix:\(a.socket)")
        _ = try sync(b, "unix:\(a.socket)")
        #expect(try entries(a) == entries(b))
        #expect(try entries(a) == entries(c))
        // Deletes, restores and edits made with a conflict in view carry `@deleted` and
        // `@heads` in their base: they cross the wire like every change.
        let conflictID = try #require(conflicts.first?["id"]?.stringValue)
        #expect(try a.entryctl(["resolve", conflictID]).status == 0)
        #expect(try a.entryctl(["delete", ids[1]]).status == 0)
        #expect(try a.entryctl(["delete", ids[2]]).status == 0)
        #expect(try a.entryctl(["restore", ids[2]]).status == 0)
        _ = try sync(b, "unix:\(a.socket)")
        _ = try sync(c, "unix:\(b.socket)")
        for d in [b, c] {
            #expect(
                try d.connect().call("io.entryd.Entries.Get", .object([("id", .string(ids[1]))]))["entry"]?["deleted"]?
                    .boolValue == true)
            #expect(
                try d.connect().call("io.entryd.Entries.Get", .object([("id", .string(ids[2]))]))["entry"]?["deleted"]?
                    .boolValue == false)
            #expect(
                try d.connect().call("io.entryd.Sync.ListConflicts", .object([]))["conflicts"]?.arrayValue?.isEmpty
                    == true)
        }
        // exec: addresses are refused from a call.
        let refused = try a.entryctl(["sync", "exec:/bin/true"])
        #expect(refused.status == 1)
        for d in [a, b, c] { #expect(d.stop() == 0) }
    }

    @Test(
        "entryctl compact over the wire: held back by a peer that has not pulled, frees after it pulls; Status.compaction, history's line, Changes with gaps; the peer still converges"
    )
    func compactOverTheWire() throws {
        let a = try Daemon()
        let b = try Daemon()
        let id = try addOn(a, name: "压缩")
        _ = try sync(b, "unix:\(a.socket)")  // b pulls: a knows b's node and what it acknowledged
        for i in 1...4 { #expect(try a.entryctl(["update", id, "name=压缩\(i)"]).status == 0) }
        let held = try a.entryctl(["--json", "compact"])
        try #require(held.status == 0, "\(held.stderr)")
        let first = try JSON.parse(held.stdout)
        #expect(first["heldBackBy"]?.stringValue?.hasPrefix("node:") == true)
        let seq = try JSON.parse(try a.entryctl(["--json", "status"]).stdout)["seq"]?.intValue
        #expect(try #require(first["horizon"]?.intValue) < (try #require(seq)))
        _ = try sync(b, "unix:\(a.socket)")
        let freed = try a.entryctl(["--locale", "en", "compact"])
        try #require(freed.status == 0, "\(freed.stderr)")
        // three edits; the create stands for the other fields
        #expect(freed.stdout.hasPrefix("removed 3 changes, freed "), "\(freed.stdout)")
        #expect(freed.stdout.contains("horizon: seq \(seq!)"), "\(freed.stdout)")
        let status = try JSON.parse(try a.entryctl(["--json", "status"]).stdout)
        #expect(status["compaction"]?["removed"]?.intValue == 3)
        #expect(try a.entryctl(["--locale", "en", "status"]).stdout.contains("compaction:"))
        let history = try a.entryctl(["--locale", "en", "history", id])
        #expect(
            history.stdout.contains(
                "Compaction removed earlier, superseded changes of this entry, through seq \(seq!)"),
            "\(history.stdout)")
        let changes = try JSON.parse(try a.entryctl(["call", "io.entryd.Sync.Changes", "{\"since\": 0}"]).stdout)
        #expect(
            changes["changes"]?.arrayValue?.count == 2 && changes["last"]?.intValue == seq,
            "the create and the last edit")
        // A third node pulling from 0 gets the same entries.
        let c = try Daemon()
        _ = try sync(c, "unix:\(a.socket)")
        #expect(try entries(c) == entries(a))
        #expect(try entries(b) == entries(a))
        for d in [a, b, c] { #expect(d.stop() == 0) }
    }

    @Test("kill -9 in the middle of a large sync, restart, sync again: nothing missing, nothing twice")
    func interruptedSync() throws {
        let source = try Daemon()
        let target = try Daemon()
        // 3,000 entries through Import, in batches.
        let conn = try source.connect()
        for batch in 0..<6 {
            let rows: [JSON] = (0..<500).map { i in
                .object([
                    (
                        "fields",
                        .stringMap([
                            "name": "n\(batch)-\(i)", "birthday": "2000-01-01", "country": "DE",
                            "contact_method": "email", "email": "n\(i)@example.de",
                        ])
                    )
                ])
            }
            let r = try conn.call("io.entryd.Entries.Import", .object([("entries", .array(rows))]))
            #expect(r["added"]?.intValue == 500)
        }
        // Start a sync and kill the target while it runs.
        let syncer = Thread { _ = try? target.entryctl(["sync", "unix:\(source.socket)"]) }
        syncer.start()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let n = (try? target.connect().call("io.entryd.Sync.Status")["seq"]?.intValue) ?? 0
            if n > 0 { break }
            usleep(2_000)
        }
        #expect(target.stop(signal: SIGKILL) == SIGKILL)
        try target.start()
        let partial = try target.connect().call("io.entryd.Sync.Status")["seq"]?.intValue ?? 0
        print("interrupted sync: \(partial) of 3000 changes had arrived before kill -9")
        _ = try sync(target, "unix:\(source.socket)")
        let status = try target.connect().call("io.entryd.Sync.Status")
        #expect(status["entries"]?.intValue == 3000)
        #expect(status["seq"]?.intValue == 3000, "every change exactly once (partial before restart: \(partial))")
        #expect(try entries(target) == entries(source))
        // A second sync moves nothing.
        let again = try sync(target, "unix:\(source.socket)")
        #expect(again["pulled"]?.intValue == 0 && again["pushed"]?.intValue == 0)
        #expect(source.stop() == 0 && target.stop() == 0)
    }

    @Test("a configured peer syncs by itself after local writes; Status lists it; syncedTo names it")
    func scheduledSync() throws {
        let a = try Daemon()
        let b = try Daemon(arguments: ["--peer", "a=unix:\(a.socket)", "--sync-interval", "1"])
        let fromA = try addOn(a, name: "自动甲")
        let fromB = try addOn(b, name: "自动乙")
        func has(_ d: Daemon, _ id: String) -> Bool {
            (try? d.connect().call("io.entryd.Entries.Get", .object([("id", .string(id))]))) != nil
        }
        // Done: both entries on both nodes and the round that pushed fromB recorded as
        // finished. A round saves its checkpoints (lastSync, what it pushed) after its push,
        // so the entries arrive a moment before; and lastSync may be an earlier round's (one
        // that ran before fromB was added): wait for the checkpoint that covers fromB,
        // which syncedTo reads.
        func syncedTo() -> [JSON]? {
            (try? b.connect().call("io.entryd.Entries.Get", .object([("id", .string(fromB))])))?["entry"]?["syncedTo"]?
                .arrayValue
        }
        func synced() -> Bool {
            let peer = (try? b.connect().call("io.entryd.Sync.Status"))?["peers"]?.arrayValue?.first
            return has(b, fromA) && has(a, fromB) && peer?["lastSync"]?.stringValue != nil
                && syncedTo()?.isEmpty == false
        }
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline && !synced() { usleep(100_000) }
        #expect(has(b, fromA) && has(a, fromB))
        let status = try b.connect().call("io.entryd.Sync.Status")
        let peer = try #require(status["peers"]?.arrayValue?.first)
        #expect(
            peer["name"]?.stringValue == "a" && peer["node"]?.stringValue != nil && peer["lastSync"]?.stringValue != nil
        )
        let entry = try b.connect().call("io.entryd.Entries.Get", .object([("id", .string(fromB))]))["entry"]
        #expect(entry?["syncedTo"]?.arrayValue == [.string("a")])
        #expect(a.stop() == 0 && b.stop() == 0)
    }

    @Test(
        "entryctl peers lists configured peers before their first sync and ad-hoc ones after, with what is not yet pushed"
    )
    func peersCommand() throws {
        let a = try Daemon()
        let b = try Daemon(arguments: ["--peer", "desk=unix:/nonexistent/desk.sock", "--sync-interval", "0"])
        let empty = try a.entryctl(["peers"])
        #expect(empty.status == 0 && empty.stdout.contains("没有同步对象"), "\(empty)")
        #expect(try a.entryctl(["--locale", "en", "peers"]).stdout.contains("No peers. Add a [peer NAME] section"))
        _ = try addOn(b, name: "对等甲")
        _ = try addOn(b, name: "对等乙")
        let before = try b.entryctl(["peers"])
        #expect(before.status == 0, "\(before)")
        let desk = try #require(
            before.stdout.split(separator: "\n").first { $0.hasPrefix("desk ") }, "\(before.stdout)")
        #expect(desk.contains("unix:/nonexistent/desk.sock") && desk.contains("从未"), "\(desk)")
        #expect(
            desk.split(separator: " ", omittingEmptySubsequences: true).contains("2"), "2 changes not pushed: \(desk)")
        _ = try sync(b, "unix:\(a.socket)")
        let after = try b.entryctl(["peers"])
        let adHoc = try #require(
            after.stdout.split(separator: "\n").first { $0.hasPrefix("unix:\(a.socket)") }, "\(after.stdout)")
        let nodeA = try a.connect().call("io.entryd.Sync.Status")["node"]?.stringValue ?? "?"
        #expect(!adHoc.contains("从未") && adHoc.contains(nodeA), "\(adHoc)")
        let json = try JSON.parse(try b.entryctl(["--json", "peers"]).stdout)
        #expect(json.arrayValue?.compactMap { $0["name"]?.stringValue } == ["desk", "unix:\(a.socket)"])
        #expect(a.stop() == 0 && b.stop() == 0)
    }

    @Test("history shows labels and values in the locale, old → new from each change's base, and seconds")
    func historyForPeople() throws {
        let a = try Daemon()
        let id = try addOn(a, name: "历史")
        #expect(try a.entryctl(["update", id, "city=深圳", "contact_method=email", "email=li@example.com"]).status == 0)
        let zh = try a.entryctl(["history", id])
        #expect(zh.status == 0, "\(zh)")
        let text = zh.stdout
        #expect(text.contains("新建") && text.contains("修改"), "\(text)")
        #expect(text.contains("城市") && text.contains("广州市 → 深圳市"), "\(text)")
        #expect(text.contains("联系方式") && text.contains("电话 → 邮箱"), "\(text)")
        #expect(text.contains("（空） → li@example.com"), "\(text)")
        #expect(text.range(of: #"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"#, options: .regularExpression) != nil, "\(text)")
        #expect(!text.contains("440300"), "codes are shown as names: \(text)")
        // A group written whole (contact_method, phone, email) shows only what changed: no （空） → （空）.
        #expect(try a.entryctl(["update", id, "email=han@example.com"]).status == 0)
        let again = try a.entryctl(["history", id]).stdout
        #expect(again.contains("li@example.com → han@example.com") && !again.contains("（空） → （空）"), "\(again)")
        // Editing a deleted entry is stored, and said to be invisible until restored.
        #expect(try a.entryctl(["delete", id]).status == 0)
        let edited = try a.entryctl(["--locale", "en", "update", id, "name=删后改"])
        #expect(
            edited.status == 0 && edited.stderr.contains("is deleted: the change is stored")
                && edited.stderr.contains("entryctl restore \(id)"),
            "\(edited)")
        let en = try a.entryctl(["--locale", "en", "history", id]).stdout
        #expect(
            en.contains("Guangzhou → Shenzhen") && en.contains("create") && en.contains("(empty) → li@example.com"),
            "\(en)")
        #expect(a.stop() == 0)
    }

    @Test("a Changes stream sees an entry added by another client within a second")
    func watchLatency() throws {
        let d = try Daemon()
        let watcher = try d.connect()
        try watcher.send(
            VarlinkCall(method: "io.entryd.Sync.Changes", parameters: .object([("since", .int(0))]), more: true))
        let backlog = try watcher.receive()
        #expect(backlog.continues && backlog.parameters["changes"]?.arrayValue?.isEmpty == true)
        let started = Date()
        let id = try addOn(d, name: "观察")
        let reply = try watcher.receive()
        let delay = Date().timeIntervalSince(started)
        #expect(reply.parameters["changes"]?.arrayValue?.first?["entry"]?.stringValue == id)
        #expect(delay < 5, "seen after \(delay) s")
        print("watch delay: \(Int(delay * 1000)) ms (including the entryctl add process)")
        watcher.close()
        #expect(d.stop() == 0)
    }

    @Test("SyncPeer to a socket that accepts and never answers gives PeerUnreachable after peer-timeout")
    func silentPeerIsUnreachable() throws {
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

    @Test(
        "a peer that refuses the sync (PermissionDenied) gives PeerUnreachable naming the role and [roles], not the caller's PermissionDenied; entryctl sync exits 1 with words in its language"
    )
    func refusingPeerNamesTheRole() throws {
        let d = try Daemon()
        let path = d.directory + "/refusing.sock"
        let listener = try UnixSocket.listen(path: path, mode: 0o600)
        defer { close(listener) }
        // The peer: answers every call of each connection with PermissionDenied(role: read).
        Thread.detachNewThread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                defer { close(client) }
                var buffer = [UInt8](repeating: 0, count: 65536)
                let refusal =
                    Array(#"{"error":"org.varlink.service.PermissionDenied","parameters":{"role":"read"}}"#.utf8) + [0]
                while true {
                    let n = read(client, &buffer, buffer.count)
                    if n <= 0 { break }
                    for _ in buffer[..<n].filter({ $0 == 0 }) {
                        _ = refusal.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
                    }
                }
            }
        }
        let before = try d.connect().call("io.entryd.Sync.Status")["seq"]
        do {
            _ = try d.connect().call("io.entryd.Sync.SyncPeer", .object([("peer", .string("unix:" + path))]))
            Issue.record("a refusing peer synced")
        } catch let e as WireError {
            #expect(e.name == "io.entryd.Sync.PeerUnreachable")
            let reason = e.parameters["reason"]?.stringValue ?? ""
            #expect(
                reason.contains("PermissionDenied") && reason.contains("read role") && reason.contains("[roles]"),
                "\(reason)")
            #expect(e.parameters["role"]?.stringValue == "read")
        }
        // entryctl: a lasting refusal (1, not 75's "try again"), every word in the chosen language
        let zh = try d.entryctl(["--locale", "zh", "sync", "unix:" + path])
        #expect(zh.status == 1, "\(zh)")
        #expect(zh.stderr.contains("拒绝") && zh.stderr.contains("read") && zh.stderr.contains("[roles]"), "\(zh)")
        for english in ["refused", "PermissionDenied", "the peer", "try again", "稍后重试"] {
            #expect(!zh.stderr.contains(english), "\(zh)")
        }
        let en = try d.entryctl(["--locale", "en", "sync", "unix:" + path])
        #expect(en.status == 1 && en.stderr.contains("refused this node") && en.stderr.contains("[roles]"), "\(en)")
        #expect(!en.stderr.contains("try again later"), "\(en)")
        #expect(try d.connect().call("io.entryd.Sync.Status")["seq"] == before)
        #expect(d.stop() == 0)
    }

    @Test(
        "entryctl conflicts names people: the entry's name, birthday and form, the field's label, values as shown (已删除 / 未删除), each side's time and node"
    )
    func conflictsNamePeople() throws {
        let a = try Daemon()
        let b = try Daemon()
        defer {
            a.stop()
            b.stop()
        }
        let edited = try addOn(a, name: "李雷")
        let deleted = try addOn(a, name: "韩梅梅")
        _ = try sync(b, "unix:\(a.socket)")
        // The same phone changed on both nodes; a delete on one and an edit it did not see on the other.
        #expect(try a.entryctl(["update", edited, "phone=13900139000"]).status == 0)
        #expect(try b.entryctl(["update", edited, "phone=13700137000"]).status == 0)
        #expect(try a.entryctl(["delete", deleted]).status == 0)
        #expect(try b.entryctl(["update", deleted, "name=韩梅"]).status == 0)
        #expect(try sync(a, "unix:\(b.socket)")["conflicts"]?.intValue == 2)
        let nodeA = try #require(try a.connect().call("io.entryd.Sync.Status")["node"]?.stringValue)
        let nodeB = try #require(try b.connect().call("io.entryd.Sync.Status")["node"]?.stringValue)

        let zh = try a.entryctl(["--locale", "zh", "conflicts"])
        #expect(zh.status == 0, "\(zh)")
        for word in [
            "李雷", "韩梅", "生日 1990-05-17", "登记", "手机号码（phone）", "删除状态", "已删除", "未删除", "+86 139 0013 9000",
            "+86 137 0013 7000", "节点 …\(nodeA.suffix(8))", "节点 …\(nodeB.suffix(8))", "写入", "未解决", "共 2 个冲突",
            edited, deleted,
        ] {
            #expect(zh.stdout.contains(word), "missing \(word) in\n\(zh.stdout)")
        }
        for raw in ["true", "false", "+8613900139000", "kept", "node …"] {
            #expect(!zh.stdout.contains(raw), "\(raw) in\n\(zh.stdout)")
        }
        let en = try a.entryctl(["--locale", "en", "conflicts"])
        #expect(en.status == 0, "\(en)")
        for word in [
            "李雷", "born 1990-05-17", "Registration", "Phone (phone)", "not deleted", "deleted", "+86 139 0013 9000",
            "node …\(nodeB.suffix(8))", "written", "open", "2 conflict(s)",
        ] {
            #expect(en.stdout.contains(word), "missing \(word) in\n\(en.stdout)")
        }
        #expect(!en.stdout.contains("true") && !en.stdout.contains("false"), "\(en.stdout)")
    }
}
