import EntryModel
import EntryProtocol

/// The date or date-time picker: wheel columns year / month / day (and hour /
/// minute for `datetime`), one of them selected.
///
/// ↑/↓ turn the selected column one step (month, day, hour and minute wrap
/// around; the year stops at the range), PgUp/PgDn ten steps, Home/End go to
/// the column's first/last value, ←/→ move between columns, and digits type
/// the column's value (four for the year, two for the others) and move on.
/// After every change the day is clamped to the month (no 31 February) and
/// the whole value to `min…max`, so the wheel never shows a value the field refuses.
package struct DateWheel: Sendable, Equatable {
    /// A wheel column.
    package enum Column: Int, Sendable, CaseIterable {
        case year, month, day, hour, minute
    }

    /// The value shown (always valid and within the range).
    package private(set) var value: PickerDate
    /// The selected column.
    package private(set) var column: Column = .year
    /// Whether the wheel has hour and minute columns.
    let withTime: Bool
    /// Minutes per step of the minute column (a divisor of 60; 1 for none).
    package let minuteInterval: Int
    /// The earliest value allowed.
    let minimum: PickerDate
    /// The latest value allowed.
    package let maximum: PickerDate
    private var typed = ""

    /// A wheel showing `initial` (clamped into range, minutes rounded down to the interval).
    ///
    /// - Parameters:
    ///   - minimum, maximum: the field's resolved `min`/`max`; `nil` bounds are
    ///     1900-01-01 00:00 and 2100-12-31 23:59.
    ///   - minuteInterval: minutes per step (1…60, a divisor of 60); `nil` is 1.
    package init(
        initial: PickerDate, withTime: Bool, minuteInterval: Int? = nil,
        minimum: PickerDate? = nil, maximum: PickerDate? = nil
    ) {
        self.withTime = withTime
        let step = minuteInterval ?? 1
        self.minuteInterval = (1...60).contains(step) && 60 % step == 0 ? step : 1
        var low = minimum ?? PickerDate(year: 1900, month: 1, day: 1)
        var high = maximum ?? PickerDate(year: 2100, month: 12, day: 31, hour: 23, minute: 59)
        if !withTime {
            low.hour = 0
            low.minute = 0
            high.hour = 0
            high.minute = 0
        }
        self.minimum = low
        self.maximum = max(low, high)
        var start = initial
        if !withTime {
            start.hour = 0
            start.minute = 0
        }
        start.minute -= start.minute % self.minuteInterval
        value = start.clampedDay()
        clampToRange()
    }

    /// The columns this wheel has, left to right.
    package var columns: [Column] { withTime ? Column.allCases : [.year, .month, .day] }

    /// The canonical text of ``value``.
    package var canonical: String { value.canonical(withTime: withTime) }

    /// Selects the column to the left (`by: -1`) or right (`by: 1`); stops at the ends.
    mutating func moveColumn(by delta: Int) {
        let index = min(max(0, column.rawValue + delta), columns.count - 1)
        column = columns[index]
        typed = ""
    }

    /// Turns the selected column by `steps` (negative: earlier).
    package mutating func turn(by steps: Int) {
        typed = ""
        switch column {
        case .year: value.year += steps
        case .month: value.month = Self.wrap(value.month + steps, 1, 12)
        case .day: value.day = Self.wrap(value.day + steps, 1, value.daysInMonth)
        case .hour: value.hour = Self.wrap(value.hour + steps, 0, 23)
        case .minute:
            let count = 60 / minuteInterval
            value.minute = Self.wrap(value.minute / minuteInterval + steps, 0, count - 1) * minuteInterval
        }
        settle()
    }

    /// Sets the selected column to its first (`last: false`) or last value.
    mutating func jump(last: Bool) {
        typed = ""
        switch column {
        case .year: value.year = last ? maximum.year : minimum.year
        case .month: value.month = last ? 12 : 1
        case .day: value.day = last ? value.daysInMonth : 1
        case .hour: value.hour = last ? 23 : 0
        case .minute: value.minute = last ? 60 - minuteInterval : 0
        }
        settle()
    }

    /// Types one digit into the selected column: the year takes four, the
    /// others two (or one that cannot start a valid two-digit value); when the
    /// column is complete it is set (rounded to the interval, clamped) and the
    /// next column selected.
    package mutating func type(digit: Int) {
        typed += String(digit)
        let width = column == .year ? 4 : 2
        let number = Int(typed) ?? 0
        let highest: Int
        switch column {
        case .year: highest = 9999
        case .month: highest = 12
        case .day: highest = value.daysInMonth
        case .hour: highest = 23
        case .minute: highest = 59
        }
        guard typed.count >= width || number * 10 > highest else { return }
        switch column {
        case .year: value.year = max(1, number)
        case .month: value.month = min(max(1, number), 12)
        case .day: value.day = min(max(1, number), value.daysInMonth)
        case .hour: value.hour = min(number, 23)
        case .minute: value.minute = min(number, 59) - min(number, 59) % minuteInterval
        }
        settle()
        moveColumn(by: 1)
    }

    /// The digits typed so far into the selected column (shown while typing).
    var typedDigits: String { typed }

    /// The value `offset` steps away in `column`, as the wheel shows it around
    /// the selection (wrapping like ``turn(by:)``); `nil` past the year range.
    func neighbour(_ column: Column, offset: Int) -> Int? {
        switch column {
        case .year:
            let y = value.year + offset
            return (minimum.year...maximum.year).contains(y) ? y : nil
        case .month: return Self.wrap(value.month + offset, 1, 12)
        case .day: return Self.wrap(value.day + offset, 1, value.daysInMonth)
        case .hour: return Self.wrap(value.hour + offset, 0, 23)
        case .minute:
            return Self.wrap(value.minute / minuteInterval + offset, 0, 60 / minuteInterval - 1) * minuteInterval
        }
    }

    private mutating func settle() {
        value = value.clampedDay()
        clampToRange()
    }

    private mutating func clampToRange() {
        if value < minimum { value = minimum }
        if value > maximum { value = maximum }
        if withTime && value.minute % minuteInterval != 0 {
            value.minute -= value.minute % minuteInterval
            if value < minimum { value.minute += minuteInterval }
        }
    }

    private static func wrap(_ n: Int, _ low: Int, _ high: Int) -> Int {
        let span = high - low + 1
        return ((n - low) % span + span) % span + low
    }
}
