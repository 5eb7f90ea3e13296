import Foundation

extension EntryService {
    /// Syncs with one peer now (both ways) and records the outcome in its state.
    ///
    /// Syncs of the same peer never overlap: a second caller waits for the first.
    /// - Returns: what moved, and handshake warnings (differing form
    ///   definitions or reference data versions).
    /// - Throws: `io.entryd.Sync.PeerUnreachable` when the peer cannot be
    ///   reached or fails mid-way (checkpoints of finished batches are kept),
    ///   `ClockSkew` from either side, `StorageFailed`.
    public func syncWithPeer(name: String, address: String) throws -> (sync: PeerSyncResult, warnings: [String]) {
        let lock = peerLock(name)
        lock.lock()
        defer { lock.unlock() }
        func unreachable(_ reason: String) -> WireError {
            WireError(name: "io.entryd.Sync.PeerUnreachable", parameters: .object([("peer", .string(name)), ("reason", .string(reason))]))
        }
        let transport: PeerTransport
        do {
            transport = try PeerTransport(address: address, timeoutSeconds: limits.peerTimeoutSeconds)
        } catch let e as WireError {
            throw e
        } catch {
            recordPeerError(name: name, address: address, "\(error)")
            throw unreachable("\(error)")
        }
        defer { transport.close() }
        do {
            let remote = try transport.connection.call("io.entryd.Sync.Status")
            let warnings = handshakeWarnings(remote)
            let peer = VarlinkPeer(connection: transport.connection, status: remote)
            let result = try PeerSync.run(local: store, peer: peer, name: name, address: address, batch: min(1000, limits.maxBatch),
                                          layout: { [self] in layout(ofForm: $0) }, maxClockSkewMs: limits.maxClockSkewMs)
            return (result, warnings)
        } catch let skew as ClockSkewError {
            recordPeerError(name: name, address: address, "clock skew: node \(skew.node) is \(skew.aheadMs) ms ahead")
            throw skew.wire
        } catch let e as WireError {
            recordPeerError(name: name, address: address, e.description)
            throw e.name.hasPrefix("io.entryd.") ? e : unreachable(e.description)
        } catch let e as SQLiteError {
            throw e
        } catch {
            recordPeerError(name: name, address: address, "\(error)")
            throw unreachable("\(error)")
        }
    }

    /// Differences between this node and a peer's `Status` worth telling the user.
    func handshakeWarnings(_ remote: JSON) -> [String] {
        var warnings: [String] = []
        if let v = remote["dataVersion"]?.stringValue, v != ReferenceData.shared.dataVersion {
            warnings.append("reference data differ: here '\(ReferenceData.shared.dataVersion)', peer '\(v)'")
        }
        let theirs = Dictionary((remote["forms"]?.objectValue ?? []).map { ($0.0, $0.1.stringValue ?? "") }, uniquingKeysWith: { a, _ in a })
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

    /// One lock per peer name, so syncs of one peer run one at a time.
    func peerLock(_ name: String) -> NSLock {
        peerLocksLock.lock()
        defer { peerLocksLock.unlock() }
        if let l = peerLocks[name] { return l }
        let l = NSLock()
        peerLocks[name] = l
        return l
    }
}
