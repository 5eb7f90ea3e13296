@preconcurrency import Glibc
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync

/// Maps a connection's caller (SO_PEERCRED, unix(7)) to its roles: the
/// `[roles]` section of `entryd.conf` (doc/design.md "Security and limits").
///
/// Rules, in order:
/// 1. a caller named in `gateway` (user or one of its groups) is a gateway
///    (``isGateway(userName:groups:)``) with the role `admin`, which entryd
///    narrows by ``Method/isPeerOnly``; this comes before rule 2, so root
///    or the daemon's own user can be named a gateway too;
/// 2. root (uid 0) and the daemon's own uid are `admin`;
/// 3. otherwise every role that names the user (`alice`) or one of the
///    user's groups, primary or supplementary (`@staff`), less those another
///    of them includes (``Role/strongest(_:)``): `read` and `write` give
///    `write`; `read` and `submit` give both, so the caller may call what
///    either allows, and never more;
/// 4. otherwise ``defaultRole`` (`default-role`, default `read`).
///
/// The default is `read` because the socket itself is the first gate: it is
/// `0660`, group `entryd`, so only root and members of group `entryd` can
/// connect at all. Set `default-role = none` to require an explicit grant.
package struct AccessPolicy: Sendable, Equatable {
    /// Principals named in `submit`, `read`, `write` and `admin`: user names,
    /// and group names with a leading `@`. A principal in several roles gets
    /// what each allows.
    var grants: [Role: [String]] = [:]
    /// The role of a caller named nowhere (`default-role`). Default `.read`;
    /// `.none` refuses every call.
    var defaultRole: Role = .read
    /// Principals named in `gateway` (entryd-web): user names and `@group` names.
    var gateways: [String] = []

    /// - Parameters:
    ///   - grants: principals by role (user names, `@group` names). Default none.
    ///   - defaultRole: the role of callers named nowhere. Default `.read`.
    ///   - gateways: principals that are gateways (`gateway`). Default none.
    package init(grants: [Role: [String]] = [:], defaultRole: Role = .read, gateways: [String] = []) {
        self.grants = grants
        self.defaultRole = defaultRole
        self.gateways = gateways
    }

    /// Whether `principals` name the user or one of its groups (`@group`).
    private static func names(_ principals: [String], userName: String, groups: [String]) -> Bool {
        principals.contains { p in p.hasPrefix("@") ? groups.contains(String(p.dropFirst())) : p == userName }
    }

    /// Whether a caller is a gateway: `gateway` names the user or one of its groups.
    ///
    /// - Parameters:
    ///   - userName: The caller's user name.
    ///   - groups: Names of the caller's groups: primary and supplementary.
    package func isGateway(userName: String, groups: [String]) -> Bool {
        Self.names(gateways, userName: userName, groups: groups)
    }

    /// The roles of a caller: one, or `read` and `submit` when both name it
    /// (and nothing that includes them); `[.none]` under `default-role = none`.
    ///
    /// - Parameters:
    ///   - uid: The caller's user id.
    ///   - userName: The name of `uid` (or the number as text when it has none).
    ///   - groups: Names of the caller's groups: primary and supplementary.
    ///   - daemonUID: The uid the daemon runs as (that user is always admin).
    /// A gateway's role is `admin` (see ``isGateway(userName:groups:)``).
    package func roles(uid: UInt32, userName: String, groups: [String], daemonUID: UInt32) -> [Role] {
        if isGateway(userName: userName, groups: groups) { return [.admin] }
        if uid == 0 || uid == daemonUID { return [.admin] }
        let named = grants.filter { Self.names($0.value, userName: userName, groups: groups) }.map(\.key)
        return named.isEmpty ? [defaultRole] : Role.strongest(named)
    }
}

/// A caller's identity as the system names it: user name and group names.
package enum Accounts {
    /// The name of `uid` (getpwuid_r(3)), or the number as text when there is none.
    package static func userName(_ uid: UInt32) -> String {
        var pwd = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        if getpwuid_r(uid, &pwd, &buffer, buffer.count, &result) == 0, let p = result, let name = p.pointee.pw_name {
            return String(cString: name)
        }
        return String(uid)
    }

    /// The names of the groups of a user: `gid` (the caller's primary group from
    /// SO_PEERCRED) and the supplementary groups of `userName` from the group
    /// database (getgrouplist(3)); a gid without a name appears as its number.
    ///
    /// The supplementary groups are those of the account, not of the calling
    /// process (SO_PEERCRED carries no supplementary groups), as polkit and
    /// D-Bus policies do it.
    package static func groupNames(userName: String, gid: UInt32) -> [String] {
        var count: Int32 = 64
        var gids = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(userName, gid, &gids, &count) < 0 {
            gids = [gid_t](repeating: 0, count: Int(count))
            if getgrouplist(userName, gid, &gids, &count) < 0 { count = 0 }
        }
        var all = [gid] + gids.prefix(Int(max(count, 0)))
        var seen = Set<UInt32>()
        all = all.filter { seen.insert($0).inserted }
        return all.map(groupName)
    }

    /// The name of `gid` (getgrgid_r(3)), or the number as text.
    static func groupName(_ gid: UInt32) -> String {
        var grp = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 65536)
        if getgrgid_r(gid, &grp, &buffer, buffer.count, &result) == 0, let g = result, let name = g.pointee.gr_name {
            return String(cString: name)
        }
        return String(gid)
    }
}
