@preconcurrency import Glibc
import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// An in-process daemon: the real ``EntryService`` and ``ClientConnection`` behind a
/// Unix socket, so tests can talk varlink to it and still read the store's
/// commit counter.
final class SocketDaemon: @unchecked Sendable {
    let database = TestDatabase()
    let store: EntryStore
    let service: EntryService
    let socket: String
    private let listenFD: Int32
    private let done = DispatchGroup()

    /// - Parameter caller: who every connection is (default: `tester`, admin, not a gateway).
    init(caller: Caller = Caller(pid: getpid(), uid: getuid(), gid: getgid(), userName: "tester", role: .admin)) throws
    {
        store = try EntryStore(path: database.path)
        socket = database.directory + "/entryd.sock"
        listenFD = try UnixSocket.listen(path: socket, mode: 0o600)
        let service = EntryService(store: store, forms: FormRegistry.builtIn)
        self.service = service
        let fd = listenFD
        done.enter()
        Thread { [done] in
            defer { done.leave() }
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { if errno == EINTR { continue } else { return } }
                Thread {
                    ClientConnection(fd: client, caller: caller, handler: service, limits: Limits()).run()
                    close(client)
                }.start()
            }
        }.start()
    }

    func connect() throws -> VarlinkConnection { try VarlinkConnection(path: socket) }

    /// Stops accepting and closes the store (sessions end when their clients close).
    func stop() {
        shutdown(listenFD, Int32(SHUT_RDWR))
        close(listenFD)
        done.wait()
        store.close()
    }
}

/// Group commit seen from clients on sockets (issue 6): 16 connections write
/// at once, some pipelining, with invalid writes mixed in.
@Suite struct GroupCommitSessionTests {
    static func fields(_ name: String, birthday: String = "1990-05-17") -> JSON {
        .stringMap([
            "name": name, "birthday": birthday, "country": "CN", "province": "440000", "city": "440100",
            "contact_method": "phone", "phone": "+8613800138000",
        ])
    }

    /// What a call should get back.
    enum Expect {
        case stored(String)
        case invalid, exists
    }

