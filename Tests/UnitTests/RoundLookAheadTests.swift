import Foundation
import Synchronization
import Testing
@testable import EntryLedger
@testable import EntryModel

/// Applies that meet in one write round: on a database server the round reads
/// ahead for all of them in one round trip (``WriteContext/lookAhead(_:jobs:)``);
/// each Apply still sees what the ones before it in the round wrote, and one
/// that fails leaves the others' outcome as if each had run alone.
@Suite struct RoundLookAheadTests {
    let layout = FieldLayout.registration
    let peer = UUIDv7.generate()

    func change(
        _ hlc: HLC, _ entry: String, _ op: ChangeOp, _ fields: [String: String], base: [String: String]
    ) -> ChangeRecord {
        ChangeRecord(
            seq: 0, node: peer, hlc: hlc, entry: entry, form: "f", op: op, fields: fields, base: base, actor: "x",
            at: Timestamp.rfc3339(milliseconds: hlc.milliseconds))
    }

    @Test(
        "Applies queued into one round: in order, each sees the earlier ones' writes, a refused one changes nothing",
        arguments: StoreKind.allCases)
    func oneRound(kind: StoreKind) throws {
        let db = TestDatabase()
        let store = try kind.open(db)
        defer { store.close() }
        let now = HybridClock.systemMilliseconds()
        let tick = { (n: UInt16) in HLC(milliseconds: now, counter: n) }
        let e1 = UUIDv7.generate(milliseconds: now)
        let e2 = UUIDv7.generate(milliseconds: now)
        let apply: @Sendable ([ChangeRecord]) throws -> ApplyResult = { changes in
            try store.apply(changes, via: "peer", layout: { _ in .registration }, maxClockSkewMs: 60_000)
        }
        // Committed before the round: the entry the round erases.
        _ = try apply([change(tick(1), e2, .create, ["name": "乙"], base: ["name": ""])])
        let create = change(tick(2), e1, .create, ["name": "甲"], base: ["name": ""])
        let batches: [[ChangeRecord]] = [
            [create],
            [change(tick(3), e1, .update, ["name": "甲二"], base: ["name": tick(2).description])],
            [create],  // the same change again: skipped
            [change(HLC(milliseconds: now + 3_600_000, counter: 0), e1, .update, ["name": "未来"], base: [:])],
            [change(tick(4), e2, .erase, [:], base: [:])],
            [change(tick(5), e2, .update, ["name": "乙二"], base: ["name": tick(1).description])],
            [change(tick(6), e1, .update, ["name": "甲三"], base: ["name": tick(3).description])],
        ]
        // A job that holds the writer, so that every Apply below queues for the next round.
        let gate = DispatchSemaphore(value: 0)
        let blocker = try store.writer.enqueue { _ in gate.wait() }
        while store.writer.queued > 0 { usleep(1_000) }
        let outcomes = Mutex<[Int: Result<ApplyResult, any Error>]>([:])
        let group = DispatchGroup()
        for (i, batch) in batches.enumerated() {
            group.enter()
            Thread {
                defer { group.leave() }
                let outcome = Result { try apply(batch) }
                outcomes.withLock { $0[i] = outcome }
            }.start()
            // One at a time, so the queue holds them in this order.
            while store.writer.queued < i + 1 { usleep(1_000) }
        }
        let roundsBefore = store.writer.lookAheadRounds
        gate.signal()
        try blocker.wait()
        group.wait()
        let results = outcomes.withLock { $0 }
        func result(_ i: Int) throws -> ApplyResult { try #require(try results[i]?.get()) }
        #expect(try result(0).applied == 1)
        #expect(try result(1).applied == 1 && result(1).conflicts == 0)
        #expect(try result(2).skipped == 1 && result(2).applied == 0)
        #expect(throws: EntryError.self) { try results[3]?.get() }
        #expect(try result(4).applied == 1)
        #expect(try result(5).refusedErased == 1 && result(5).applied == 0)
        #expect(try result(6).applied == 1 && result(6).conflicts == 0)
        #expect(try store.get(e1)?.fields["name"] == "甲三")
        #expect(try store.get(e2) == nil)
        let log = try store.changes(since: 0, limit: 100, excludeNode: nil, excludeSince: .zero).changes
        #expect(log.map(\.hlc) == [tick(2), tick(3), tick(4), tick(6)])
        #expect(try store.openConflictCount() == 0)
        // On a server the round read ahead once for its Applies; SQLite has nothing to read ahead.
        #expect(store.writer.lookAheadRounds - roundsBefore == (kind == .postgres ? 1 : 0))
    }
}
