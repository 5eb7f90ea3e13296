import CSQLiteFaults
import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// Full disk and failing fsync, through a fault-injecting SQLite VFS (as in
/// SQLite's own I/O error tests): writes fail with StorageFailed saying what
/// is wrong, reads keep working, nothing stored changes, and writes succeed
/// again once the fault clears, without a restart.
@Suite(.serialized) struct StorageFaultTests {
    /// Calls the service in process and returns the reply or the wire error.
    func call(_ service: EntryService, _ method: String, _ params: [(String, JSON)]) -> Result<JSON, WireError> {
        var replies: [VarlinkReply] = []
        let caller = Caller(pid: 1, uid: 0, gid: 0, userName: "tester", role: .admin)
        let context = CallContext(
            caller: caller, call: VarlinkCall(method: method, parameters: .object(params)),
            send: { replies.append($0) }, clientHungUp: { false })
        do {
            try service.handle(context)
        } catch {
            return .failure(WireError(mapping: error))
        }
        guard let r = replies.last else { return .failure(WireError(name: "no reply")) }
        if let e = r.error { return .failure(WireError(name: e, parameters: r.parameters)) }
        return .success(r.parameters)
    }

    static let fields = JSON.stringMap([
        "name": "李雷", "birthday": "1990-05-17", "country": "CN", "province": "440000",
        "city": "440100", "contact_method": "phone", "phone": "13800138000",
    ])

    @Test(
        "disk full, then fsync failures: StorageFailed, reads work, data unchanged, writes resume",
        arguments: ["writes", "syncs"])
    func faults(kind: String) throws {
        // Soak: ENTRYD_FAULT_ROUNDS repetitions.
        let rounds = Int(ProcessInfo.processInfo.environment["ENTRYD_FAULT_ROUNDS"] ?? "") ?? 1
        let before = csqlite_faults_refused()
        var lost = 0
        for _ in 0..<rounds { lost += try faultRound(kind: kind) }
        print(
            "soak: storage faults (\(kind)): \(rounds) rounds, \(csqlite_faults_refused() - before) faults injected, lost: \(lost)"
        )
    }

    /// One fault cycle; returns how many stored entries were lost or changed by it (must be 0).
    func faultRound(kind: String) throws -> Int {
        #expect(csqlite_faults_register() == 0)
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 2, vfs: "entryd-faults")
        defer { store.close() }
        let service = EntryService(store: store, forms: .builtIn)
        var ids: [String] = []
        for _ in 0..<5 {
            let r = try call(service, "io.entryd.Entries.Add", [("fields", Self.fields)]).get()
            ids.append(try #require(r["entry"]?["id"]?.stringValue))
        }
        let before = try store.storedEntries()
        let refusedBefore = csqlite_faults_refused()
        if kind == "writes" { csqlite_faults_fail_writes(1) } else { csqlite_faults_fail_syncs(1) }
        defer {
            csqlite_faults_fail_writes(0)
            csqlite_faults_fail_syncs(0)
        }

        for _ in 0..<3 {
            let add = call(service, "io.entryd.Entries.Add", [("fields", Self.fields)])
            guard case .failure(let e) = add else {
                Issue.record("a write succeeded on a failing disk")
                continue
            }
            #expect(e.name == "io.entryd.Entries.StorageFailed")
            let reason = e.parameters["reason"]?.stringValue ?? ""
            #expect(kind == "writes" ? reason.contains("full") : reason.contains("I/O"), "\(reason)")
        }
        let upd = call(
            service, "io.entryd.Entries.Update", [("id", .string(ids[0])), ("fields", .stringMap(["name": "改"]))])
        #expect((try? upd.get()) == nil)
        #expect(csqlite_faults_refused() > refusedBefore)
        // Reads keep working and see the old data.
        let list = try call(service, "io.entryd.Entries.List", [("limit", .int(100))]).get()
        #expect(list["total"]?.intValue == 5)
        let got = try call(service, "io.entryd.Entries.Get", [("id", .string(ids[0]))]).get()
        #expect(got["entry"]?["fields"]?["name"]?.stringValue == "李雷")

        csqlite_faults_fail_writes(0)
        csqlite_faults_fail_syncs(0)
        let during = try store.storedEntries()
        #expect(during == before)
        let lost = before.filter { during[$0.key] != $0.value }.count
        // Space is back: writes work again without a restart.
        let again = try call(service, "io.entryd.Entries.Add", [("fields", Self.fields)]).get()
        #expect(again["entry"]?["id"]?.stringValue != nil)
        let updated = try call(
            service, "io.entryd.Entries.Update", [("id", .string(ids[0])), ("fields", .stringMap(["name": "改"]))]
        ).get()
        #expect(updated["entry"]?["fields"]?["name"]?.stringValue == "改")
        #expect(try store.storedEntries().count == 6)
        #expect(try store.integrityCheck() == ["ok"])
        #expect(try store.replayChangeLog() == store.storedEntries())
        return lost
    }
}
