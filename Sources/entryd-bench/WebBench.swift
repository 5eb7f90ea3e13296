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
        /// CPU seconds each process spent in the timed window, in ``WebBench/processes`` order.
        var cpu: [Double] = []
        var rate: Double { Double(adds) / max(seconds, 1e-9) }
        /// Microseconds of CPU per Add of each process.
        var cpuPerAdd: [Double] { cpu.map { $0 * 1e6 / Double(max(adds, 1)) } }

        /// Adds `other`, a later slice of the same path.
        mutating func merge(_ other: Phase) {
            adds += other.adds
            errors += other.errors
            seconds += other.seconds
            latencies.merge(other.latencies)
            cpu = cpu.isEmpty ? other.cpu : zip(cpu, other.cpu).map { $0 + $1 }
        }
    }

    /// The processes whose CPU time each phase reports: entryd, entryd-web
    /// and this bench (its client threads), by name and pid.
    private static let processNames = ["entryd", "entryd-web", "bench clients"]

    /// HTTP's least share of varlink's rate (issue 34 item 5).
    static let target = 0.9

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
        let pids = [daemon.pid ?? 0, web.processIdentifier, getpid()]
        let httpAdders = try (0..<clients).map { _ -> @Sendable (Int) throws -> Bool in
            let client = try HTTPClient(port: port)
            return { [token] n in
                try client.post("/api/v1/io.entryd.Entries.Add", Self.addBody(n), token: token).status == 200
            }
        }
        let varlinkAdders = try (0..<clients).map { _ -> @Sendable (Int) throws -> Bool in
            let client = try RawClient(path: daemon.socket)
            return { n in
                try client.send(Fixture.addCall(n))
                return !RawClient.isError(try client.receive())
            }
        }
        // The two paths take turns, a slice each (1 s of the default 5 s), so
        // that a neighbour's load coming or going on this shared machine falls
        // on both alike; every Add, on either path, is of a new person.
        let slices = min(5, max(1, Int(seconds)))
        let counter = Counter(from: 10_000_000)
        var http = Phase(path: "HTTP (entryd-web)")
        var varlink = Phase(path: "varlink (socket)")
        progress("web: \(clients) HTTP clients and \(clients) varlink clients adding, \(slices) turns each")
        for _ in 0..<slices {
            http.merge(try phase(http.path, httpAdders, counter, pids, seconds: seconds / Double(slices)))
            varlink.merge(try phase(varlink.path, varlinkAdders, counter, pids, seconds: seconds / Double(slices)))
        }
        let weight = try pageWeight(port: port)
        var out = "## entryd-web: Add with \(clients) concurrent keep-alive clients"
        out += " (\(seconds) s each, in \(slices) turns)\n\n"
        out += "| path | adds/s | p50 ms | p99 ms | errors | vs varlink | target |\n"
        out += "| --- | ---: | ---: | ---: | ---: | ---: | --- |\n"
        for p in [http, varlink] {
            let ratio = p.rate / max(varlink.rate, 1e-9)
            let mark = ratio >= Self.target ? "✓" : "✗"
            let target = p.path == http.path ? "≥ \(String(format: "%.1f", Self.target))× " + mark : ""
            out += String(
                format: "| %@ | %.0f | %.2f | %.2f | %d | %.2f× | %@ |\n", p.path, p.rate, p.latencies.ms(0.5) ?? 0,
                p.latencies.ms(0.99) ?? 0, p.errors, ratio, target)
        }
        // Where the CPU goes: on one machine the clients, entryd-web and entryd share the cores,
        // so a path's rate follows what an Add costs all of them together.
        out += "\nCPU per Add (µs, user + system, over each timed phase):\n\n"
        out += "| path | " + Self.processNames.joined(separator: " | ") + " | all |\n"
        out += "| --- |" + String(repeating: " ---: |", count: Self.processNames.count + 1) + "\n"
        for p in [http, varlink] {
            let each = p.cpuPerAdd
            out += "| \(p.path) | " + each.map { String(format: "%.0f", $0) }.joined(separator: " | ")
            out += String(format: " | %.0f |\n", each.reduce(0, +))
        }
        out +=
            "\nThe form page: \(weight.files) files, \(weight.bytes) bytes, \(weight.gzip) bytes gzipped (the gateway sends them uncompressed; a proxy may compress).\n"
        return out
    }

    static func addBody(_ n: Int) -> String { JSON.object([("fields", .stringMap(Fixture.fields(n)))]).text }

    /// Runs a thread per adder (each with its own connection), calling one
    /// Add at a time for `seconds`, each of a person numbered by `counter`.
    /// `pids`: the processes whose CPU time the phase records (``processNames``).
    private func phase(
        _ name: String, _ adders: [@Sendable (Int) throws -> Bool], _ counter: Counter, _ pids: [pid_t],
        seconds: Double
    ) throws -> Phase {
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
        let cpu = { pids.map { processCPUSeconds($0).map { $0.user + $0.system } ?? 0 } }
        let cpu0 = cpu()
        let t0 = now()
        deadline.withLock { $0 = t0 + seconds }
        for _ in adders { start.signal() }
        group.wait()
        var total = Phase(path: name)
        total.seconds = now() - t0
        total.cpu = zip(cpu(), cpu0).map { $0 - $1 }
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

    /// One response from `buffer`, read further as needed. A byte scan, no
    /// strings: on one machine the clients' CPU is taken from the servers',
    /// so the HTTP client costs about what the varlink one does.
    private func response(_ buffer: inout [UInt8]) throws -> (status: Int, body: [UInt8]) {
        var scanned = 0
        var headEnd = -1
        while headEnd < 0 {
            var i = max(scanned, 3)
            while i < buffer.count {
                if buffer[i] == 10, buffer[i - 1] == 13, buffer[i - 2] == 10, buffer[i - 3] == 13 {
                    headEnd = i - 3
                    break
                }
                i += 1
            }
            scanned = i
            if headEnd < 0 { try fill(&buffer) }
        }
        // "HTTP/1.1 200 …": the status is bytes 9 to 11.
        guard headEnd >= 12 else { throw BenchFailure("bad HTTP reply") }
        let status = buffer[9...11].reduce(0) { $0 * 10 + Int($1) - 48 }
        let length = Self.contentLength(buffer[..<headEnd]) ?? 0
        let start = headEnd + 4
        while buffer.count < start + length { try fill(&buffer) }
        let body = Array(buffer[start..<(start + length)])
        buffer.removeFirst(start + length)
        return (status, body)
    }

    /// The value of `Content-Length` in a response head, or nil.
    private static func contentLength(_ head: ArraySlice<UInt8>) -> Int? {
        let name = Array("\r\ncontent-length:".utf8)
        var i = head.startIndex
        while i + name.count <= head.endIndex {
            var matched = true
            for k in 0..<name.count where head[i + k] | (name[k] >= 97 ? 0x20 : 0) != name[k] {
                matched = false
                break
            }
            if matched {
                var j = i + name.count
                while j < head.endIndex, head[j] == 32 { j += 1 }
                var value = 0
                while j < head.endIndex, head[j] >= 48, head[j] <= 57 {
                    value = value * 10 + Int(head[j]) - 48
                    j += 1
                }
                return value
            }
            i += 1
        }
        return nil
    }

    private func fill(_ buffer: inout [UInt8]) throws {
        let bytes = try UnixSocket.read(fd)
        guard !bytes.isEmpty else { throw BenchFailure("entryd-web closed the connection") }
        buffer += bytes
    }
}
