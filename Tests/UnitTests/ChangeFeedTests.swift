import Foundation
import Testing
@testable import EntryHub
import EntryModel

/// `ChangeFeed`: seqs in commit order, a reader that never skips, NOTIFY after each commit.
@Suite struct ChangeFeedTests {
    static func row(_ writer: Int, _ n: Int) -> ChangeFeed.Row {
        ChangeFeed.Row(node: "node-\(writer)", hlc: String(format: "%016x", n), entry: "e\(writer)-\(n)", form: "f",
                       op: "create", fields: #"{"name":"李雷"}"#, base: "{}", actor: "tester", at: "2026-01-01T00:00:00.000Z")
    }

    @Test("a commit is announced with its highest seq; a rollback neither announces nor leaves a gap")
    func notifyAfterCommit() throws {
        let db = try TestPostgresDatabase()
        let c = try db.connect()
        try PostgresSchema.migrate(c)
        let waiter = try ChangeFeed.Waiter(uri: db.uri, database: db.name)
        #expect(waiter.committedSeq == 0)
        #expect { try ChangeFeed.reserve(1, on: c) } throws: { ($0 as? PGError)?.sqlState == "25000" }
        let seqs = try c.transaction { c in try ChangeFeed.append([Self.row(1, 1), Self.row(1, 2)], on: c) }
        #expect(seqs == 1...2)
        #expect(try waiter.next(timeout: 5) == 2)
        #expect(throws: PGError.self) {
            try c.transaction { c in
                try ChangeFeed.append([Self.row(1, 3)], on: c)
                throw PGError(sqlState: "P0001", message: "give up")
            }
        }
        #expect(try waiter.next(timeout: 0.3) == nil)
        #expect(try ChangeFeed.committedSeq(on: c) == 2)
        let thread = Thread {
            usleep(100_000)
            _ = try? c.transaction { c in try ChangeFeed.append([Self.row(1, 4)], on: c) }
        }
        thread.start()
        #expect(try waiter.wait(after: 2, timeout: 10) == 3)
        #expect(try ChangeFeed.read(after: 0, limit: 10, on: try db.connect()).map(\.seq) == [1, 2, 3])
    }

    /// Committed rows, each transaction's last seq, and what the readers saw.
    final class FeedRun: @unchecked Sendable {
        let lock = NSLock()
        var committedFeed: Set<String> = []        // node/hlc of rows in committed transactions
        var announcedExpected: Set<Int64> = []     // each committed transaction's highest seq
        var committedNaive: Set<Int64> = []
        var feedTransactions = 0, naiveTransactions = 0, rolledBack = 0
        var errors: [String] = []
        func with<T>(_ body: (FeedRun) -> T) -> T { lock.lock(); defer { lock.unlock() }; return body(self) }
    }

