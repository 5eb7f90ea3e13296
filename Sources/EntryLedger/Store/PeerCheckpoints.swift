import EntryModel

/// A peer's sync state as stored in this node's database (doc/protocol.md `Peer`).
public struct PeerState: Sendable, Equatable {
    /// The configured peer name (the key of its checkpoints).
    public var name: String
    /// The peer's address, `unix:/path` or `exec:COMMAND` (see ``PeerConfig``).
    public var address: String
    /// The peer's node id as last seen, `nil` before the first sync.
    public var node: String?
    /// The peer's change log has been pulled up to this seq.
    public var pulledSeq: Int64
    /// This node's change log has been pushed up to this seq.
    public var pushedSeq: Int64
    /// End of the last successful sync: RFC 3339 UTC, milliseconds; `nil` if none.
    public var lastSync: String?
    /// Why the last attempt failed, `nil` after a success.
    public var lastError: String?

    /// A value with every member given (members with a default may be left out).
    public init(name: String, address: String, node: String? = nil, pulledSeq: Int64, pushedSeq: Int64, lastSync: String? = nil, lastError: String? = nil) {
        self.name = name
        self.address = address
        self.node = node
        self.pulledSeq = pulledSeq
        self.pushedSeq = pushedSeq
        self.lastSync = lastSync
        self.lastError = lastError
    }
}

extension EntryStore {
    /// The stored state of peer `name`, or `nil` before its first sync.
    /// - Throws: ``SQLiteError``.
    public func peerState(_ name: String) throws -> PeerState? {
        try readers.read { db in
            var state: PeerState?
            try db.statement("SELECT name, address, node, pulled_seq, pushed_seq, last_sync, last_error FROM peers WHERE name = ?")
                .query([.text(name)]) { state = EntryStore.peerState(from: $0) }
            return state
        }
    }

    /// Every stored peer state, by name.
    /// - Throws: ``SQLiteError``.
    public func peerStates() throws -> [PeerState] {
        try readers.read { db in
            var states: [PeerState] = []
            try db.statement("SELECT name, address, node, pulled_seq, pushed_seq, last_sync, last_error FROM peers ORDER BY name")
                .query { states.append(EntryStore.peerState(from: $0)) }
            return states
        }
    }

    /// Decodes a `peers` row selected as `name, address, node, pulled_seq,
    /// pushed_seq, last_sync, last_error`; NULL columns give `nil`.
    static func peerState(from row: Statement) -> PeerState {
        PeerState(name: row.text(0), address: row.text(1), node: row.isNull(2) ? nil : row.text(2), pulledSeq: row.int(3),
                  pushedSeq: row.int(4), lastSync: row.isNull(5) ? nil : row.text(5), lastError: row.isNull(6) ? nil : row.text(6))
    }

    /// Stores the state of a peer (insert or replace).
    /// - Throws: ``SQLiteError``.
    public func savePeerState(_ s: PeerState) throws {
        try writer.submit { ctx in
            try ctx.db.statement("""
                INSERT INTO peers (name, address, node, pulled_seq, pushed_seq, last_sync, last_error) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (name) DO UPDATE SET address = excluded.address, node = excluded.node, pulled_seq = excluded.pulled_seq,
                  pushed_seq = excluded.pushed_seq, last_sync = excluded.last_sync, last_error = excluded.last_error
                """).run([.text(s.name), .text(s.address), s.node.map { .text($0) } ?? .null, .int(s.pulledSeq), .int(s.pushedSeq),
                          s.lastSync.map { .text($0) } ?? .null, s.lastError.map { .text($0) } ?? .null])
        }
    }
}
