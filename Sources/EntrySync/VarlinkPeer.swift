import EntryModel
import EntryLedger
import EntryProtocol
/// A peer reached over varlink: a Unix socket, or any byte pipe such as an
/// SSH session running `entryctl bridge` (``VarlinkConnection`` over a socket pair).
package final class VarlinkPeer: PeerLink {
    let connection: VarlinkConnection
    /// The peer's `Status` reply when the caller already has it (the handshake).
    let status: JSON?

    /// A peer over an open connection to its daemon.
    /// - Parameter status: the peer's `io.entryd.Sync.Status` reply if already read,
    ///   so ``identity()`` does not ask again.
    package init(connection: VarlinkConnection, status: JSON? = nil) {
        self.connection = connection
        self.status = status
    }

    /// The handshake's node and incarnation, for checking each `Changes` page.
    private var expected: (node: String, incarnation: String)?

    /// The peer's `node`, `incarnation`, `incarnationSeq`, `incarnationReason`
    /// and `seq` from `io.entryd.Sync.Status` (an older entryd serves no incarnation).
    /// - Throws: ``EntryError`` `.invalidParameter("node")` when the reply lacks it; the
    ///   errors of ``VarlinkConnection/call(_:_:)``.
    package func identity() throws -> PeerIdentity {
        let reply = try status ?? connection.call(.syncStatus)
        guard let node = reply["node"]?.stringValue else { throw EntryError.invalidParameter("node") }
        let incarnation = reply["incarnation"]?.stringValue.map {
            Incarnation(
                id: $0, startSeq: reply["incarnationSeq"]?.intValue ?? 0,
                reason: reply["incarnationReason"]?.stringValue,
                since: reply["incarnationHlc"]?.stringValue.flatMap(HLC.init) ?? .zero)
        }
        expected = incarnation.map { (node, $0.id) }
        let libraries = try? Parameters(reply).optionalStringMap("libraries")
        return PeerIdentity(node: node, incarnation: incarnation, seq: reply["seq"]?.intValue, libraries: libraries)
    }

    /// Calls `io.entryd.Sync.Changes(since, limit, excludeNode, excludeSince)`; `last` is the
    /// peer's highest seq examined (`since` when the reply has none). A page
    /// from another incarnation than the handshake's is refused.
    /// - Throws: ``EntryError`` `.invalidParameter("changes")` for a malformed change;
    ///   the errors of ``VarlinkConnection/call(_:_:)``.
    package func changes(since: Int64, limit: Int, excludeNode: String?, excludeSince: HLC) throws -> (
        changes: [ChangeRecord], last: Int64
    ) {
        var params: [(String, JSON)] = [("since", .int(since)), ("limit", .int(Int64(limit)))]
        if let excludeNode { params.append(("excludeNode", .string(excludeNode))) }
        if excludeSince != .zero { params.append(("excludeSince", .string(excludeSince.description))) }
        let reply = try connection.call(.syncChanges, .object(params))
        if let expected, let served = reply["incarnation"]?.stringValue, served != expected.incarnation {
            // The peer was restored while this sync ran: its seqs now mean other changes.
            throw EntryError.peerUnreachable(
                peer: expected.node, reason: "the peer began a new incarnation during the sync; sync again")
        }
        let changes = try (reply["changes"]?.arrayValue ?? []).map { try ChangeRecord(json: $0) }
        return (changes, reply["last"]?.intValue ?? since)
    }

    /// Calls `io.entryd.Sync.Apply(changes)`; counts missing from the reply read as 0.
    /// - Throws: the errors of ``VarlinkConnection/call(_:_:)`` (e.g. ``WireError``
    ///   its clock-skew refusal).
    package func apply(_ changes: [ChangeRecord]) throws -> ApplyResult {
        // Our libraries: a peer with the same takes the values as they come (see Apply).
        let reply = try connection.call(
            .syncApply,
            .object([
                ("changes", .array(changes.map(\.json))), ("libraries", .stringMap(LibraryVersions.byName)),
            ]))
        return ApplyResult(
            applied: Int(reply["applied"]?.intValue ?? 0), skipped: Int(reply["skipped"]?.intValue ?? 0),
            conflicts: Int(reply["conflicts"]?.intValue ?? 0), seq: reply["seq"]?.intValue ?? 0,
            refusedErased: Int(reply["refusedErased"]?.intValue ?? 0))
    }

    /// Calls `io.entryd.Sync.HeldFrom(node)`; an older entryd without the method answers `nil`.
    /// - Throws: the errors of ``VarlinkConnection/call(_:_:)`` but MethodNotFound.
    package func heldFrom(node: String) throws -> HLC? {
        do {
            return try connection.call(.syncHeldFrom, .object([("node", .string(node))]))["hlc"]?.stringValue.flatMap(
                HLC.init)
        } catch let error as WireError where error.known == .methodNotFound {
            return nil
        }
    }
}