    @Test("concurrent writers, a fast reader: every committed row exactly once, no gap; a naive seq > N reader misses rows")
    func neverSkips() throws {
        let db = try TestPostgresDatabase()
        let setup = try db.connect()
        try PostgresSchema.migrate(setup)
        try setup.execute("CREATE TABLE naive_changes (seq bigserial PRIMARY KEY, writer int NOT NULL)")
        let run = FeedRun()
        let writers = 4
        let seconds = 3.0
        let stop = Locked(false)
        let waiter = try ChangeFeed.Waiter(uri: db.uri, database: db.name)

        // The readers and the notification collector run until the writers are done and they have drained.
        let writersDone = Locked(false)
        let feedSeen = Locked<[String]>([]), naiveSeen = Locked<[Int64]>([]), announced = Locked<[Int64]>([])
        let feedPolls = Locked(0)
        let finalSeq = Locked<Int64?>(nil)
        let readers: [@Sendable () -> Void] = [
            {
                do {
                    let c = try db.connect()
                    var last: Int64 = 0
                    var drained = false
                    while !drained {
                        let done = writersDone.value
                        let page = try ChangeFeed.read(after: last, limit: 500, on: c)
                        for (seq, row) in page {
                            if seq != last + 1 { run.with { $0.errors.append("feed: \(seq) after \(last)") } }
                            last = seq
                            feedSeen.with { $0.append(row.node + "/" + row.hlc) }
                        }
                        feedPolls.with { $0 += 1 }
                        drained = done && page.isEmpty
                    }
                } catch { run.with { $0.errors.append("feed reader: \(error)") } }
            },
            {
                do {
                    let c = try db.connect()
                    var last: Int64 = 0
                    var drained = false
                    while !drained {
                        let done = writersDone.value
                        let page = try c.execute("SELECT seq FROM naive_changes WHERE seq > $1 ORDER BY seq LIMIT 500", [String(last)])
                        for r in page.rows { let seq = Int64(r[0]!)!; last = seq; naiveSeen.with { $0.append(seq) } }
                        drained = done && page.rows.isEmpty
                    }
                } catch { run.with { $0.errors.append("naive reader: \(error)") } }
            },
            {
                // Until the announcement of the last commit (announcements come in commit order).
                do {
                    let giveUp = Date(timeIntervalSinceNow: seconds + 60)
                    while Date() < giveUp {
                        if let seq = try waiter.next(timeout: 0.2) { announced.with { $0.append(seq) }; continue }
                        if let last = finalSeq.value, waiter.committedSeq >= last { break }
                    }
                } catch { run.with { $0.errors.append("waiter: \(error)") } }
            },
        ]
        let finished = DispatchGroup()
        for reader in readers {
            finished.enter()
            Thread { reader(); finished.leave() }.start()
        }

        let deadline = Date(timeIntervalSinceNow: seconds)
        runThreads(writers * 2) { w in
            do {
                let c = try db.connect()
                var n = 0
                while Date() < deadline && !stop.value {
                    let k = Int.random(in: 1...4)
                    let rollback = Int.random(in: 0..<10) == 0
                    if w < writers {
                        // Writers of the feed: work, then the reserve, then a short pause holding the counter.
                        let rows = (0..<k).map { i in Self.row(w, n + i) }
                        n += k
                        do {
                            let seqs = try c.transaction { c in
                                usleep(UInt32.random(in: 0...4000))
                                let seqs = try ChangeFeed.append(rows, on: c)
                                usleep(UInt32.random(in: 0...1000))
                                if rollback { throw PGError(sqlState: "P0001", message: "rolled back on purpose") }
                                return seqs
                            }
                            run.with {
                                $0.committedFeed.formUnion(rows.map { $0.node + "/" + $0.hlc })
                                $0.announcedExpected.insert(seqs.upperBound)
                                $0.feedTransactions += 1
                            }
                        } catch let e as PGError where e.sqlState == "P0001" { run.with { $0.rolledBack += 1 } }
                    } else {
                        // Writers of the naive table: the seq is taken at the insert, the commit comes later.
                        do {
                            let seqs = try c.transaction { c in
                                let r = try c.execute("INSERT INTO naive_changes (writer) SELECT $1 FROM generate_series(1, $2) RETURNING seq",
                                                      [String(w), String(k)])
                                usleep(UInt32.random(in: 0...5000))
                                if rollback { throw PGError(sqlState: "P0001", message: "rolled back on purpose") }
                                return r.rows.map { Int64($0[0]!)! }
                            }
                            run.with { $0.committedNaive.formUnion(seqs); $0.naiveTransactions += 1 }
                        } catch let e as PGError where e.sqlState == "P0001" { run.with { $0.rolledBack += 1 } }
                    }
                }
            } catch {
                run.with { $0.errors.append("writer \(w): \(error)") }
                stop.with { $0 = true }
            }
        }
        writersDone.with { $0 = true }
        let last = try ChangeFeed.committedSeq(on: setup)
        finalSeq.with { $0 = last }
        finished.wait()
        waiter.close()

        let seen = feedSeen.value
        run.with { r in
            #expect(r.errors.isEmpty, "\(r.errors.prefix(5))")
            #expect(r.feedTransactions > 50, "too few transactions to prove anything: \(r.feedTransactions)")
            #expect(seen.count == r.committedFeed.count, "each committed row exactly once")
            #expect(Set(seen) == r.committedFeed)
            #expect(Set(announced.value) == r.announcedExpected, "one NOTIFY per committed transaction, with its highest seq")
            #expect(announced.value.count == r.feedTransactions)
            let naive = Set(naiveSeen.value)
            let missed = r.committedNaive.subtracting(naive)
            print("""
                ChangeFeedTests: \(String(format: "%.1f", seconds)) s, \(writers) feed writers: \(r.feedTransactions) transactions, \
                \(r.committedFeed.count) rows, read in \(feedPolls.value) polls, none skipped, \(announced.value.count) NOTIFYs; \
                \(writers) naive writers: \(r.naiveTransactions) transactions, \(r.committedNaive.count) rows, \
                the naive seq > N reader missed \(missed.count); \(r.rolledBack) transactions rolled back on purpose
                """)
            #expect(naive.isSubset(of: r.committedNaive))
            #expect(!missed.isEmpty, "the naive reader was expected to skip rows that committed out of seq order")
        }
    }

