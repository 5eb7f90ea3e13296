import EntryModel
import EntryLedger
import EntryProtocol
import Foundation
import Synchronization

/// What one ``PeerSync/run(local:peer:name:address:batch:layout:maxClockSkewMs:)`` moved.
package struct PeerSyncResult: Sendable, Equatable {
    /// Changes pulled from the peer and applied here (skipped ones not counted).
    package var pulled = 0
    /// Changes the peer applied from this node (skipped ones not counted).
    package var pushed = 0
    /// Conflict records created here while pulling.
    package var conflicts = 0
    /// Pulled values re-spelled here under this node's rules (``ApplyResult/recanonicalised``).
    package var recanonicalised = 0
    /// Changes refused because their entry was erased: pulled ones refused
    /// here and pushed ones refused by the peer (doc/design.md "Erasure").
    package var refusedErased = 0
    /// Why this sync re-read the peer or re-sent to it, one sentence each
    /// (doc/design.md "Incarnations"); empty for an ordinary sync.
    package var notices: [String] = []
}

/// Two-way sync with one peer (doc/design.md "Sync", "Peers", "Incarnations").
///
/// Pull: the peer's changes since the stored checkpoint, without our own,
/// applied batch by batch; each batch and its checkpoint commit in one
/// transaction, so an interrupted sync resumes without loss or duplicates.
/// Push: our changes the peer has not seen (without its own), then our push
/// checkpoint. A push interrupted after the peer applied but before the
/// checkpoint is sent again next time and skipped there (Apply is idempotent).
///
/// A peer that went back in time — a new incarnation, a seq below the pull
/// checkpoint, or a log whose change at the checkpoint's mark is another — is
/// re-read from where its log still agrees (its incarnation's start, else 0)
/// and sent everything again. A node's own changes are left out of what it is
/// sent only from its incarnation's start on (``Incarnation/since``), so a
/// restored node gets back, from any peer and at any later time, the changes
/// it made before and lost. The peer's incarnation is stored only when the
/// sync completes, so an interrupted one starts over.
package enum PeerSync {
    /// Syncs `local` with `peer` both ways.
    /// - Parameters:
    ///   - local: this node's store (any ``EntryStore``).
    ///   - name: the peer's name (its checkpoints are stored under it).
    ///   - batch: changes per Changes/Apply call.
    /// - Throws: what the peer link or the store throws; checkpoints of the
    ///   batches done so far are kept.
    package static func run(
        local: EntryStore, peer: any PeerLink, name: String, address: String, batch: Int = 1000,
        layout: @escaping (String) -> FieldLayout, maxClockSkewMs: Int
    ) throws -> PeerSyncResult {
        let them = try peer.identity()
        guard them.node != local.nodeID else {
            // Syncing with itself, or with a copy of its database that serves under its id:
            // each would take the other's changes for its own and skip them.
            throw EntryError.peerUnreachable(
                peer: name,
                reason: "the peer has this node's own id \(them.node): it is this daemon, "
                    + "or a copy of its database serves there; start the copy once with --as-new-node")
        }
        var state =
            try local.peerState(name) ?? PeerState(name: name, address: address, node: nil, pulledSeq: 0, pushedSeq: 0)
        if state.address != address {
            // The peer moved (e.g. an edge pointed at another instance of its hub): the same
            // node keeps its checkpoints; Status shows where it is now.
            state.address = address
            try local.savePeerState(state)
        }
        var result = PeerSyncResult()
        var resendTheirs = false
        if state.node != them.node {
            // A new peer, or its database was replaced: start over (Apply skips what we have).
            if state.node != nil {
                result.notices.append(
                    "peer '\(name)' is now node \(them.node) (was \(state.node!)): read from the start and sent everything"
                )
            }
            state = PeerState(name: name, address: address, node: them.node, pulledSeq: 0, pushedSeq: 0)
            try local.savePeerState(state)
        } else if let since = state.expired {
            // Compaction passed this peer by (doc/design.md "Compaction"): what it holds may
            // be older than what this node folded. Start over both ways from the folded state.
            result.notices.append(
                "peer '\(name)' was expired (silent past peer-expiry, marked \(since)): "
                    + "read from the start and sent everything")
            state.pulledSeq = 0
            state.pushedSeq = 0
            state.mark = nil
            state.expired = nil
            try local.savePeerState(state)
        } else if let (from, why) = try wentBack(them, state: state, peer: peer) {
            result.notices.append("peer '\(name)' \(why): read again from seq \(from) and sent everything")
            state.pulledSeq = from
            state.pushedSeq = 0
            state.mark = nil
            // Without a new incarnation (a snapshot put back whole) the peer's own
            // changes from before it are not told apart: send them all this once.
            resendTheirs = them.incarnation?.id == state.incarnation
            try local.savePeerState(state)
        }
        // The peer holds a change made here that this node no longer has: this database went
        // back without noticing (a snapshot put back with its marker). Pull this node's own
        // changes too, this once.
        var pullOwn = false
        if let held = try peer.heldFrom(node: local.nodeID), try !local.holds(node: local.nodeID, hlc: held) {
            pullOwn = true
            result.notices.append(
                "peer '\(name)' holds a change made here (\(held)) that this node no longer has: its database went back; "
                    + "this node's own changes were pulled back too")
        }
        if let synced = state.syncedIncarnation, synced != local.incarnation.id {
            result.notices.append(
                "this node began a new incarnation (\(local.incarnation.reason ?? "no reason recorded")) "
                    + "since the last sync with peer '\(name)': it sends back the changes this node made before")
        }
        let exclude = pullOwn ? nil : local.nodeID
        var page = try peer.changes(
            since: state.pulledSeq, limit: batch, excludeNode: exclude, excludeSince: local.incarnation.since)
        while page.last > state.pulledSeq {
            let last = page.last
            let mark = page.changes.last.map(Self.mark)
            // The next page is asked for, and decoded, on another thread while this one is
            // applied: the peer encodes and this node stores at once. This thread touches
            // the link again only after take().
            let excludeSince = local.incarnation.since
            let next = PrefetchedPage {
                try peer.changes(since: last, limit: batch, excludeNode: exclude, excludeSince: excludeSince)
            }
            let applied: ApplyResult
            do {
                applied = try local.apply(
                    page.changes, via: name, layout: layout, maxClockSkewMs: maxClockSkewMs,
                    pulled: PullCheckpoint(peer: name, pulledSeq: last, mark: mark),
                    respell: them.libraries != LibraryVersions.byName)
            } catch {
                _ = try? next.take()
                throw error
            }
            state.pulledSeq = last
            if let mark { state.mark = mark }
            result.pulled += applied.applied
            result.conflicts += applied.conflicts
            result.recanonicalised += applied.recanonicalised
            result.refusedErased += applied.refusedErased
            page = try next.take()
        }
        while true {
            let page = try local.changes(
                since: state.pushedSeq, limit: batch, excludeNode: resendTheirs ? nil : them.node,
                excludeSince: them.incarnation?.since ?? .zero)
            if page.last <= state.pushedSeq { break }
            state.pushedSeq = page.last
            // A page with nothing to send (only the peer's own changes, just pulled) moves the
            // checkpoint without a commit of its own: the final save below keeps it, and if that
            // is lost the next sync reads the same empty page again.
            guard !page.changes.isEmpty else { continue }
            let applied = try peer.apply(page.changes)
            result.pushed += applied.applied
            result.refusedErased += applied.refusedErased
            try local.savePeerState(state)
        }
        state.lastSync = Timestamp.rfc3339(milliseconds: HybridClock.systemMilliseconds())
        state.lastError = nil
        state.incarnation = them.incarnation?.id
        state.syncedIncarnation = local.incarnation.id
        if !result.notices.isEmpty { state.notice = "\(state.lastSync!): " + result.notices.joined(separator: "; ") }
        try local.savePeerState(state)
        return result
    }

    /// A pulled change's fingerprint: `SEQ NODE HLC`.
    static func mark(_ change: ChangeRecord) -> String { "\(change.seq) \(change.node) \(change.hlc)" }

    /// Whether the peer's log went back since the stored state: the seq to read
    /// it again from, and why; `nil` when it did not.
    static func wentBack(_ them: PeerIdentity, state: PeerState, peer: any PeerLink) throws -> (Int64, String)? {
        if let incarnation = them.incarnation, let seen = state.incarnation, incarnation.id != seen {
            return (
                min(state.pulledSeq, incarnation.startSeq),
                "began a new incarnation (\(incarnation.reason ?? "no reason given"))"
            )
        }
        if let seq = them.seq, seq < state.pulledSeq {
            return (
                min(seq, them.incarnation?.startSeq ?? 0),
                "went back from seq \(state.pulledSeq) to \(seq) without a new incarnation (put back from a snapshot?)"
            )
        }
        // The change pulled last must still be there under its seq.
        if let mark = state.mark, let seq = mark.split(separator: " ").first.flatMap({ Int64($0) }), seq > 0 {
            let page = try peer.changes(since: seq - 1, limit: 1, excludeNode: nil, excludeSince: .zero)
            if let change = page.changes.first, change.seq == seq, Self.mark(change) != mark {
                return (
                    min(state.pulledSeq, them.incarnation?.startSeq ?? 0),
                    "holds another change at seq \(seq) than the one pulled (put back from a snapshot?)"
                )
            }
        }
        return nil
    }
}

/// A page of a peer's change log fetched on a thread of its own while the
/// caller applies the page before it. The caller must not use the peer link
/// until ``take()`` has returned (the link serves one thread at a time).
final class PrefetchedPage: Sendable {
    private let done = DispatchSemaphore(value: 0)
    /// The fetch's outcome: set before `done` is signalled.
    private let result = Mutex<Result<(changes: [ChangeRecord], last: Int64), any Error>?>(nil)

    /// Starts `fetch` on a new thread.
    init(_ fetch: @escaping () throws -> (changes: [ChangeRecord], last: Int64)) {
        nonisolated(unsafe) let fetch = fetch
        let thread = Thread { [self] in
            let fetched = Result { try fetch() }
            result.withLock { $0 = fetched }
            done.signal()
        }
        thread.name = "entryd-sync-fetch"
        thread.start()
    }

    /// Waits for the page. - Throws: what the fetch threw.
    func take() throws -> (changes: [ChangeRecord], last: Int64) {
        done.wait()
        return try result.withLock { $0! }.get()
    }
}
