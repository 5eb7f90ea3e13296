import EntryModel
import EntryProtocol
import Foundation
import Synchronization

/// `entryd-bench --web`: Add through entryd-web over HTTP/1.1 keep-alive from
/// many clients at once, beside the same clients on entryd's socket in the
/// same run, and the weight of the form page (issue 18).
struct WebBench {
    let entryd: String
    let directory: String
    let clients: Int
    let seconds: Double

    /// One phase's figures.
    struct Phase {
        var path: String
        var adds = 0
        var errors = 0
        var seconds = 0.0
        var latencies = Latencies()
        var rate: Double { Double(adds) / max(seconds, 1e-9) }
    }

    func run() throws -> String {
        let bin = (entryd as NSString).deletingLastPathComponent
        let conf = directory + "/entryd.conf"
        try "max-connections = 4096\n[roles]\ngateway = \(NSUserName())\n".write(
            toFile: conf, atomically: true, encoding: .utf8)
        let daemon = DaemonProcess(
            executable: entryd, directory: directory, name: "web-entryd", extraArguments: ["--config", conf])
        try daemon.start()
        defer { daemon.stop() }
        let users = directory + "/web-users"
        try runTool(
            bin + "/entryctl", ["web-user", "add", "bench", "--role", "write", "--users", users],
            input: "bench password 1\n")
        let port = try freePort()
        let web = Process()
        web.executableURL = URL(fileURLWithPath: bin + "/entryd-web")
        // Every bench client comes from 127.0.0.1: lift the per-address limit (32) above the clients.
        let webConf = directory + "/entryd-web.conf"
        try "[web]\nmax-connections = \(clients + 64)\nmax-connections-per-address = \(clients + 64)\n"
            .write(toFile: webConf, atomically: true, encoding: .utf8)
        web.arguments = [
            "--config", webConf, "--socket", daemon.socket, "--users", users, "--listen", "127.0.0.1:\(port)",
        ]
        let webLog = FileHandle(forWritingAtPath: daemon.logPath)
        web.standardError = webLog
        try web.run()
        try? webLog?.close()  // the child has its own copy
        defer {
            kill(web.processIdentifier, SIGTERM)
            web.waitUntilExit()
        }
        var token = ""
        let t0 = now()
        while token.isEmpty {
            if let client = try? HTTPClient(port: port),
                let reply = try? client.post(
                    "/api/v1/login", #"{"user":"bench","password":"bench password 1"}"#, token: nil),
                reply.status == 200, let t = (try? JSON.parse(reply.body))?["token"]?.stringValue
            {
                token = t
            } else {
                guard web.isRunning, now() - t0 < 30 else {
                    throw BenchFailure("entryd-web did not answer on port \(port); see \(daemon.logPath)")
                }
                usleep(50_000)
            }
        }
        progress("web: \(clients) HTTP keep-alive clients adding for \(seconds) s")
        let http = try phase("HTTP (entryd-web)") { _ in
            let client = try HTTPClient(port: port)
            return { [token] n in
                try client.post("/api/v1/io.entryd.Entries.Add", Self.addBody(n), token: token).status == 200
            }
        }
        progress("web: \(clients) varlink clients adding for \(seconds) s")
        let varlink = try phase("varlink (socket)") { _ in
            let client = try RawClient(path: daemon.socket)
            return { n in
                try client.send(Fixture.addCall(n))
                return !RawClient.isError(try client.receive())
            }
        }
        let weight = try pageWeight(port: port)
        var out = "## entryd-web: Add with \(clients) concurrent keep-alive clients (\(seconds) s each)\n\n"
        out += "| path | adds/s | p50 ms | p99 ms | errors | vs varlink |\n| --- | ---: | ---: | ---: | ---: | ---: |\n"
        for p in [http, varlink] {
            out += String(
                format: "| %@ | %.0f | %.2f | %.2f | %d | %.2f× |\n", p.path, p.rate, p.latencies.ms(0.5) ?? 0,
                p.latencies.ms(0.99) ?? 0, p.errors, p.rate / max(varlink.rate, 1e-9))
        }
        out +=
            "\nThe form page: \(weight.files) files, \(weight.bytes) bytes, \(weight.gzip) bytes gzipped (the gateway sends them uncompressed; a proxy may compress).\n"
        return out
    }

    static func addBody(_ n: Int) -> String { JSON.object([("fields", .stringMap(Fixture.fields(n)))]).text }

    /// Runs `clients` threads, each with its own connection made by `connect`, calling one Add at a time for `seconds`.
    private func phase(_ name: String, _ connect: (Int) throws -> @Sendable (Int) throws -> Bool) throws -> Phase {
        let counter = Counter(from: 10_000_000)
        let adders = try (0..<clients).map { try connect($0) }
        let results = Monitor([Phase]())
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        let deadline = Monitor(0.0)
        for add in adders {
            group.enter()
            Thread {
                defer { group.leave() }
                var mine = Phase(path: name)
                start.wait()
                let end = deadline.withLock { $0 }
                while now() < end {
                    let n = counter.next()
                    let t = now()
                    do { if try !add(n) { mine.errors += 1 } } catch {
                        mine.errors += 1
                        break
                    }
                    mine.latencies.add(now() - t)
                    mine.adds += 1
                }
                results.withLock { $0.append(mine) }
            }.start()
        }
        let t0 = now()
        deadline.withLock { $0 = t0 + seconds }
        for _ in adders { start.signal() }
        group.wait()
        var total = Phase(path: name)
        total.seconds = now() - t0
        for r in results.withLock({ $0 }) {
            total.adds += r.adds - r.errors
            total.errors += r.errors
            total.latencies.merge(r.latencies)
        }
        return total
    }

    /// The page at `/` and every local file it references: count, bytes, bytes after `gzip -9`.
    private func pageWeight(port: Int) throws -> (files: Int, bytes: Int, gzip: Int) {
        let client = try HTTPClient(port: port)
        let page = try client.get("/")
        let html = String(decoding: page.body, as: UTF8.self)
        var paths: [String] = []
        for marker in ["src=\"/", "href=\"/"] {
            var rest = html[...]
            while let r = rest.range(of: marker) {
                let tail = rest[r.upperBound...]
                if let end = tail.firstIndex(of: "\"") { paths.append("/" + tail[..<end]) }
                rest = tail
            }
        }
        var all = page.body
        var files = 1
        for path in Set(paths) where path.hasPrefix("/assets/") {
            let reply = try client.get(path)
            if reply.status == 200 {
                all += reply.body
                files += 1
            }
        }
        let gz = Process()
        gz.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gz.arguments = ["-9", "-c"]
        let input = Pipe()
        let output = Pipe()
        gz.standardInput = input
        gz.standardOutput = output
        try gz.run()
        input.fileHandleForWriting.write(Data(all))
        try input.fileHandleForWriting.close()
        let compressed = output.fileHandleForReading.readDataToEndOfFile()
        gz.waitUntilExit()
        return (files, all.count, compressed.count)
    }

    private func runTool(_ path: String, _ arguments: [String], input: String) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        let pipe = Pipe()
        p.standardInput = pipe
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        pipe.fileHandleForWriting.write(Data(input.utf8))
        try pipe.fileHandleForWriting.close()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw BenchFailure("\(path) \(arguments.joined(separator: " ")) exited \(p.terminationStatus)")
        }
    }

    private func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: a.sin_port))
    }
}

