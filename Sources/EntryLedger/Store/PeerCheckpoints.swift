import EntryModel

/// A peer's sync state as stored in this node's database (doc/protocol.md `Peer`).
package struct PeerState: Sendable, Equatable {
    /// The configured peer name (the key of its checkpoints).
    package var name: String
    /// The peer's address, `unix:/path` or `exec:COMMAND` (see ``PeerConfig``).
    package var address: String
    /// The peer's node id as last seen, `nil` before the first sync.
    package var node: String?
    /// The peer's change log has been pulled up to this seq.
    package var pulledSeq: Int64
    /// This node's change log has been pushed up to this seq.
    package var pushedSeq: Int64
    /// End of the last successful sync: RFC 3339 UTC, milliseconds; `nil` if none.
    package var lastSync: String?
    /// Why the last attempt failed, `nil` after a success.
    package var lastError: String?
    /// The peer's incarnation as last seen, `nil` before the first sync or
    /// for a peer that serves none (doc/design.md "Incarnations").
    package var incarnation: String?
    /// The last change pulled from the peer, as `SEQ NODE HLC`: the fingerprint
    /// that tells whether the peer's log still holds what was pulled (a peer put
    /// back from a snapshot reuses seqs for other changes). `nil`: none yet.
    package var mark: String?
    /// This node's incarnation when the last sync with the peer completed: after
    /// a new incarnation here, the first sync pulls this node's own changes back too.
    package var syncedIncarnation: String?
    /// The last time the peer was re-read or re-sent to, and why, `nil` if never.
    package var notice: String?
    /// When compaction marked the peer expired (silent longer than `peer-expiry`):
    /// RFC 3339 UTC; `nil` when it is not. Its next sync starts over from seq 0
    /// both ways (doc/design.md "Compaction").
    package var expired: String?

    /// A value with every member given (members with a default may be left out).
    package init(
        name: String, address: String, node: String? = nil, pulledSeq: Int64, pushedSeq: Int64, lastSync: String? = nil,
        lastError: String? = nil, incarnation: String? = nil, mark: String? = nil, syncedIncarnation: String? = nil,
        notice: String? = nil, expired: String? = nil
    ) {
        self.name = name
        self.address = address
        self.node = node
        self.pulledSeq = pulledSeq
        self.pushedSeq = pushedSeq
        self.lastSync = lastSync
        self.lastError = lastError
        self.incarnation = incarnation
        self.mark = mark
        self.syncedIncarnation = syncedIncarnation
        self.notice = notice
        self.expired = expired
    }
}

extension EntryStore {
    /// The stored state of peer `name`, or `nil` before its first sync.
    /// - Throws: ``SQLiteError``.
    package func peerState(_ name: String) throws -> PeerState? {
        try readers.read { db in
            var state: PeerState?
            try db.statement("SELECT \(EntryStore.peerColumns) FROM peers WHERE name = ?")
                .query([.text(name)]) { state = EntryStore.peerState(from: $0) }
            return state
        }
    }

    /// Every stored peer state, by name.
    /// - Throws: ``SQLiteError``.
    package func peerStates() throws -> [PeerState] {
        try readers.read { db in
            var states: [PeerState] = []
            try db.statement("SELECT \(EntryStore.peerColumns) FROM peers ORDER BY name")
                .query { states.append(EntryStore.peerState(from: $0)) }
            return states
        }
    }

    /// Decodes a `peers` row selected as `name, address, node, pulled_seq,
    /// pushed_seq, last_sync, last_error, incarnation, mark, synced_incarnation,
    /// notice, expired`; NULL columns give `nil`.
    static func peerState(from row: any SQLRow) -> PeerState {
        func optional(_ i: Int32) -> String? { row.isNull(i) ? nil : row.text(i) }
        return PeerState(
            name: row.text(0), address: row.text(1), node: optional(2), pulledSeq: row.int(3), pushedSeq: row.int(4),
            lastSync: optional(5), lastError: optional(6), incarnation: optional(7), mark: optional(8),
            syncedIncarnation: optional(9), notice: optional(10), expired: optional(11))
    }

    /// The `peers` columns in ``peerState(from:)``'s order.
    static let peerColumns =
        "name, address, node, pulled_seq, pushed_seq, last_sync, last_error, incarnation, mark, synced_incarnation, notice, expired"

    /// Stores the state of a peer (insert or replace).
    /// - Throws: ``SQLiteError``.
    package func savePeerState(_ s: PeerState) throws {
        func optional(_ text: String?) -> SQLValue { text.map { .text($0) } ?? .null }
        try writer.submit { ctx in
            try ctx.db.statement(
                """
                INSERT INTO peers (\(EntryStore.peerColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (name) DO UPDATE SET address = excluded.address, node = excluded.node, pulled_seq = excluded.pulled_seq,
                  pushed_seq = excluded.pushed_seq, last_sync = excluded.last_sync, last_error = excluded.last_error,
                  incarnation = excluded.incarnation, mark = excluded.mark, synced_incarnation = excluded.synced_incarnation,
                  notice = excluded.notice, expired = excluded.expired
                """
            ).run([
                .text(s.name), .text(s.address), optional(s.node), .int(s.pulledSeq), .int(s.pushedSeq),
                optional(s.lastSync), optional(s.lastError), optional(s.incarnation), optional(s.mark),
                optional(s.syncedIncarnation), optional(s.notice), optional(s.expired),
            ])
        }
    }
}
