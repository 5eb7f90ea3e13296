import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync

/// Who is calling: the client process of a connection, from SO_PEERCRED (unix(7)).
package struct Caller: Sendable, Equatable {
    /// The client's process id (SO_PEERCRED).
    package var pid: Int32
    /// The client's user id.
    package var uid: UInt32
    /// The client's primary group id.
    package var gid: UInt32
    /// The user name of `uid` (getpwuid_r), or the number as text when unknown.
    /// Recorded as the actor of every change the caller makes.
    package var userName: String
    /// What the caller may do (``AccessPolicy``), fixed when the connection
    /// is accepted: the roles `[roles]` gives it, none including another
    /// (``Role/strongest(_:)``), usually one; `[.none]` for none at all.
    package var roles: [Role]
    /// True for a gateway (entryd-web; `[roles] gateway`): its role is `admin`
    /// except for ``Method/isPeerOnly``, and its calls may name the web user
    /// they act for (`actor`, recorded as `web:NAME`).
    package var isGateway: Bool

    /// A caller with its credentials and roles (``Role/strongest(_:)`` of
    /// them is kept; `[.none]` when that leaves nothing); not a gateway unless `isGateway`.
    package init(pid: Int32, uid: UInt32, gid: UInt32, userName: String, roles: [Role], isGateway: Bool = false) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.userName = userName
        let strongest = Role.strongest(roles)
        self.roles = strongest.isEmpty ? [.none] : strongest
        self.isGateway = isGateway
    }

    /// A caller with its credentials and one role; not a gateway unless `isGateway`.
    package init(pid: Int32, uid: UInt32, gid: UInt32, userName: String, role: Role, isGateway: Bool = false) {
        self.init(pid: pid, uid: uid, gid: gid, userName: userName, roles: [role], isGateway: isGateway)
    }

    /// Whether one of the caller's roles allows `method` (``Role/allows(_:)``).
    package func allows(_ method: Method) -> Bool {
        roles.contains { $0.allows(method) }
    }

    /// Whether `Status` shows the caller the database and peer addresses (``Role/seesLocations``).
    package var seesLocations: Bool {
        roles.contains(where: \.seesLocations)
    }

    /// The roles as logged: `read`, or `submit+read` for a caller named in both.
    package var roleNames: String {
        roles.map(\.name).joined(separator: "+")
    }
}
