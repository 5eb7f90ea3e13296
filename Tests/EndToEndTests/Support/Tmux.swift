@preconcurrency import Glibc
import Foundation

/// A private tmux server (its own socket file) running one command in an
/// 80×24 window: keys go in with `send-keys`, the screen comes out with
/// `capture-pane`. tmux is a Debian package that `scripts/setup` installs.
final class Tmux {
    /// Where tmux is looked for.
    static let binary = ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    let socket: String
    private let tmux: String

    /// Starts `command` (a shell command line) in a detached session of
    /// `width`×`height`, with UTF-8 forced (`-u`) and `environment` added.
    init(socket: String, command: String, width: Int = 80, height: Int = 24, environment: [String: String]) throws {
        guard let tmux = Self.binary else { throw HarnessError("tmux is not installed; run scripts/setup") }
        self.tmux = tmux
        self.socket = socket
        let exports = environment.map { "\($0.key)='\($0.value)'" }.sorted().joined(separator: " ")
        try run([
            "-u", "-f", "/dev/null", "new-session", "-d", "-x", String(width), "-y", String(height),
            "env \(exports) \(command)",
        ])
    }

    /// Runs tmux with `arguments` on this server and returns its stdout.
    @discardableResult
    func run(_ arguments: [String]) throws -> String {
        let (status, out, err) = try Self.spawn(
            tmux, ["-S", socket] + arguments,
            environment: ["LANG=C.UTF-8", "TERM=xterm-256color", "PATH=/usr/bin:/bin"])
        guard status == 0 else { throw HarnessError("tmux \(arguments) failed (\(status)): \(err)") }
        return out
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), found at run
    /// time because Swift does not import it without `_GNU_SOURCE`.
    static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(
            symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Runs `path` with posix_spawn, every descriptor above stderr closed in
    /// the child, output to temporary files, and waits (at most 10 s).
    ///
    /// Not Foundation's `Process`: the tmux server forks off the first client
    /// and would inherit that client's descriptors — Process's pipes, and the
    /// socket it watches to learn that the child exited — so the wait for the
    /// client never ends; it would also inherit descriptors of processes that
    /// tests running in parallel started.
    static func spawn(_ path: String, _ arguments: [String], environment: [String]) throws -> (Int32, String, String) {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let outPath = scratch.url.path + "/out"
        let errPath = scratch.url.path + "/err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard let closeFrom = Self.addCloseFrom else {
            throw HarnessError("glibc lacks posix_spawn_file_actions_addclosefrom_np (2.34+)")
        }
        _ = closeFrom(&actions, 3)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        // The test runner's threads may block or ignore signals; the server and
        // the command in it must start with none blocked and all at default, or
        // the SIGHUP of kill-server would not end them.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw HarnessError("posix_spawn \(path): errno \(rc)") }
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(10)
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Date() > deadline {
                Glibc.kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                throw HarnessError("\(path) \(arguments) did not finish within 10 s")
            }
            usleep(2_000)
        }
        let code = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return (
            code, (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
            (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        )
    }

    /// Types `text` literally (UTF-8 as it is).
    func type(_ text: String) throws { try run(["send-keys", "-l", text]) }

    /// Presses named keys (`Tab`, `BTab`, `Enter`, `Space`, `Down`, `Escape` …).
    func press(_ keys: String...) throws { try run(["send-keys"] + keys) }

    /// The screen's text, one string per row.
    func screen() throws -> [String] {
        try run(["capture-pane", "-p"]).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// Waits until `condition` holds for the screen (polling every 30 ms).
    /// - Throws: ``HarnessError`` with the last screen after `timeout` seconds.
    @discardableResult
    func waitFor(_ what: String, timeout: Double = 10, _ condition: ([String]) -> Bool) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var last: [String] = []
        while Date() < deadline {
            last = (try? screen()) ?? []
            if condition(last) { return last }
            usleep(30_000)
        }
        throw HarnessError("timed out waiting for \(what); screen:\n" + last.joined(separator: "\n"))
    }

    /// Waits until some row contains `text`.
    @discardableResult
    func waitFor(text: String, timeout: Double = 10) throws -> [String] {
        try waitFor("'\(text)'", timeout: timeout) { $0.contains { $0.contains(text) } }
    }

    /// Stops the server (and the command, if still running).
    func kill() {
        _ = try? run(["kill-server"])
    }

    deinit { kill() }
}
