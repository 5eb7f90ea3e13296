import EntryCore
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

    @Test("exporting 200,000 entries keeps entryctl under 64 MiB and entryd within 64 MiB of its size before")
    func exportMemoryIsBounded() throws {
        let d = try Daemon()
        let input = d.directory + "/200k.jsonl"
        try DataFixtures.jsonLines(count: 200_000).write(toFile: input, atomically: true, encoding: .utf8)
        let importStart = ProgressClock.now()
        let imported = try runProcess(productsDirectory() + "/entryctl", ["--socket", d.socket, "--json", "import", input], timeout: 900)
        let importSeconds = ProgressClock.now() - importStart
        try #require(imported.status == 0, "\(imported.stderr)")
        #expect(try JSON.parse(imported.stdout)["added"]?.intValue == 200_000)
        try FileManager.default.removeItem(atPath: input)

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
        #expect(daemonPeak - before.rss < Self.entrydGrowthLimitKiB, "entryd grew from \(before.rss) to \(daemonPeak) KiB")
        print(String(format: "ExportMemoryTests: 200,000 entries: import %.1f s (%.0f/s), export %.1f s (%.0f/s); entryctl peak %d KiB, entryd %d → %d KiB",
                     importSeconds, 200_000 / importSeconds, exportSeconds, 200_000 / exportSeconds, clientPeak, before.rss, daemonPeak))
        #expect(d.stop() == 0)
    }
}
