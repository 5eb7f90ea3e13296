import Foundation
import Testing
@testable import EntryHub
@testable import EntryLedger
import EntryModel
import EntryProtocol
@testable import EntryServer

/// Several store instances on one PostgreSQL database (issue 19 items 2, 3, 6):
/// one node, one change log that a reader never skips through, one clock,
/// commits of one instance waking the others, and a database that went back
/// in time beginning one new incarnation.
@Suite(.serialized) struct HubInstancesTests {
    let layout = FieldLayout.registration
    let origin = WriteOrigin(actor: "tester")

    /// Instance `n` of the database `db`: its own marker file in `directory`.
    static func instance(
        _ db: TestPostgresDatabase, _ n: Int, in directory: TestDatabase, readers: Int = 2,
        wallClock: @escaping @Sendable () -> UInt64 = HybridClock.systemMilliseconds
    ) throws -> EntryStore {
        try PostgresStoreFactory.open(
            uri: db.databaseURI, markerDirectory: directory.directory, instance: "i\(n)", readers: readers,
            wallClock: wallClock)
    }

    /// Six changes, three through `a` then three through `b`; both signals at 6.
    func writeSix(_ a: EntryStore, _ b: EntryStore) throws {
        for i in 0..<6 {
            _ = try (i < 3 ? a : b).create(
                form: "f", id: nil, fields: ["name": "n\(i)"], layout: layout, origin: origin)
        }
        #expect(a.commits.wait(after: 5, timeout: 10) == 6 && b.commits.wait(after: 5, timeout: 10) == 6)
    }

    /// The failover's loss: the database keeps seqs 1…3 only (the standby that took over had no more).
    func goBackToThree(_ db: TestPostgresDatabase) throws {
        try db.connect().execute(
            """
            DELETE FROM entries WHERE seq > 3; DELETE FROM changes WHERE seq > 3;
            UPDATE change_counter SET seq = 3, hlc = (SELECT max(('x' || hlc)::bit(64)::bigint) FROM changes)
            """)
    }

    @Test("instances started at once on a new database are one node: one node id, one incarnation, one change log")
    func oneNode() throws {
        let db = try TestPostgresDatabase()
        let place = TestDatabase()
        let opened = Locked<[Int: EntryStore]>([:])
        let errors = Locked<[String]>([])
        let directory = place.directory
        runThreads(4) { n in
            do {
                let store = try PostgresStoreFactory.open(
                    uri: db.databaseURI, markerDirectory: directory, instance: "i\(n)", readers: 1)
                opened.with { $0[n] = store }
            } catch { errors.with { $0.append("\(error)") } }
        }
        #expect(errors.value == [])
        let stores = opened.value.values.map { $0 }
        defer { stores.forEach { $0.close() } }
        #expect(stores.count == 4)
        #expect(Set(stores.map(\.nodeID)).count == 1)
        #expect(Set(stores.map(\.incarnation.id)).count == 1)
        let e = try stores[0].create(form: "f", id: nil, fields: ["name": "李雷"], layout: layout, origin: origin).entry
        for store in stores {
            #expect(try store.get(e.id)?.fields["name"] == "李雷")
            #expect(try store.counts().seq == 1)
            #expect(store.location.hasPrefix("postgresql://") && store.location.hasSuffix("/" + db.name))
        }
    }

