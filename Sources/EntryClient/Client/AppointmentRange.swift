import Foundation
import EntryModel

/// The days of `--appointment WHEN` (`entryctl list`): `today`, `tomorrow`, a
/// date, or a range `FROM..TO` of those (either side may be left open, not
/// both), as the inclusive dates of the `Filter` members `appointmentFrom`
/// and `appointmentTo` (doc/protocol.md). `today` and `tomorrow` are the
/// client's: resolved in its own time zone before the call, since the
/// appointments entryd stores carry no zone.
package struct AppointmentRange: Sendable, Equatable {
    /// The first day (`YYYY-MM-DD`), or `nil` for an open start.
    package var from: String?
    /// The last day (`YYYY-MM-DD`), or `nil` for an open end.
    package var to: String?

    /// A range of the given days.
    package init(from: String?, to: String?) {
        self.from = from
        self.to = to
    }

    /// Reads `text` (`today`, `tomorrow`, a date read as Add reads one —
    /// `2027-03-09`, `2027/3/9`, `2027年3月9日` — or `FROM..TO`), resolving
    /// `today` and `tomorrow` at `now` in `zone`.
    /// - Throws: ``UsageError`` naming what is wrong: a part that is no date,
    ///   an empty range, a start after the end.
    package init(parsing text: String, now: Date = Date(), zone: TimeZone = .current) throws(UsageError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.components(separatedBy: "..")
        guard parts.count <= 2 else {
            throw UsageError(
                zh: "--appointment 的值“\(text)”有多个 ..，请写成 FROM..TO，例如 2027-03-09..2027-03-15",
                en: "--appointment '\(text)' has more than one ..; write FROM..TO, e.g. 2027-03-09..2027-03-15")
        }
        let days = try parts.map { part throws(UsageError) -> String? in
            try Self.day(
                part.trimmingCharacters(in: .whitespaces), whole: text, isRange: parts.count == 2, now: now, zone: zone)
        }
        if parts.count == 1 {
            from = days[0]
            to = days[0]
        } else {
            from = days[0]
            to = days[1]
            if from == nil && to == nil {
                throw UsageError(
                    zh: "--appointment 的范围“\(text)”两端都是空的，请至少给出一端，例如 today.. 或 ..2027-03-15",
                    en:
                        "--appointment '\(text)' is a range with neither end; give at least one, e.g. today.. or ..2027-03-15"
                )
            }
        }
        if let from, let to, from > to {
            throw UsageError(
                zh: "--appointment 的开始日期 \(from) 晚于结束日期 \(to)，请交换两者",
                en: "--appointment starts on \(from), after its end \(to); swap them")
        }
    }

    /// The date of one side: `nil` for an empty side of a range.
    private static func day(
        _ part: String, whole: String, isRange: Bool, now: Date, zone: TimeZone
    ) throws(UsageError) -> String? {
        if part.isEmpty {
            if isRange { return nil }
            throw UsageError(
                zh: "--appointment 需要 today、tomorrow、日期（YYYY-MM-DD）或 FROM..TO",
                en: "--appointment needs today, tomorrow, a date (YYYY-MM-DD) or FROM..TO")
        }
        switch part.lowercased() {
        case "today": return localDate(now, zone: zone)
        case "tomorrow": return localDate(now, zone: zone, adding: 1)
        default: break
        }
        guard let date = try? DateText.parseDate(MatchKey.foldFullWidth(part)) else {
            throw UsageError(
                zh: "--appointment 的“\(part)”不是日期：请写 today、tomorrow、YYYY-MM-DD（例如 2027-03-09）或 FROM..TO",
                en:
                    "--appointment: '\(part)' is not a date; write today, tomorrow, YYYY-MM-DD (e.g. 2027-03-09) or FROM..TO"
            )
        }
        return date
    }

    /// The calendar date of `now` in `zone`, `adding` days later (`YYYY-MM-DD`).
    package static func localDate(_ now: Date, zone: TimeZone, adding days: Int = 0) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let day = calendar.date(byAdding: .day, value: days, to: now) ?? now
        let c = calendar.dateComponents([.year, .month, .day], from: day)
        return String(format: "%04d-%02d-%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0)
    }
}
