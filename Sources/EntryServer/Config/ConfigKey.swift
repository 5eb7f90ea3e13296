import Foundation
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync

/// One key of `entryd.conf`: where it may appear, and how its value is read.
/// `config/entryd.conf` documents each with unit, default and bounds.
struct ConfigKey: Sendable {
    /// The part of the file a key belongs to.
    enum Section: Sendable { case main, roles, peer }

    /// What a key's parser gets.
    struct Context {
        /// The value, white space stripped.
        var value: String
        /// The directory of the file: relative paths are taken from it.
        var directory: String
        /// The `NAME` of a `[peer NAME]` section, else empty.
        var peer: String
    }

    /// A bad value: what is wrong and what to write instead.
    struct BadValue: Error { let message: String }

    let section: Section
    let name: String
    let apply: @Sendable (inout DaemonConfiguration, Context) throws(BadValue) -> Void

    /// Every key, by section.
    static let all: [ConfigKey] = [
        ConfigKey(section: .main, name: "socket") { c, x throws(BadValue) in
            let path = ConfigValues.path(x.value, relativeTo: x.directory)
            guard !x.value.isEmpty, path.utf8.count <= UnixSocket.maxPathBytes else {
                throw BadValue(
                    message: "give a socket path of at most \(UnixSocket.maxPathBytes) bytes, not '\(x.value)'")
            }
            c.socketPath = path
        },
        ConfigKey(section: .main, name: "socket-mode") { c, x throws(BadValue) in
            guard let mode = UInt32(x.value, radix: 8), (0o600...0o777).contains(mode), mode & 0o600 == 0o600 else {
                throw BadValue(
                    message:
                        "give octal permission bits from 0600 to 0777 that keep the owner's read and write, e.g. 0660; not '\(x.value)'"
                )
            }
            c.socketMode = mode
        },
        ConfigKey(section: .main, name: "database") { c, x throws(BadValue) in try database(&c, x) },
        ConfigKey(section: .main, name: "db") { c, x throws(BadValue) in try database(&c, x) },
        ConfigKey(section: .main, name: "instance") { c, x throws(BadValue) in
            guard DaemonConfiguration.isValidInstance(x.value) else {
                throw BadValue(message: "give 1 to 64 letters, digits, '.', '_' or '-', e.g. hub-1; not '\(x.value)'")
            }
            c.instance = x.value
        },
        ConfigKey(section: .main, name: "locale") { c, x throws(BadValue) in
            guard let locale = EntryLocale(rawValue: x.value) else {
                throw BadValue(message: "write zh or en, not '\(x.value)'")
            }
            c.locale = locale
        },
        ConfigKey(section: .main, name: "forms") { c, x throws(BadValue) in
            guard !x.value.isEmpty else {
                throw BadValue(
                    message: "give a directory of form files (DIR/*.conf), or remove the key for the built-in form")
            }
            c.formsDirectory = ConfigValues.path(x.value, relativeTo: x.directory)
        },
        ConfigKey(section: .main, name: "log-level") { c, x throws(BadValue) in
            guard let level = Log.Level(name: x.value) else {
                throw BadValue(message: "write error, warning, notice, info or debug, not '\(x.value)'")
            }
            c.logLevel = level
        },
        ConfigKey(section: .main, name: "max-message-size") { c, x throws(BadValue) in
            c.limits.maxMessageBytes = try ConfigValues.bytes(x.value, 4096...(64 << 20))
        },
        ConfigKey(section: .main, name: "max-connections") { c, x throws(BadValue) in
            c.limits.maxConnections = try ConfigValues.count(x.value, 1...65536)
        },
        ConfigKey(section: .main, name: "idle-timeout") { c, x throws(BadValue) in
            c.limits.idleTimeoutSeconds = try ConfigValues.seconds(x.value, 1...86400)
        },
        ConfigKey(section: .main, name: "peer-timeout") { c, x throws(BadValue) in
            c.limits.peerTimeoutSeconds = try ConfigValues.seconds(x.value, 1...3600)
        },
        ConfigKey(section: .main, name: "max-batch") { c, x throws(BadValue) in
            c.limits.maxBatch = try ConfigValues.count(x.value, 1...1_000_000)
        },
        ConfigKey(section: .main, name: "max-clock-skew") { c, x throws(BadValue) in
            c.limits.maxClockSkewMs = try ConfigValues.seconds(x.value, 1...86400) * 1000
        },
        ConfigKey(section: .main, name: "peer-expiry") { c, x throws(BadValue) in
            c.limits.peerExpirySeconds = try ConfigValues.seconds(x.value, 3600...(3650 * 86_400))
        },
        ConfigKey(section: .main, name: "compact-interval") { c, x throws(BadValue) in
            c.limits.compactIntervalSeconds = try ConfigValues.seconds(x.value, 0...(365 * 86_400))
        },
        ConfigKey(section: .roles, name: "submit") { c, x throws(BadValue) in
            c.access.grants[.submit] = try ConfigValues.principals(x.value)
        },
        ConfigKey(section: .roles, name: "read") { c, x throws(BadValue) in
            c.access.grants[.read] = try ConfigValues.principals(x.value)
        },
        ConfigKey(section: .roles, name: "write") { c, x throws(BadValue) in
            c.access.grants[.write] = try ConfigValues.principals(x.value)
        },
        ConfigKey(section: .roles, name: "admin") { c, x throws(BadValue) in
            c.access.grants[.admin] = try ConfigValues.principals(x.value)
        },
        ConfigKey(section: .roles, name: "gateway") { c, x throws(BadValue) in
            c.access.gateways = try ConfigValues.principals(x.value)
        },
        ConfigKey(section: .roles, name: "default-role") { c, x throws(BadValue) in
            guard let role = Role(name: x.value) else {
                throw BadValue(message: "write none, submit, read, write or admin, not '\(x.value)'")
            }
            c.access.defaultRole = role
        },
        ConfigKey(section: .peer, name: "address") { c, x throws(BadValue) in
            let a = x.value
            let ok =
                (a.hasPrefix("unix:/") && a.utf8.count - 5 <= UnixSocket.maxPathBytes)
                || (a.hasPrefix("exec:") && !a.dropFirst(5).trimmingCharacters(in: .whitespaces).isEmpty)
            guard ok else {
                throw BadValue(
                    message:
                        "write unix:/ABSOLUTE/PATH or exec:COMMAND (e.g. exec:ssh host entryctl bridge), not '\(a)'")
            }
            c.updatePeer(x.peer) { $0.address = a }
        },
        ConfigKey(section: .peer, name: "interval") { c, x throws(BadValue) in
            let seconds = try ConfigValues.seconds(x.value, 0...86400)
            c.updatePeer(x.peer) { $0.intervalSeconds = seconds }
        },
    ]

