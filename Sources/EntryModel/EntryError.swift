/// The domain error: why a request about entries, forms or peers was refused,
/// as a code and the data that code carries.
///
/// Every layer below the server throws this (or a storage error of the ledger
/// such as `SQLiteError`, or a ``SystemError``); the server maps it to a
/// varlink error in one place (`WireError(mapping:interface:)` in EntryServer),
/// so nothing below the server knows a varlink error name. Messages shown to
/// people are made by the client from the code and its data.
///
/// The codes and their data follow the errors of doc/protocol.md: adding a code
/// means declaring its error in interfaces/*.varlink (the generated
/// `WireErrorName` of EntryProtocol) and its mapping in EntryServer.
package enum EntryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Submitted values were refused; each ``Problem`` names a field, a code and the reason.
    case validationFailed([Problem])
    /// No entry has this id, or the text is not a UUID (deleted entries still exist).
    case entryNotFound(String)
    /// An Add gave an id already used with other values, or by a deleted entry.
    case entryExists(String)
    /// The caller's version of entry `id` is stale; `version` is the current one (HLC text).
    case versionMismatch(id: String, version: String)
    /// No form of this name.
    case formNotFound(String)
    /// Form `form` has no field `field`.
    case fieldNotFound(form: String, field: String)
    /// A limit was hit: `limit` is its configuration key (`max-batch`), `maximum` its value.
    case limitExceeded(String, maximum: Int)
    /// The store could not write; `reason` says why in words safe to show (no field values).
    case storageFailed(String)
    /// A parameter is missing, has the wrong type or an unusable value; names the parameter.
    case invalidParameter(String)
    /// The caller's role is below `role` (``Role``).
    case permissionDenied(role: Role)
    /// A change from node `node` is stamped `aheadMs` milliseconds ahead of this
    /// node's clock, past `max-clock-skew` (doc/design.md "Clocks").
    case clockSkew(node: String, aheadMs: Int64)
    /// No open conflict has this id.
    case conflictNotFound(String)
    /// No configured peer has this name.
    case peerNotFound(String)
    /// Peer `peer` could not be reached or answered with an error; `reason` says which.
    case peerUnreachable(peer: String, reason: String)
    /// Peer `peer` refused this node (its `PermissionDenied`): this node's user
    /// there lacks `role`. Answered as `PeerUnreachable` with `role`, a lasting
    /// refusal rather than a failure worth retrying.
    case peerRefused(peer: String, role: String)
    /// Peer `peer` refused this node because the user it connects as there is
    /// listed under `[roles] gateway` (its `PermissionDenied` with `gateway`):
    /// a gateway may never push (Apply), whatever its role. Answered as
    /// `PeerUnreachable` with `role` `admin` and `gateway` true.
    case peerRefusedGateway(peer: String)
    /// Entry `id` was erased (doc/design.md "Erasure") at `at` (RFC 3339 UTC ms, the
    /// erasure's wall time at its origin): its values are gone and no call can
    /// read, change or bring it back.
    case entryErased(id: String, at: String)
    /// `Backup` on a node whose entries are in a database server (`database`,
    /// without credentials): that server's tool (`tool`, e.g. `pg_dump`) backs it up.
    case backupUnsupported(database: String, tool: String)

    /// The code and its data, for logs (never field values: problems show codes only).
    package var description: String {
        switch self {
        case .validationFailed(let problems):
            return "validation failed: " + problems.map { "\($0.field) \($0.code.rawValue)" }.joined(separator: ", ")
        case .entryNotFound(let id): return "entry \(id) not found"
        case .entryExists(let id): return "entry \(id) exists"
        case .versionMismatch(let id, let version): return "entry \(id) is at version \(version)"
        case .formNotFound(let form): return "form '\(form)' not found"
        case .fieldNotFound(let form, let field): return "form '\(form)' has no field '\(field)'"
        case .limitExceeded(let limit, let maximum): return "limit \(limit) (\(maximum)) exceeded"
        case .storageFailed(let reason): return "storage failed: \(reason)"
        case .invalidParameter(let name): return "invalid parameter '\(name)'"
        case .permissionDenied(let role): return "needs role \(role.name)"
        case .clockSkew(let node, let ahead): return "clock skew: node \(node) is \(ahead) ms ahead"
        case .conflictNotFound(let id): return "conflict \(id) not found"
        case .peerNotFound(let peer): return "peer '\(peer)' not found"
        case .peerUnreachable(let peer, let reason): return "peer '\(peer)' unreachable: \(reason)"
        case .peerRefused(let peer, let role):
            return "peer '\(peer)' refused this node (PermissionDenied: its user there needs the \(role) role): "
                + "in the peer's entryd.conf, add the user this node connects as to \(role) under [roles] "
                + "(pulling needs read, pushing admin), reload that entryd, and sync again"
        case .peerRefusedGateway(let peer):
            return "peer '\(peer)' refused this node: the user this node connects as is listed under [roles] gateway "
                + "in the peer's entryd.conf, and a gateway may not call Apply, SyncPeer, HeldFrom or Backup whatever "
                + "its role; connect as a user not listed as gateway there"
        case .entryErased(let id, let at): return "entry \(id) was erased at \(at)"
        case .backupUnsupported(let database, let tool): return "backup of \(database) is \(tool)'s"
        }
    }
}
