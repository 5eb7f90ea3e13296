@preconcurrency import Glibc
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync
import EntryServer

/// Another process accepts connections on the socket path.
struct SocketInUse: Error { let path: String }

/// Binding the listening socket file, with stale-file recovery.
enum SocketFile {
    /// Binds `path` with `mode` (`socket-mode`, default 0660). A socket file left by a crashed daemon
    /// (connect is refused) is removed first; a live one is never touched.
    /// - Throws: ``SocketInUse`` when something answers on the path; ``SystemError``
    ///   when the path exists and is not a socket, or bind/listen fail.
    static func bind(path: String, mode: mode_t = 0o660, log: Log) throws -> Int32 {
        var st = stat()
        if lstat(path, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFSOCK else {
                throw SystemError("bind", errno: EEXIST, detail: path + " (exists and is not a socket)")
            }
            do {
                let fd = try UnixSocket.connect(path: path)
                close(fd)
                throw SocketInUse(path: path)
            } catch let e as SystemError where e.errno == ECONNREFUSED {
                log.notice("removing stale socket '\(path)' left by an earlier run")
                unlink(path)
            }
        }
        return try UnixSocket.listen(path: path, mode: mode)
    }
}

/// The socket entryd listens on: the one systemd passed (socket activation),
/// or one bound here to the configured path.
struct ListeningSocket: Sendable {
    /// The listening descriptor.
    let fd: Int32
    /// The path it is bound to, for the log.
    let path: String
    /// Whether systemd passed it (then it belongs to `entryd.socket`).
    let activated: Bool

    /// Takes the socket systemd passed, or binds `settings.socketPath` with its
    /// `socket-mode` (``SocketFile/bind(path:mode:log:)``).
    /// - Throws: ``StartupFailure``: `unavailable` (69) when another entryd
    ///   serves the path; `cantCreate` (73) when the passed descriptor is not a
    ///   listening socket or the path cannot be bound.
    static func open(settings: DaemonSettings, environment: [String: String], log: Log) throws(StartupFailure)
        -> ListeningSocket
    {
        let passed: Int32?
        do {
            passed = try SocketActivation.takeListeningSocket(environment: environment, log: log)
        } catch {
            throw StartupFailure(.cantCreate, "\(error)")
        }
        if let fd = passed {
            return ListeningSocket(fd: fd, path: SocketActivation.boundPath(fd), activated: true)
        }
        let path = settings.socketPath
        do {
            let fd = try SocketFile.bind(path: path, mode: mode_t(settings.config.socketMode), log: log)
            return ListeningSocket(fd: fd, path: path, activated: false)
        } catch let e as SocketInUse {
            throw StartupFailure(
                .unavailable, "another entryd is already serving '\(e.path)'; stop it first or choose another --socket")
        } catch {
            throw StartupFailure(.cantCreate, "cannot listen on '\(path)': \(error)")
        }
    }

    /// Removes the socket file this run bound. A socket systemd passed is left
    /// alone: it belongs to `entryd.socket` and stays for the next activation.
    func release() {
        if !activated { unlink(path) }
    }
}
