/// Access roles (doc/design.md "Security and limits"): each names a set of
/// methods (EntryProtocol's `Role.allows(_:)`). `read`, `write` and `admin`
/// are a ladder, each holding the one before it; `submit` sits beside it, for
/// kiosks and intake tablets: it adds entries and reads forms, and reads no
/// entry. Roles are not ordered by rank: compare what they allow.
package enum Role: Sendable, CaseIterable {
    /// No calls at all (`default-role = none` in entryd.conf).
    case none
    /// Add, Check, GetForm, Options and the service calls: a kiosk's form, never a stored entry.
    case submit
    /// Get, List, History, Changes, Status, Forms.
    case read
    /// + Add, Update, Delete, Restore, Import.
    case write
    /// + Apply, SyncPeer, Resolve, Erase, Compact….
    case admin

    /// The name in `entryd.conf`, in entryd-web's users file and in
    /// ``EntryError/permissionDenied(role:)``: `none`, `submit`, `read`, `write`, `admin`.
    package var name: String {
        switch self {
        case .none: return "none"
        case .submit: return "submit"
        case .read: return "read"
        case .write: return "write"
        case .admin: return "admin"
        }
    }

    /// Parses `none`, `submit`, `read`, `write` or `admin`.
    package init?(name: String) {
        guard let role = Role.allCases.first(where: { $0.name == name }) else { return nil }
        self = role
    }

    /// The names a caller may be given (all but `none`), for messages: `submit, read, write, admin`.
    package static let grantable: [Role] = [.submit, .read, .write, .admin]
}