    @Test(
        "instances writing at once, a fast reader on another: every committed change once, seqs consecutive, HLCs unique and rising with seq, also from an instance whose wall clock is an hour behind"
    )
    func concurrentInstances() throws {
        let db = try TestPostgresDatabase()
        let place = TestDatabase()
        let hourBehind: @Sendable () -> UInt64 = { HybridClock.systemMilliseconds() - 3_600_000 }
        let writers = try (0..<3).map { n in
            try Self.instance(db, n, in: place, wallClock: n == 2 ? hourBehind : HybridClock.systemMilliseconds)
        }
        let reader = try Self.instance(db, 9, in: place)
        defer { (writers + [reader]).forEach { $0.close() } }
        let acknowledged = Locked<[String: Int64]>([:])  // entry id → the seq of its create
        let errors = Locked<[String]>([])
        let done = Locked(false)
        let seen = Locked<[ChangeRecord]>([])
        let readerThread = Thread {
            var cursor: Int64 = 0
            var mine: [ChangeRecord] = []
            while true {
                let finished = done.value
                do {
                    let page = try reader.changes(since: cursor, limit: 37)
                    for change in page.changes {
                        if change.seq != cursor + 1 {
                            errors.with { $0.append("read seq \(change.seq) after \(cursor)") }
                        }
                        cursor = change.seq
                        mine.append(change)
                    }
                    if finished && page.changes.isEmpty { break }
                } catch {
                    errors.with { $0.append("reader: \(error)") }
                    break
                }
            }
            seen.with { $0 = mine }
        }
        readerThread.start()
        // Two threads per instance; every seventh write an update of a missing entry, which fails alone.
        runThreads(6) { t in
            let store = writers[t % 3]
            for i in 0..<60 {
                do {
                    if i % 7 == 6 {
                        _ = try? store.update(id: "missing", ifVersion: nil, layout: layout, origin: origin) {
                            $0.fields
                        }
                        continue
                    }
                    let e = try store.create(
                        form: "f", id: nil, fields: ["name": "w\(t)-\(i)"], layout: layout, origin: origin
                    ).entry
                    acknowledged.with { $0[e.id] = e.seq }
                } catch { errors.with { $0.append("writer \(t): \(error)") } }
            }
        }
        done.with { $0 = true }
        while seen.value.isEmpty && readerThread.isExecuting { usleep(10_000) }
        while !readerThread.isFinished { usleep(10_000) }
        #expect(errors.value == [])
        let changes = seen.value
        let created = acknowledged.value
        #expect(created.count == 6 * 60 - 6 * 8)
        #expect(changes.map(\.seq) == Array(1...Int64(created.count)), "every seq once, in order, no gap")
        #expect(Dictionary(uniqueKeysWithValues: changes.map { ($0.entry, $0.seq) }) == created)
        let stamps = changes.map(\.hlc)
        #expect(Set(stamps).count == stamps.count, "HLCs unique across instances")
        #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 }, "HLCs rise with seq")
        #expect(Set(changes.map(\.node)) == [reader.nodeID])
        #expect(try reader.counts() == (entries: created.count, deleted: 0, seq: Int64(created.count)))
    }

    @Test("a stamp ahead, applied from a peer through one instance, lifts the next local stamps of every instance")
    func observedStampShared() throws {
        let db = try TestPostgresDatabase()
        let place = TestDatabase()
        let a = try Self.instance(db, 1, in: place)
        let b = try Self.instance(db, 2, in: place)
        defer {
            a.close()
            b.close()
        }
        let now = HybridClock.systemMilliseconds()
        let ahead = HLC(milliseconds: now + 120_000, counter: 3)
        let result = try a.apply(
            [StoreTests.remoteCreate(hlc: ahead, now: now)], via: "peer", layout: { _ in .registration },
            maxClockSkewMs: 300_000)
        #expect(result.applied == 1)
        let local = try b.create(form: "f", id: nil, fields: ["name": "after"], layout: layout, origin: origin).entry
        #expect(local.version > ahead)
        #expect(try b.currentHLC() == local.version)
        #expect(try a.currentHLC() == local.version)
    }

