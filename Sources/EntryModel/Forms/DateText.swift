import Foundation

/// Calendar dates (`YYYY-MM-DD`) and wall-clock date-times (`YYYY-MM-DD HH:mm`)
/// as the pickers write them (doc/design.md): proleptic Gregorian calendar, ASCII
/// digits, no time zone. Parsed and written by hand, so neither the process
/// locale nor a week-based year can change them.
package enum DateText {
    /// Reads a date in any of the accepted forms and returns it canonical.
    ///
    /// Accepted (full-width digits are folded beforehand by the caller):
    /// `1990-05-17`, `1990/5/17`, `1990.5.17` (one separator kind), `19900517`,
    /// `1990年5月17日` (final 日 or 号 optional: `2000年01月01号`), also in
    /// Chinese numerals (``chineseNumeralsAsDigits(_:)``: `二〇〇〇年一月一日`,
    /// `二零零零年十二月三十一日`). The day must exist: no 1990-02-30, no
    /// 二〇〇〇年二月三十日; 29 February only in leap years.
    /// - Throws: ``FieldFailure`` `invalid-format` (`dateFormat` or `noSuchDate`).
    package static func parseDate(_ input: String) throws(FieldFailure) -> String {
        // Canonical `YYYY-MM-DD` (what pickers send and what is stored): check the day only.
        let b = Array(input.utf8)
        if b.count == 10, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
            b.indices.allSatisfy({ $0 == 4 || $0 == 7 || (b[$0] >= 0x30 && b[$0] <= 0x39) })
        {
            let n = { (r: Range<Int>) in r.reduce(0) { $0 * 10 + Int(b[$1] - 0x30) } }
            try requireDay(n(0..<4), n(5..<7), n(8..<10))
            return input
        }
        return try canonicalDate(tokens(input)[...])
    }

    /// Reads a date-time: one of ``parseDate(_:)``'s forms, then optionally `T`
    /// or white space, then `H:mm` or `HH:mm` with optional `:00` seconds
    /// (`2025-03-09 14:30`, `2025-03-09T14:30`, `2025/3/9 9:00`,
    /// `2025年3月9日 14:30`). The time is kept as typed, never zone-converted.
    /// - Throws: ``FieldFailure`` `invalid-format` (`dateTimeFormat`,
    ///   `noSuchDate`, `noSuchTime`, `secondsNotZero`).
    package static func parseDateTime(_ input: String) throws(FieldFailure) -> String {
        var tokens = tokens(input)[...]
        let format = FieldFailure(code: .invalidFormat, reason: .dateTimeFormat)
        var seconds = 0
        if tokens.count >= 5, tokens[tokens.endIndex - 2] == ":", tokens[tokens.endIndex - 4] == ":" {
            guard let s = twoDigits(tokens.last!) else { throw format }
            seconds = s
            tokens.removeLast(2)
        }
        guard tokens.count >= 4, tokens[tokens.endIndex - 2] == ":",
            let minute = twoDigits(tokens[tokens.endIndex - 1]),
            let hour = number(tokens[tokens.endIndex - 3], digits: 1...2)
        else { throw format }
        tokens.removeLast(3)
        if let last = tokens.last, last == " " || last == "T" || last == "t" { tokens.removeLast() }
        let date: String
        do { date = try canonicalDate(tokens) } catch  where error.reason == .dateFormat { throw format }
        guard hour < 24, minute < 60, seconds < 60 else {
            throw FieldFailure(code: .invalidFormat, reason: .noSuchTime)
        }
        guard seconds == 0 else { throw FieldFailure(code: .invalidFormat, reason: .secondsNotZero) }
        return date + " " + Timestamp.pad(hour, 2) + ":" + Timestamp.pad(minute, 2)
    }

    /// Whether `text` is a canonical date of a real day (for form files).
    static func isCanonicalDate(_ text: String) -> Bool {
        text.count == 10 && (try? parseDate(text)) == text
    }

    /// Whether `text` is a canonical date-time (for form files).
    static func isCanonicalDateTime(_ text: String) -> Bool {
        text.count == 16 && (try? parseDateTime(text)) == text
    }

    /// Today's date in UTC+14, the zone that reaches each date first: no
    /// birthday valid anywhere on Earth at `now` is later than this.
    package static func latestToday(at now: Date) -> String {
        let days = Int64(((now.timeIntervalSince1970 + 14 * 3600) / 86_400).rounded(.down))
        let (year, month, day) = Timestamp.civil(fromDays: days)
        return Timestamp.pad(year, 4) + "-" + Timestamp.pad(month, 2) + "-" + Timestamp.pad(day, 2)
    }

    /// The date-time now in UTC−12, the zone that reaches each moment last:
    /// a wall-clock date-time earlier than this is past everywhere on Earth
    /// (`YYYY-MM-DD HH:mm`, the bound of `not-before = now`).
    package static func earliestNow(at now: Date) -> String {
        let seconds = Int64((now.timeIntervalSince1970 - 12 * 3600).rounded(.down))
        let days = Int64((Double(seconds) / 86_400).rounded(.down))
        let (year, month, day) = Timestamp.civil(fromDays: days)
        let minutes = Int((seconds - days * 86_400) / 60)
        return Timestamp.pad(year, 4) + "-" + Timestamp.pad(month, 2) + "-" + Timestamp.pad(day, 2) + " "
            + Timestamp.pad(minutes / 60, 2) + ":" + Timestamp.pad(minutes % 60, 2)
    }

    /// The date of `tokens`, canonical; see ``parseDate(_:)``.
    private static func canonicalDate(_ tokens: ArraySlice<String>) throws(FieldFailure) -> String {
        // Spaces between the parts are allowed: `1990 年 5 月 17 日`, `1990 / 5 / 17`.
        let t = tokens.filter { $0 != " " }
        var parts: (Int, Int, Int)?
        if t.count == 1, t[0].count == 8, let y = number(t[0].prefix(4)), let m = number(t[0].dropFirst(4).prefix(2)),
            let d = number(t[0].suffix(2))
        {
            parts = (y, m, d)
        } else if t.count == 5, ["-", "/", "."].contains(t[1]), t[3] == t[1] {
            parts = numbers(t[0], t[2], t[4])
        } else if (t.count == 6 && (t[5] == "日" || t[5] == "号")) || t.count == 5, t[1] == "年", t[3] == "月" {
            parts = numbers(t[0], t[2], t[4])
        }
        guard let (year, month, day) = parts else { throw FieldFailure(code: .invalidFormat, reason: .dateFormat) }
        try requireDay(year, month, day)
        return Timestamp.pad(year, 4) + "-" + Timestamp.pad(month, 2) + "-" + Timestamp.pad(day, 2)
    }

    private static func numbers(_ y: String, _ m: String, _ d: String) -> (Int, Int, Int)? {
        guard let year = number(y, digits: 4...4), let month = number(m, digits: 1...2),
            let day = number(d, digits: 1...2)
        else { return nil }
        return (year, month, day)
    }

    /// Throws `invalid-format` (`noSuchDate`) unless year ≥ 1, month 1–12 and
    /// the day exists in that month (``Timestamp/daysInMonth(_:_:)``).
    private static func requireDay(_ year: Int, _ month: Int, _ day: Int) throws(FieldFailure) {
        guard year >= 1, (1...12).contains(month), (1...Timestamp.daysInMonth(year, month)).contains(day) else {
            throw FieldFailure(code: .invalidFormat, reason: .noSuchDate)
        }
    }

    /// Splits into runs of ASCII digits, single other characters, and one `" "`
    /// per run of white space; Chinese numerals are read as digits first.
    private static func tokens(_ input: String) -> [String] {
        var tokens: [String] = []
        for ch in chineseNumeralsAsDigits(input) {
            if ch.isASCIIDigit, let last = tokens.last, last.last?.isASCIIDigit == true {
                tokens[tokens.count - 1].append(ch)
            } else if ch.isWhitespace {
                if tokens.last != " " { tokens.append(" ") }
            } else {
                tokens.append(String(ch))
            }
        }
        return tokens
    }

    /// The Chinese digits, each with its value: 〇 (and the look-alike ○, U+25CB)
    /// and 零 are 0, 一 to 九 are 1 to 9.
    private static let chineseDigits: [Character: Int] = [
        "〇": 0, "○": 0, "零": 0, "一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
    ]

    /// `input` with each run of Chinese numerals written in ASCII digits, as
    /// dates are written in words: a run without 十 digit by digit (years:
    /// `二〇〇〇`, `二零零零` → `2000`; `一` → `1`), a run with one 十 as a
    /// number from 10 to 99 (`十` → `10`, `十二` → `12`, `二十` → `20`, `三十一`
    /// → `31`). Any other run (`十十`, `零十`, `一二十`) stays as written, so
    /// the date is refused as unreadable; other characters are unchanged.
    static func chineseNumeralsAsDigits(_ input: String) -> String {
        guard input.contains(where: { chineseDigits[$0] != nil || $0 == "十" }) else { return input }
        var out = ""
        var run: [Character] = []
        func flush() {
            defer { run = [] }
            guard !run.isEmpty else { return }
            guard let ten = run.firstIndex(of: "十") else {
                out += run.map { String(chineseDigits[$0]!) }.joined()
                return
            }
            let before = run[..<ten]
            let after = run[(ten + 1)...]
            let tens = before.first.map { chineseDigits[$0]! } ?? 1
            let ones = after.first.map { chineseDigits[$0] ?? 0 } ?? 10  // 10: no digit after 十
            guard before.count <= 1, after.count <= 1, tens != 0, ones != 0 else {
                out += String(run)
                return
            }
            out += String(tens * 10 + ones % 10)
        }
        for ch in input {
            if chineseDigits[ch] != nil || ch == "十" {
                run.append(ch)
            } else {
                flush()
                out.append(ch)
            }
        }
        flush()
        return out
    }

    private static func number(_ token: some StringProtocol, digits: ClosedRange<Int> = 1...8) -> Int? {
        guard digits.contains(token.count), token.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int(token)
    }

    private static func twoDigits(_ token: String) -> Int? { number(token, digits: 2...2) }

}
