import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// Writers and readers at once: no "database is locked" for anyone, and a slow
/// `Changes` reader does not make the WAL grow without bound.
@Suite(.serialized) struct BusyReadersTests {
    static func row(_ i: Int) -> JSON {
        .object([
            (
                "fields",
                .stringMap([
                    "name": "读者\(i)", "birthday": "1990-05-17", "country": "CN", "province": "440000",
                    "city": "440100", "contact_method": "email", "email": "r\(i)@example.cn",
                ])
            )
        ])
    }

    @Test("a Changes stream whose client stopped reading does not hold up shutdown")
    func unreadStreamEndsAtShutdown() throws {
        let d = try Daemon()
        let watcher = try d.connect()
        try watcher.send(
            VarlinkCall(method: "io.entryd.Sync.Changes", parameters: .object([("since", .int(0))]), more: true))
        #expect(try watcher.receive().continues)
        // Far more changes than the socket buffers hold: the stream's session blocks in send.
        let writer = try d.connect()
        for batch in 0..<5 {
            let rows = (0..<1000).map { Self.row(batch * 1000 + $0) }
            #expect(
                try writer.call("io.entryd.Entries.Import", .object([("entries", .array(rows))]))["added"]?.intValue
                    == 1000)
        }
        let t0 = Date()
        #expect(d.stop() == 0)
        #expect(Date().timeIntervalSince(t0) < 5, "shutdown took \(Date().timeIntervalSince(t0)) s")
    }

    @Test("20 writers with listers, exporters and Changes streams: every call succeeds")
    func busy() throws {
        let d = try Daemon()
        final class Failures: @unchecked Sendable {
            let lock = NSLock()
            var list: [String] = []
            func add(_ s: String) {
                lock.lock()
                list.append(s)
                lock.unlock()
            }
        }
        let failures = Failures()
        let socket = d.socket
        let group = DispatchGroup()
        let stop = Date().addingTimeInterval(3)
        for w in 0..<20 {
            group.enter()
            Thread {
                defer { group.leave() }
                guard let c = try? VarlinkConnection(path: socket) else { return failures.add("connect") }
                var i = 0
                while Date() < stop {
                    do {
                        _ = try c.call(
                            "io.entryd.Entries.Add", .object([("fields", Self.row(w * 100_000 + i)["fields"]!)]))
                    } catch {
                        failures.add("add: \(error)")
                    }
                    i += 1
                }
            }.start()
        }
        for r in 0..<4 {
            group.enter()
            Thread {
                defer { group.leave() }
                guard let c = try? VarlinkConnection(path: socket) else { return failures.add("connect") }
                while Date() < stop {
                    do {
                        if r % 2 == 0 {
                            _ = try c.call(
                                "io.entryd.Entries.List",
                                .object([("limit", .int(200)), ("filter", .object([("country", .string("CN"))]))]))
                        } else {
                            // An export-like walk through every page.
                            var cursor: JSON = .null
                            repeat {
                                let page = try c.call(
                                    "io.entryd.Entries.List", .object([("limit", .int(500)), ("cursor", cursor)]))
                                cursor = page["cursor"] ?? .null
                            } while !cursor.isNull && Date() < stop
                        }
                    } catch { failures.add("read: \(error)") }
                }
            }.start()
        }
        let streams = try (0..<2).map { _ in try d.connect() }
        for s in streams {
            try s.send(
                VarlinkCall(method: "io.entryd.Sync.Changes", parameters: .object([("since", .int(0))]), more: true))
        }
        group.wait()
        for s in streams { #expect(try s.receive().continues) }
        #expect(failures.list.isEmpty, "\(failures.list.prefix(5))")
        let entries = try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue ?? 0
        print("busy readers: \(entries) entries added by 20 writers while 4 readers and 2 streams ran")
        #expect(entries > 0)
        #expect(d.stop() == 0)
    }

    @Test("a slow Changes reader during 50,000 writes: the WAL stays bounded and checkpoints complete")
    func slowStream() throws {
        let d = try Daemon()
        let slow = try d.connect()
        try slow.send(
            VarlinkCall(
                method: "io.entryd.Sync.Changes", parameters: .object([("since", .int(0)), ("limit", .int(100))]),
                more: true))
        _ = try slow.receive()
        let writer = try d.connect()
        var largestWAL = 0
        for batch in 0..<100 {
            let rows = (0..<500).map { Self.row(batch * 500 + $0) }
            let r = try writer.call("io.entryd.Entries.Import", .object([("entries", .array(rows))]))
            #expect(r["added"]?.intValue == 500)
            if batch % 10 == 0 { _ = try slow.receive() }  // the slow reader takes a page now and then
            let size = (try? FileManager.default.attributesOfItem(atPath: d.database + "-wal")[.size] as? Int) ?? 0
            largestWAL = max(largestWAL, size)
        }
        print("slow stream: largest WAL \(largestWAL / 1024) KiB during 50,000 writes")
        #expect(largestWAL < 64 << 20, "the WAL grew to \(largestWAL) bytes")
        #expect(try writer.call("io.entryd.Sync.Status")["entries"]?.intValue == 50_000)
        slow.close()
        #expect(d.stop() == 0)
    }
}