    @Test("the cost of seqs in commit order: rows/s with the counter and with a bigserial")
    func cost() throws {
        let db = try TestPostgresDatabase()
        let setup = try db.connect()
        try PostgresSchema.migrate(setup)
        try setup.execute("""
            CREATE TABLE serial_changes (seq bigserial PRIMARY KEY, node text NOT NULL, hlc text NOT NULL, entry text NOT NULL,
              form text NOT NULL, op text NOT NULL, fields text NOT NULL, base text NOT NULL, actor text NOT NULL, at text NOT NULL,
              reason text, via text, UNIQUE (node, hlc))
            """)
        let writers = 4
        var lines: [String] = []
        var rates: [String: Double] = [:]
        for rowsPerTransaction in [1, 50] {
            for variant in ["bigserial (naive)", "bigserial and NOTIFY", "counter (commit order) and NOTIFY",
                            "counter and NOTIFY, append and COMMIT pipelined"] {
                let counter = variant.hasPrefix("counter")
                let notify = variant.hasPrefix("bigserial and NOTIFY")
                let pipelined = variant.hasSuffix("pipelined")
                let total = Locked(0)
                let failures = Locked<[String]>([])
                let deadline = Date(timeIntervalSinceNow: 0.5)
                let began = Date()
                runThreads(writers) { w in
                    do {
                        let c = try db.connect()
                        var n = 0
                        while Date() < deadline {
                            let rows = (0..<rowsPerTransaction).map { i in Self.row(w + 10 * rowsPerTransaction + (pipelined ? 1000 : 0) + (notify ? 2000 : 0), n + i) }
                            n += rowsPerTransaction
                            if pipelined {
                                try c.execute("BEGIN")
                                try c.pipeline([ChangeFeed.appendStatement(rows), PGStatement("COMMIT")])
                                total.with { $0 += rowsPerTransaction }
                                continue
                            }
                            try c.transaction { c in
                                if counter {
                                    try ChangeFeed.append(rows, on: c)
                                } else {
                                    let values = rows.indices.map { i in "($\(i * 4 + 1), $\(i * 4 + 2), $\(i * 4 + 3), 'f', 'create', $\(i * 4 + 4), '{}', 'tester', 'x')" }
                                    try c.execute("INSERT INTO serial_changes (node, hlc, entry, form, op, fields, base, actor, at) VALUES "
                                                  + values.joined(separator: ", "),
                                                  rows.flatMap { [$0.node, $0.hlc, $0.entry, $0.fields] })
                                    if notify { try c.notify(ChangeFeed.channel, payload: rows[0].hlc) }
                                }
                            }
                            total.with { $0 += rowsPerTransaction }
                        }
                    } catch { failures.with { $0.append("\(error)") } }
                }
                #expect(failures.value.isEmpty, "\(failures.value)")
                let rate = Double(total.value) / Date().timeIntervalSince(began)
                rates["\(rowsPerTransaction) \(variant)"] = rate
                lines.append("\(rowsPerTransaction) row(s)/transaction, \(variant): \(Int(rate)) rows/s")
            }
        }
        print("ChangeFeedTests cost, \(writers) writers, fsync on:\n  " + lines.joined(separator: "\n  "))
        #expect(rates.values.allSatisfy { $0 > 0 })
    }
}
