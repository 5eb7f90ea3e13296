import Foundation
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync

extension ConflictRecord {
    /// The wire form (doc/protocol.md `Conflict`).
    package var json: JSON {
        .object([
            ("id", .string(id)), ("entry", .string(entry)), ("field", .string(field)), ("kept", .string(kept)),
            ("keptHlc", .string(keptHlc)), ("keptNode", .string(keptNode)), ("lost", .string(lost)),
            ("lostHlc", .string(lostHlc)), ("lostNode", .string(lostNode)), ("detectedAt", .string(detectedAt)),
            ("resolved", .bool(resolved)),
        ])
    }
}

extension EntryService {
    /// `io.entryd.Sync.HeldFrom(node)`: the highest HLC of `node`'s changes held here
    /// (absent when none), so a node can tell it lost changes its peer still has.
    func heldFrom(_ c: CallContext, _ p: Parameters) throws {
        let hlc = try store.highestHLC(madeOn: try p.string("node"))
        try reply(c, hlc.map { [("hlc", .string($0.description))] } ?? [])
    }

    /// The field layout of form `name` (the registration layout when the form is unknown here).
    func layout(ofForm name: String) -> FieldLayout {
        forms.form(named: name)?.layout ?? .registration
    }

    /// `io.entryd.Sync.Status()`: node id, seq, HLC, entry counts, open conflicts,
    /// peers, version, database path, reference data version, form hashes and
    /// limits; and the incarnation (id, start seq, why it began: doc/design.md "Incarnations");
    /// and the versions of the libraries that canonicalise values (``LibraryVersions``);
    /// the number of erasures and of changes refused because their entry was erased;
    /// the last compaction, if any (doc/design.md "Compaction").
    /// For callers below admin (``Caller/seesLocations``) `database` and each
    /// peer's `address` are `""` (``StatusReply/redacted(_:)``).
    func status(_ c: CallContext) throws {
        let counts = try store.counts()
        let hlc = try store.currentHLC()
        let conflicts = try store.openConflictCount()
        let forms = self.forms
        let members: [(String, JSON)] =
            [
                ("node", .string(store.nodeID)), ("seq", .int(counts.seq)), ("hlc", .string(hlc.description)),
                ("entries", .int(Int64(counts.entries))), ("deleted", .int(Int64(counts.deleted))),
                ("conflicts", .int(Int64(conflicts))), ("peers", .array(try peerList().map(peerJSON))),
                ("version", .string(EntrydVersion.string)), ("database", .string(store.location)),
                ("instance", instance.map(JSON.string)),
                ("dataVersion", .string(ReferenceData.shared.dataVersion)),
                ("forms", .object(forms.forms.map { ($0.name, .string($0.definitionHash)) })),
                ("limits", .object(limits.byKey.map { ($0.0, .int(Int64($0.1))) })),
                ("incarnation", .string(store.incarnation.id)), ("incarnationSeq", .int(store.incarnation.startSeq)),
                ("incarnationReason", store.incarnation.reason.map(JSON.string)),
                ("incarnationHlc", .string(store.incarnation.since.description)),
                ("libraries", .object(LibraryVersions.all.map { ($0.name, .string($0.version)) })),
                ("erasures", .int(Int64(try store.erasures().count))),
                ("refusedErased", .int(Int64(try store.refusedErasedCount()))),
                ("compaction", try store.lastCompaction()?.json),
            ].compactMap { name, value in value.map { (name, $0) } }
        let status = JSON.object(members)
        try c.send(VarlinkReply(parameters: c.caller.seesLocations ? status : StatusReply.redacted(status)))
    }

    /// Configured peers (with their stored state, or a fresh one before the
    /// first sync), then peers synced by address on demand.
    func peerList() throws -> [PeerState] {
        let stored = try store.peerStates()
        var list = peers.map { config in
            // A configured peer is where the configuration says, also before its next sync
            // records the new address (PeerSync.run).
            var state =
                stored.first(where: { $0.name == config.name })
                ?? PeerState(name: config.name, address: config.address, node: nil, pulledSeq: 0, pushedSeq: 0)
            state.address = config.address
            return state
        }
        list += stored.filter { s in !list.contains(where: { $0.name == s.name }) }
        return list
    }

