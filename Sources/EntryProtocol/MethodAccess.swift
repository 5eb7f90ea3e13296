import EntryModel

/// Who may call each method, for entryd (its permission check) and entryd-web
/// (which web user may call what, and what it never serves): doc/design.md
/// "Security and limits", doc/protocol.md. Exhaustive switches over the
/// generated ``Method``: a method added to interfaces/*.varlink does not
/// compile until it has its role here.
///
/// A role includes the ones below it (``Role``). A gateway caller (entryd's
/// `[roles] gateway`) is treated as `admin` except for ``isPeerOnly``; entryd-web
/// checks each web user's own role against ``role`` before it calls.
extension Method {
    /// The least role that may call the method (doc/design.md "Security and
    /// limits"): reading needs `read`, changing entries `write`; backup,
    /// erasure, the erasure search and verification, applying and pulling
    /// changes from peers, resolving conflicts and compaction need `admin`.
    package var role: Role {
        switch self {
        case .serviceGetInfo, .serviceGetInterfaceDescription: .read
        case .entriesGet, .entriesList, .entriesHistory, .entriesErasures: .read
        case .entriesAdd, .entriesUpdate, .entriesDelete, .entriesRestore, .entriesImport: .write
        case .entriesBackup, .entriesErase, .entriesFindSubject, .entriesVerifyErasure: .admin
        case .formsListForms, .formsGetForm, .formsOptions, .formsCheck, .formsCheckStored: .read
        case .syncStatus, .syncChanges, .syncListConflicts, .syncHeldFrom: .read
        case .syncApply, .syncSyncPeer, .syncResolve, .syncCompact: .admin
        }
    }

    /// For peers and the operator only: `Apply`, `SyncPeer`, `HeldFrom` and
    /// `Backup`. Never allowed to a gateway caller (entryd answers
    /// `PermissionDenied` with role `admin`), never exposed over HTTP
    /// (entryd-web's `MethodPolicy`, its OpenAPI document).
    package var isPeerOnly: Bool {
        switch self {
        case .syncApply, .syncSyncPeer, .syncHeldFrom, .entriesBackup: true
        case .serviceGetInfo, .serviceGetInterfaceDescription,
            .entriesAdd, .entriesGet, .entriesList, .entriesUpdate, .entriesDelete, .entriesRestore, .entriesHistory,
            .entriesImport, .entriesErase, .entriesFindSubject, .entriesErasures, .entriesVerifyErasure,
            .formsListForms, .formsGetForm, .formsOptions, .formsCheck, .formsCheckStored,
            .syncStatus, .syncChanges, .syncListConflicts, .syncResolve, .syncCompact:
            false
        }
    }
}

/// The rule for a web user's name, which a gateway names as `actor` and entryd
/// records as `web:NAME` (doc/design.md "Security and limits"): the users file
/// of entryd-web (`entryctl web-user`) and entryd apply the same.
package enum ActorName {
    /// The longest name, in Unicode scalars.
    package static let maxLength = 64

    /// 1-64 Unicode scalars: letters (with their combining marks, never first),
    /// decimal digits, `.`, `_`, `-` or `@`.
    package static func isValid(_ name: String) -> Bool {
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
