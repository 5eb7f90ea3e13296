import EntryModel

/// Which ``Role`` each method needs, one table for entryd (its permission
/// check) and entryd-web (which web user may call what): doc/design.md
/// "Security and limits", doc/protocol.md.
///
/// A role includes the ones below it (``Role``). A gateway caller (entryd's
/// `[roles] gateway`) is treated as `admin` except for ``peerOnly``; entryd-web
/// checks each web user's own role against ``role(of:)`` before it calls.
public enum MethodAccess {
    /// Every method entryd serves, by fully qualified name, with the least role
    /// that may call it.
    public static let roles: [String: Role] = [
        "org.varlink.service.GetInfo": .read,
        "org.varlink.service.GetInterfaceDescription": .read,

        "io.entryd.Entries.Add": .write,
        "io.entryd.Entries.Get": .read,
        "io.entryd.Entries.List": .read,
        "io.entryd.Entries.Update": .write,
        "io.entryd.Entries.Delete": .write,
        "io.entryd.Entries.Restore": .write,
        "io.entryd.Entries.History": .read,
        "io.entryd.Entries.Import": .write,
        "io.entryd.Entries.Backup": .admin,
        "io.entryd.Entries.Erase": .admin,
        "io.entryd.Entries.FindSubject": .admin,
        "io.entryd.Entries.Erasures": .read,
        "io.entryd.Entries.VerifyErasure": .admin,

        "io.entryd.Forms.ListForms": .read,
        "io.entryd.Forms.GetForm": .read,
        "io.entryd.Forms.Options": .read,
        "io.entryd.Forms.Check": .read,
        "io.entryd.Forms.CheckStored": .read,

        "io.entryd.Sync.Status": .read,
        "io.entryd.Sync.Changes": .read,
        "io.entryd.Sync.Apply": .admin,
        "io.entryd.Sync.SyncPeer": .admin,
        "io.entryd.Sync.ListConflicts": .read,
        "io.entryd.Sync.Resolve": .admin,
        "io.entryd.Sync.HeldFrom": .read,
        "io.entryd.Sync.Compact": .admin,
    ]

    /// The least role that may call `method` (fully qualified, e.g.
    /// `io.entryd.Entries.Add`), or `nil` when entryd serves no such method.
    public static func role(of method: String) -> Role? { roles[method] }

    /// Methods for peers and the operator only: `Apply`, `SyncPeer`,
    /// `HeldFrom` and `Backup`. Never allowed to a gateway caller (entryd answers
    /// `PermissionDenied` with role `admin`), never exposed over HTTP.
    public static let peerOnly: Set<String> = [
        "io.entryd.Sync.Apply",
        "io.entryd.Sync.SyncPeer",
        "io.entryd.Sync.HeldFrom",
        "io.entryd.Entries.Backup",
    ]
}

/// The rule for a web user's name, which a gateway names as `actor` and entryd
/// records as `web:NAME` (doc/design.md "Security and limits"): the users file
/// of entryd-web (`entryctl web-user`) and entryd apply the same.
public enum ActorName {
    /// The longest name, in Unicode scalars.
    public static let maxLength = 64

    /// 1-64 Unicode scalars: letters (with their combining marks, never first),
    /// decimal digits, `.`, `_`, `-` or `@`.
    public static func isValid(_ name: String) -> Bool {
        let scalars = name.unicodeScalars
        guard let first = scalars.first, scalars.count <= maxLength else { return false }
        if first.properties.generalCategory.isMark { return false }
        return scalars.allSatisfy { s in
            if "._-@".unicodeScalars.contains(s) { return true }
            return s.properties.generalCategory.isLetter || s.properties.generalCategory.isMark
                || s.properties.generalCategory == .decimalNumber
        }
    }
}

extension Unicode.GeneralCategory {
    /// Lu, Ll, Lt, Lm, Lo.
    var isLetter: Bool {
        switch self {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: return true
        default: return false
        }
    }

    /// Mn, Mc, Me: combining marks (a name in decomposed form).
    var isMark: Bool {
        switch self {
        case .nonspacingMark, .spacingMark, .enclosingMark: return true
        default: return false
        }
    }
}