    /// The wire `Peer` (doc/protocol.md `Peer`); `nil` members are left out.
    func peerJSON(_ p: PeerState) -> JSON {
        var m: [(String, JSON)] = [("name", .string(p.name)), ("address", .string(p.address))]
        if let node = p.node { m.append(("node", .string(node))) }
        m += [("pulledSeq", .int(p.pulledSeq)), ("pushedSeq", .int(p.pushedSeq))]
        if let t = p.lastSync { m.append(("lastSync", .string(t))) }
        if let e = p.lastError { m.append(("lastError", .string(e))) }
        if let i = p.incarnation { m.append(("incarnation", .string(i))) }
        if let n = p.notice { m.append(("notice", .string(n))) }
        return .object(m)
    }

    /// `Changes(since, limit, excludeNode, excludeSince)`; with `more`, streams one reply per
    /// committed batch until the client hangs up (doc/protocol.md). The stream keeps
    /// only its cursor: each wake-up re-reads the change log, so a slow reader
    /// costs no memory in the daemon and never holds up the writer.
    func changes(_ c: CallContext, _ p: Parameters) throws {
        let since = try p.int("since")
        guard since >= 0 else { throw EntryError.invalidParameter("since") }
        let limit = Int(try p.optionalInt("limit") ?? 1000)
        guard limit > 0 else { throw EntryError.invalidParameter("limit") }
        let pageSize = min(limit, limits.maxBatch)
        let exclude = try p.optionalString("excludeNode")
        let excludeSince =
            try p.optionalString("excludeSince").map { text in
                guard let hlc = HLC(text) else { throw EntryError.invalidParameter("excludeSince") }
                return hlc
            } ?? .zero
        // A pull without the caller's own changes acknowledges `since` for that node:
        // compaction never folds what it has not acknowledged (doc/design.md "Compaction").
        if let exclude { try store.acknowledge(node: exclude, since: since) }
        let incarnation = store.incarnation.id
        /// One `Changes` reply: `{changes, last, incarnation}` (the seqs' incarnation).
        func page(_ changes: [JSON], _ last: Int64) -> JSON {
            .object([("changes", .array(changes)), ("last", .int(last)), ("incarnation", .string(incarnation))])
        }
        // Each change comes encoded from its row (EntryStore.wireChanges): a hub serves it once per puller.
        let first = try store.wireChanges(
            since: since, limit: pageSize, excludeNode: exclude, excludeSince: excludeSince)
        guard c.call.more else {
            try reply(
                c,
                [
                    ("changes", .array(first.changes)), ("last", .int(first.last)),
                    ("incarnation", .string(incarnation)),
                ])
            return
        }
        var cursor = first.last
        try c.send(VarlinkReply(parameters: page(first.changes, cursor), continues: true))
        // A stream ends when the node begins a new incarnation under it (a hub's database
        // put back while it runs): its seqs start again lower, so the client reads the new
        // incarnation (Status, then Changes) as after a restore instead of waiting for
        // seqs past its cursor that belong to another history.
        while !c.clientHungUp(), store.incarnation.id == incarnation {
            guard let committed = store.commits.wait(after: cursor, timeout: 1.0) else { break }
            while committed > cursor {
                let next = try store.wireChanges(
                    since: cursor, limit: pageSize, excludeNode: exclude, excludeSince: excludeSince)
                if next.last == cursor { break }
                cursor = next.last
                if !next.changes.isEmpty {
                    try c.send(VarlinkReply(parameters: page(next.changes, cursor), continues: true))
                }
            }
        }
        // The daemon is stopping, the client left, or a new incarnation began: end the stream cleanly.
        try? c.send(VarlinkReply(parameters: page([], cursor)))
    }

