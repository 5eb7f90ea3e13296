import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync
extension DaemonConfiguration {
    /// The effective configuration as `entryd.conf` text (`entryd --check-config`):
    /// every key with its value, so the output can itself be used as a file.
    ///
    /// - Parameters:
    ///   - socket: The socket path in effect (after flags and environment), or
    ///     a note such as `(passed by systemd)` written as a comment.
    ///   - database: The database path in effect.
    ///   - forms: The forms directory in effect, or `nil` for the built-in form.
    package func rendered(socket: String, socketActivated: Bool = false, database: String, forms: String?) -> String {
        var lines = ["# entryd: effective configuration"]
        lines.append(
            sources.isEmpty ? "# files: none (embedded defaults)" : "# files: " + sources.joined(separator: ", "))
        lines.append(socketActivated ? "# socket: passed by systemd (LISTEN_FDS)" : "socket = \(socket)")
        lines.append("socket-mode = 0" + String(socketMode, radix: 8))
        lines.append("database = \(database)")
        if let instance { lines.append("instance = \(instance)") }
        lines.append("locale = \(locale.rawValue)")
        lines.append(forms.map { "forms = \($0)" } ?? "# forms: built-in registration form")
        lines.append("log-level = \(logLevel.name)")
        lines.append("max-message-size = \(limits.maxMessageBytes)")
        lines.append("max-connections = \(limits.maxConnections)")
        lines.append("idle-timeout = \(limits.idleTimeoutSeconds)")
        lines.append("max-batch = \(limits.maxBatch)")
        lines.append("max-clock-skew = \(limits.maxClockSkewMs / 1000)")
        lines.append("peer-timeout = \(limits.peerTimeoutSeconds)")
        lines.append("peer-expiry = \(limits.peerExpirySeconds)")
        lines.append("compact-interval = \(limits.compactIntervalSeconds)")
        lines.append("")
        lines.append("[roles]")
        for role in Role.grantable {
            lines.append("\(role.name) = " + (access.grants[role] ?? []).joined(separator: ", "))
        }
        lines.append("gateway = " + access.gateways.joined(separator: ", "))
        lines.append("default-role = \(access.defaultRole.name)")
        for peer in peers {
            lines.append("")
            lines.append("[peer \(peer.name)]")
            lines.append("address = \(peer.address)")
            lines.append("interval = \(peer.intervalSeconds)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension Log.Level {
    /// The name `log-level` takes: `error`, `warning`, `notice`, `info`, `debug`.
    package var name: String {
        switch self {
        case .error: return "error"
        case .warning: return "warning"
        case .notice: return "notice"
        case .info: return "info"
        case .debug: return "debug"
        }
    }
}