    @Test("a commit through one instance wakes the Changes waiters of another")
    func commitsWakeOtherInstances() throws {
        let db = try TestPostgresDatabase()
        let place = TestDatabase()
        let a = try Self.instance(db, 1, in: place)
        let b = try Self.instance(db, 2, in: place)
        defer {
            a.close()
            b.close()
        }
        let before = b.commits.lastSeq
        let writer = Thread {
            usleep(200_000)
            _ = try? a.create(
                form: "f", id: nil, fields: ["name": "wake"], layout: FieldLayout.registration,
                origin: WriteOrigin(actor: "tester"))
        }
        let started = ContinuousClock.now
        writer.start()
        let woke = b.commits.wait(after: before, timeout: 10)
        #expect(woke == before + 1)
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test("an instance name serving two databases keeps one marker per database; neither sees the other's as evidence")
    func markerPerDatabase() throws {
        let place = TestDatabase()
        let old = try TestPostgresDatabase()
        let served = try Self.instance(old, 2, in: place)
        served.close()
        let db = try TestPostgresDatabase()
        let a = try Self.instance(db, 1, in: place)
        let b = try Self.instance(db, 2, in: place)
        defer {
            a.close()
            b.close()
        }
        #expect(b.nodeID == a.nodeID && b.nodeID != served.nodeID)
        #expect(b.incarnationBegan == nil && b.incarnation.id == a.incarnation.id)
        let markers = try FileManager.default.contentsOfDirectory(atPath: place.directory).filter {
            $0.hasPrefix("hub-i2-")
        }
        #expect(markers.count == 2, "\(markers)")
    }

    @Test(
        "a database put back from an older dump begins one new incarnation: on the instance that saw more; the others join it"
    )
    func wentBackInTime() throws {
        let db = try TestPostgresDatabase()
        let place = TestDatabase()
        var a = try Self.instance(db, 1, in: place)
        var b = try Self.instance(db, 2, in: place)
        let first = a.incarnation
        for i in 0..<3 {
            _ = try a.create(form: "f", id: nil, fields: ["name": "old\(i)"], layout: layout, origin: origin)
        }
        let dump = place.directory + "/old.dump"
        try db.client("pg_dump", ["--format=custom", "--file=" + dump])
        for i in 0..<3 {
            _ = try b.create(form: "f", id: nil, fields: ["name": "lost\(i)"], layout: layout, origin: origin)
        }
        // Both instances have seen seq 6 (b wrote it; a heard of it) when they stop.
        #expect(a.commits.wait(after: 5, timeout: 10) == 6)
        a.close()
        b.close()
        try db.connect().execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
        try db.client("pg_restore", ["--no-owner", "--exit-on-error", dump])
        // A new instance first: no marker, no evidence; it serves the incarnation it finds…
        let c = try Self.instance(db, 3, in: place)
        #expect(c.incarnationBegan == nil && c.incarnation.id == first.id)
        a = try Self.instance(db, 1, in: place)
        #expect(a.incarnationBegan?.contains("went back from seq 6 to 3") == true, "\(a.incarnationBegan ?? "none")")
        #expect(a.incarnation.id != first.id && a.incarnation.startSeq == 3)
        // …until an instance with evidence begins a new one, which it takes at once.
        let deadline = ContinuousClock.now + .seconds(10)
        while c.incarnation.id != a.incarnation.id && ContinuousClock.now < deadline { usleep(20_000) }
        #expect(c.incarnation == a.incarnation)
        b = try Self.instance(db, 2, in: place)
        defer {
            a.close()
            b.close()
            c.close()
        }
        #expect(b.incarnationBegan == nil)
        #expect(b.incarnation.id == a.incarnation.id)
        #expect(Set([a.nodeID, b.nodeID, c.nodeID]).count == 1)
    }

    @Test(
        "commits lost under running instances (an asynchronous failover): the next write begins a new incarnation there, and every instance takes it"
    )
    func wentBackWhileRunning() throws {
        let db = try TestPostgresDatabase()
        let place = TestDatabase()
        let a = try Self.instance(db, 1, in: place)
        let b = try Self.instance(db, 2, in: place)
        defer {
            a.close()
            b.close()
        }
        let first = a.incarnation
        try writeSix(a, b)
        // A live Changes stream on b, read to seq 6.
        let replies = Replies()
        let streamEnded = DispatchSemaphore(value: 0)
        let service = EntryService(store: b, forms: .builtIn)
        Thread.detachNewThread {
            var call = VarlinkCall(method: "io.entryd.Sync.Changes", parameters: .object([("since", .int(0))]))
            call.more = true
            let context = CallContext(
                caller: Caller(pid: 1, uid: 0, gid: 0, userName: "root", role: .read), call: call,
                send: { replies.append($0) }, clientHungUp: { false })
            try? service.handle(context)
            streamEnded.signal()
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while replies.last?.parameters["last"]?.intValue != 6 && ContinuousClock.now < deadline { usleep(20_000) }
        try goBackToThree(db)
        let e = try a.create(form: "f", id: nil, fields: ["name": "after"], layout: layout, origin: origin).entry
        #expect(e.seq == 4)
        // b writes at once, before or after it hears of a's new incarnation: it takes that one.
        _ = try b.create(form: "f", id: nil, fields: ["name": "right after"], layout: layout, origin: origin)
        while (a.incarnation.id == first.id || b.incarnation.id == first.id) && ContinuousClock.now < deadline {
            usleep(20_000)
        }
        #expect(a.incarnation.id != first.id && b.incarnation == a.incarnation)
        #expect(a.incarnation.startSeq == 3)
        #expect(
            a.incarnation.reason?.contains("went back from seq 6 to 3 while this instance ran") == true,
            "\(a.incarnation)")
        let began = a.incarnation
        // Once: the next writes, through either instance, continue it.
        _ = try b.create(form: "f", id: nil, fields: ["name": "later"], layout: layout, origin: origin)
        _ = try a.create(form: "f", id: nil, fields: ["name": "later2"], layout: layout, origin: origin)
        usleep(300_000)
        #expect(
            a.incarnation == began && b.incarnation == began, "began \(began), a \(a.incarnation), b \(b.incarnation)")
        #expect(try a.counts().seq == 7)
        // Each instance's commit signal stands at the new history's head, not at the old 6
        // (b hears a's last commit by NOTIFY: waited for, not assumed within the 300 ms).
        let heard = ContinuousClock.now + .seconds(10)
        while (a.commits.lastSeq != 7 || b.commits.lastSeq != 7) && ContinuousClock.now < heard { usleep(20_000) }
        #expect(a.commits.lastSeq == 7 && b.commits.lastSeq == 7)
        // b's stream ended on the new incarnation: its client reads the new history afresh.
        #expect(streamEnded.wait(timeout: .now() + 10) == .success)
        let all = replies.all
        #expect(all.last?.continues == false)
        #expect(all.allSatisfy { $0.parameters["incarnation"]?.stringValue == first.id }, "\(all.map(\.parameters))")
    }

