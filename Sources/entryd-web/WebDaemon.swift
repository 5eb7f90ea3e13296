@preconcurrency import Glibc
import EntryClient
import EntryModel
import EntryProtocol
import EntryWeb
import Foundation

/// entryd-web: reads its settings, refuses to start where it must (no TLS
/// off loopback, unreadable files), serves until SIGTERM or SIGINT, then
/// stops accepting, ends its connections and exits 0.
enum WebDaemon {
    static func main() -> Never {
        signal(SIGPIPE, SIG_IGN)
        let environment = ProcessInfo.processInfo.environment
        let log = Log(environment: environment, program: "entryd-web")
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.contains("--help") || arguments.contains("-h") {
            print(usage)
            exit(ExitCode.success.rawValue)
        }
        if arguments.contains("--version") {
            print("entryd-web \(EntrydVersion.string)")
            exit(ExitCode.success.rawValue)
        }
        let settings: WebSettings
        do {
            settings = try WebSettings.load(try WebSettings.scan(arguments), environment: environment) {
                try? String(contentsOfFile: $0, encoding: .utf8)
            }
        } catch let problem as WebSettings.SettingsError {
            log.error(problem.message)
            exit(problem.code.rawValue)
        } catch {
            log.error("\(error)")
            exit(ExitCode.config.rawValue)
        }
        do {
            try run(settings, environment: environment, log: log)
            exit(ExitCode.success.rawValue)
        } catch let failure as StartFailure {
            log.error(failure.message)
            exit(failure.code.rawValue)
        } catch {
            log.error("\(error)")
            exit(ExitCode.failure.rawValue)
        }
    }

    /// Why entryd-web cannot start, and its exit status.
    struct StartFailure: Error {
        var message: String
        var code: ExitCode
    }

    static let usage = """
        Usage: entryd-web [--config FILE] [--socket PATH] [--listen HOST:PORT] [--users FILE]
                          [--tls-certificate PEM --tls-key PEM] [--behind-proxy]

        The HTTP door to entryd: the form page, and POST /api/v1/<interface>.<Method>
        for apps. A client of entryd's socket; entryd itself never listens on the network.

          --config FILE           settings in [web] (default: /etc/entryd/entryd-web.conf
                                  when it exists)
          --socket PATH           entryd's socket (default: as entryctl finds it)
          --listen HOST:PORT      where to listen (default 127.0.0.1:8080), unless
                                  systemd passes a socket (entryd-web.socket)
          --users FILE            web users, managed by `entryctl web-user`
                                  (default: the file's users, $ENTRYD_WEB_USERS,
                                  /etc/entryd/web-users)
          --tls-certificate PEM   serve HTTPS with this certificate chain …
          --tls-key PEM           … and this key; needed to listen beyond loopback
          --behind-proxy          a TLS reverse proxy forwards to this gateway
          --help, --version

        Exit status: 0 stopped by SIGTERM/SIGINT, 64 bad option, 66 a file cannot be
        read, 69 cannot listen, 78 bad settings (or no TLS beyond loopback).
        See entryd-web(8).
        """

