@preconcurrency import Glibc
import Foundation
import EntryClient
import EntryModel

/// A one-line progress bar on stderr when it is a terminal: count, rate, a bar
/// and the ETA when the total is known; silent otherwise (the commands then
/// print a plain summary at the end). Redrawn at most ten times a second.
final class ProgressLine {
    private let enabled: Bool
    private let label: String
    private let locale: EntryLocale
    private let started = ProgressLine.now()
    private var lastDraw = 0.0
    private var drawn = false

    /// A progress line prefixed with `label` (already in `locale`), its rate
    /// and time left in `locale`; drawn only when stderr is a terminal.
    init(label: Localized, locale: EntryLocale) {
        self.label = label(locale)
        self.locale = locale
        enabled = isatty(2) == 1
    }

    /// Seconds since an arbitrary start (monotonic).
    static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// Seconds since the line was made.
    var elapsed: Double { ProgressLine.now() - started }

    /// Redraws with `count` items done; `fraction` (0…1) of the work when known gives the bar and ETA.
    func update(count: Int, fraction: Double?, force: Bool = false) {
        guard enabled else { return }
        let t = ProgressLine.now()
        guard force || t - lastDraw >= 0.1 else { return }
        lastDraw = t
        let seconds = max(t - started, 0.001)
        let rate = Int(Double(count) / seconds)
        var line = "\(label) \(count) · " + (locale == .zh ? "\(rate) 条/秒" : "\(rate)/s")
        if let fraction, fraction > 0 {
            let f = min(fraction, 1)
            let width = 24
            let filled = Int(f * Double(width))
            line += " [" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
            line += " \(Int(f * 100))%"
            let eta = Int(seconds * (1 - f) / f)
            line += String(format: locale == .zh ? " 剩余 %d:%02d" : " ETA %d:%02d", eta / 60, eta % 60)
        }
        fputs("\r\u{1B}[K" + line, stderr)
        drawn = true
    }

    /// Clears the line.
    func finish() {
        guard enabled, drawn else { return }
        fputs("\r\u{1B}[K", stderr)
    }
}
