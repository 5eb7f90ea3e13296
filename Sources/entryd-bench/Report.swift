import Foundation

/// Latency samples of one phase, in seconds.
struct Latencies {
    private(set) var samples: [Double] = []
    mutating func add(_ seconds: Double) { samples.append(seconds) }
    mutating func merge(_ other: Latencies) { samples += other.samples }

    /// The `q` quantile (0…1) in milliseconds, or `nil` without samples.
    func ms(_ q: Double) -> Double? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        let i = min(sorted.count - 1, Int((Double(sorted.count) * q).rounded(.up)) - 1)
        return sorted[max(0, i)] * 1000
    }
}

/// Calls made one at a time (no pipelining): how many, in how long, and the
/// latency of each; rounds of the same phase merge.
struct OneAtATime {
    var calls = 0
    var seconds = 0.0
    var errors = 0
    var latencies = Latencies()
    /// Calls per second over every round.
    var rate: Double { seconds > 0 ? Double(calls) / seconds : 0 }
    mutating func merge(_ other: OneAtATime) {
        calls += other.calls
        seconds += other.seconds
        errors += other.errors
        latencies.merge(other.latencies)
    }
}

/// Monotonic seconds (CLOCK_MONOTONIC).
func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// One line of the result table: a figure of entryd (or a baseline alone) and
/// its ratio to a baseline figure when there is one.
struct ReportRow {
    var what: String
    var value: String
    var baseline: String = ""
    var ratio: String = ""
    var target: String = ""
}

/// The result table, printed on stdout as Markdown.
final class Report {
    private(set) var rows: [ReportRow] = []
    private(set) var notes: [String] = []

    func add(_ row: ReportRow) { rows.append(row) }
    func note(_ text: String) { notes.append(text) }

    /// Adds a row comparing a rate (higher is better) with a baseline rate.
    /// - Parameters:
    ///   - value: entryd's figure (per second); `nil` prints "n/a".
    ///   - baseline: (label, figure per second) or `nil`.
    ///   - target: the minimum ratio of the issue (shown with ✓ or ✗), or `nil`.
    func rate(_ what: String, _ value: Double?, unit: String, baseline: (String, Double?)? = nil, target: Double? = nil)
    {
        var row = ReportRow(what: what, value: value.map { "\(format($0)) \(unit)" } ?? "n/a")
        if let (label, b) = baseline {
            row.baseline = b.map { "\(label): \(format($0)) \(unit)" } ?? "\(label): n/a"
            if let value, let b, b > 0 {
                let r = value / b
                row.ratio = String(format: "%.2f×", r)
                if let target { row.target = "≥ \(String(format: "%.1f", target))× " + (r >= target ? "✓" : "✗") }
            }
        }
        rows.append(row)
    }

    /// Adds a row judged against an absolute limit (lower is better).
    /// - Parameters:
    ///   - value: the figure in `unit` (µs, ms, MiB …); `nil` prints "n/a".
    ///   - limit: the issue's maximum, in `unit` (shown as "≤ limit unit" with ✓ or ✗).
    ///   - baseline: text for the baseline column (a related figure), if any.
    func atMost(_ what: String, _ value: Double?, unit: String, limit: Double, baseline: String = "") {
        rows.append(
            ReportRow(
                what: what, value: value.map { "\(format($0)) \(unit)" } ?? "n/a", baseline: baseline,
                target: "≤ \(limit == limit.rounded() ? String(Int(limit)) : format(limit)) \(unit) "
                    + (value.map { $0 <= limit ? "✓" : "✗" } ?? "")))
    }

    /// The Markdown table and notes.
    func render() -> String {
        var out = "| measurement | entryd | baseline | ratio | target |\n| --- | ---: | ---: | ---: | --- |\n"
        for r in rows { out += "| \(r.what) | \(r.value) | \(r.baseline) | \(r.ratio) | \(r.target) |\n" }
        for n in notes { out += "\n- \(n)" }
        return out + "\n"
    }
}

/// A figure with thousands separators and sensible precision (12,345 / 12.3 / 0.42).
func format(_ v: Double) -> String {
    if v >= 1000 {
        let n = Int(v.rounded())
        var s = String(n)
        var i = s.count - 3
        while i > 0 {
            s.insert(",", at: s.index(s.startIndex, offsetBy: i))
            i -= 3
        }
        return s
    }
    if v >= 100 { return String(format: "%.0f", v) }
    if v >= 10 { return String(format: "%.1f", v) }
    return String(format: "%.2f", v)
}

/// Milliseconds for the table ("1.23 ms"), or "n/a".
func msText(_ v: Double?) -> String { v.map { "\(format($0)) ms" } ?? "n/a" }

/// A progress line on stderr.
func progress(_ text: String) {
    FileHandle.standardError.write(Data("entryd-bench: \(text)\n".utf8))
}
