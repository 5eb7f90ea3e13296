import Foundation
import Synchronization
import EntryModel
import EntryProtocol

/// What this instance counts for monitoring (`io.entryd.Sync.Metrics`):
/// calls answered by method and outcome, validation problems sent by field
/// and code, syncs by peer and outcome, and the watchdog's state. Counters
/// start at zero when the instance starts (``startedAt``) and only grow.
///
/// Thread-safe; each count is one short lock. Labels come only from bounded
/// sets (the served methods, declared error names, problem codes, configured
/// peers), so a hostile client cannot make a series per call: a method this
/// instance does not serve counts as `unknown`, a field the form does not
/// have as `""`, and past ``maxSeries`` keys more are folded into those.
package final class ServiceMetrics: Sendable {
    /// One series of ``calls``: a method and how its call ended.
    package struct CallKey: Hashable, Sendable {
        /// The method's full name (``Method``), or `unknown`.
        package var method: String
        /// `ok`, or the error's full name.
        package var outcome: String
    }

    /// One series of ``problems``.
    package struct ProblemKey: Hashable, Sendable {
        /// The field the problem names (`""` for a field the form does not have).
        package var field: String
        /// The problem's code (``ProblemCode``), or `other`.
        package var code: String
    }

    /// The syncs with one peer.
    package struct PeerRunCounts: Equatable, Sendable {
        /// Syncs that ended without an error.
        package var ok = 0
        /// Syncs that ended with one.
        package var failed = 0
    }

    /// The watchdog's state as its loop last set it (entryd's WatchdogService).
    package struct Watchdog: Equatable, Sendable {
        /// systemd asked for pings (`WatchdogSec=`).
        package var enabled = false
        /// Pings are held back now: the writer is stuck.
        package var withheld = false
        /// How often the loop began to hold them back.
        package var withholds = 0
    }

    private struct State {
        var storageFailures = 0
        var calls: [CallKey: Int] = [:]
        var problems: [ProblemKey: Int] = [:]
        var peers: [String: PeerRunCounts] = [:]
        var watchdog = Watchdog()
    }

    /// Distinct keys kept per counter family before more are folded (a guard:
    /// the label sets are bounded well below it).
    static let maxSeries = 1024

    private let state = Mutex(State())
    /// When this instance started (RFC 3339 UTC): counters count from here.
    package let startedAt: String

    /// Counters from zero, started now.
    package init() {
        startedAt = Timestamp.rfc3339(milliseconds: UInt64(Date().timeIntervalSince1970 * 1000))
    }

    /// Counts a call answered with `error` (`nil`: success), and the problems
    /// of a `ValidationFailed`.
    package func answered(_ method: String, error: WireError?) {
        let known = Method(rawValue: method) != nil ? method : "unknown"
        let key = CallKey(
            method: known, outcome: error.map { WireErrorName(rawValue: $0.name) != nil ? $0.name : "other" } ?? "ok")
        var problems: [ProblemKey] = []
        if let error, error.known == .validationFailed, let list = error.parameters["problems"]?.arrayValue {
            for problem in list {
                let code = problem["code"]?.stringValue.flatMap(ProblemCode.init(rawValue:))
                let field = code == .unknownField ? "" : (problem["field"]?.stringValue ?? "")
                problems.append(ProblemKey(field: field, code: code?.rawValue ?? "other"))
            }
        }
        let storageFailed = error?.known == .storageFailed
        state.withLock { s in
            if storageFailed { s.storageFailures += 1 }
            Self.count(key, in: &s.calls, fold: CallKey(method: "unknown", outcome: key.outcome))
            for p in problems { Self.count(p, in: &s.problems, fold: ProblemKey(field: "", code: p.code)) }
        }
    }

    /// Counts a sync with configured peer `peer` (its end time is the peer's
    /// stored `lastSync`, kept across restarts).
    package func syncEnded(peer: String, succeeded: Bool) {
        state.withLock { s in
            guard s.peers[peer] != nil || s.peers.count < Self.maxSeries else { return }
            if succeeded {
                s.peers[peer, default: PeerRunCounts()].ok += 1
            } else {
                s.peers[peer, default: PeerRunCounts()].failed += 1
            }
        }
    }

    /// Sets the watchdog's state: `enabled` at start, then whether pings are withheld.
    package func watchdog(enabled: Bool, withheld: Bool) {
        state.withLock { s in
            if withheld && !s.watchdog.withheld { s.watchdog.withholds += 1 }
            s.watchdog.enabled = enabled
            s.watchdog.withheld = withheld
        }
    }

    /// The counters now; `storageFailures` counts the calls answered
    /// `StorageFailed`, whatever their method (a series present from the
    /// start, at 0, so an alert sees its first increase).
    package var snapshot:
        (
            calls: [CallKey: Int], problems: [ProblemKey: Int], peers: [String: PeerRunCounts], watchdog: Watchdog,
            storageFailures: Int
        )
    {
        state.withLock { ($0.calls, $0.problems, $0.peers, $0.watchdog, $0.storageFailures) }
    }

    private static func count<Key: Hashable>(_ key: Key, in counts: inout [Key: Int], fold: Key) {
        if counts[key] != nil || counts.count < maxSeries {
            counts[key, default: 0] += 1
        } else {
            counts[fold, default: 0] += 1
        }
    }
}
