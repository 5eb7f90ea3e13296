/// RFC 3339 UTC time stamps with milliseconds, e.g. `2026-11-30T08:15:02.123Z`
/// (doc/protocol.md: "Times are RFC 3339 UTC with milliseconds").
///
/// Written with the proleptic Gregorian calendar and ASCII digits, never the
/// process locale. Text order equals time order for years 0000–9999.
package enum Timestamp {
    /// Formats milliseconds since the Unix epoch.
    package static func rfc3339(milliseconds ms: UInt64) -> String {
        let totalSeconds = Int64(ms / 1000)
        let millis = Int(ms % 1000)
        let days = totalSeconds >= 0 ? totalSeconds / 86400 : (totalSeconds - 86399) / 86400
        let secondsOfDay = Int(totalSeconds - days * 86400)
        let (y, m, d) = civil(fromDays: days)
        return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2) + "T" + pad(secondsOfDay / 3600, 2) + ":"
            + pad(secondsOfDay / 60 % 60, 2) + ":" + pad(secondsOfDay % 60, 2) + "." + pad(millis, 3) + "Z"
    }

    /// Parses an RFC 3339 date-time (`2026-11-30T08:15:02Z`, optional fraction,
    /// `Z` or a `±hh:mm` offset, `t`/`z` in either case, a space instead of `T`)
    /// into milliseconds since the epoch. `nil` when malformed or before 1970.
    package static func milliseconds(rfc3339 text: String) -> UInt64? {
        let b = Array(text.utf8)
        func num(_ from: Int, _ len: Int) -> Int? {
            guard from + len <= b.count else { return nil }
            var v = 0
            for i in from..<(from + len) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard b.count >= 20, let y = num(0, 4), b[4] == 45, let mo = num(5, 2), b[7] == 45, let d = num(8, 2),
            [84, 116, 32].contains(b[10]), let h = num(11, 2), b[13] == 58, let mi = num(14, 2), b[16] == 58,
            let s = num(17, 2), (1...12).contains(mo), (1...daysInMonth(y, mo)).contains(d), h < 24, mi < 60, s < 61
        else { return nil }
        var i = 19
        var millis = 0
        if i < b.count, b[i] == 46 {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if digits < 3 { millis = millis * 10 + Int(b[i] - 48) }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<3 where digits < 3 { millis *= 10 }
        }
        var offsetSeconds = 0
        guard i < b.count else { return nil }
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45, let oh = num(i + 1, 2), i + 3 < b.count, b[i + 3] == 58,
            let om = num(i + 4, 2)
        {
            offsetSeconds = (oh * 3600 + om * 60) * (b[i] == 43 ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let seconds = days(fromCivil: y, mo, d) * 86400 + Int64(h * 3600 + mi * 60 + min(s, 59)) - Int64(offsetSeconds)
        guard seconds >= 0 else { return nil }
        return UInt64(seconds) * 1000 + UInt64(millis)
    }

    /// Days in month `m` of year `y` (Gregorian leap rule).
    package static func daysInMonth(_ y: Int, _ m: Int) -> Int {
        switch m {
        case 2: return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a civil date (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
    static func days(fromCivil y0: Int, _ m: Int, _ d: Int) -> Int64 {
        let y = Int64(m <= 2 ? y0 - 1 : y0)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = Int64((m + 9) % 12)
        let doy = (153 * mp + 2) / 5 + Int64(d) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    /// The civil date (year, month, day) of a day count since 1970-01-01.
    static func civil(fromDays z0: Int64) -> (Int, Int, Int) {
        let z = z0 + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = Int(doy - (153 * mp + 2) / 5 + 1)
        let m = Int(mp < 10 ? mp + 3 : mp - 9)
        let y = Int(yoe + era * 400) + (m <= 2 ? 1 : 0)
        return (y, m, d)
    }

    static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
