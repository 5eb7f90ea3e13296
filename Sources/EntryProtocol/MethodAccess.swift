import EntryModel

/// Who may call each method, for entryd (its permission check) and entryd-web
/// (which web user may call what, and what it never serves): doc/design.md
/// "Security and limits", doc/protocol.md. Exhaustive switches over the
/// generated ``Method``: a method added to interfaces/*.varlink does not
/// compile until it has its role here and says whether `submit` may call it.
///
/// A role is a set of methods (``Role/allows(_:)``): `read` ⊂ `write` ⊂
/// `admin`, and `submit` (``isForSubmitters``) beside them, inside `write`. A
/// gateway caller (entryd's `[roles] gateway`) is treated as `admin` except
/// for ``isPeerOnly``; entryd-web checks each web user's own role with
/// ``Role/allows(_:)`` before it calls.
extension Method {
    /// The least of `read`, `write` and `admin` that may call the method
    /// (doc/design.md "Security and limits"), named by `PermissionDenied`'s
    /// `role`: reading needs `read`, changing entries `write`; backup,
    /// erasure, the erasure search and verification, applying and pulling
    /// changes from peers, resolving conflicts and compaction need `admin`.
    /// Never `none` or `submit`.
    package var role: Role {
        switch self {
        case .serviceGetInfo, .serviceGetInterfaceDescription: .read
        case .entriesGet, .entriesList, .entriesHistory, .entriesErasures: .read
        case .entriesAdd, .entriesUpdate, .entriesDelete, .entriesRestore, .entriesImport: .write
        case .entriesBackup, .entriesErase, .entriesFindSubject, .entriesVerifyErasure: .admin
        case .formsListForms, .formsGetForm, .formsOptions, .formsCheck, .formsCheckStored: .read
        case .syncStatus, .syncChanges, .syncListConflicts, .syncHeldFrom, .syncMetrics: .read
        case .syncApply, .syncSyncPeer, .syncResolve, .syncCompact: .admin
        }
    }

    /// The methods of the `submit` role (a kiosk, an intake tablet): what a
    /// form page needs to show a form, check and add an entry — `Add`,
    /// `Check`, `GetForm`, `Options` — and the service calls a varlink client
    /// makes to start (`GetInfo`, `GetInterfaceDescription`). Nothing that
    /// reads a stored entry, the change feed or the node's state.
    package var isForSubmitters: Bool {
        switch self {
        case .serviceGetInfo, .serviceGetInterfaceDescription,
            .entriesAdd, .formsGetForm, .formsOptions, .formsCheck:
            true
        case .entriesGet, .entriesList, .entriesUpdate, .entriesDelete, .entriesRestore, .entriesHistory,
            .entriesImport, .entriesBackup, .entriesErase, .entriesFindSubject, .entriesErasures,
            .entriesVerifyErasure, .formsListForms, .formsCheckStored,
            .syncStatus, .syncChanges, .syncApply, .syncSyncPeer, .syncListConflicts, .syncResolve,
            .syncHeldFrom, .syncCompact, .syncMetrics:
            false
        }
    }

    /// Served by entryd-web's API (`POST /api/v1/<method>`, its OpenAPI
    /// document): every method but the ``isPeerOnly`` ones and `Metrics`,
    /// whose HTTP door is `GET /metrics` (a scraper's token, never a web
    /// user's session: doc/monitoring.md).
    package var isServedOverHTTP: Bool { !isPeerOnly && self != .syncMetrics }

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
            .syncStatus, .syncChanges, .syncListConflicts, .syncResolve, .syncCompact, .syncMetrics:
            false
        }
    }
}

extension Role {
    /// Whether the role may call `method` (doc/design.md "Security and
    /// limits"): `none` nothing; `submit` the methods ``Method/isForSubmitters``;
    /// `read` those whose ``Method/role`` is `read`; `write` those of `read`
    /// and `write`; `admin` every method.
    package func allows(_ method: Method) -> Bool {
        switch self {
        case .none: false
        case .submit: method.isForSubmitters
        case .read: method.role == .read
        case .write: method.role == .read || method.role == .write
        case .admin: true
        }
    }

    /// Whether every method `other` allows, this role allows too.
    package func includes(_ other: Role) -> Bool {
        Method.allCases.allSatisfy { !other.allows($0) || allows($0) }
    }

    /// The roles of `roles` that no other of them includes, in ``Role/allCases``
    /// order: what a caller named in several roles holds (`read` and `submit`
    /// stay both; `read` beside `write` goes). Empty for an empty list.
    package static func strongest(_ roles: [Role]) -> [Role] {
        Role.allCases.filter { role in
            roles.contains(role) && !roles.contains { $0 != role && $0.includes(role) }
        }
    }

    /// Whether `Status` shows this role where the data lives: the database
    /// (a path, or a PostgreSQL URI) and each peer's address (which can be an
    /// `exec:ssh …` command). Only `admin`; the others get them as `""`
    /// (``StatusReply/redacted(_:)``).
    package var seesLocations: Bool {
        switch self {
        case .admin: true
        case .none, .submit, .read, .write: false
        }
    }
}

extension Role {
    /// Whether the role may read stored entries (it allows `Get`): only such a
    /// caller is told of possible duplicates (doc/protocol.md "Possible
    /// duplicates"); a `submit` kiosk is not, or it could probe who is registered.
    package var seesEntries: Bool { allows(.entriesGet) }
}

/// Add's, Check's and Import's replies as a caller that may not read entries
/// gets them (``Role/seesEntries``): without `duplicates`, as before the
/// member was added. entryd leaves it out for such a socket caller;
/// entryd-web for such a web user (its gateway caller reads everything).
package enum DuplicatesReply {
    /// `reply` without its `duplicates` member.
    package static func withheld(_ reply: JSON) -> JSON {
        guard case .object(let members) = reply else { return reply }
        return .object(members.filter { $0.0 != "duplicates" })
    }
}

/// `io.entryd.Sync.Status`'s reply as callers below `admin` get it, on the
/// socket (entryd) and over HTTP (entryd-web, by the web user's role).
package enum StatusReply {
    /// `reply` with `database` and each peer's `address` as `""`: the
    /// contract's members stay, their values are withheld. A peer's
    /// `lastError` and `notice` keep their words, with the address (and an
    /// `exec:` or `unix:` address's command or path alone, as a transport's
    /// error quotes it) replaced by `…`.
    package static func redacted(_ reply: JSON) -> JSON {
        guard case .object(let members) = reply else { return reply }
        return .object(
            members.map { name, value in
                switch name {
                case "database": return (name, .string(""))
                case "peers":
                    guard case .array(let peers) = value else { return (name, value) }
                    return (name, .array(peers.map(redactedPeer)))
                default: return (name, value)
                }
            })
    }

    /// One `Peer` with its address withheld (``redacted(_:)``).
    static func redactedPeer(_ peer: JSON) -> JSON {
        guard case .object(let members) = peer else { return peer }
        let address = peer["address"]?.stringValue ?? ""
        var hidden = [address]
        for scheme in ["exec:", "unix:"] where address.hasPrefix(scheme) {
            hidden.append(String(address.dropFirst(scheme.count).drop { $0 == " " }))
        }
        hidden = hidden.filter { !$0.isEmpty }.sorted { $0.count > $1.count }
        return .object(
            members.map { name, value in
                switch name {
                case "address": return (name, .string(""))
                case "lastError", "notice":
                    guard var text = value.stringValue else { return (name, value) }
                    for h in hidden { text = text.replacing(h, with: "…") }
                    return (name, .string(text))
                default: return (name, value)
                }
            })
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
