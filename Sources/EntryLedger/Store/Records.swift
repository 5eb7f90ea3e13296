import EntryModel

/// An entry as stored: canonical values plus the sync registers behind them.
package struct StoredEntry: Sendable, Equatable {
    /// UUID text, lower case.
    package var id: String
    /// The name of the form the entry was made with.
    package var form: String
    /// Canonical values by field name (only non-empty values).
    package var fields: [String: String]
    /// The register of each field ever set: who wrote its current value, when.
    package var clocks: [String: Stamp]
    /// HLC of the latest change.
    package var version: HLC
    /// True for a tombstone: deleted, values kept so the delete syncs and can be undone.
    package var deleted: Bool
    /// The register of the deleted flag (`nil` until first deleted).
    package var deletedClock: Stamp?
    /// RFC 3339 UTC, milliseconds.
    package var createdAt: String
    /// RFC 3339 UTC, milliseconds: origin wall time of the latest change.
    package var updatedAt: String
    /// The actor (user name) of the create.
    package var createdBy: String
    /// The actor (user name) of the latest change.
    package var updatedBy: String
    /// This node's seq of the latest change applied to the entry (for `syncedTo`).
    package var seq: Int64 = 0

    /// A value with every member given (`seq` may be left out: 0).
    package init(
        id: String, form: String, fields: [String: String], clocks: [String: Stamp], version: HLC, deleted: Bool,
        deletedClock: Stamp?, createdAt: String, updatedAt: String, createdBy: String, updatedBy: String, seq: Int64 = 0
    ) {
        self.id = id
        self.form = form
        self.fields = fields
        self.clocks = clocks
        self.version = version
        self.deleted = deleted
        self.deletedClock = deletedClock
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.createdBy = createdBy
        self.updatedBy = updatedBy
        self.seq = seq
    }
}

/// The kind of a change (doc/protocol.md `Change.op`; `erase` added at the end
/// of the enum by issue 17: an erasure, with no fields, no base and no value).
package enum ChangeOp: String, Sendable, Codable {
    case create, update, delete, restore, erase
}

/// One row of the change log (doc/protocol.md `io.entryd.Sync.Change`).
package struct ChangeRecord: Sendable, Equatable {
    /// Position in this node's change log (0 before it is stored).
    package var seq: Int64
    /// Node id where the change was made.
    package var node: String
    /// The change's HLC at its origin node (16 lowercase hex digits on the wire).
    package var hlc: HLC
    /// The entry's id (lower-case UUID text).
    package var entry: String
    /// The entry's form name.
    package var form: String
    /// What the change did.
    package var op: ChangeOp
    /// The values this change set ("" clears a field).
    package var fields: [String: String]
    /// For each field set, the HLC of the value it replaced ("" on create).
    package var base: [String: String]
    /// Who made the change: the user name at the origin node (SO_PEERCRED).
    package var actor: String
    /// Wall time at the origin, RFC 3339 UTC ms.
    package var at: String
    /// The call's audit `reason`, if any.
    package var reason: String?
    /// The peer that delivered the change, `nil` when made here.
    package var via: String?
    /// The fields whose values later writes are known to have superseded (some
    /// write saw this one for them): set by compaction on the rows it keeps, and
    /// carried by sync, so that a node holding this write without the removed
    /// writes between it and the newest still knows it is no head there
    /// (doc/design.md "Compaction"). Empty for almost every change.
    package var superseded: [String] = []

    /// The (HLC, node) order of this change.
    package var stamp: Stamp { Stamp(hlc: hlc, node: node) }

    /// A value with every member given (members with a default may be left out).
    package init(
        seq: Int64, node: String, hlc: HLC, entry: String, form: String, op: ChangeOp, fields: [String: String],
        base: [String: String], actor: String, at: String, reason: String? = nil, via: String? = nil,
        superseded: [String] = []
    ) {
        self.seq = seq
        self.node = node
        self.hlc = hlc
        self.entry = entry
        self.form = form
        self.op = op
        self.fields = fields
        self.base = base
        self.actor = actor
        self.at = at
        self.reason = reason
        self.via = via
        self.superseded = superseded
    }
}

extension Stamp {
    /// Storage form: `HLC NODE`.
    var stored: String { "\(hlc) \(node)" }

    /// Parses the storage form; `nil` when malformed.
    init?(stored: String) {
        guard let space = stored.firstIndex(of: " "), let hlc = HLC(String(stored[..<space])) else { return nil }
        self.init(hlc: hlc, node: String(stored[stored.index(after: space)...]))
    }
}
