@preconcurrency import Glibc
import CSystem
import EntryModel
import EntryServer

/// A client's socket credentials (SO_PEERCRED, unix(7)) mapped to a caller with a role.
enum SocketCredentials {
    /// The uid entryd runs as: that user is always admin.
    static let daemonUID = getuid()

    /// Who is on the other end of `fd`, with the roles `access` grants and
    /// whether it is a gateway (`[roles] gateway`): the
    /// user name from getpwuid_r(3), groups from getgrouplist(3). A socket
    /// without credentials (never on Linux AF_UNIX) gets no role.
    static func caller(of fd: Int32, access: AccessPolicy) -> Caller {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
        guard csystem_socket_credentials(fd, &pid, &uid, &gid) == 0 else {
            return Caller(pid: 0, uid: UInt32.max, gid: UInt32.max, userName: "unknown", role: .none)
        }
        let name = Accounts.userName(uid)
        let groups = Accounts.groupNames(userName: name, gid: gid)
        let roles = access.roles(uid: uid, userName: name, groups: groups, daemonUID: daemonUID)
        return Caller(
            pid: pid, uid: uid, gid: gid, userName: name, roles: roles,
            isGateway: access.isGateway(userName: name, groups: groups))
    }
}