    @Test("the monitoring call's server state: reachable at open, a lost connection counted once it is back")
    func serverReachability() throws {
        let db = try TestPostgresDatabase()
        let place = TestDatabase()
        let a = try Self.instance(db, 1, in: place)
        defer { a.close() }
        #expect(a.serverReachable?.reachable == true && a.serverReachable?.losses == 0)
        try db.connect().execute(
            """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'entryd' AND pid <> pg_backend_pid()
            """)
        let deadline = ContinuousClock.now + .seconds(15)
        while a.serverReachable?.losses != 1 || a.serverReachable?.reachable != true, ContinuousClock.now < deadline {
            usleep(20_000)
        }
        #expect(
            a.serverReachable?.losses == 1 && a.serverReachable?.reachable == true,
            "\(String(describing: a.serverReachable))")
    }

    @Test(
        "a round that never claims the change log (a peer checkpoint) after the database went back does not raise the commit signal to the old history's seq: the next write begins no second incarnation"
    )
    func uncommittedRoundAfterGoingBack() throws {
        let db = try TestPostgresDatabase()
        let place = TestDatabase()
        let a = try Self.instance(db, 1, in: place)
        let b = try Self.instance(db, 2, in: place)
        defer {
            a.close()
            b.close()
        }
        let first = a.incarnation
        try writeSix(a, b)
        try goBackToThree(db)
        // a finds the going back and begins the new incarnation; b takes it from the announcement.
        _ = try a.create(form: "f", id: nil, fields: ["name": "after"], layout: layout, origin: origin)
        let deadline = ContinuousClock.now + .seconds(10)
        while b.incarnation == first && ContinuousClock.now < deadline { usleep(20_000) }
        #expect(b.incarnation != first && b.incarnation == a.incarnation)
        let began = b.incarnation
        while b.commits.lastSeq != 4 && ContinuousClock.now < deadline { usleep(20_000) }
        #expect(b.commits.lastSeq == 4)
        // A round of b's that writes no change: its own last claim was the old history's 6.
        try b.savePeerState(PeerState(name: "p", address: "unix:/nowhere", pulledSeq: 0, pushedSeq: 0))
        #expect(b.commits.lastSeq == 4, "the signal stays at the new history's head")
        _ = try b.create(form: "f", id: nil, fields: ["name": "next"], layout: layout, origin: origin)
        _ = try a.create(form: "f", id: nil, fields: ["name": "next2"], layout: layout, origin: origin)
        #expect(
            a.incarnation == began && b.incarnation == began, "began \(began), a \(a.incarnation), b \(b.incarnation)")
        #expect(try a.counts().seq == 6)
    }

    @Test(
        "an erasure acknowledged on a hub survives a going back that lost its commit: the instance that made it carries it out again at once, and says so"
    )
    func erasureSurvivesGoingBack() throws {
        let db = try TestPostgresDatabase()
        let place = TestDatabase()
        let a = try Self.instance(db, 1, in: place)
        let b = try Self.instance(db, 2, in: place)
        defer {
            a.close()
            b.close()
        }
        let events = Locked<[String: [StoreEvent]]>([:])
        a.storeEvents = { e in events.with { $0["a", default: []].append(e) } }
        b.storeEvents = { e in events.with { $0["b", default: []].append(e) } }
        let name = "抹去之人Qx"
        let subject = try a.create(form: "f", id: nil, fields: ["name": name], layout: layout, origin: origin).entry
        let kept = try b.create(form: "f", id: nil, fields: ["name": "留下"], layout: layout, origin: origin).entry
        // What the standby had when the primary died: seqs 1 and 2.
        let admin = try db.connect()
        try admin.execute(
            """
            CREATE TABLE standby_entries AS SELECT * FROM entries; CREATE TABLE standby_changes AS SELECT * FROM changes;
            CREATE TABLE standby_counter AS SELECT * FROM change_counter
            """)
        let erased = try a.erase(id: subject.id, origin: WriteOrigin(actor: "dpo", reason: "request 7")).record
        _ = try b.create(form: "f", id: nil, fields: ["name": "后来"], layout: layout, origin: origin)
        #expect(a.commits.wait(after: 3, timeout: 10) == 4 && b.commits.wait(after: 3, timeout: 10) == 4)
        #expect(try a.get(subject.id) == nil)
        // The failover: the promoted standby lacks seqs 3 and 4, the erasure among them.
        try admin.execute(
            """
            DELETE FROM entries; INSERT INTO entries SELECT * FROM standby_entries;
            DELETE FROM changes; INSERT INTO changes SELECT * FROM standby_changes;
            DELETE FROM erasures; DELETE FROM change_counter; INSERT INTO change_counter SELECT * FROM standby_counter;
            DROP TABLE standby_entries, standby_changes, standby_counter
            """)
        #expect(try a.get(subject.id)?.fields["name"] == name, "the database went back: the subject is there again")
        // The next write, through the instance that did not erase, finds the going back.
        _ = try b.create(form: "f", id: nil, fields: ["name": "故障之后"], layout: layout, origin: origin)
        let deadline = ContinuousClock.now + .seconds(20)
        while (try? a.erasures().map(\.entry)) != [subject.id] && ContinuousClock.now < deadline { usleep(20_000) }
        #expect(try a.erasures() == [erased], "the same erase change, carried out again")
        #expect(try b.get(subject.id) == nil)
        #expect(try b.get(kept.id)?.fields["name"] == "留下")
        #expect(try a.history(subject.id).filter { !$0.fields.isEmpty } == [], "no change of the subject holds a value")
        let found = try b.verifyErasure(id: subject.id, values: [name])
        #expect(found.payloadRows == 0 && found.files.allSatisfy { $0.hits == 0 }, "\(found.files)")
        #expect(try a.storedEntries() == a.replayChangeLog())
        while events.value["a"]?.contains(.erasuresReapplied(1)) != true && ContinuousClock.now < deadline {
            usleep(20_000)
        }
        let seen = events.value
        #expect(seen["a"]?.contains(.erasuresReapplied(1)) == true, "\(seen)")
        #expect(
            seen["b"]?.contains(where: { if case .erasuresReapplied = $0 { true } else { false } }) != true,
            "b made no erasure and was started before it: its ledger lacks it")
        for who in ["a", "b"] {
            let taken =
                seen[who]?.compactMap { e -> (Incarnation, Int64)? in
                    if case .incarnationTaken(let i, let s) = e { (i, s) } else { nil }
                } ?? []
            #expect(taken.count == 1, "\(who): one new incarnation: \(seen)")
            #expect(taken.first?.0.startSeq == 2)
            #expect(
                taken.first?.0.reason?.contains("went back from seq 4 to 2") == true
                    && taken.first?.0.reason?.contains("2 change(s) lost, seqs 3 to 4") == true, "\(taken)")
        }
    }

    @Test(
        "a new incarnation announced while an instance's listener was away (a failover) is taken when the listener is back"
    )
    func incarnationMissedWhileAway() throws {
        let db = try TestPostgresDatabase()
        let place = TestDatabase()
        let a = try Self.instance(db, 1, in: place)
        defer { a.close() }
        let events = Locked<[StoreEvent]>([])
        a.storeEvents = { e in events.with { $0.append(e) } }
        // The entries are written by another instance, so a's commit signal reaches 3 only
        // through a's listener: once it does, the listener is connected and has read the
        // node table (it does so before it publishes), and the change below is unheard.
        do {
            let b = try Self.instance(db, 2, in: place)
            defer { b.close() }
            for i in 0..<3 {
                _ = try b.create(form: "f", id: nil, fields: ["name": "n\(i)"], layout: layout, origin: origin)
            }
        }
        let connected = ContinuousClock.now + .seconds(15)
        while a.commits.lastSeq != 3 && ContinuousClock.now < connected { usleep(20_000) }
        try #require(a.commits.lastSeq == 3, "a's listener is connected")
        let first = a.incarnation
        // Another instance began one at seq 2 and announced it while a's listener was
        // reconnecting to the promoted server: a never heard of it.
        let admin = try db.connect()
        let next = UUIDv7.generate(milliseconds: HybridClock.systemMilliseconds())
        try admin.execute(
            """
            UPDATE node SET value = '\(next)' WHERE key = 'incarnation';
            UPDATE node SET value = '2' WHERE key = 'incarnation_seq';
            UPDATE node SET value = 'a test: announced while no one listened' WHERE key = 'incarnation_reason';
            UPDATE node SET value = '\(HLC(milliseconds: HybridClock.systemMilliseconds(), counter: 0))' WHERE key = 'incarnation_hlc'
            """)
        usleep(700_000)
        #expect(a.incarnation == first, "no announcement: nothing taken yet")
        // Its connections are lost (the failover), the listener's among them, and come back.
        try admin.execute(
            """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'entryd' AND pid <> pg_backend_pid()
            """)
        let deadline = ContinuousClock.now + .seconds(15)
        // Taken first, then the commit signal published at the head (reloadIncarnation):
        // wait for both, or a loaded machine checks in between.
        while (a.incarnation.id != next || a.commits.lastSeq != 3) && ContinuousClock.now < deadline { usleep(20_000) }
        #expect(a.incarnation.id == next && a.incarnation.startSeq == 2, "\(a.incarnation)")
        #expect(events.value.contains(.incarnationTaken(a.incarnation, seenSeq: 3)), "\(events.value)")
        #expect(a.commits.lastSeq == 3, "the commit signal stands at the head again")
    }

    @Test(
        "after a going back, an instance that took the new incarnation in a round that then rolled back does not begin another"
    )
    func oneIncarnationThroughRollbacks() throws {
        let db = try TestPostgresDatabase()
        let place = TestDatabase()
        let b = try Self.instance(db, 2, in: place)
        defer { b.close() }
        for i in 0..<6 {
            _ = try b.create(form: "f", id: nil, fields: ["name": "n\(i)"], layout: layout, origin: origin)
        }
        // The failover lost seqs 4 to 6, and another instance found it and began a new
        // incarnation whose announcement b has not heard yet (its listener was away).
        let next = UUIDv7.generate(milliseconds: HybridClock.systemMilliseconds())
        try db.connect().execute(
            """
            DELETE FROM entries WHERE seq > 3; DELETE FROM changes WHERE seq > 3;
            UPDATE change_counter SET seq = 3, hlc = (SELECT max(('x' || hlc)::bit(64)::bigint) FROM changes);
            UPDATE node SET value = '\(next)' WHERE key = 'incarnation';
            UPDATE node SET value = '3' WHERE key = 'incarnation_seq';
            UPDATE node SET value = 'the change log went back from seq 6 to 3 (another instance)' WHERE key = 'incarnation_reason';
            UPDATE node SET value = '\(HLC(milliseconds: HybridClock.systemMilliseconds(), counter: 0))' WHERE key = 'incarnation_hlc'
            """)
        // b's next round finds the going back and takes that incarnation, then rolls back
        // (a job that wrote and failed); its next write must not begin another.
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try b.writer.submit { ctx in
                try ctx.claim()
                try ctx.db.statement("UPDATE node SET value = value WHERE key = 'id'").run()
                throw Refused()
            }
        }
        #expect(b.incarnation.id == next)
        _ = try b.create(form: "f", id: nil, fields: ["name": "after"], layout: layout, origin: origin)
        _ = try b.create(form: "f", id: nil, fields: ["name": "after 2"], layout: layout, origin: origin)
        #expect(try b.readers.read { try EntryStore.storedIncarnation($0) }?.id == next, "one new incarnation, not two")
        #expect(b.incarnation.id == next && b.incarnation.startSeq == 3)
        #expect(try b.counts().seq == 5)
    }

    /// The replies a call sent, in order. Thread-safe.
    final class Replies: @unchecked Sendable {
        private let lock = NSLock()
        private var replies: [VarlinkReply] = []
        func append(_ reply: VarlinkReply) { lock.withLock { replies.append(reply) } }
        var all: [VarlinkReply] { lock.withLock { replies } }
        var last: VarlinkReply? { all.last }
    }

    @Test(
        "erasure on PostgreSQL: the values leave every table (SQL proof), dead rows are vacuumed, Backup names pg_dump")
    func erasure() throws {
        let db = try TestPostgresDatabase()
        let place = TestDatabase()
        let store = try Self.instance(db, 1, in: place)
        defer { store.close() }
        let name = "隐私名字Zq"
        let e = try store.create(
            form: "f", id: nil, fields: ["name": name, "birthday": "1990-01-02"], layout: layout, origin: origin
        ).entry
        _ = try store.update(id: e.id, ifVersion: nil, layout: layout, origin: origin) {
            var f = $0.fields
            f["name"] = name + "2"
            return f
        }
        // The server's own files: ANALYZE (which samples values into the catalogue), a
        // checkpoint (shared buffers to the files), then every file of the database.
        let admin = try db.connect()
        let scanFiles = { (needles: [String]) throws -> [String] in
            try admin.execute("ANALYZE")
            try admin.execute("CHECKPOINT")
            return Self.filesHolding(needles, under: try Self.databaseFiles(admin))
        }
        #expect(try scanFiles([name]).count >= 2, "the scan finds the value before the erase (heap and index)")
        let before = try store.verifyErasure(id: e.id, values: [name])
        #expect(before.files.contains { $0.path == "table entries" && $0.hits > 0 })
        #expect(before.files.contains { $0.path == "table changes" && $0.hits > 0 })
        // A session holding a snapshot from before the erase (a long report, another
        // instance's read) would keep the old row versions in the rewrite: it waits.
        let reader = try db.connect()
        try reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        _ = try reader.execute("SELECT count(*) FROM node")  // a snapshot, and no lock on the tables rewritten
        let release = Thread {
            usleep(1_000_000)
            _ = try? reader.execute("COMMIT")
        }
        release.start()
        let started = Date()
        _ = try store.erase(id: e.id, origin: WriteOrigin(actor: "dpo", reason: "request 42"))
        #expect(Date().timeIntervalSince(started) > 0.9, "the rewrite waited for the snapshot older than the erasure")
        let after = try store.verifyErasure(id: e.id, values: [name, name + "2"])
        #expect(after.erasure?.entry == e.id)
        #expect(after.payloadRows == 0)
        #expect(after.files.count == PostgresStoreServer.tables.count)
        #expect(after.files.allSatisfy { $0.hits == 0 && $0.exists }, "\(after.files.filter { $0.hits > 0 })")
        let left = try scanFiles([name, name + "2"])
        #expect(left == [], "no file of the database holds an erased value: \(left)")
        let c = try db.connect()
        #expect(try c.execute("SELECT count(*) FROM node WHERE key = 'rewrite_pending'").rows == [["0"]])
        #expect(
            try c.execute(
                "SELECT count(*) FROM pg_stat_user_tables WHERE relname = 'folded' AND last_vacuum IS NOT NULL"
            ).rows == [["1"]])
        #expect(throws: EntryError.backupUnsupported(database: store.location, tool: "pg_dump")) {
            _ = try store.consistentCopy()
        }
    }

    @Test(
        "an erasure whose rewrite an older snapshot holds off past the wait keeps its mark and says so; VerifyErasure rewrites once it is gone"
    )
    func erasureRewriteHeldOff() throws {
        let db = try TestPostgresDatabase()
        let place = TestDatabase()
        let store = try Self.instance(db, 1, in: place)
        defer { store.close() }
        let name = "快照挡住Vk"
        let e = try store.create(form: "f", id: nil, fields: ["name": name], layout: layout, origin: origin).entry
        let admin = try db.connect()
        let files = try Self.databaseFiles(admin)
        let reader = try db.connect()
        try reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        _ = try reader.execute("SELECT count(*) FROM node")
        let outcome = try store.erase(id: e.id, origin: WriteOrigin(actor: "dpo", reason: "request 43"))
        #expect(!outcome.walTruncated, "the rewrite did not happen: the snapshot outlived the wait")
        #expect(try admin.execute("SELECT count(*) FROM node WHERE key = 'rewrite_pending'").rows == [["1"]])
        let held = try store.verifyErasure(id: e.id, values: [name])
        #expect(
            !held.walTruncated && held.files.allSatisfy { $0.hits == 0 } && held.purge != nil,
            "SQL finds nothing, the files are not yet rewritten: the purge is pending")
        try reader.execute("COMMIT")
        let after = try store.verifyErasure(id: e.id, values: [name])
        #expect(after.walTruncated && after.files.allSatisfy { $0.hits == 0 } && after.purge == nil)
        #expect(try admin.execute("SELECT count(*) FROM node WHERE key = 'rewrite_pending'").rows == [["0"]])
        try admin.execute("CHECKPOINT")
        #expect(Self.filesHolding([name], under: files) == [])
    }

    /// The directory of the files of `admin`'s database (a superuser's connection).
    static func databaseFiles(_ admin: PGConnection) throws -> String {
        let dir = try #require(try admin.execute("SHOW data_directory").rows.first?.first ?? nil)
        let oid = try #require(
            try admin.execute("SELECT oid FROM pg_database WHERE datname = current_database()").rows.first?.first ?? nil
        )
        return dir + "/base/" + oid
    }

    /// The files under `directory` (recursively) whose bytes hold one of
    /// `needles` (UTF-8), as paths relative to it.
    static func filesHolding(_ needles: [String], under directory: String) -> [String] {
        let patterns = needles.map { Data($0.utf8) }
        var found: [String] = []
        let files = FileManager.default.enumerator(atPath: directory)
        while let path = files?.nextObject() as? String {
            guard let data = FileManager.default.contents(atPath: directory + "/" + path) else { continue }
            if patterns.contains(where: { data.range(of: $0) != nil }) { found.append(path) }
        }
        return found.sorted()
    }
}
