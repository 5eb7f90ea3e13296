import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// Issue 8: `entryctl backup` while clients write, `entryd --restore`.
@Suite(.serialized) struct BackupRestoreTests {
    /// Ids acknowledged by the writers, with the time each Add was answered.
    final class Acknowledged: @unchecked Sendable {
        private let lock = NSLock()
        private var ids: [(id: String, at: Double)] = []
        private(set) var failures: [String] = []

        func add(_ id: String) {
            let t = ProgressClock.now()
            lock.lock()
            ids.append((id, t))
            lock.unlock()
        }
        func fail(_ text: String) {
            lock.lock()
            failures.append(text)
            lock.unlock()
        }
        /// Ids answered before `t`.
        func before(_ t: Double) -> [String] {
            lock.lock()
            defer { lock.unlock() }
            return ids.filter { $0.at < t }.map(\.id)
        }
        var count: Int {
            lock.lock()
            defer { lock.unlock() }
            return ids.count
        }
    }

    @Test(
        "a backup taken during 8 clients' writes restores to a sound database holding every entry acknowledged before it began"
    )
    func backupDuringWrites() throws {
        let d = try Daemon()
        let node = try #require(try d.connect().call("io.entryd.Sync.Status")["node"]?.stringValue)
        let acknowledged = Acknowledged()
        let stop = Flag()
        let group = DispatchGroup()
        for client in 0..<8 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do {
                    let c = try d.connect()
                    var i = 0
                    while !stop.isSet {
                        let reply = try c.call(
                            "io.entryd.Entries.Add",
                            .object([
                                (
                                    "fields",
                                    .stringMap([
                                        "name": "客户\(client)-\(i)", "birthday": "1990-01-0\(1 + i % 9)",
                                        "country": "CN",
                                        "province": "广东", "city": "广州", "contact_method": "phone",
                                        "phone": "1380013\(String(format: "%04d", i % 10_000))",
                                    ])
                                )
                            ]))
                        if let id = reply["entry"]?["id"]?.stringValue { acknowledged.add(id) }
                        i += 1
                    }
                } catch {
                    acknowledged.fail("client \(client): \(error)")
                }
            }
        }
        // Let the writers get going, then back up while they keep writing.
        while acknowledged.count < 400 { usleep(10_000) }
        let began = ProgressClock.now()
        let countAtStart = acknowledged.count
        let backupFile = d.directory + "/backup.db"
        let backup = try runProcess(
            productsDirectory() + "/entryctl", ["--socket", d.socket, "--json", "backup", backupFile], timeout: 120)
        let countAtEnd = acknowledged.count
        usleep(200_000)
        stop.set()
        group.wait()
        #expect(acknowledged.failures.isEmpty, "\(acknowledged.failures)")
        try #require(backup.status == 0, "\(backup.stderr)")
        let summary = try JSON.parse(backup.stdout)
        #expect(summary["node"]?.stringValue == node)
        #expect(countAtEnd > countAtStart, "the writers were not served during the backup")
        let mustHave = acknowledged.before(began)
        #expect(mustHave.count >= 400)

        // Restoring while the daemon runs is refused and changes nothing.
        let live = try runProcess(
            productsDirectory() + "/entryd",
            ["--config", "/dev/null", "--socket", d.socket, "--db", d.database, "--restore", backupFile])
        #expect(live.status == 69, "\(live.stderr)")
        #expect(d.stop() == 0)

        // Restore into a fresh location, then check the restored file itself.
        let restoredDB = d.directory + "/restored/entries.db"
        let restore = try runProcess(
            productsDirectory() + "/entryd",
            [
                "--config", "/dev/null", "--socket", d.directory + "/restored.sock", "--db", restoredDB, "--restore",
                backupFile,
            ])
        #expect(restore.status == 0, "\(restore.stderr)")
        let info = try DatabaseBackup.verify(path: restoredDB)
        #expect(info.node == node)
        let db = try SQLiteConnection(path: restoredDB, readOnly: true)
        var check: [String] = []
        try db.statement("PRAGMA integrity_check").query { check.append($0.text(0)) }
        #expect(check == ["ok"])
        var ids = Set<String>()
        try db.statement("SELECT id FROM entries").query { ids.insert($0.text(0)) }
        let missing = mustHave.filter { !ids.contains($0) }
        #expect(missing.isEmpty, "\(missing.count) entries acknowledged before the backup began are missing")

        // Restoring over the original database keeps the node id; the daemon starts on it.
        let over = try runProcess(
            productsDirectory() + "/entryd",
            ["--config", "/dev/null", "--socket", d.socket, "--db", d.database, "--restore", backupFile])
        #expect(over.status == 0, "\(over.stderr)")
        #expect(FileManager.default.fileExists(atPath: d.database + ".before-restore"))
        try d.start()
        let status = try d.connect().call("io.entryd.Sync.Status")
        #expect(status["node"]?.stringValue == node)
        #expect(status["entries"]?.intValue == Int64(info.entries))
        #expect(d.stop() == 0)
    }

    @Test(
        "a node restored with entryd --restore begins a new incarnation; its peer re-reads it and sends back what it lost; status and peers say why"
    )
    func restoredNodeIsMadeWhole() throws {
        let a = try Daemon()
        let b = try Daemon()
        func add(_ d: Daemon, _ name: String) throws -> String {
            let r = try d.entryctl([
                "--json", "add", "name=\(name)", "birthday=1990-05-17", "country=US", "contact_method=email",
                "email=x@example.com",
            ])
            try #require(r.status == 0, "\(r.stderr)")
            return try #require(try JSON.parse(r.stdout)["entry"]?["id"]?.stringValue)
        }
        _ = try add(a, "甲")
        #expect(try b.entryctl(["sync", "unix:\(a.socket)"]).status == 0)
        let backupFile = a.directory + "/a-backup.db"
        #expect(try a.entryctl(["backup", backupFile]).status == 0)
        // An existing file is replaced only with --force; the live database never.
        let again = try a.entryctl(["--locale", "en", "backup", backupFile])
        #expect(again.status == 64 && again.stderr.contains("exists: choose another name, or give --force"), "\(again)")
        #expect(try a.entryctl(["backup", "--force", backupFile]).status == 0)
        let live = try a.entryctl(["--locale", "en", "backup", "--force", a.directory + "/./entries.db"])
        #expect(live.status == 1 && live.stderr.contains("is the database entryd is using"), "\(live)")
        #expect(try a.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 1)
        let lost = try add(a, "乙（恢复后丢失）")
        #expect(try b.entryctl(["sync", "unix:\(a.socket)"]).status == 0)
        let before = try a.connect().call("io.entryd.Sync.Status")
        #expect(a.stop() == 0)
        let restore = try runProcess(
            productsDirectory() + "/entryd",
            ["--config", "/dev/null", "--socket", a.socket, "--db", a.database, "--restore", backupFile])
        #expect(restore.status == 0 && restore.stdout.contains("new incarnation"), "\(restore)")
        try a.start()
        let status = try a.connect().call("io.entryd.Sync.Status")
        #expect(status["node"] == before["node"] && status["incarnation"] != before["incarnation"])
        #expect(status["incarnationReason"]?.stringValue?.hasPrefix("restored from the backup") == true, "\(status)")
        #expect(try String(contentsOfFile: a.logPath, encoding: .utf8).contains("begins incarnation"))
        #expect(throws: WireError.self, "the restore lost it") {
            _ = try a.connect().call("io.entryd.Entries.Get", .object([("id", .string(lost))]))
        }
        let sync = try b.entryctl(["sync", "unix:\(a.socket)"])
        #expect(sync.status == 0 && sync.stdout.contains("began a new incarnation"), "\(sync)")
        #expect(
            try a.connect().call("io.entryd.Entries.Get", .object([("id", .string(lost))]))["entry"]?["id"]?.stringValue
                == lost,
            "B sent A back what it lost")
        let peers = try b.entryctl(["peers"])
        #expect(peers.stdout.contains("began a new incarnation"), "\(peers.stdout)")
        #expect(a.stop() == 0 && b.stop() == 0)
    }

    @Test(
        "backup, erase, entryd --restore the backup, start: the entry is erased again before the first call is answered; erase --verify finds 0 hits"
    )
    func restoredBackupIsErasedBeforeTheFirstCall() throws {
        let d = try Daemon()
        let r = try d.entryctl([
            "--json", "add", "name=Qwzerasetest", "birthday=1990-05-17", "country=CN", "province=广东", "city=广州",
            "contact_method=phone", "phone=13900176543",
        ])
        try #require(r.status == 0, "\(r.stderr)")
        let id = try #require(try JSON.parse(r.stdout)["entry"]?["id"]?.stringValue)
        let backupFile = d.directory + "/backup.db"
        #expect(try d.entryctl(["backup", backupFile]).status == 0)
        let erase = try d.entryctl(["--locale", "en", "erase", id, "--reason", "request 31", "--yes"])
        #expect(erase.status == 0 && erase.stdout.contains("erased \(id)"), "\(erase)")
        #expect(d.stop() == 0)
        let restore = try runProcess(
            productsDirectory() + "/entryd",
            ["--config", "/dev/null", "--socket", d.socket, "--db", d.database, "--restore", backupFile])
        #expect(restore.status == 0, "\(restore)")
        // The restored file holds the entry until entryd opens it.
        let restored = try SQLiteConnection(path: d.database, readOnly: true)
        var held = 0
        try restored.statement("SELECT COUNT(*) FROM entries WHERE id = ?").query([.text(id)]) { held = Int($0.int(0)) }
        #expect(held == 1)
        try d.start()
        // The very first call after the start.
        let first = #expect(throws: WireError.self) {
            _ = try d.connect().call("io.entryd.Entries.Get", .object([("id", .string(id))]))
        }
        #expect(first?.name == WireErrorName.entryErased.rawValue, "\(String(describing: first))")
        #expect(try String(contentsOfFile: d.logPath, encoding: .utf8).contains("1 erasure(s) the database lacked"))
        let verify = try d.entryctl([
            "--locale", "en", "erase", "--verify", id, "--value", "+8613900176543", "--value", "Qwzerasetest",
        ])
        #expect(verify.status == 0 && verify.stdout.contains("0 hits in all"), "\(verify)")
        // Nor any form the search keys derived (the folded name, the national number), in
        // any file of the node but the backup made before the erasure.
        for file in try FileManager.default.contentsOfDirectory(atPath: d.directory) where file != "backup.db" {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: d.directory + "/" + file))) ?? Data()
            for derived in ["qwzerasetest", "13900176543"] {
                #expect(bytes.range(of: Data(derived.utf8)) == nil, "\(file) holds \(derived)")
            }
        }
        let list = try d.entryctl(["--locale", "en", "erasures"])
        #expect(list.stdout.contains(id) && list.stdout.contains("request 31"), "\(list)")
        // Someone else with the same phone: the check finds its bytes and says whose they may be.
        let other = try d.entryctl([
            "--json", "add", "name=Someone Else", "birthday=1980-01-01", "country=CN", "province=广东",
            "city=广州", "contact_method=phone", "phone=13900176543",
        ])
        let otherID = try #require(try JSON.parse(other.stdout)["entry"]?["id"]?.stringValue, "\(other)")
        let shared = try d.entryctl(["--locale", "en", "erase", "--verify", id, "--value", "+8613900176543"])
        #expect(
            shared.status == 1 && shared.stdout.contains("also held by entries not erased (\(otherID))"), "\(shared)")
        let reply = try d.connect().call(
            "io.entryd.Entries.VerifyErasure",
            .object([("id", .string(id)), ("values", .array([.string("+8613900176543")]))]))
        #expect(reply["alsoHeldBy"] == .array([.string(otherID)]) && reply["payloadRows"]?.intValue == 0, "\(reply)")
        #expect(d.stop() == 0)
    }

    @Test(
        "a database copied to another place is refused (exit 78) until started --as-new-node or --moved; --restore needs a named database"
    )
    func copiedDatabase() throws {
        let a = try Daemon()
        let node = try a.connect().call("io.entryd.Sync.Status")["node"]?.stringValue
        #expect(a.stop() == 0)
        let elsewhere = a.directory + "/copy"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: a.database, toPath: elsewhere + "/entries.db")
        let entryd = productsDirectory() + "/entryd"
        let base = ["--config", "/dev/null", "--socket", elsewhere + "/entryd.sock", "--db", elsewhere + "/entries.db"]
        let refused = try runProcess(entryd, base, timeout: 20)
        #expect(refused.status == 78, "\(refused)")
        #expect(refused.stderr.contains("--as-new-node") && refused.stderr.contains("--moved"), "\(refused.stderr)")
        let copy = try Daemon(directory: elsewhere, arguments: ["--as-new-node"])
        let copyNode = try copy.connect().call("io.entryd.Sync.Status")["node"]?.stringValue
        #expect(copyNode != nil && copyNode != node)
        #expect(copy.stop() == 0)
        // Another node's backup restored over this one: the next start refuses too, never two nodes with one id.
        let other = try runProcess(entryd, base + ["--restore", a.database], timeout: 20)
        #expect(
            other.status == 0 && other.stdout.contains("the next start refuses until you say --as-new-node"), "\(other)"
        )
        let refusedAgain = try runProcess(entryd, base, timeout: 20)
        #expect(refusedAgain.status == 78, "\(refusedAgain)")
        let both = try runProcess(entryd, base + ["--as-new-node", "--moved"], timeout: 20)
        #expect(both.status == 64 && both.stderr.contains("contradict"), "\(both)")
        // Without a named database, --restore names the path it would have used and stops.
        var environment = ProcessInfo.processInfo.environment
        environment["STATE_DIRECTORY"] = nil
        environment["ENTRYD_DB"] = nil
        let unnamed = try runProcess(
            entryd, ["--config", "/dev/null", "--socket", elsewhere + "/r.sock", "--restore", a.database],
            environment: environment, timeout: 20)
        #expect(
            unnamed.status == 64 && unnamed.stderr.contains("--restore needs the database it replaces"), "\(unnamed)")
    }

    @Test("restore refuses a file that is not a sound entryd database and leaves the database alone")
    func restoreRefusesBadFiles() throws {
        let d = try Daemon()
        _ = try d.connect().call(
            "io.entryd.Entries.Add",
            .object([
                (
                    "fields",
                    .stringMap([
                        "name": "李雷", "birthday": "1990-05-17", "country": "US", "contact_method": "email",
                        "email": "l@example.com",
                    ])
                )
            ]))
        #expect(d.stop() == 0)
        let junk = d.directory + "/junk.db"
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: junk))
        let refused = try runProcess(
            productsDirectory() + "/entryd",
            ["--config", "/dev/null", "--socket", d.socket, "--db", d.database, "--restore", junk])
        #expect(refused.status == 65, "\(refused.stderr)")
        #expect(refused.stderr.contains("not restored"))
        // The message names the user's file, not the copy that was checked.
        #expect(refused.stderr.contains("'\(junk)'") && !refused.stderr.contains(".restore-"), "\(refused.stderr)")
        let missing = try runProcess(
            productsDirectory() + "/entryd",
            ["--config", "/dev/null", "--socket", d.socket, "--db", d.database, "--restore"])
        #expect(missing.status == 64)
        let absent = try runProcess(
            productsDirectory() + "/entryd",
            [
                "--config", "/dev/null", "--socket", d.socket, "--db", d.database,
                "--restore", d.directory + "/no-such-backup.db",
            ])
        #expect(absent.status == 66 && absent.stderr.contains("there is no file"), "\(absent.stderr)")
        try d.start()
        #expect(try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 1)
        #expect(d.stop() == 0)
    }
}

/// A flag set once by one thread and read by others.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }
}

/// Monotonic seconds for ordering events across threads.
enum ProgressClock {
    static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
