import Foundation

/// A child process started with `posix_spawn` and reaped with `waitpid`, for
/// the phases whose timing must not wait on Foundation's `Process` (its
/// `waitUntilExit` polls every 50 ms) and whose children must be killable by pid.
final class ChildProcess {
    /// The child's process id.
    let pid: pid_t
    private var reaped = false

    /// Starts `path` with `arguments` (argv[1...]); stdout and stderr go to
    /// `output` (appended; `/dev/null` when `nil`), stdin is `/dev/null`.
    /// - Throws: ``BenchFailure`` when the spawn fails.
    init(_ path: String, _ arguments: [String], output: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, path, &actions, nil, argv, environ)
        guard rc == 0 else { throw BenchFailure("cannot start \(path): \(String(cString: strerror(rc)))") }
        pid = child
    }

    /// Waits for the exit. - Returns: the exit status (128 + signal when killed).
    @discardableResult
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        reaped = true
        // WIFEXITED / WEXITSTATUS / WTERMSIG by hand: the macros are not imported.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Kills the child with SIGKILL and reaps it (nothing when already reaped).
    func kill() {
        guard !reaped else { return }
        Glibc.kill(pid, SIGKILL)
        wait()
    }

    deinit { kill() }
}
