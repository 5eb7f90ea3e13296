import Foundation
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync

extension EntryService {
    /// Syncs with one peer now (both ways) and records the outcome in its state.
    ///
    /// Syncs of the same peer never overlap (``PeerRuns``): a caller that finds
    /// one running takes that run's outcome, with a warning saying so, unless
    /// this node committed changes since it started; then it waits and runs its own.
    /// - Returns: what moved, and warnings (differing form definitions or
    ///   reference data versions; a joined run).
    /// - Throws: `io.entryd.Sync.PeerUnreachable` when the peer cannot be
    ///   reached or fails mid-way (checkpoints of finished batches are kept),
    ///   `ClockSkew` from either side, `StorageFailed`.
    func syncWithPeer(name: String, address: String) throws -> PeerSyncOutcome {
        let store = self.store
        switch peerRuns.begin(peer: name, callerSeq: store.commits.lastSeq, currentSeq: { store.commits.lastSeq }) {
        case .joined(let outcome):
            var joined = try outcome.get()
            joined.warnings.append("a sync with '\(name)' was already running when asked; these are its counts")
            return joined
        case .run(let run):
            let outcome = Result { try runSync(name: name, address: address) }
            peerRuns.finish(name, run, outcome: outcome)
            // Configured peers only: an ad-hoc peer's name is its address.
            if peers.contains(where: { $0.name == name }) {
                metrics.syncEnded(peer: name, succeeded: (try? outcome.get()) != nil)
            }
            return try outcome.get()
        }
    }

    /// One sync with a peer: connect, handshake, ``PeerSync/run``.
    private func runSync(name: String, address: String) throws -> PeerSyncOutcome {
        let transport: PeerTransport
        do {
            transport = try PeerTransport(address: address, timeoutSeconds: limits.peerTimeoutSeconds)
        } catch let e as EntryError {
            throw e
        } catch {
            throw peerFailure(error, name: name, address: address)
        }
        defer { transport.close() }
        do {
            let remote = try transport.connection.call(.syncStatus)
            let warnings = handshakeWarnings(remote)
            let peer = VarlinkPeer(connection: transport.connection, status: remote)
            let result = try PeerSync.run(
                local: store, peer: peer, name: name, address: address, batch: min(1000, limits.maxBatch),
                layout: { [self] in layout(ofForm: $0) }, maxClockSkewMs: limits.maxClockSkewMs)
            for notice in result.notices { log?.notice(notice + " (pulled \(result.pulled), pushed \(result.pushed))") }
            return PeerSyncOutcome(sync: result, warnings: result.notices + warnings)
        } catch {
            throw peerFailure(error, name: name, address: address)
        }
    }

    /// What a failed sync with peer `name` answers, recorded as the peer's last
    /// error: this node's storage errors as they are (not recorded: the peer is
    /// not at fault); domain errors (clock skew, a malformed change) and the
    /// peer's own io.entryd errors as they are; the peer's `PermissionDenied`
    /// as `PeerUnreachable` with `role`, the role this node lacks there, and a
    /// reason saying where to give it (answered as it came, it would read as
    /// the caller's own role being too low here; without `role`, as a failure
    /// worth retrying); anything else — the transport failing, a
    /// protocol-level error of the peer — as `PeerUnreachable`.
    func peerFailure(_ error: any Error, name: String, address: String) -> any Error {
        switch error {
        case let e as any StorageError:
            return e
        case let e as EntryError:
            recordPeerError(name: name, address: address, e.description)
            return e
        case let e as WireError where e.name.hasPrefix("io.entryd."):
            recordPeerError(name: name, address: address, e.description)
            return e
        case let e as WireError where e.known == .permissionDenied:
            let refusal =
                e.parameters["gateway"]?.boolValue == true
                ? EntryError.peerRefusedGateway(peer: name)
                : EntryError.peerRefused(peer: name, role: e.parameters["role"]?.stringValue ?? "admin")
            recordPeerError(name: name, address: address, refusal.description)
            return refusal
        default:
            recordPeerError(name: name, address: address, "\(error)")
            return EntryError.peerUnreachable(peer: name, reason: "\(error)")
        }
    }

    /// Differences between this node and a peer's `Status` worth telling the user.
    func handshakeWarnings(_ remote: JSON) -> [String] {
        var warnings: [String] = []
        if let v = remote["dataVersion"]?.stringValue, v != ReferenceData.shared.dataVersion {
            warnings.append("reference data differ: here '\(ReferenceData.shared.dataVersion)', peer '\(v)'")
        }
        let theirs = Dictionary(
            (remote["forms"]?.objectValue ?? []).map { ($0.0, $0.1.stringValue ?? "") }, uniquingKeysWith: { a, _ in a }
        )
        for form in forms.forms {
            if let hash = theirs[form.name], hash != form.definitionHash {
                warnings.append("form '\(form.name)' is defined differently on the peer")
            } else if theirs[form.name] == nil {
                warnings.append("form '\(form.name)' is not defined on the peer")
            }
        }
        return warnings
    }

    /// Stores `message` as the peer's `lastError` (creating its state if new).
    /// Best effort: storage errors are ignored.
    func recordPeerError(name: String, address: String, _ message: String) {
        // Addresses tried once from a call are not remembered unless a sync with them once succeeded.
        let known = (try? store.peerState(name)) ?? nil
        guard known != nil || peers.contains(where: { $0.name == name }) else { return }
        var state = known ?? PeerState(name: name, address: address, node: nil, pulledSeq: 0, pushedSeq: 0)
        state.lastError = message
        try? store.savePeerState(state)
    }
}

extension EntryService: PeerSyncHost {
    /// The seq of this node's last committed change.
    package var lastCommittedSeq: Int64 { store.commits.lastSeq }

    /// ``syncWithPeer(name:address:)`` for the scheduler (warnings are for interactive callers).
    package func syncPeer(_ peer: PeerConfig) throws -> PeerSyncResult {
        try syncWithPeer(name: peer.name, address: peer.address).sync
    }
}