    /// `database` and `db`: a SQLite file's path (relative to the file's
    /// directory), or a PostgreSQL connection URI as it is.
    static func database(_ c: inout DaemonConfiguration, _ x: Context) throws(BadValue) {
        guard !x.value.isEmpty else {
            throw BadValue(
                message:
                    "give the path of the database file, e.g. /var/lib/entryd/entries.db, or a PostgreSQL URI, e.g. postgresql://entryd@db.example/entryd"
            )
        }
        c.databasePath =
            DaemonPaths.isServerURI(x.value) ? x.value : ConfigValues.path(x.value, relativeTo: x.directory)
    }
}

extension DaemonConfiguration {
    /// Changes the configured peer `name` (it exists once its section was seen).
    mutating func updatePeer(_ name: String, _ change: (inout PeerConfig) -> Void) {
        guard let i = peers.firstIndex(where: { $0.name == name }) else { return }
        change(&peers[i])
    }
}

/// Value syntax of `entryd.conf`.
package enum ConfigValues {
    /// A whole number of bytes, optionally with `K` or `M` (KiB, MiB), within `range`.
    static func bytes(_ text: String, _ range: ClosedRange<Int>) throws(ConfigKey.BadValue) -> Int {
        do { return try ConfigSyntax.bytes(text, range) } catch { throw ConfigKey.BadValue(message: error.message) }
    }

    /// A whole number of seconds, optionally with `s`, `min`, `h` or `d` (days), within `range`.
    static func seconds(_ text: String, _ range: ClosedRange<Int>) throws(ConfigKey.BadValue) -> Int {
        do { return try ConfigSyntax.seconds(text, range) } catch { throw ConfigKey.BadValue(message: error.message) }
    }

    /// A plain whole number within `range`.
    static func count(_ text: String, _ range: ClosedRange<Int>) throws(ConfigKey.BadValue) -> Int {
        do { return try ConfigSyntax.count(text, range) } catch { throw ConfigKey.BadValue(message: error.message) }
    }

    /// A comma-separated list of user names and `@group` names (may be empty).
    static func principals(_ text: String) throws(ConfigKey.BadValue) -> [String] {
        let items = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for item in items {
            let name = item.hasPrefix("@") ? String(item.dropFirst()) : item
            guard isAccountName(name) else {
                throw ConfigKey.BadValue(
                    message:
                        "list user names and @group names separated by commas, e.g. 'alice, @staff'; '\(item)' is not one"
                )
            }
        }
        return items
    }

    /// A POSIX-style user or group name, as useradd(8) and systemd accept them
    /// (letters, digits, `_`, `.`, `-`, not starting with `-`, a trailing `$` allowed).
    static func isAccountName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first != "-", name.utf8.count <= 256 else { return false }
        let body = name.hasSuffix("$") ? String(name.dropLast()) : name
        return !body.isEmpty
            && body.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "_.-".unicodeScalars.contains($0))
            }
    }

    /// A peer's name (`[peer NAME]`, `entryd --peer NAME=…`): 1-64 ASCII
    /// letters, digits, `.`, `_` or `-`; it labels log lines and metrics.
    package static func isPeerName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "_.-".unicodeScalars.contains($0))
            }
    }

    /// `value` if absolute, else taken relative to `directory`.
    static func path(_ value: String, relativeTo directory: String) -> String {
        if value.hasPrefix("/") || directory.isEmpty { return value }
        return (directory as NSString).appendingPathComponent(value)
    }
}
