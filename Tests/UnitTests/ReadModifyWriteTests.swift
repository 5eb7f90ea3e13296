import Foundation
import Testing
@testable import EntryHub
@testable import EntryLedger
import EntryModel

/// Writes that read what they change, made at once from several writers
/// (issue 30 item 1): on PostgreSQL through two instances of one database,
/// on SQLite through one store from several threads (one entryd holds a
/// SQLite file alone). Every acknowledged write is in the final state: an
/// `ifVersion` passes once per version, a field group is never written back
/// stale, an id is created once.
@Suite struct ReadModifyWriteTests {
    let layout = FieldLayout.registration
    func origin(_ actor: String) -> WriteOrigin { WriteOrigin(actor: actor) }

    /// Two writers of one node: two instances of one PostgreSQL database, or
    /// one SQLite store twice. Close each of `stores` once.
    func writers(_ kind: StoreKind) throws -> (writers: [EntryStore], stores: [EntryStore], place: TestDatabase) {
        let place = TestDatabase()
        switch kind {
        case .sqlite:
            let store = try kind.open(place, readers: 4)
            return ([store, store], [store], place)
        case .postgres:
            let db = try place.postgres()
            let stores: [EntryStore] = try (0..<2).map { n in
                try PostgresStoreFactory.open(
                    uri: db.databaseURI, markerDirectory: place.directory, instance: "i\(n)", readers: 2)
            }
            return (stores, stores, place)
        }
    }

    @Test(
        "compare-and-set increments from four clients over two writers: the final counter is the number of acknowledged increments",
        arguments: StoreKind.allCases)
    func compareAndSet(kind: StoreKind) throws {
        let (writers, stores, place) = try writers(kind)
        defer {
            stores.forEach { $0.close() }
            _ = place
        }
        let id = try writers[0].create(
            form: "registration", id: nil, fields: ["name": "0"], layout: layout, origin: origin("a")
        ).entry.id
        let acknowledged = Locked(0)
        let errors = Locked<[String]>([])
        runThreads(4) { t in
            let store = writers[t % 2]
            for _ in 0..<25 {
                do {
                    guard let current = try store.get(id) else {
                        errors.with { $0.append("entry gone") }
                        return
                    }
                    let next = String((Int(current.fields["name"] ?? "") ?? -1000) + 1)
                    _ = try store.update(
                        id: id, ifVersion: current.version.description, layout: layout, origin: origin("c\(t)")
                    ) {
                        var f = $0.fields
                        f["name"] = next
                        return f
                    }
                    acknowledged.with { $0 += 1 }
                } catch EntryError.versionMismatch {
                    continue  // another client's increment came first: read again
                } catch { errors.with { $0.append("\(error)") } }
            }
        }
        #expect(errors.value == [])
        let final = try #require(try writers[1].get(id))
        #expect(acknowledged.value > 0)
        #expect(
            final.fields["name"] == String(acknowledged.value),
            "acknowledged \(acknowledged.value), stored \(final.fields["name"] ?? "")")
        #expect(try writers[0].history(id).filter { $0.op == .update }.count == acknowledged.value)
        #expect(try writers[0].conflicts(entry: id, includeResolved: true).isEmpty)
    }

    @Test(
        "two field groups of one entry written at once through two writers: each holds its last acknowledged value, no conflict, the log replays to the entries",
        arguments: StoreKind.allCases)
    func disjointGroups(kind: StoreKind) throws {
        let (writers, stores, place) = try writers(kind)
        defer {
            stores.forEach { $0.close() }
            _ = place
        }
        let id = try writers[0].create(
            form: "registration", id: nil, fields: ["name": "n-1", "email": "e-1@x.cn"], layout: layout,
            origin: origin("a")
        ).entry.id
        let last = Locked<[String: String]>([:])
        let errors = Locked<[String]>([])
        runThreads(2) { t in
            let field = t == 0 ? "name" : "email"
            for i in 0..<40 {
                let value = t == 0 ? "n\(i)" : "e\(i)@x.cn"
                do {
                    _ = try writers[t].update(id: id, ifVersion: nil, layout: layout, origin: origin("c\(t)")) {
                        var f = $0.fields
                        f[field] = value
                        return f
                    }
                    last.with { $0[field] = value }
                } catch { errors.with { $0.append("\(error)") } }
            }
        }
        #expect(errors.value == [])
        for store in writers {
            let entry = try #require(try store.get(id))
            #expect(
                entry.fields["name"] == last.value["name"] && entry.fields["email"] == last.value["email"],
                "\(entry.fields)")
        }
        #expect(try writers[0].conflicts(entry: id, includeResolved: true).isEmpty)
        #expect(try writers[0].storedEntries() == writers[0].replayChangeLog())
    }

    @Test(
        "one id sent to Add through two writers at once: created once; the same values are an idempotent retry, other values EntryExists",
        arguments: StoreKind.allCases)
    func sameIDTwice(kind: StoreKind) throws {
        let (writers, stores, place) = try writers(kind)
        defer {
            stores.forEach { $0.close() }
            _ = place
        }
        for round in 0..<30 {
            let id = UUIDv7.generate()
            let sameValues = round % 2 == 0
            let outcomes = Locked<[Int: Result<Bool, EntryError>]>([:])
            let errors = Locked<[String]>([])
            runThreads(2) { t in
                let name = sameValues ? "李雷" : "李雷\(t)"
                do {
                    let created = try writers[t].create(
                        form: "registration", id: id, fields: ["name": name], layout: layout,
                        origin: origin("c\(t)")
                    ).created
                    outcomes.with { $0[t] = .success(created) }
                } catch let error as EntryError {
                    outcomes.with { $0[t] = .failure(error) }
                } catch { errors.with { $0.append("\(error)") } }
            }
            #expect(errors.value == [])
            let results = outcomes.value
            let creates = try writers[0].history(id).filter { $0.op == .create }
            #expect(creates.count == 1, "round \(round): \(creates.count) creates")
            let stored = try #require(try writers[1].get(id))
            if sameValues {
                let created = results.values.compactMap { try? $0.get() }
                #expect(
                    created.count == 2 && created.filter { $0 }.count == 1,
                    "round \(round): one stored it, the other was told it was there: \(results)")
            } else {
                let winners = results.filter { (try? $0.value.get()) == true }.map(\.key)
                let losers = results.filter { if case .failure(.entryExists(id)) = $0.value { true } else { false } }
                    .map(\.key)
                #expect(winners.count == 1 && losers.count == 1, "round \(round): \(results)")
                if let winner = winners.first { #expect(stored.fields["name"] == "李雷\(winner)") }
            }
        }
    }
}
