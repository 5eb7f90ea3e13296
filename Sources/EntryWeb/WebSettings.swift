import EntryModel
import EntryProtocol
import EntryArguments

/// entryd-web's settings: the command line over `[web]` in its configuration
/// file (config/entryd-web.conf documents every key), over the defaults.
package struct WebSettings: Sendable, Equatable {
    /// Where to listen when systemd passes no socket: host and port.
    package var listen = ListenAddress(host: "127.0.0.1", port: 8080)
    /// entryd's socket; nil: as entryctl finds it.
    package var socket: String?
    /// The users file (`entryctl web-user`): `--users`, else the file's
    /// `users`, else `$ENTRYD_WEB_USERS`, else ``WebUsers/defaultPath``.
    package var users = WebUsers.defaultPath
    /// PEM files for TLS; both or neither.
    package var tlsCertificate: String?
    /// The key of ``tlsCertificate``.
    package var tlsKey: String?
    /// A reverse proxy terminates TLS and forwards to this gateway.
    package var behindProxy = false
    /// Connections at once.
    package var maxConnections = 512
    /// Connections at once from one client address (not applied behind a proxy).
    package var maxConnectionsPerAddress = 32
    /// The largest request body in bytes.
    package var maxBody = 1 << 20
    /// Seconds a login session may stay unused.
    package var sessionIdle = 43_200
    /// Failed logins per user and per address per minute before 429.
    package var loginAttempts = 5
    /// Seconds a connection may stay silent (a slow or stalled client) before it is closed.
    package var idleTimeout = 30
    /// Seconds within which each request header must arrive whole, from the
    /// connection's start or its previous response, until a request on the
    /// connection has carried a live session (a slow-header client is cut off).
    package var headerTimeout = 10
    /// Connections at once that no session has used yet (all addresses
    /// together, also behind a proxy); past it the one waiting longest for its
    /// header is closed, or the new one answered 503.
    package var maxUnauthenticatedConnections = 256
    /// The file holding the bearer token that lets `GET /metrics` in from
    /// anywhere but loopback (`metrics-token-file`, an absolute path); `nil`:
    /// from loopback only.
    package var metricsTokenFile: String?
    /// The configuration file read, if any.
    package var configPath: String?

    /// Defaults.
    package init() {}

    /// A host and port to listen on.
    package struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
        /// A numeric IPv4 or IPv6 address (no brackets).
        package var host: String
        /// 1–65535.
        package var port: UInt16

        /// - Parameters:
        ///   - host: a numeric address.
        ///   - port: the TCP port.
        package init(host: String, port: UInt16) {
            self.host = host
            self.port = port
        }

        /// Parses `HOST:PORT`, `[V6]:PORT` (numeric addresses; `localhost` is 127.0.0.1).
        package init?(parsing text: String) {
            var host: Substring
            var port: Substring
            if text.hasPrefix("[") {
                guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                    return nil
                }
                host = text[text.index(after: text.startIndex)..<close]
                port = text[text.index(close, offsetBy: 2)...]
            } else {
                guard let colon = text.lastIndex(of: ":") else { return nil }
                host = text[..<colon]
                port = text[text.index(after: colon)...]
                if host.contains(":") { return nil }
            }
            if host == "localhost" { host = "127.0.0.1" }
            guard !host.isEmpty, let p = UInt16(port), p > 0,
                host.allSatisfy({ $0.isHexDigit || $0 == "." || $0 == ":" })
            else { return nil }
            self.host = String(host)
            self.port = p
        }

        /// Whether the address is loopback only (127.0.0.0/8 or ::1).
        package var isLoopback: Bool { Self.isLoopback(host) }

        /// Whether the numeric address `host` is loopback (127.0.0.0/8 or ::1).
        package static func isLoopback(_ host: String) -> Bool { host.hasPrefix("127.") || host == "::1" }

        /// `HOST:PORT`, or `[HOST]:PORT` for IPv6.
        package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    /// A setting that cannot be used: what is wrong, and the exit status.
    package struct SettingsError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong and what to do, naming the option or key.
        package var message: String
        /// 64 on the command line, 66 a file that cannot be read, 78 in the file or the combination.
        package var code: ExitCode
        /// The text.
        package var description: String { message }
    }

    /// The command line's options by name; values are checked when applied.
    package typealias Arguments = [(option: String, value: String?)]

    /// The command line's options as the scanner reads them. Each may be given
    /// again, the last one counting.
    static let options: [ArgumentOption] = [
        (["--config"], "FILE"), (["--socket"], "PATH"), (["--listen"], "HOST:PORT"), (["--users"], "FILE"),
        (["--tls-certificate"], "PEM"), (["--tls-key"], "PEM"), (["--behind-proxy"], nil),
        (["--help", "-h"], nil), (["--version"], nil),
    ].map { ArgumentOption($0.0, value: $0.1, repeatable: true) }

    /// Splits `arguments` (without the program name) into options, by their canonical names.
    /// - Throws: ``SettingsError`` (usage) for an unknown option, a missing value, a
    ///   value given to a flag or an argument that is no option.
    package static func scan(_ arguments: [String]) throws -> Arguments {
        var scanner = ArgumentScanner(arguments, options: options, positionals: false)
        var result: Arguments = []
        do {
            // Without positionals the scanner reads options only.
            while case .option(let option, let value)? = try scanner.next() { result.append((option.name, value)) }
        } catch {
            var message = error.en
            if case .unknownOption(_, suggestion: nil) = error.kind { message += "; see entryd-web --help" }
            throw SettingsError(message: message, code: .usage)
        }
        return result
    }

    /// Where the configuration is read from without `--config`, when it exists.
    package static let defaultConfigPath = "/etc/entryd/entryd-web.conf"

    /// The settings from `arguments` over the configuration file (`--config`,
    /// else ``defaultConfigPath`` when it can be read) over `environment`
    /// (`ENTRYD_WEB_USERS`) over defaults.
    /// - Parameters:
    ///   - readFile: reads a file's text, or nil when it cannot be read.
    ///   - environment: the process environment.
    /// - Throws: ``SettingsError`` naming the option or the file, line and key.
    package static func load(
        _ arguments: Arguments, environment: [String: String] = [:],
        readFile: (String) -> String?
    ) throws -> WebSettings {
        var settings = WebSettings()
        settings.users = WebUsers.path(option: nil, environment: environment)
        if let path = arguments.last(where: { $0.option == "--config" })?.value {
            guard let text = readFile(path) else {
                throw SettingsError(
                    message: "cannot read the configuration file \(path); check the path and its permissions",
                    code: .noInput)
            }
            try settings.apply(file: text, path: path)
            settings.configPath = path
        } else if let text = readFile(defaultConfigPath) {
            try settings.apply(file: text, path: defaultConfigPath)
            settings.configPath = defaultConfigPath
        }
        for (option, value) in arguments {
            guard let value else {
                if option == "--behind-proxy" { settings.behindProxy = true }
                continue
            }
            if option == "--config" { continue }
            do { try settings.set(String(option.dropFirst(2)), value) } catch let p as SettingsError {
                throw SettingsError(message: p.message.replacingOccurrences(of: "KEY", with: option), code: .usage)
            }
        }
        try settings.check()
        return settings
    }

    private mutating func apply(file text: String, path: String) throws {
        let ini: IniFile
        do { ini = try IniFile(text: text, path: path, continuationLines: false) } catch {
            throw SettingsError(message: "\(error)", code: .config)
        }
        for section in ini.sections {
            guard section.name == "web" else {
                throw SettingsError(
                    message: "\(path):\(section.line): unknown section [\(section.name)]; entryd-web reads [web] only",
                    code: .config)
            }
            for item in section.items {
                do { try set(item.key, item.value) } catch let p as SettingsError {
                    throw SettingsError(
                        message: "\(path):\(item.line): " + p.message.replacingOccurrences(of: "KEY", with: item.key),
                        code: .config)
                }
            }
        }
    }

    private mutating func set(_ key: String, _ value: String) throws {
        func checked(_ parse: (String, ClosedRange<Int>) throws(ConfigSyntax.Invalid) -> Int, _ range: ClosedRange<Int>)
            throws -> Int
        {
            do { return try parse(value, range) } catch {
                throw SettingsError(message: "KEY: " + error.message, code: .config)
            }
        }
        switch key {
        case "listen":
            guard let address = ListenAddress(parsing: value) else {
                let missingPort = !value.contains(":") || (value.hasPrefix("[") && !value.contains("]:"))
                throw SettingsError(
                    message: "KEY must be HOST:PORT with a numeric address or localhost (127.0.0.1:8080, [::1]:8080)"
                        + (missingPort ? "; '\(value)' has no port" : ", not '\(value)'"), code: .config)
            }
            listen = address
        case "socket": socket = value
        case "users": users = value
        case "tls-certificate": tlsCertificate = value
        case "tls-key": tlsKey = value
        case "behind-proxy":
            switch value {
            case "yes", "true", "1": behindProxy = true
            case "no", "false", "0": behindProxy = false
            default: throw SettingsError(message: "KEY must be yes or no, not '\(value)'", code: .config)
            }
        case "max-connections": maxConnections = try checked(ConfigSyntax.count, 1...65_536)
        case "max-connections-per-address": maxConnectionsPerAddress = try checked(ConfigSyntax.count, 1...65_536)
        case "max-body": maxBody = try checked(ConfigSyntax.bytes, 1024...(64 << 20))
        case "session-idle": sessionIdle = try checked(ConfigSyntax.seconds, 60...2_592_000)
        case "login-attempts": loginAttempts = try checked(ConfigSyntax.count, 1...1000)
        case "idle-timeout": idleTimeout = try checked(ConfigSyntax.seconds, 1...3600)
        case "header-timeout": headerTimeout = try checked(ConfigSyntax.seconds, 1...3600)
        case "max-unauthenticated-connections":
            maxUnauthenticatedConnections = try checked(ConfigSyntax.count, 1...65_536)
        case "metrics-token-file":
            guard value.hasPrefix("/") else {
                throw SettingsError(message: "KEY must be an absolute path, not '\(value)'", code: .config)
            }
            metricsTokenFile = value
        default: throw SettingsError(message: "unknown key '\(key)'; see config/entryd-web.conf", code: .config)
        }
    }

    /// The rules between settings: TLS needs both PEM files; listening on
    /// anything but loopback needs TLS or `--behind-proxy`.
    private func check() throws {
        if (tlsCertificate == nil) != (tlsKey == nil) {
            throw SettingsError(message: "TLS needs both --tls-certificate and --tls-key (PEM files)", code: .config)
        }
        if behindProxy, !listen.isLoopback, tlsCertificate == nil {
            throw SettingsError(
                message: """
                    --behind-proxy expects the TLS proxy on this host: listen on 127.0.0.1 or [::1] (not \(listen)), \
                    or give --tls-certificate and --tls-key; see entryd-web(8)
                    """, code: .config)
        }
        if !listen.isLoopback, tlsCertificate == nil, !behindProxy {
            throw SettingsError(
                message: """
                    refusing to listen on \(listen) without TLS: passwords and personal data would cross the network in clear. \
                    Give --tls-certificate and --tls-key, or put a TLS reverse proxy in front and pass --behind-proxy \
                    (see entryd-web(8)), or listen on 127.0.0.1
                    """, code: .config)
        }
    }

    /// TLS here or at a proxy: cookies are `Secure`.
    package var secure: Bool { tlsCertificate != nil || behindProxy }
}
