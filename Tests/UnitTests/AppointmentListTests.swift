import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryHub

/// The appointment as a List filter and order (issue 33 item 2): the
/// `appointment` column, on SQLite and on PostgreSQL.
@Suite struct AppointmentListTests {
    let origin = WriteOrigin(actor: "t")

    /// Names of the entries of `query`'s page, in order.
    func names(_ store: EntryStore, _ query: ListQuery) throws -> [String] {
        try store.list(query).entries.map { $0.fields["name"] ?? "" }
    }

    @Test(
        "appointmentFrom/To bound the appointment, inclusive, ordered by time both ways, counted",
        arguments: StoreKind.allCases)
    func filterAndOrder(kind: StoreKind) throws {
        let place = TestDatabase()
        let store = try kind.open(place)
        defer { store.close() }
        let rows: [(String, String?)] = [
            ("late", "2027-03-09 17:30"), ("early", "2027-03-09 08:00"), ("next", "2027-03-10 00:00"),
            ("before", "2027-03-08 23:30"), ("none", nil), ("noon", "2027-03-09 12:00"),
        ]
        for (name, appointment) in rows {
            var fields = ["name": name]
            fields["appointment"] = appointment
            _ = try store.create(form: "registration", id: nil, fields: fields, layout: .registration, origin: origin)
        }
        var day = ListQuery()
        day.appointmentFrom = "2027-03-09 00:00"
        day.appointmentTo = "2027-03-09 23:59"
        day.order = .appointment
        day.descending = false
        #expect(try names(store, day) == ["early", "noon", "late"])
        #expect(try store.list(day).total == 3)
        day.descending = true
        #expect(try names(store, day) == ["late", "noon", "early"])
        // Keyset paging through the day, one at a time.
        day.descending = false
        day.limit = 1
        var seen: [String] = []
        while true {
            let page = try store.list(day)
            seen += page.entries.map { $0.fields["name"] ?? "" }
            guard let next = page.next else { break }
            day.after = next
        }
        #expect(seen == ["early", "noon", "late"])
        // Open ends; an entry without an appointment never matches an upper bound.
        var upTo = ListQuery()
        upTo.appointmentTo = "2027-03-09 08:00"
        upTo.order = .appointment
        upTo.descending = false
        #expect(try names(store, upTo) == ["before", "early"])
        var from = ListQuery()
        from.appointmentFrom = "2027-03-09 12:00"
        from.order = .appointment
        from.descending = false
        #expect(try names(store, from) == ["noon", "late", "next"])
        // An update moves the key; a delete hides it.
        let early = try store.list(
            day.with {
                $0.limit = 10
                $0.after = nil
            }
        ).entries[0]
        _ = try store.update(id: early.id, ifVersion: nil, layoutOf: { _ in .registration }, origin: origin) {
            $0.fields.merging(["appointment": "2027-03-10 09:00"]) { $1 }
        }
        #expect(
            try names(
                store,
                day.with {
                    $0.limit = 10
                    $0.after = nil
                }) == ["noon", "late"])
    }

    @Test("a form's date-time field of another name is its appointment (FieldLayout)")
    func layoutTakesTheFirstDateTime() throws {
        let form = try FormDefinition(
            ini: IniFile(
                text: "[form]\n[field who]\ntype = text\n[field at]\ntype = datetime\n[field then]\ntype = datetime\n",
                path: "visit.conf"))
        #expect(form.layout.appointment == "at")
        #expect(FormRegistry.builtIn.forms[0].layout.appointment == "appointment")
    }

    /// A form's layout whose date-time field is `visit`.
    static let visits = FieldLayout(name: "name", appointment: "visit")

    @Test("SQLite migration 7 and the keys rebuild copy stored appointments, of any field name, into the column")
    func migrationCopiesAppointments() throws {
        let db = TestDatabase()
        do {
            // Entries stored by this build, then taken back to schema 6 (no appointment column).
            let store = try EntryStore(path: db.path)
            for (name, appointment) in [("a", "2027-03-09 09:00"), ("b", "")] {
                var fields = ["name": name]
                if !appointment.isEmpty { fields["appointment"] = appointment }
                _ = try store.create(
                    form: "registration", id: nil, fields: fields, layout: .registration, origin: origin)
            }
            // A form whose date-time field has another name: the SQL of migration 7 cannot know it.
            _ = try store.create(
                form: "visits", id: nil, fields: ["name": "v", "visit": "2027-03-09 10:00"], layout: Self.visits,
                origin: origin)
            store.close()
            let c = try SQLiteConnection(path: db.path)
            try c.execute(
                """
                BEGIN; DROP INDEX entries_by_name_order; ALTER TABLE entries DROP COLUMN name_order;
                CREATE INDEX entries_by_name_pinyin ON entries (name COLLATE pinyin, id);
                DROP TABLE entry_keys; DELETE FROM node WHERE key = 'search_keys';
                DROP INDEX entries_by_appointment; ALTER TABLE entries DROP COLUMN appointment;
                PRAGMA user_version = 6; COMMIT;
                """)
        }
        let store = try EntryStore(
            path: db.path, layoutOf: { $0 == "visits" ? Self.visits : .registration })
        defer { store.close() }
        #expect(store.schemaVersion == Migrations.all.count)
        var q = ListQuery()
        q.appointmentFrom = "2027-03-09 00:00"
        q.appointmentTo = "2027-03-09 23:59"
        q.order = .appointment
        q.descending = false
        // the visit too, copied at open by the derived-keys rebuild
        #expect(try names(store, q) == ["a", "v"])
        q.appointmentFrom = nil
        q.appointmentTo = nil
        #expect(try names(store, q) == ["b", "a", "v"])
    }
}

extension ListQuery {
    /// A copy changed by `change`.
    fileprivate func with(_ change: (inout ListQuery) -> Void) -> ListQuery {
        var copy = self
        change(&copy)
        return copy
    }
}
