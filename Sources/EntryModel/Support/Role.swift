/// Access roles (doc/design.md "Security and limits"), each including the ones below it.
package enum Role: Int, Sendable, Comparable, CaseIterable {
    /// No calls at all (`default-role = none` in entryd.conf).
    case none = 0
    /// Get, List, History, Changes, Forms.
    case read = 1
    /// + Add, Update, Delete, Restore, Import.
    case write = 2
    /// + Apply, SyncPeer, Resolve.
    case admin = 3

    /// The name in `entryd.conf` and in ``EntryError/permissionDenied(role:)``: `none`, `read`, `write`, `admin`.
    package var name: String {
        switch self {
        case .none: return "none"
        case .read: return "read"
        case .write: return "write"
        case .admin: return "admin"
        }
    }

    /// Parses `none`, `read`, `write` or `admin`.
    package init?(name: String) {
        guard let role = Role.allCases.first(where: { $0.name == name }) else { return nil }
        self = role
    }

    /// `none` < `read` < `write` < `admin`.
    package static func < (a: Role, b: Role) -> Bool { a.rawValue < b.rawValue }
}
