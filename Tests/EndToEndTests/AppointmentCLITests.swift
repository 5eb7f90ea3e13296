import EntryModel
import EntryProtocol
import EntryClient
import Foundation
import Testing

/// Appointments as a view (issue 33 item 2), end to end: `entryctl list
/// --appointment`, the List filter members on the wire, and the registration
/// form's `not-before = now`.
@Suite(.serialized) struct AppointmentCLITests {
    /// `YYYY-MM-DD` of the day `days` after today here (entryctl's time zone: the same process environment).
    static func day(_ days: Int) -> String { AppointmentRange.localDate(Date(), zone: .current, adding: days) }

    /// Names of `entryctl list --format json --all` with `args`, in the order listed.
    func names(_ d: Daemon, _ args: [String]) throws -> [String] {
        let r = try d.entryctl(["list", "--format", "json", "--all"] + args)
        try #require(r.status == 0, "\(r.stderr)")
        return try #require(try JSON.parse(r.stdout).arrayValue).compactMap { $0["fields"]?["name"]?.stringValue }
    }

    @Test(
        "list --appointment today|tomorrow|DATE|FROM..TO lists by time; bad values are named; past appointments refused"
    )
    func listByAppointment() throws {
        let d = try Daemon()
        // Late in the day, so no time is past (not-before = now) wherever the test runs.
        let rows: [(String, String?)] = [
            ("A", "\(Self.day(0)) 23:30"), ("B", "\(Self.day(0)) 23:00"), ("C", "\(Self.day(1)) 10:00"),
            ("D", "2099-01-05 10:00"), ("E", nil),
        ]
        for (name, appointment) in rows {
            var args = [
                "add", "name=\(name)", "birthday=1990-01-01", "country=FR", "contact_method=email",
                "email=\(name.lowercased())@example.com",
            ]
            if let appointment { args.append("appointment=\(appointment)") }
            let add = try d.entryctl(args)
            try #require(add.status == 0, "\(add.stderr)")
        }
        #expect(try names(d, ["--appointment", "today"]) == ["B", "A"])
        #expect(try names(d, ["--appointment", "tomorrow"]) == ["C"])
        #expect(try names(d, ["--appointment", "today..tomorrow"]) == ["B", "A", "C"])
        #expect(try names(d, ["--appointment", "2099/1/5"]) == ["D"])
        #expect(try names(d, ["--appointment", "tomorrow.."]) == ["C", "D"])
        #expect(try names(d, ["--appointment", "today", "--desc"]) == ["A", "B"])
        #expect(try names(d, ["--order", "appointment", "--desc"]) == ["D", "C", "A", "B", "E"])
        // The table shows the appointment column, in time order; total counts the day.
        let table = try d.entryctl(["--locale", "en", "list", "--appointment", "today"])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.contains("Appointment") && table.stdout.contains("2 of 2 entries"), "\(table.stdout)")
        let lines = table.stdout.split(separator: "\n")
        let b = try #require(lines.firstIndex { $0.contains("\(Self.day(0)) 23:00") })
        let a = try #require(lines.firstIndex { $0.contains("\(Self.day(0)) 23:30") })
        #expect(b < a)
        let zh = try d.entryctl(["--locale", "zh", "list", "--appointment", "today"])
        #expect(zh.stdout.contains("预约时间"), "\(zh.stdout)")

        // Bad values: a usage error naming what is wrong, exit 64, nothing asked of entryd.
        let bad = try d.entryctl(["--locale", "en", "list", "--appointment", "yesterday"])
        #expect(bad.status == 64 && bad.stderr.contains("'yesterday' is not a date"), "\(bad.stderr)")
        let reversed = try d.entryctl(["--locale", "en", "list", "--appointment", "2099-01-06..2099-01-05"])
        #expect(reversed.status == 64 && reversed.stderr.contains("swap them"), "\(reversed.stderr)")
        let zhBad = try d.entryctl(["--locale", "zh", "list", "--appointment", "2099-02-30"])
        #expect(zhBad.status == 64 && zhBad.stderr.contains("不是日期"), "\(zhBad.stderr)")

        // not-before = now: a new appointment in the past is refused, in the locale asked for.
        let past = try d.entryctl([
            "--locale", "en", "add", "name=F", "birthday=1990-01-01", "country=FR", "contact_method=email",
            "email=f@example.com", "appointment=2020-01-01 09:00",
        ])
        #expect(past.status == 65 && past.stderr.contains("Appointment is in the past"), "\(past.stderr)")
        #expect(d.stop() == 0)
    }

    @Test("the List filter members on the wire: bad values and a reversed range are ValidationFailed naming the member")
    func wireFilter() throws {
        let d = try Daemon()
        let c = try d.connect()
        func problems(_ filter: [(String, JSON)], locale: String = "en") -> [JSON] {
            do {
                _ = try c.call(
                    "io.entryd.Entries.List", .object([("filter", .object(filter)), ("locale", .string(locale))]))
                Issue.record("List accepted \(filter.map(\.0))")
            } catch let e as WireError {
                #expect(e.name == "io.entryd.Entries.ValidationFailed")
                return e.parameters["problems"]?.arrayValue ?? []
            } catch {
                Issue.record("\(error)")
            }
            return []
        }
        let bad = problems([("appointmentFrom", .string("soon"))])
        #expect(
            bad.first?["field"]?.stringValue == "appointmentFrom" && bad.first?["code"]?.stringValue == "invalid-format"
        )
        #expect(
            bad.first?["message"]?.stringValue
                == "The appointmentFrom filter 'soon' is not a valid date or date-time; write e.g. 2027-03-09 or 2027-03-09 14:30."
        )
        let reversed = problems([("appointmentFrom", .string("2027-03-10")), ("appointmentTo", .string("2027-03-09"))])
        #expect(
            reversed.first?["field"]?.stringValue == "appointmentFrom"
                && reversed.first?["code"]?.stringValue == "out-of-range")
        #expect(
            reversed.first?["message"]?.stringValue
                == "The appointmentFrom filter (2027-03-10 00:00) is after appointmentTo (2027-03-09 23:59); swap them."
        )
        let zh = problems([("appointmentTo", .string("2027-13-01"))], locale: "zh")
        #expect(zh.first?["message"]?.stringValue?.contains("不是有效的日期或日期时间") == true, "\(zh)")
        // A date-time bound is that minute; the order value appointment is taken.
        let ok = try c.call(
            "io.entryd.Entries.List",
            .object([
                (
                    "filter",
                    .object([
                        ("appointmentFrom", .string("2027-03-09 14:30")), ("appointmentTo", .string("2027-03-09")),
                    ])
                ),
                ("order", .string("appointment")),
            ]))
        #expect(ok["total"]?.intValue == 0)
        #expect(d.stop() == 0)
    }
}
