import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// Issue 8: exporting 200,000 entries keeps both processes' memory bounded.
@Suite(.serialized) struct ExportMemoryTests {
    /// Largest resident size entryctl may reach while exporting (VmHWM), in KiB: 64 MiB.
    /// Holding 200,000 entries as JSON would take several hundred MiB.
    static let entryctlLimitKiB = 64 << 10
    /// Largest growth of entryd's resident size during the export, in KiB: 64 MiB.
    static let entrydGrowthLimitKiB = 64 << 10

    /// `VmRSS` and `VmHWM` of process `pid` in KiB, from /proc/PID/status; nil once it is gone.
    static func memory(_ pid: Int32) -> (rss: Int, hwm: Int)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        func value(_ key: String) -> Int? {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }) else { return nil }
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        guard let rss = value("VmRSS"), let hwm = value("VmHWM") else { return nil }
        return (rss, hwm)
    }

    /// Fills a new database at `path` with `count` entries (every tenth deleted):
    /// 20,000 canonical entries stored through ``EntryStore``, then copies of
    /// them under new ids (the time prefix of the id replaced) straight into the
    /// entries table, which is all that List and so export read. Far faster than
    /// importing through a debug daemon; the import path has its own tests and
    /// `scripts/measure-data` measures its rate.
    static func seed(_ path: String, count: Int) throws {
        let base = 20_000
        precondition(count % base == 0, "count is a multiple of 20,000")
        do {
            let store = try EntryStore(path: path, readers: 1)
            defer { store.close() }
            try seedStore(store, count: base)
        }
        let db = try SQLiteConnection(path: path)
        try db.execute("BEGIN")
        for copy in 1..<(count / base) {
            try db.statement(
                """
                INSERT INTO entries SELECT printf('%08x', ?) || substr(id, 9), form, fields, clocks, version, deleted,
                  deleted_clock, created_at, updated_at, created_by, updated_by, name, name_folded, birthday, country,
                  province, city, seq, appointment, name_order FROM entries WHERE substr(id, 1, 8) NOT GLOB '0000000*'
                """
            ).run([.int(Int64(copy))])
        }
        try db.execute("COMMIT")
    }

    /// `count` canonical entries through the store's Import path.
    static func seedStore(_ store: EntryStore, count: Int) throws {
        let regions = [("440000", "440100"), ("440000", "440300"), ("330000", "330100"), ("320000", "320100")]
        for start in stride(from: 0, to: count, by: 10_000) {
            let rows = (start..<min(count, start + 10_000)).map { i -> ImportRow in
                let (province, city) = regions[i % regions.count]
                var fields = [
                    "name": "用户\(i)号",
                    "birthday": String(format: "%04d-%02d-%02d", 1940 + i % 80, 1 + i % 12, 1 + i % 28),
                    "country": "CN", "province": province, "city": city,
                ]
                if i % 2 == 0 {
                    fields["contact_method"] = "phone"
                    fields["phone"] = String(format: "+86139%08d", i)
                } else {
                    fields["contact_method"] = "email"
                    fields["email"] = "user\(i)@example.com"
                }
                if i % 3 == 0 { fields["appointment"] = "2036-12-01 09:30" }
                return ImportRow(index: i - start, id: nil, fields: fields, deleted: i % 10 == 0, problems: [])
            }
            let result = try store.importEntries(
                form: "registration", rows: rows, layout: .registration, atomic: true,
                origin: WriteOrigin(actor: "seed"))
            guard result.added == rows.count else {
                throw HarnessError("seeding stored \(result.added) of \(rows.count)")
            }
        }
    }

    @Test("exporting 200,000 entries keeps entryctl under 64 MiB and entryd within 64 MiB of its size before")
    func exportMemoryIsBounded() throws {
        let directory = NSTemporaryDirectory() + "entryd-e2e-" + String(UUID().uuidString.prefix(8))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.seed(directory + "/entries.db", count: 200_000)
        let d = try Daemon(directory: directory)
        #expect(try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 180_000)

        let daemonPID = try #require(d.process?.processIdentifier)
        let before = try #require(Self.memory(daemonPID))
        var daemonPeak = before.rss

        let output = d.directory + "/export.jsonl"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: productsDirectory() + "/entryctl")
        p.arguments = ["--socket", d.socket, "export", "--include-deleted", "-o", output]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        let exportStart = ProgressClock.now()
        try p.run()
        var clientPeak = 0
        while p.isRunning {
            if let m = Self.memory(p.processIdentifier) { clientPeak = max(clientPeak, m.hwm) }
            if let m = Self.memory(daemonPID) { daemonPeak = max(daemonPeak, m.rss) }
            usleep(20_000)
        }
        p.waitUntilExit()
        let exportSeconds = ProgressClock.now() - exportStart
        #expect(p.terminationStatus == 0)
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").count
        #expect(lines == 200_000)
        #expect(clientPeak > 0 && clientPeak < Self.entryctlLimitKiB, "entryctl peaked at \(clientPeak) KiB")
        #expect(
            daemonPeak - before.rss < Self.entrydGrowthLimitKiB, "entryd grew from \(before.rss) to \(daemonPeak) KiB")
        print(
            String(
                format:
                    "ExportMemoryTests: exported 200,000 entries in %.1f s (%.0f/s); entryctl peak %d KiB, entryd %d → %d KiB",
                exportSeconds, 200_000 / exportSeconds, clientPeak, before.rss, daemonPeak))
        #expect(d.stop() == 0)
    }
}
