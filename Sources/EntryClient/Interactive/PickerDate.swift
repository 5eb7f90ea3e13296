import EntryModel
import EntryProtocol

/// A wall-clock date and time as the date pickers hold it: proleptic
/// Gregorian, no time zone, minutes since midnight (doc/design.md, "Forms and values").
///
/// Compared field by field, so `<` orders date-times in time.
package struct PickerDate: Sendable, Hashable, Comparable {
    /// The year, 1…9999.
    package var year: Int
    /// The month, 1…12.
    package var month: Int
    /// The day of the month, 1…``daysInMonth``.
    package var day: Int
    /// The hour, 0…23 (0 for plain dates).
    package var hour: Int
    /// The minute, 0…59 (0 for plain dates).
    package var minute: Int

    /// A date (and time); the values are taken as given, see ``clampedDay()``.
    package init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
    }

    /// Reads canonical `YYYY-MM-DD` or `YYYY-MM-DD HH:mm`; `nil` for anything else
    /// (including days that do not exist).
    package init?(canonical text: String) {
        let parts = text.split(whereSeparator: { $0 == "-" || $0 == " " || $0 == ":" }).map { Int($0) }
        guard parts.count == 3 || parts.count == 5, parts.allSatisfy({ $0 != nil }) else { return nil }
        let n = parts.map { $0! }
        self.init(year: n[0], month: n[1], day: n[2], hour: n.count == 5 ? n[3] : 0, minute: n.count == 5 ? n[4] : 0)
        guard (1...9999).contains(year), (1...12).contains(month), (1...daysInMonth).contains(day),
            (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
    }

    /// Days in this date's month.
    package var daysInMonth: Int { Timestamp.daysInMonth(year, month) }

    /// This date with the day lowered to the last of its month when it is past
    /// it (31 January moved to February becomes 28 or 29 February).
    func clampedDay() -> PickerDate {
        var d = self
        d.day = min(max(1, day), daysInMonth)
        return d
    }

    /// `YYYY-MM-DD`, or `YYYY-MM-DD HH:mm` when `withTime`.
    package func canonical(withTime: Bool) -> String {
        let date = Self.pad(year, 4) + "-" + Self.pad(month, 2) + "-" + Self.pad(day, 2)
        return withTime ? date + " " + Self.pad(hour, 2) + ":" + Self.pad(minute, 2) : date
    }

    /// Zero-padded decimal digits of `value`, at least `width` of them.
    static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// Orders by year, month, day, hour, minute.
    package static func < (a: PickerDate, b: PickerDate) -> Bool {
        (a.year, a.month, a.day, a.hour, a.minute) < (b.year, b.month, b.day, b.hour, b.minute)
    }
}
