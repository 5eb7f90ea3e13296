import EntryModel

/// A `Metrics` reply (interfaces/io.entryd.Sync.varlink) in Prometheus's text
/// exposition format, version 0.0.4 (prometheus.io, "Exposition formats"):
/// what entryd-web serves at `GET /metrics` and `entryctl metrics` prints.
///
/// Every family has `# HELP` and `# TYPE`; counters end in `_total`;
/// histograms give cumulative `_bucket{le=…}` series with `+Inf`, `_sum` and
/// `_count`. Label values are escaped (`\\`, `\"`, `\n`). Members a reply lacks
/// (an older entryd, SQLite's missing database state) leave their family out.
package enum MetricsExposition {
    /// The media type of the text (`Content-Type` of `GET /metrics`).
    package static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The exposition text of `reply` (the `Metrics` reply's parameters object).
    package static func text(_ reply: JSON) -> String {
        var out = Writer()
        var info: [(String, String)] = []
        if let v = reply["version"]?.stringValue { info.append(("version", v)) }
        if let v = reply["instance"]?.stringValue { info.append(("entryd_instance", v)) }
        if let v = reply["incarnation"]?.stringValue { info.append(("incarnation", v)) }
        out.family("entryd_info", .gauge, "The entryd build, instance name and incarnation that answered (always 1).")
        out.sample("entryd_info", info, 1)
        if let started = reply["startedAt"]?.stringValue.flatMap(Timestamp.milliseconds(rfc3339:)) {
            out.family("entryd_start_time_seconds", .gauge, "When this entryd instance started, in Unix seconds.")
            out.sample("entryd_start_time_seconds", [], Double(started) / 1000)
        }
        out.counts(
            "entryd_calls_total", "Calls answered, by method and outcome (ok or the error's name).", reply["calls"],
            labels: ["method", "outcome"])
        out.counts(
            "entryd_validation_problems_total", "Problems of calls refused with ValidationFailed, by field and code.",
            reply["problems"], labels: ["field", "code"])
        out.counter(
            "entryd_storage_failures_total",
            "Calls answered StorageFailed (disk full, I/O error, database server away).",
            reply["storageFailures"])
        out.counter("entryd_write_rounds_total", "Write transactions committed (group commits).", reply["writeRounds"])
        out.counter(
            "entryd_write_jobs_total", "Writes carried by the committed write transactions.", reply["writeJobs"])
        out.histogram("entryd_write_round_jobs", "Writes per committed write transaction.", reply["roundJobs"])
        out.histogram(
            "entryd_commit_duration_seconds", "How long each write transaction's commit took, in seconds.",
            reply["commitSeconds"])
        out.gauge("entryd_change_log_seq", "The change log's highest seq.", reply["seq"])
        out.gauge("entryd_entries", "Live entries (not deleted).", reply["entries"])
        out.gauge("entryd_conflicts_open", "Conflicts not yet resolved.", reply["conflicts"])
        if let peers = reply["peers"]?.arrayValue {
            out.family("entryd_peer_sync_runs_total", .counter, "Syncs with each configured peer, by outcome.")
            for p in peers {
                let name = p["name"]?.stringValue ?? ""
                out.sample("entryd_peer_sync_runs_total", [("peer", name), ("outcome", "ok")], number(p["runsOk"]))
                out.sample(
                    "entryd_peer_sync_runs_total", [("peer", name), ("outcome", "failed")], number(p["runsFailed"]))
            }
            out.family(
                "entryd_peer_last_success_timestamp_seconds", .gauge,
                "When the last good sync with each peer ended, in Unix seconds (absent before the first).")
            for p in peers {
                guard let at = p["lastSuccess"]?.stringValue.flatMap(Timestamp.milliseconds(rfc3339:)) else { continue }
                out.sample(
                    "entryd_peer_last_success_timestamp_seconds", [("peer", p["name"]?.stringValue ?? "")],
                    Double(at) / 1000)
            }
            out.family("entryd_peer_pending_changes", .gauge, "This node's changes each peer has not been sent yet.")
            for p in peers {
                out.sample(
                    "entryd_peer_pending_changes", [("peer", p["name"]?.stringValue ?? "")], number(p["pending"]))
            }
        }
        out.gauge("entryd_erasures", "Entries erased on this node.", reply["erasures"])
        out.gauge(
            "entryd_erasure_purge_pending", "1 while an erasure's values may still be in a file, else 0.",
            reply["purgePending"])
        out.gauge("entryd_incarnation_seq", "The seq this node's incarnation began at.", reply["incarnationSeq"])
        out.gauge("entryd_watchdog_enabled", "1 when systemd's watchdog is in use.", reply["watchdogEnabled"])
        out.gauge(
            "entryd_watchdog_withheld", "1 while the watchdog holds its ping back (the writer is stuck).",
            reply["watchdogWithheld"])
        out.counter(
            "entryd_watchdog_withholds_total", "How often the watchdog began to hold its ping back.",
            reply["watchdogWithholds"])
        out.gauge(
            "entryd_database_up", "On a hub: 1 while the PostgreSQL server answers, else 0.", reply["databaseReachable"]
        )
        out.counter(
            "entryd_database_losses_total", "On a hub: how often the PostgreSQL server stopped answering.",
            reply["databaseLosses"])
        return out.text
    }

    /// A count or gauge value: an integer, a number or a Boolean (1 or 0).
    static func number(_ value: JSON?) -> Double {
        switch value {
        case .int(let i): Double(i)
        case .double(let d): d
        case .bool(let b): b ? 1 : 0
        default: 0
        }
    }

    /// A metric's type, as `# TYPE` names it.
    enum Kind: String {
        case counter, gauge, histogram
    }

    /// Builds the text.
    struct Writer {
        var text = ""

        mutating func family(_ name: String, _ kind: Kind, _ help: String) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(kind.rawValue)\n"
        }

        mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
            text += name
            if !labels.isEmpty {
                text +=
                    "{" + labels.map { "\($0.0)=\"\(MetricsExposition.escape($0.1))\"" }.joined(separator: ",") + "}"
            }
            text += " " + MetricsExposition.format(value) + "\n"
        }

        /// A counter family from a list of objects: each object's `labels`
        /// members (strings) label its sample, its `count` is the value.
        mutating func counts(_ name: String, _ help: String, _ list: JSON?, labels: [String]) {
            guard let list = list?.arrayValue else { return }
            family(name, .counter, help)
            for item in list {
                sample(name, labels.map { ($0, item[$0]?.stringValue ?? "") }, MetricsExposition.number(item["count"]))
            }
        }

        mutating func counter(_ name: String, _ help: String, _ value: JSON?) {
            guard let value, !value.isNull else { return }
            family(name, .counter, help)
            sample(name, [], MetricsExposition.number(value))
        }

        mutating func gauge(_ name: String, _ help: String, _ value: JSON?) {
            guard let value, !value.isNull else { return }
            family(name, .gauge, help)
            sample(name, [], MetricsExposition.number(value))
        }

        mutating func histogram(_ name: String, _ help: String, _ value: JSON?) {
            guard let value, let bounds = value["bounds"]?.arrayValue, let counts = value["counts"]?.arrayValue,
                bounds.count == counts.count
            else { return }
            family(name, .histogram, help)
            for (bound, count) in zip(bounds, counts) {
                sample(
                    name + "_bucket", [("le", MetricsExposition.format(MetricsExposition.number(bound)))],
                    MetricsExposition.number(count))
            }
            sample(name + "_bucket", [("le", "+Inf")], MetricsExposition.number(value["count"]))
            sample(name + "_sum", [], MetricsExposition.number(value["sum"]))
            sample(name + "_count", [], MetricsExposition.number(value["count"]))
        }
    }

    /// A label value with `\`, `"` and line feeds escaped.
    static func escape(_ value: String) -> String {
        var out = ""
        for ch in value.unicodeScalars {
            switch ch {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out
    }

    /// A sample value: integers without a fraction, others as Swift prints them
    /// (a form Prometheus's parser reads: `0.0005`, `1e-05`), `+Inf`, `-Inf`, `NaN`.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
