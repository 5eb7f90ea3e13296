import EntryModel
import EntryProtocol
import EntryLedger
import Foundation

/// The `entryd` under test: a child process on a socket and database in the
/// bench's temporary directory.
final class DaemonProcess {
    let executable: String
    let socket: String
    let database: String
    let logPath: String
    /// The bench's temporary directory, the daemon's state directory too.
    let directory: String
    /// Arguments after `--socket` and `--db` (`--config FILE`).
    let extraArguments: [String]
    private(set) var process: Process?
    /// Seconds from spawn until the socket accepted a connection (the last start).
    private(set) var startupSeconds = 0.0

    init(executable: String, directory: String, name: String, extraArguments: [String] = []) {
        self.executable = executable
        self.extraArguments = extraArguments
        self.directory = directory
        socket = directory + "/\(name).sock"
        database = directory + "/\(name).db"
        logPath = directory + "/\(name).log"
    }

    /// Starts entryd and waits until its socket answers (up to `timeout` seconds, 120 by default).
    /// - Throws: ``BenchFailure`` when it exits or does not listen in time.
    func start(timeout: Double = 120) throws {
        // Appends, so a restart keeps the first run's log.
        if !FileManager.default.fileExists(atPath: logPath) {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        let log = FileHandle(forWritingAtPath: logPath)
        // The child has its own copy once started: ours is closed on every way out.
        defer { try? log?.close() }
        log?.seekToEndOfFile()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        // --state-directory: a hub instance's marker file in the bench's directory,
        // removed with it, not in the user's ~/.local/state/entryd.
        p.arguments = ["--socket", socket, "--db", database, "--state-directory", directory] + extraArguments
        p.standardError = log
        p.standardOutput = FileHandle.nullDevice
        let t0 = now()
        try p.run()
        process = p
        while now() - t0 < timeout {
            if let fd = try? UnixSocket.connect(path: socket) {
                close(fd)
                startupSeconds = now() - t0
                return
            }
            if !p.isRunning {
                throw BenchFailure("entryd exited with status \(p.terminationStatus) before listening; see \(logPath)")
            }
            usleep(500)
        }
        throw BenchFailure("entryd did not listen on \(socket) within \(Int(timeout)) s")
    }

    /// The daemon's process id while it runs, or `nil`.
    var pid: pid_t? { process.flatMap { $0.isRunning ? $0.processIdentifier : nil } }

    /// CPU time the daemon has spent since start, in seconds, user and system
    /// (`utime` and `stime`, fields 14 and 15 of `/proc/PID/stat`), or `nil`.
    var cpuSeconds: (user: Double, system: Double)? { pid.flatMap(processCPUSeconds) }

    /// Current resident set size of the daemon in bytes (`VmRSS`), or `nil`.
    var residentBytes: Int? { status("VmRSS:") }
    /// Peak resident set size since start in bytes (`VmHWM`), or `nil`.
    var peakResidentBytes: Int? { status("VmHWM:") }

    private func status(_ key: String) -> Int? {
        guard let pid = process?.processIdentifier,
            let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(key) {
            let kb = line.split(separator: " ").compactMap { Int($0) }.first
            return kb.map { $0 * 1024 }
        }
        return nil
    }

    /// Sends SIGTERM and waits for the exit.
    func stop() {
        guard let p = process else { return }
        if p.isRunning { kill(p.processIdentifier, SIGTERM) }
        // Also for one that exited (or was killed): only waitUntilExit() lets
        // swift-corelibs-foundation free a finished Process.
        p.waitUntilExit()
    }

    deinit {
        if let p = process {
            if p.isRunning { kill(p.processIdentifier, SIGKILL) }
            p.waitUntilExit()
        }
    }
}

/// A phase could not run; the message says why.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// CPU time process `pid` has spent, in seconds, user and system (`utime`
/// and `stime`, fields 14 and 15 of `/proc/PID/stat`), or `nil`.
func processCPUSeconds(_ pid: pid_t) -> (user: Double, system: Double)? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return nil }
    // After the command name: field 3 (state) is index 0, so field k is index k - 3.
    let f = text[text.index(after: close)...].split(separator: " ")
    guard f.count > 12, let user = Double(f[11]), let system = Double(f[12]) else { return nil }
    let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
    return (user / hz, system / hz)
}