    @Test(
        "16 clients, pipelined and not, with invalid writes: each valid write stored once with its change, each invalid refused alone, few commits"
    )
    func sixteenClients() throws {
        let daemon = try SocketDaemon()
        defer { daemon.stop() }
        // Entries whose ids later Adds reuse with other values: refused inside the writer (EntryExists).
        let setup = try daemon.connect()
        let taken = (0..<16).map { _ in UUIDv7.generate() }
        for (i, id) in taken.enumerated() {
            _ = try setup.call(
                "io.entryd.Entries.Add", .object([("id", .string(id)), ("fields", Self.fields("first\(i)"))]))
        }
        setup.close()
        let commitsBefore = daemon.store.transactionsCommitted

        let clients = 16
        let bursts = 3
        let perBurst = 8
        let outcomes = OutcomeBox()
        let group = DispatchGroup()
        for c in 0..<clients {
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    let conn = try daemon.connect()
                    for b in 0..<bursts {
                        var calls: [(Expect, [UInt8])] = []
                        for k in 0..<perBurst {
                            let i = b * perBurst + k
                            let id = UUIDv7.generate()
                            switch i % 6 {
                            case 5:  // not a date: ValidationFailed before the writer
                                calls.append(
                                    (
                                        .invalid,
                                        VarlinkCall(
                                            method: "io.entryd.Entries.Add",
                                            parameters: .object([
                                                ("id", .string(id)),
                                                ("fields", Self.fields("bad", birthday: "1990-02-30")),
                                            ])
                                        ).encoded
                                    ))
                            case 4:  // an id in use with other values: EntryExists inside the group transaction
                                calls.append(
                                    (
                                        .exists,
                                        VarlinkCall(
                                            method: "io.entryd.Entries.Add",
                                            parameters: .object([
                                                ("id", .string(taken[c])), ("fields", Self.fields("other\(c)-\(i)")),
                                            ])
                                        ).encoded
                                    ))
                            default:
                                calls.append(
                                    (
                                        .stored(id),
                                        VarlinkCall(
                                            method: "io.entryd.Entries.Add",
                                            parameters: .object([
                                                ("id", .string(id)), ("fields", Self.fields("c\(c)-\(i)")),
                                            ])
                                        ).encoded
                                    ))
                            }
                        }
                        if c % 2 == 0 {
                            // Pipelining: the whole burst in one write, then the replies in order.
                            try conn.sendRaw(calls.flatMap(\.1))
                            for (expect, _) in calls { outcomes.add(expect, try conn.receive()) }
                        } else {
                            for (expect, bytes) in calls {
                                try conn.sendRaw(bytes)
                                outcomes.add(expect, try conn.receive())
                            }
                        }
                    }
                    conn.close()
                } catch {
                    outcomes.fail("client \(c): \(error)")
                }
            }.start()
        }
        group.wait()

        let results = outcomes.all
        #expect(outcomes.failures.isEmpty, "\(outcomes.failures)")
        #expect(results.count == clients * bursts * perBurst)
        var storedIDs: [String] = []
        for (expect, reply) in results {
            switch expect {
            case .stored(let id):
                #expect(reply.error == nil, "\(reply.error ?? "")")
                #expect(reply.parameters["entry"]?["id"]?.stringValue == id)
                storedIDs.append(id)
            case .invalid:
                #expect(reply.error == "io.entryd.Entries.ValidationFailed")
            case .exists:
                #expect(reply.error == "io.entryd.Entries.EntryExists")
            }
        }
        let store = daemon.store
        for id in storedIDs {
            let history = try store.history(id)
            #expect(history.count == 1 && history.first?.op == .create, "\(id): \(history.count) changes")
            #expect(try store.get(id)?.fields["name"]?.hasPrefix("c") == true)
        }
        for (i, id) in taken.enumerated() { #expect(try store.get(id)?.fields["name"] == "first\(i)") }
        let counts = try store.counts()
        #expect(counts.entries == storedIDs.count + taken.count)
        #expect(counts.seq == Int64(storedIDs.count + taken.count))
        let commits = store.transactionsCommitted - commitsBefore
        #expect(commits >= 1)
        #expect(commits * 2 < storedIDs.count, "\(commits) commits for \(storedIDs.count) stored writes")
    }

    @Test("a pipelined Get after an Add on the same connection sees the Add")
    func pipelinedReadSeesEarlierWrite() throws {
        let daemon = try SocketDaemon()
        defer { daemon.stop() }
        let conn = try daemon.connect()
        let id = UUIDv7.generate()
        var bytes = VarlinkCall(
            method: "io.entryd.Entries.Add", parameters: .object([("id", .string(id)), ("fields", Self.fields("a"))])
        ).encoded
        bytes += VarlinkCall(method: "io.entryd.Entries.Get", parameters: .object([("id", .string(id))])).encoded
        bytes +=
            VarlinkCall(
                method: "io.entryd.Entries.Add", parameters: .object([("fields", Self.fields("b", birthday: "x"))])
            ).encoded
        bytes += VarlinkCall(method: "io.entryd.Entries.History", parameters: .object([("id", .string(id))])).encoded
        try conn.sendRaw(bytes)
        let add = try conn.receive()
        let get = try conn.receive()
        let bad = try conn.receive()
        let history = try conn.receive()
        #expect(add.error == nil && get.error == nil)
        #expect(get.parameters["entry"]?["fields"]?["name"]?.stringValue == "a")
        #expect(bad.error == "io.entryd.Entries.ValidationFailed")
        #expect(history.parameters["changes"]?.arrayValue?.count == 1)
    }

    @Test("Import rows without 'deleted' are stored")
    func importWithoutDeletedFlag() throws {
        let daemon = try SocketDaemon()
        defer { daemon.stop() }
        let conn = try daemon.connect()
        let rows = (0..<3).map { JSON.object([("fields", Self.fields("i\($0)"))]) }
        let r = try conn.call("io.entryd.Entries.Import", .object([("entries", .array(rows))]))
        #expect(r["added"]?.intValue == 3)
        #expect(r["rejected"]?.arrayValue?.isEmpty == true)
        #expect(try daemon.store.counts().entries == 3)
    }

    /// An `Import` of `rows` (all-or-nothing when `atomic`).
    static func importCall(_ rows: [JSON], atomic: Bool = false) -> VarlinkCall {
        VarlinkCall(
            method: "io.entryd.Entries.Import",
            parameters: .object([("entries", .array(rows)), ("atomic", .bool(atomic))]))
    }

    /// `count` valid Import rows with new ids, named `prefix0`, `prefix1`, …, and their ids.
    static func importRows(_ prefix: String, _ count: Int) -> (ids: [String], rows: [JSON]) {
        let ids = (0..<count).map { _ in UUIDv7.generate() }
        return (
            ids,
            ids.enumerated().map {
                .object([("id", .string($0.element)), ("fields", fields("\(prefix)\($0.offset)"))])
            }
        )
    }

    @Test(
        "pipelined Imports on one connection: replies in call order with their added counts, written in call order, every row stored once"
    )
    func pipelinedImports() throws {
        let daemon = try SocketDaemon()
        defer { daemon.stop() }
        let conn = try daemon.connect()
        defer { conn.close() }
        let batches = [3, 200, 1, 40].enumerated().map { Self.importRows("p\($0.offset)-", $0.element) }
        try conn.sendRaw(batches.flatMap { Self.importCall($0.rows).encoded })
        for batch in batches {
            let reply = try conn.receive()
            #expect(reply.error == nil, "\(reply.error ?? "")")
            #expect(reply.parameters["added"]?.intValue == Int64(batch.ids.count))
            #expect(reply.parameters["unchanged"]?.intValue == 0)
            #expect(reply.parameters["rejected"]?.arrayValue?.isEmpty == true)
        }
        let store = daemon.store
        var lastSeq: Int64 = 0
        for batch in batches {
            let seqs = try batch.ids.map { id in
                #expect(try store.history(id).count == 1)
                return try #require(try store.get(id)).seq
            }
            #expect(seqs.min()! > lastSeq, "a later Import was written before an earlier one")
            lastSeq = seqs.max()!
        }
        let total = batches.reduce(0) { $0 + $1.ids.count }
        let counts = try store.counts()
        #expect(counts.entries == total && counts.seq == Int64(total))
    }

    @Test(
        "a pipelined atomic Import with an invalid row between two good ones stores nothing; the others store every row"
    )
    func pipelinedAtomicImportRefused() throws {
        let daemon = try SocketDaemon()
        defer { daemon.stop() }
        let conn = try daemon.connect()
        defer { conn.close() }
        let first = Self.importRows("a", 4)
        let middle = Self.importRows("m", 5)
        let last = Self.importRows("z", 3)
        var middleRows = middle.rows
        middleRows[2] = .object([
            ("id", .string(middle.ids[2])), ("fields", Self.fields("bad", birthday: "1990-02-30")),
        ])
        try conn.sendRaw(
            [
                Self.importCall(first.rows, atomic: true), Self.importCall(middleRows, atomic: true),
                Self.importCall(last.rows, atomic: true),
            ].flatMap(\.encoded))
        let replies = try (0..<3).map { _ in try conn.receive() }
        #expect(replies.allSatisfy { $0.error == nil })
        #expect(replies.map { $0.parameters["added"]?.intValue } == [4, 0, 3])
        let rejected = try #require(replies[1].parameters["rejected"]?.arrayValue)
        #expect(rejected.map { $0["index"]?.intValue } == [2])
        #expect(rejected.first?["id"]?.stringValue == middle.ids[2])
        let store = daemon.store
        for id in first.ids + last.ids { #expect(try store.get(id) != nil) }
        for id in middle.ids { #expect(try store.get(id) == nil && store.history(id).isEmpty) }
        #expect(try store.counts().entries == 7)
    }

    @Test("an Add pipelined after an Import on the same connection is answered after it, and written after it")
    func addAfterPipelinedImport() throws {
        let daemon = try SocketDaemon()
        defer { daemon.stop() }
        let conn = try daemon.connect()
        defer { conn.close() }
        let imported = Self.importRows("i", 30)
        // The first Add reuses an imported id with other values: EntryExists only if the Import was written first.
        let reused = VarlinkCall(
            method: "io.entryd.Entries.Add",
            parameters: .object([
                ("id", .string(imported.ids[0])), ("fields", Self.fields("other")),
            ]))
        let fresh = VarlinkCall(
            method: "io.entryd.Entries.Add", parameters: .object([("fields", Self.fields("after"))]))
        try conn.sendRaw([Self.importCall(imported.rows), reused, fresh].flatMap(\.encoded))
        let importReply = try conn.receive()
        let reusedReply = try conn.receive()
        let freshReply = try conn.receive()
        #expect(importReply.error == nil && importReply.parameters["added"]?.intValue == 30)
        #expect(reusedReply.error == WireErrorName.entryExists.rawValue)
        #expect(freshReply.error == nil && freshReply.parameters["entry"]?["fields"]?["name"]?.stringValue == "after")
        let store = daemon.store
        let freshID = try #require(freshReply.parameters["entry"]?["id"]?.stringValue)
        let importedSeqs = try imported.ids.map { try #require(try store.get($0)).seq }
        #expect(try #require(try store.get(freshID)).seq > importedSeqs.max()!)
        #expect(try store.get(imported.ids[0])?.fields["name"] == "i0")
    }

    @Test(
        "an Import begun early is refused as one handled in turn, before anything is queued; a read caller's is left to handle: PermissionDenied(write)"
    )
    func importRefusedAsInTurn() throws {
        let database = TestDatabase()
        let store = try EntryStore(path: database.path)
        defer { store.close() }
        let service = EntryService(store: store, forms: FormRegistry.builtIn)
        let commitsBefore = store.transactionsCommitted
        /// A context for an Import with `params` from a caller of `role`.
        func context(_ params: [(String, JSON)], role: Role = .write) -> CallContext {
            CallContext(
                caller: Caller(pid: 1, uid: 0, gid: 0, userName: "tester", role: role),
                call: VarlinkCall(method: "io.entryd.Entries.Import", parameters: .object(params)),
                send: { _ in Issue.record("a refused call sent a reply") }, clientHungUp: { false })
        }
        /// What `body` threw, on the wire.
        func refusal(_ body: () throws -> Void) -> WireError? {
            do { try body() } catch { return WireError(mapping: error) }
            return nil
        }
        let good = Self.importRows("g", 1).rows
        let bad: [[(String, JSON)]] = [
            [("entries", .array(Array(repeating: .object([]), count: Limits().maxBatch + 1)))],
            [("entries", .array(good)), ("form", .string("no-such-form"))],
            [("entries", .string("x"))],
            [("entries", .array(good)), ("atomic", .string("yes"))],
            [("entries", .array(good)), ("locale", .string("xx"))],
            [("entries", .array(good)), ("actor", .string("ada"))],
        ]
        var names: [String] = []
        for params in bad {
            let begun = refusal { _ = try service.begin(context(params)) }
            let handled = refusal { try service.handle(context(params)) }
            #expect(
                begun != nil && begun == handled,
                "begin: \(String(describing: begun)), handle: \(String(describing: handled))")
            names.append(begun?.name ?? "")
        }
        #expect(
            names == [
                WireErrorName.limitExceeded.rawValue, WireErrorName.entriesFormNotFound.rawValue,
                WireErrorName.invalidParameter.rawValue,
                WireErrorName.invalidParameter.rawValue, WireErrorName.invalidParameter.rawValue,
                WireErrorName.permissionDenied.rawValue,
            ])
        let readCaller = context([("entries", .array(good))], role: .read)
        #expect(try service.begin(readCaller) == nil)
        let denied = refusal { try service.handle(readCaller) }
        #expect(
            denied?.name == WireErrorName.permissionDenied.rawValue
                && denied?.parameters["role"]?.stringValue == "write")
        #expect(try store.counts().entries == 0 && store.transactionsCommitted == commitsBefore)
    }
}

/// Replies collected from many client threads.
final class OutcomeBox: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [(GroupCommitSessionTests.Expect, VarlinkReply)] = []
    private(set) var failures: [String] = []
    func add(_ e: GroupCommitSessionTests.Expect, _ r: VarlinkReply) {
        lock.lock()
        items.append((e, r))
        lock.unlock()
    }
    func fail(_ s: String) {
        lock.lock()
        failures.append(s)
        lock.unlock()
    }
    var all: [(GroupCommitSessionTests.Expect, VarlinkReply)] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}
