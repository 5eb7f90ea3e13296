import Foundation
@testable import EntryModel
@testable import EntryLedger
@testable import EntrySync

/// What the suites that sync stores of one kind at store level share
/// (DeleteEditConflictTests, EqualStampTests): stores in fresh places, a sync
/// both ways, the registration layout and a write origin.
protocol TwoNodeSuite {}

extension TwoNodeSuite {
    var layout: FieldLayout { .registration }

    func origin(_ actor: String) -> WriteOrigin { WriteOrigin(actor: actor) }

    /// `n` stores of `kind` in fresh places (the caller closes them and keeps the
    /// places until then). With `frozen`, every store reads one fixed wall clock:
    /// every write falls in the same millisecond, so nodes whose clocks a sync
    /// aligned stamp their writes alike.
    func nodes(_ kind: StoreKind, _ n: Int = 2, frozen: Bool = false) throws -> ([EntryStore], [TestDatabase]) {
        let dbs = (0..<n).map { _ in TestDatabase() }
        let now = HybridClock.systemMilliseconds()
        let clock: @Sendable () -> UInt64 = { frozen ? now : HybridClock.systemMilliseconds() }
        return (try dbs.map { try kind.open($0, readers: 2, wallClock: clock) }, dbs)
    }

    /// `a` syncs with `b` both ways.
    @discardableResult
    func sync(_ a: EntryStore, _ b: EntryStore) throws -> PeerSyncResult {
        try PeerSync.run(
            local: a, peer: LocalPeer(store: b, via: "peer"), name: "peer-\(b.nodeID.prefix(8))", address: "test:",
            batch: 100, layout: { _ in .registration }, maxClockSkewMs: 300_000)
    }
}
