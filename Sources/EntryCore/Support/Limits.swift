/// Every resource a client can make the daemon allocate has a named limit here
/// (configuration keys in parentheses; `config/entryd.conf` documents them).
public struct Limits: Sendable, Equatable {
    /// Largest message, in bytes before its NUL (`max-message-size`). Default 4 MiB; 4 KiB…64 MiB.
    public var maxMessageBytes = 4 << 20
    /// Simultaneous client connections (`max-connections`). Default 1024; 1…65536.
    public var maxConnections = 1024
    /// Seconds a connection may stay silent between calls before it is closed
    /// (`idle-timeout`); an open `Changes` stream is exempt. Default 300; 1…86400.
    public var idleTimeoutSeconds = 300
    /// Rows in one Import or changes in one Apply (`max-batch`). Default 10,000; 1…1,000,000.
    public var maxBatch = 10_000
    /// How far ahead of the local clock a received change may be, in milliseconds
    /// (`max-clock-skew`). Default 5 minutes.
    public var maxClockSkewMs = 5 * 60 * 1000
    /// Seconds to wait for a peer's reply during a sync before it counts as
    /// unreachable (`peer-timeout`). Default 30; 1…3600.
    public var peerTimeoutSeconds = 30
    /// Entries in one List page (the `limit` parameter is clamped to it). Fixed at 1000.
    public var maxPageSize = 1000

    /// The defaults above (the embedded defaults of `entryd.conf`).
    public init() {}

    /// The limits by configuration key, as `Status` reports them.
    public var byKey: [(String, Int)] {
        [("max-message-size", maxMessageBytes), ("max-connections", maxConnections),
         ("idle-timeout", idleTimeoutSeconds), ("max-batch", maxBatch), ("max-clock-skew", maxClockSkewMs / 1000), ("peer-timeout", peerTimeoutSeconds),
         ("max-page-size", maxPageSize)]
    }
}

/// Who is calling: the peer of a connection, from SO_PEERCRED (unix(7)).
public struct Caller: Sendable, Equatable {
    /// The peer's process id (SO_PEERCRED).
    public var pid: Int32
    /// The peer's user id.
    public var uid: UInt32
    /// The peer's primary group id.
    public var gid: UInt32
    /// The user name of `uid` (getpwuid_r), or the number as text when unknown.
    /// Recorded as the actor of every change the caller makes.
    public var userName: String
    /// What the caller may do (``AccessPolicy``), fixed when the connection is accepted.
    public var role: Role

    /// A caller with its credentials and role.
    public init(pid: Int32, uid: UInt32, gid: UInt32, userName: String, role: Role) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.userName = userName
        self.role = role
    }
}

/// Access roles (doc/design.md "Security and limits"), each including the ones below it.
public enum Role: Int, Sendable, Comparable, CaseIterable {
    /// No calls at all (`default-role = none` in entryd.conf).
    case none = 0
    /// Get, List, History, Changes, Forms.
    case read = 1
    /// + Add, Update, Delete, Restore, Import.
    case write = 2
    /// + Apply, SyncPeer, Resolve.
    case admin = 3

    /// The name in `entryd.conf` and in `PermissionDenied(role)`: `none`, `read`, `write`, `admin`.
    public var name: String {
        switch self {
        case .none: return "none"
        case .read: return "read"
        case .write: return "write"
        case .admin: return "admin"
        }
    }

    /// Parses `none`, `read`, `write` or `admin`.
    public init?(name: String) {
        guard let role = Role.allCases.first(where: { $0.name == name }) else { return nil }
        self = role
    }

    /// `none` < `read` < `write` < `admin`.
    public static func < (a: Role, b: Role) -> Bool { a.rawValue < b.rawValue }
}
