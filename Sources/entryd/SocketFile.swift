@preconcurrency import Glibc
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync
import EntryServer

/// Binding the listening socket file, with stale-file recovery.
enum SocketFile {
    /// Another process accepts connections on the path.
    struct InUse: Error { let path: String }

    /// Binds `path` with `mode` (`socket-mode`, default 0660). A socket file left by a crashed daemon
    /// (connect is refused) is removed first; a live one is never touched.
    /// - Throws: ``InUse`` when something answers on the path; ``SystemError``
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
                throw InUse(path: path)
            } catch let e as SystemError where e.errno == ECONNREFUSED {
                log.notice("removing stale socket '\(path)' left by an earlier run")
                unlink(path)
            }
        }
        return try UnixSocket.listen(path: path, mode: mode)
    }
}
