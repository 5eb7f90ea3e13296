import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// Where the built executables are: `$ENTRYD_BIN_DIR`, else the directory of
/// the running test bundle (SwiftPM puts products and tests side by side).
func productsDirectory() -> String {
    if let dir = ProcessInfo.processInfo.environment["ENTRYD_BIN_DIR"], !dir.isEmpty { return dir }
    var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    while url.path != "/" {
        url.deleteLastPathComponent()
        if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("entryd").path) { return url.path }
    }
    return ".build/debug"
}

/// What a finished process left: exit status and its whole output.
typealias ProcessResult = EntryctlProcess.Outcome

/// Runs an executable to completion with `input` on stdin, in the current
/// directory and (by default) environment; see ``EntryctlProcess/run(executable:_:environment:directory:timeout:input:)``.
func runProcess(
    _ path: String, _ arguments: [String], environment: [String: String]? = nil,
    input: String? = nil, timeout: Double = 30
) throws -> ProcessResult {
    try EntryctlProcess.run(
        executable: path, arguments, environment: environment ?? ProcessInfo.processInfo.environment,
        directory: URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
        timeout: timeout, input: input)
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// A real `entryd` process on a temporary socket and database.
final class Daemon: @unchecked Sendable {
    let directory: String
    let socket: String
    let database: String
    private(set) var process: Process?
    /// The daemon's stderr (its log), appended across restarts.
    var logPath: String { directory + "/entryd.log" }
    let extraArguments: [String]
    /// Set for the daemon on top of the test process's environment.
    let environment: [String: String]
    /// The process id while it runs (-1 before the first start).
    var pid: Int32 { process?.processIdentifier ?? -1 }
    /// Whether the process runs.
    var isRunning: Bool { process?.isRunning ?? false }

    /// Starts entryd and waits until its socket answers.
    /// - Parameters:
    ///   - database: `--db`; default `entries.db` in the directory (a PostgreSQL URI for a hub instance).
    ///   - environment: variables set for the daemon (e.g. `NOTIFY_SOCKET`).
    init(
        directory: String? = nil, arguments: [String] = [], database: String? = nil, environment: [String: String] = [:]
    ) throws {
        let dir = directory ?? (NSTemporaryDirectory() + "entryd-e2e-" + String(UUID().uuidString.prefix(8)))
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        self.directory = dir
        socket = dir + "/entryd.sock"
        self.database = database ?? dir + "/entries.db"
        extraArguments = arguments
        self.environment = environment
        try start()
    }

    /// (Re)starts the daemon on the same socket and database.
    func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: productsDirectory() + "/entryd")
        // --config /dev/null: the embedded defaults, whatever /etc/entryd holds on this machine
        // (a later --config in extraArguments wins). --state-directory: a hub instance's
        // marker file in the test's directory, never in the user's ~/.local/state/entryd.
        p.arguments =
            ["--config", "/dev/null", "--socket", socket, "--db", database, "--state-directory", directory]
            + extraArguments
        if !environment.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        if !FileManager.default.fileExists(atPath: logPath) { try Data().write(to: URL(fileURLWithPath: logPath)) }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        // The child has its own copy once started: ours is closed on every way out.
        defer { try? log.close() }
        log.seekToEndOfFile()
        p.standardError = log
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        process = p
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let c = try? VarlinkConnection(path: socket) {
                c.close()
                return
            }
            if !p.isRunning {
                let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                throw HarnessError("entryd exited with status \(p.terminationStatus) before listening: \(text)")
            }
            usleep(20_000)
        }
        throw HarnessError("entryd did not listen on \(socket) within 20 s")
    }

    /// A new client connection.
    func connect() throws -> VarlinkConnection { try VarlinkConnection(path: socket) }

    /// Runs the built `entryctl` against this daemon.
    func entryctl(_ arguments: [String], input: String? = nil) throws -> ProcessResult {
        try runProcess(productsDirectory() + "/entryctl", ["--socket", socket] + arguments, input: input)
    }

    /// Sends SIGTERM and waits for the exit.
    /// - Returns: the exit status.
    @discardableResult
    func stop(signal: Int32 = SIGTERM) -> Int32 {
        guard let p = process else { return -1 }
        if p.isRunning { kill(p.processIdentifier, signal) }
        // Also for a daemon that exited on its own: waitUntilExit() is what lets
        // swift-corelibs-foundation free a finished Process.
        p.waitUntilExit()
        return p.terminationStatus
    }

    deinit {
        if let p = process {
            if p.isRunning { kill(p.processIdentifier, SIGKILL) }
            p.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
