extension ChangeRecord {
    /// Reads a wire `Change` (doc/protocol.md). `seq` is the sender's and is kept
    /// only for reference; the receiver assigns its own.
    /// - Throws: ``WireError`` `InvalidParameter(changes)` when a member is
    ///   missing or malformed: HLC not 16 hex digits or zero, node or entry not a
    ///   UUID, `at` not RFC 3339, an unknown op, a field name a form file could not
    ///   declare, or a control character in a value.
    public init(json: JSON) throws(WireError) {
        let p = Parameters(json)
        func need<T>(_ v: T?) throws(WireError) -> T {
            guard let v else { throw .invalidParameter("changes") }
            return v
        }
        do {
            seq = try p.optionalInt("seq") ?? 0
            node = try p.string("node")
            hlc = try need(HLC(try p.string("hlc")))
            entry = try need(UUIDv7.canonical(try p.string("entry")))
            form = try p.string("form")
            op = try need(ChangeOp(rawValue: try p.string("op")))
            fields = try p.optionalStringMap("fields") ?? [:]
            base = try p.optionalStringMap("base") ?? [:]
            actor = try p.optionalString("actor") ?? ""
            at = try p.optionalString("at") ?? ""
            reason = try p.optionalString("reason")
            via = nil
        } catch {
            throw .invalidParameter("changes")
        }
        // Peers are trusted as admins, but what they send is still held to the shape
        // every node writes: a UUID node id, a real stamp and time, field names as
        // form files allow them, and values without control characters.
        func isFieldName(_ name: String) -> Bool {
            guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) else { return false }
            return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
        }
        let clean = { (text: String) in !text.unicodeScalars.contains { $0.properties.generalCategory == .control } }
        guard UUIDv7.canonical(node) == node, hlc != .zero, Timestamp.milliseconds(rfc3339: at) != nil, !form.isEmpty,
              fields.keys.allSatisfy(isFieldName), fields.values.allSatisfy(clean), clean(actor), clean(form),
              base.allSatisfy({ isFieldName($0.key) && ($0.value.isEmpty || HLC($0.value) != nil) })
        else {
            throw .invalidParameter("changes")
        }
    }
}

/// A peer reached over varlink: a Unix socket, or any byte pipe such as an
/// SSH session running `entryctl bridge` (``VarlinkConnection`` over a socket pair).
public final class VarlinkPeer: PeerLink {
    let connection: VarlinkConnection
    /// The peer's `Status` reply when the caller already has it (the handshake).
    let status: JSON?

    /// A peer over an open connection to its daemon.
    /// - Parameter status: the peer's `io.entryd.Sync.Status` reply if already read,
    ///   so ``nodeID()`` does not ask again.
    public init(connection: VarlinkConnection, status: JSON? = nil) {
        self.connection = connection
        self.status = status
    }

    /// The peer's `node` from `io.entryd.Sync.Status`.
    /// - Throws: ``WireError`` `InvalidParameter(node)` when the reply lacks it; the
    ///   errors of ``VarlinkConnection/call(_:_:)``.
    public func nodeID() throws -> String {
        guard let node = try (status ?? connection.call("io.entryd.Sync.Status"))["node"]?.stringValue else {
            throw WireError.invalidParameter("node")
        }
        return node
    }

    /// Calls `io.entryd.Sync.Changes(since, limit, excludeNode)`; `last` is the
    /// peer's highest seq examined (`since` when the reply has none).
    /// - Throws: ``WireError`` `InvalidParameter(changes)` for a malformed change;
    ///   the errors of ``VarlinkConnection/call(_:_:)``.
    public func changes(since: Int64, limit: Int, excludeNode: String?) throws -> (changes: [ChangeRecord], last: Int64) {
        var params: [(String, JSON)] = [("since", .int(since)), ("limit", .int(Int64(limit)))]
        if let excludeNode { params.append(("excludeNode", .string(excludeNode))) }
        let reply = try connection.call("io.entryd.Sync.Changes", .object(params))
        let changes = try (reply["changes"]?.arrayValue ?? []).map { try ChangeRecord(json: $0) }
        return (changes, reply["last"]?.intValue ?? since)
    }

    /// Calls `io.entryd.Sync.Apply(changes)`; counts missing from the reply read as 0.
    /// - Throws: the errors of ``VarlinkConnection/call(_:_:)`` (e.g. ``WireError``
    ///   `io.entryd.Sync.ClockSkew`).
    public func apply(_ changes: [ChangeRecord]) throws -> ApplyResult {
        let reply = try connection.call("io.entryd.Sync.Apply", .object([("changes", .array(changes.map(\.json)))]))
        return ApplyResult(applied: Int(reply["applied"]?.intValue ?? 0), skipped: Int(reply["skipped"]?.intValue ?? 0),
                           conflicts: Int(reply["conflicts"]?.intValue ?? 0), seq: reply["seq"]?.intValue ?? 0)
    }
}
