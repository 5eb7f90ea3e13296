import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// The date and date-time wheel (Interactive/DateWheel.swift, PickerDate.swift).
@Suite struct InteractiveDateWheelTests {
    func date(_ text: String) -> PickerDate { PickerDate(canonical: text)! }

    @Test(
        "31 January moved to February becomes 28 or 29 February",
        arguments: [("2023", "2023-02-28"), ("2024", "2024-02-29")])
    func clampsDay(year: String, expected: String) {
        var wheel = DateWheel(initial: date("\(year)-01-31"), withTime: false)
        wheel.moveColumn(by: 1)
        #expect(wheel.column == .month)
        wheel.turn(by: 1)
        #expect(wheel.canonical == expected)
    }

    @Test("29 February of a leap year becomes 28 February when the year turns")
    func leapYear() {
        var wheel = DateWheel(initial: date("2024-02-29"), withTime: false)
        wheel.turn(by: 1)
        #expect(wheel.canonical == "2025-02-28")
    }

    @Test("min and max are honoured on every column")
    func bounds() {
        var wheel = DateWheel(
            initial: date("2026-11-15"), withTime: false, minimum: date("1900-01-01"), maximum: date("2026-11-30"))
        wheel.turn(by: 1)
        #expect(wheel.canonical == "2026-11-30")
        wheel.moveColumn(by: 1)
        wheel.turn(by: 1)
        #expect(wheel.canonical == "2026-11-30")
        wheel.moveColumn(by: -1)
        wheel.jump(last: false)
        #expect(wheel.canonical == "1900-11-30")
        let outside = DateWheel(initial: date("2030-01-01"), withTime: false, maximum: date("2026-11-30"))
        #expect(outside.canonical == "2026-11-30")
    }

    @Test("the minute column steps on the field's interval and wraps")
    func minuteInterval() {
        var wheel = DateWheel(initial: date("2026-12-01 09:47"), withTime: true, minuteInterval: 30)
        #expect(wheel.canonical == "2026-12-01 09:30")
        wheel.moveColumn(by: 4)
        #expect(wheel.column == .minute)
        wheel.turn(by: 1)
        #expect(wheel.canonical == "2026-12-01 09:00")
        wheel.turn(by: -1)
        #expect(wheel.canonical == "2026-12-01 09:30")
        #expect(wheel.neighbour(.minute, offset: 1) == 0)
        wheel.moveColumn(by: 1)
        #expect(wheel.column == .minute)
        var quarter = DateWheel(initial: date("2026-12-01 09:00"), withTime: true, minuteInterval: 15)
        quarter.moveColumn(by: 4)
        quarter.turn(by: 3)
        #expect(quarter.canonical == "2026-12-01 09:45")
    }

    @Test("digits type a column and move on")
    func typing() {
        var wheel = DateWheel(
            initial: date("2026-11-30"), withTime: false, minimum: date("1900-01-01"), maximum: date("2026-11-30"))
        for d in [1, 9, 9, 0, 0, 5, 1, 7] { wheel.type(digit: d) }
        #expect(wheel.canonical == "1990-05-17")
        var time = DateWheel(initial: date("2026-12-01 00:00"), withTime: true, minuteInterval: 30)
        time.moveColumn(by: 3)
        for d in [9, 4, 5] { time.type(digit: d) }
        #expect(time.canonical == "2026-12-01 09:30")
    }

    @Test("canonical text parses back; impossible dates do not parse")
    func canonical() {
        #expect(PickerDate(canonical: "2024-02-29")?.canonical(withTime: false) == "2024-02-29")
        #expect(PickerDate(canonical: "2026-12-01 09:30")?.canonical(withTime: true) == "2026-12-01 09:30")
        #expect(PickerDate(canonical: "2023-02-29") == nil)
        #expect(PickerDate(canonical: "garbage") == nil)
    }
}