    static func run(_ settings: WebSettings, environment: [String: String], log: Log) throws {
        // Block the signals in every thread (libmicrohttpd's inherit the mask); sigwait below takes them.
        var signals = sigset_t()
        sigemptyset(&signals)
        for s in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&signals, s) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        let socketPath: String
        do {
            socketPath = try SocketLocator(explicitPath: settings.socket, environment: environment).locate().path
        } catch {
            // entryd may start later (socket activation): use the first candidate and answer 503 until then.
            socketPath =
                SocketLocator(explicitPath: settings.socket, environment: environment).candidates.first?.path
                ?? SocketLocator.systemSocketPath
            log.warning(
                "entryd's socket not found yet (\(error)); using \(socketPath) and answering 503 until it is there")
        }
        var tls: (key: String, certificate: String)?
        if let certificatePath = settings.tlsCertificate, let keyPath = settings.tlsKey {
            guard let certificate = try? String(contentsOfFile: certificatePath, encoding: .utf8),
                let key = try? String(contentsOfFile: keyPath, encoding: .utf8)
            else {
                throw StartFailure(
                    message:
                        "cannot read the TLS certificate \(certificatePath) or key \(keyPath); check the paths and permissions",
                    code: .noInput)
            }
            tls = (key, certificate)
        }
        let users: WebUserFile
        do {
            users = try WebUserFile(path: settings.users, log: log)
        } catch {
            throw StartFailure(message: "\(error)", code: .config)
        }
        let listenFD = try SocketActivation.takeListeningSocket(
            environment: environment, log: log, unit: "entryd-web.socket")
        if let fd = listenFD, !settings.secure, let bound = boundAddress(fd), !bound.isLoopback {
            throw StartFailure(
                message:
                    "refusing to serve \(bound) (passed by systemd) without TLS: give --tls-certificate and --tls-key, or --behind-proxy; see entryd-web(8)",
                code: .config)
        }
        let openAPI = OpenAPIDocument.generate()
        let pool = DaemonPool(path: socketPath, idleTimeout: settings.idleTimeout)
        let gateway = Gateway(
            link: pool, users: users,
            policy: .entryd,
            sessions: SessionStore(idleSeconds: Double(settings.sessionIdle)),
            limiter: LoginLimiter(limit: settings.loginAttempts),
            settings: .init(
                secure: settings.secure, behindProxy: settings.behindProxy, maxBody: settings.maxBody,
                metricsTokenFile: settings.metricsTokenFile),
            openAPI: { openAPI }, log: log)
        checkMetricsToken(settings.metricsTokenFile, log: log)
        let server = HTTPServer(gateway: gateway, retryAfter: min(settings.headerTimeout, 10))
        do {
            try server.start(settings: settings, listenFD: listenFD, tls: tls)
        } catch let failure as HTTPServer.StartFailure {
            throw StartFailure(
                message:
                    "cannot listen on \(listenFD.map { "fd \($0)" } ?? settings.listen.description): \(failure.message)",
                code: .unavailable)
        }
        let notifier = Notifier(environment: environment, log: log)
        log.notice(
            "serving \(listenFD.map { "the socket systemd passed (fd \($0))" } ?? "http\(tls == nil ? "" : "s")://\(settings.listen)") for entryd at \(socketPath)"
        )
        notifier.send("READY=1", "STATUS=serving")
        while true {
            var received: Int32 = 0
            sigwait(&signals, &received)
            if received == SIGHUP {
                users.reload()
                checkMetricsToken(settings.metricsTokenFile, log: log)
                continue
            }
            break
        }
        notifier.send("STOPPING=1")
        log.notice("stopping")
        // Requests in flight are answered before a connection is closed: an
        // Add entryd stored is never left without its reply. The feeds end
        // first (their streams run until then); the pool and the pipeline stay.
        server.beginStop()
        pool.closeStreams()
        // Past the wait, the calls still waiting on entryd (stopped, or stuck) are
        // ended, so the handlers' threads return within TimeoutStopSec.
        let left = server.stop(drainSeconds: drainSeconds) { pool.abortCalls() }
        if left > 0 {
            log.warning("stopped with \(left) request(s) still unanswered after \(Int(drainSeconds)) s")
        }
    }

    /// Logs a warning when `metrics-token-file` is set but gives no token:
    /// every scrape from beyond loopback would get 401 without a word.
    static func checkMetricsToken(_ path: String?, log: Log) {
        guard let path else { return }
        do { _ = try Gateway.metricsToken(at: path) } catch {
            log.warning(
                "metrics-token-file \(error); GET /metrics answers 401 to everyone but loopback clients until it is fixed"
            )
        }
    }

    /// The longest wait at a stop for the requests in flight: within
    /// entryd-web.service's TimeoutStopSec (20 s).
    static let drainSeconds = 15.0

    /// The local address of a listening TCP socket, or nil for another kind.
    static func boundAddress(_ fd: Int32) -> WebSettings.ListenAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard rc == 0 else { return nil }
        var text = [CChar](repeating: 0, count: 64)
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { a in
                    var address = a.pointee.sin_addr
                    inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
                    return .init(host: cText(text), port: UInt16(bigEndian: a.pointee.sin_port))
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { a in
                    var address = a.pointee.sin6_addr
                    inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
                    return .init(host: cText(text), port: UInt16(bigEndian: a.pointee.sin6_port))
                }
            }
        default:
            return nil
        }
    }
}

/// The text of a NUL-terminated C buffer.
func cText(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