/// A minimal HTTP/1.1 keep-alive client for the bench: one request at a time,
/// `Content-Length` bodies only (entryd-web's answers).
final class HTTPClient: Sendable {
    private let fd: Int32
    /// Bytes read and not yet taken by a response (one thread uses a client at a time).
    private let buffer = Mutex<[UInt8]>([])

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = UInt16(port).bigEndian
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            close(fd)
            throw BenchFailure("cannot connect to 127.0.0.1:\(port)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    func post(_ path: String, _ body: String, token: String?) throws -> (status: Int, body: [UInt8]) {
        let bytes = Array(body.utf8)
        var head =
            "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(bytes.count)\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        try UnixSocket.writeAll(fd, Array((head + "\r\n").utf8) + bytes)
        return try response()
    }

    func get(_ path: String) throws -> (status: Int, body: [UInt8]) {
        try UnixSocket.writeAll(fd, Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        return try response()
    }

    private func response() throws -> (status: Int, body: [UInt8]) {
        try buffer.withLock { try response(&$0) }
    }

    private func response(_ buffer: inout [UInt8]) throws -> (status: Int, body: [UInt8]) {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            if buffer.count >= 4 {
                for i in 0...(buffer.count - 4) where buffer[i] == 13 && Array(buffer[i..<(i + 4)]) == separator {
                    headEnd = i
                    break
                }
            }
            if headEnd == nil { try fill(&buffer) }
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let first = lines.first, first.count >= 12, let status = Int(first.dropFirst(9).prefix(3)) else {
            throw BenchFailure("bad HTTP reply: \(head)")
        }
        let length =
            lines.dropFirst().compactMap { line -> Int? in
                let parts = line.split(separator: ":", maxSplits: 1)
                return parts.count == 2 && parts[0].lowercased() == "content-length"
                    ? Int(parts[1].trimmingCharacters(in: .whitespaces)) : nil
            }.first ?? 0
        let start = headEnd! + 4
        while buffer.count < start + length { try fill(&buffer) }
        let body = Array(buffer[start..<(start + length)])
        buffer.removeFirst(start + length)
        return (status, body)
    }

    private func fill(_ buffer: inout [UInt8]) throws {
        let bytes = try UnixSocket.read(fd)
        guard !bytes.isEmpty else { throw BenchFailure("entryd-web closed the connection") }
        buffer += bytes
    }
}