    /// `io.entryd.Sync.Apply(changes, libraries?)`, recorded with the caller's user name as `via`;
    /// `refusedErased` counts the changes refused because their entry was erased.
    /// Values are re-spelled under this node's rules unless `libraries` (the
    /// sender's) equal this node's ``LibraryVersions``.
    /// - Throws: `LimitExceeded(max-batch)`; `InvalidParameter(changes)` for a
    ///   malformed change; `io.entryd.Sync.ClockSkew` (nothing applied).
    func applyChanges(_ c: CallContext, _ p: Parameters) throws {
        let items = try p.array("changes")
        guard items.count <= limits.maxBatch else {
            throw EntryError.limitExceeded("max-batch", maximum: limits.maxBatch)
        }
        let changes = try items.map { try ChangeRecord(json: $0) }
        let sameRules = try p.optionalStringMap("libraries") == LibraryVersions.byName
        let r = try store.apply(
            changes, via: c.caller.userName, layout: { [self] in layout(ofForm: $0) },
            maxClockSkewMs: limits.maxClockSkewMs, pulled: nil, respell: !sameRules)
        try reply(
            c,
            [
                ("applied", .int(Int64(r.applied))), ("skipped", .int(Int64(r.skipped))),
                ("conflicts", .int(Int64(r.conflicts))), ("seq", .int(r.seq)),
                ("refusedErased", .int(Int64(r.refusedErased))),
            ])
    }

    /// `io.entryd.Sync.ListConflicts(entry?, includeResolved?)`: oldest first. An
    /// `entry` that is not a UUID is matched as given (so matches nothing); one
    /// with a control character is not looked up (PostgreSQL refuses a NUL).
    func listConflicts(_ c: CallContext, _ p: Parameters) throws {
        let entry = try p.optionalString("entry").map { UUIDv7.canonical($0) ?? $0 }
        let includeResolved = try p.optionalBool("includeResolved") ?? false
        let list =
            try entry.map(FreeText.isLineSafe) == false
            ? [] : store.conflicts(entry: entry, includeResolved: includeResolved)
        try reply(c, [("conflicts", .array(list.map(\.json)))])
    }

    /// `io.entryd.Sync.Resolve(id, useLost?)`; the change is recorded with reason
    /// `resolve conflict ID`.
    /// - Throws: `io.entryd.Sync.ConflictNotFound` (at once for an id with a
    ///   control character, which no conflict has); `EntryNotFound`.
    func resolve(_ c: CallContext, _ p: Parameters) throws {
        let id = try p.string("id")
        guard FreeText.isLineSafe(id) else { throw EntryError.conflictNotFound(id) }
        let useLost = try p.optionalBool("useLost") ?? false
        let conflict = try store.resolveConflict(
            id: id, useLost: useLost, layout: { [self] in layout(ofForm: $0) },
            origin: WriteOrigin(actor: c.actor, reason: "resolve conflict \(id)"))
        try reply(c, [("conflict", conflict.json)])
    }

    /// `io.entryd.Sync.SyncPeer(peer)`: a configured peer by name, or an ad-hoc
    /// `unix:` address; `exec:` runs only from the configuration (doc/design.md "Peers").
    /// - Throws: `io.entryd.Sync.PeerNotFound`; `InvalidParameter(peer)` for a `unix:`
    ///   address with a control character or a line or paragraph separator; what
    ///   ``syncWithPeer(name:address:)`` throws.
    func syncPeer(_ c: CallContext, _ p: Parameters) throws {
        let name = try p.string("peer")
        let address: String
        if let configured = peers.first(where: { $0.name == name }) {
            address = configured.address
        } else if name.hasPrefix("unix:") {
            // A socket path is a C string: a NUL would cut it (connecting elsewhere, and the
            // peer's state kept under a shorter name). No control character belongs in one.
            guard FreeText.isLineSafe(name) else { throw EntryError.invalidParameter("peer") }
            address = name
        } else {
            // Not configured: an exec: address is refused like an unknown name, since a
            // client must never make the daemon run a command (doc/design.md "Peers").
            throw EntryError.peerNotFound(name)
        }
        let result = try syncWithPeer(name: name, address: address)
        // Re-reads and re-sends are warnings too: the caller learns why the sync moved so much.
        try reply(
            c,
            [
                ("pulled", .int(Int64(result.sync.pulled))), ("pushed", .int(Int64(result.sync.pushed))),
                ("conflicts", .int(Int64(result.sync.conflicts))),
                ("warnings", .array(result.warnings.map { .string($0) })),
                ("refusedErased", .int(Int64(result.sync.refusedErased))),
            ])
    }
}
