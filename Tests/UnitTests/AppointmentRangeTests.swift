import Foundation
import Testing
@testable import EntryClient

/// `entryctl list --appointment WHEN` read into dates (EntryClient's ``AppointmentRange``).
@Suite struct AppointmentRangeTests {
    /// 2026-11-30 20:00 UTC: already 12-01 in Shanghai, still 11-30 in New York.
    let now = Date(timeIntervalSince1970: 1_796_068_800)
    let shanghai = TimeZone(identifier: "Asia/Shanghai")!
    let newYork = TimeZone(identifier: "America/New_York")!

    @Test("today and tomorrow are the client's own days, in its time zone")
    func todayIsLocal() throws {
        #expect(
            try AppointmentRange(parsing: "today", now: now, zone: shanghai)
                == .init(from: "2026-12-01", to: "2026-12-01"))
        #expect(
            try AppointmentRange(parsing: "today", now: now, zone: newYork)
                == .init(from: "2026-11-30", to: "2026-11-30"))
        #expect(
            try AppointmentRange(parsing: "Tomorrow", now: now, zone: shanghai)
                == .init(from: "2026-12-02", to: "2026-12-02"))
        // Across a month's and a year's end.
        let newYear = Date(timeIntervalSince1970: 1_830_297_600 - 3_600)  // 2027-12-31 23:00 UTC
        #expect(
            try AppointmentRange(parsing: "tomorrow", now: newYear, zone: TimeZone(identifier: "UTC")!)
                == .init(from: "2028-01-01", to: "2028-01-01"))
    }

    @Test("a date, read leniently, and ranges with open ends")
    func datesAndRanges() throws {
        #expect(try AppointmentRange(parsing: "2027/3/9", now: now) == .init(from: "2027-03-09", to: "2027-03-09"))
        #expect(try AppointmentRange(parsing: "2027年3月9日", now: now) == .init(from: "2027-03-09", to: "2027-03-09"))
        #expect(
            try AppointmentRange(parsing: "2027-03-09..2027-03-15", now: now)
                == .init(from: "2027-03-09", to: "2027-03-15"))
        #expect(
            try AppointmentRange(parsing: "today..", now: now, zone: shanghai) == .init(from: "2026-12-01", to: nil))
        #expect(try AppointmentRange(parsing: " ..2027-03-15 ", now: now) == .init(from: nil, to: "2027-03-15"))
    }

    @Test(
        "malformed values are refused with what is wrong",
        arguments: [
            ("yesterday", "'yesterday' is not a date"), ("2027-02-30", "'2027-02-30' is not a date"),
            ("2027-03-15..2027-03-09", "starts on 2027-03-15, after its end 2027-03-09"),
            ("..", "a range with neither end"), ("", "needs today, tomorrow"),
            ("2027-03-09..2027-03-10..2027-03-11", "more than one .."),
        ])
    func refusals(text: String, expected: String) {
        do {
            _ = try AppointmentRange(parsing: text, now: now)
            Issue.record("\(text) was taken")
        } catch {
            #expect(error.text.en.contains(expected), "\(error.text.en)")
            #expect(error.text.en.contains("--appointment") && error.text.zh.contains("--appointment"))
        }
    }
}
