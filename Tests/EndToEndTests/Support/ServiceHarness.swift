import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// A datagram socket the test binds as `NOTIFY_SOCKET`, to read what entryd
/// tells its service manager (sd_notify(3)), as systemd would.
final class NotifySocket {
    /// The value for `NOTIFY_SOCKET`: an abstract name (`@…`), as systemd uses.
    let name: String
    private let fd: Int32

    init() throws {
        name = "@entryd-test-notify-" + UUID().uuidString.prefix(12)
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = [UInt8(0)] + Array(name.utf8.dropFirst())
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard rc == 0 else {
            close(fd)
            throw SystemError("bind", detail: name)
        }
    }

    deinit { close(fd) }

    /// One message, split in its `KEY=VALUE` lines, with the time it arrived; `nil` after `timeout` seconds.
    func receive(timeout: Double) -> (lines: [String], at: Date)? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        return (String(decoding: buffer[..<n], as: UTF8.self).split(separator: "\n").map(String.init), Date())
    }

    /// Reads messages until one has `line`; returns it and every message before it.
    func wait(for line: String, timeout: Double = 20) -> (found: [String]?, before: [[String]]) {
        let deadline = Date().addingTimeInterval(timeout)
        var before: [[String]] = []
        while let m = receive(timeout: max(0, deadline.timeIntervalSinceNow)) {
            if m.lines.contains(line) { return (m.lines, before) }
            before.append(m.lines)
        }
        return (nil, before)
    }
}

/// An `entryd` (or a wrapper that execs it) started with a chosen environment;
/// its stderr goes to a file the test can read while it runs.
final class ServiceProcess {
    let process = Process()
    let stderrPath: String

    /// - Parameters:
    ///   - executable: the program (entryd, or e.g. systemd-socket-activate).
    ///   - environment: added to the test's environment.
    init(executable: String, arguments: [String], environment: [String: String], directory: String) throws {
        stderrPath = directory + "/stderr.log"
        try Data().write(to: URL(fileURLWithPath: stderrPath))
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            .filter {
                !["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "WATCHDOG_USEC", "WATCHDOG_PID"].contains($0.key)
                    || environment[$0.key] != nil
            }
        process.standardOutput = FileHandle.nullDevice
        let log = FileHandle(forWritingAtPath: stderrPath)
        // The child has its own copy once started: ours is closed on every way out.
        defer { try? log?.close() }
        process.standardError = log
        try process.run()
    }

    var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    func signal(_ s: Int32) { kill(process.processIdentifier, s) }

    /// Sends SIGTERM and waits up to `timeout` seconds; returns the exit status (nil: still running, killed).
    func stop(timeout: Double = 20) -> Int32? {
        signal(SIGTERM)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            signal(SIGKILL)
            process.waitUntilExit()
            return nil
        }
        // Returns at once; lets swift-corelibs-foundation free the finished Process.
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        guard process.processIdentifier > 0 else { return }  // never started (run() threw)
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// A temporary directory, world-traversable (tests run clients as `nobody`).
func serviceTestDirectory(_ label: String) throws -> String {
    let dir = "/tmp/entryd-\(label)-" + UUID().uuidString.prefix(8)
    try FileManager.default.createDirectory(
        atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
    return dir
}

/// Connects to `path`, retrying until `timeout` seconds pass.
func connectWhenListening(_ path: String, timeout: Double = 20) throws -> VarlinkConnection {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if let c = try? VarlinkConnection(path: path) { return c }
        if Date() > deadline { throw HarnessError("nothing listens on \(path) after \(timeout) s") }
        usleep(20_000)
    }
}

/// The package root (for the Makefile, config/ and systemd/).
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

/// The full path of a program on `PATH`, or `nil`.
func which(_ program: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    let directories: [String] = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin"]
    for dir in directories {
        let path = "\(dir)/\(program)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}
