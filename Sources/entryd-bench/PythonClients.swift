import Foundation
import EntryProtocol

/// Ordinary clients: separate Python 3 processes (standard library only) that
/// encode their own varlink JSON, each keeping a window of Adds in flight,
/// against the daemon's socket — what a client written in a scripting language
/// costs the daemon and the machine, unlike the bench's pre-encoded calls.
enum PythonClients {
    /// The client, written to the bench's temporary directory at run time (the
    /// bench runs from a plain build, without the source tree).
    /// Arguments: socket, first entry number, count of numbers it may use,
    /// seconds, window. Once connected it prints `ready` and waits for a line
    /// on stdin (the common start); then it prints one JSON line:
    /// `{"adds": N, "errors": N, "end": UNIX_SECONDS}` (end: its last reply).
    static let script = #"""
        import json, socket, sys, time

        REGIONS = [("440000", "440100"), ("440000", "440300"), ("330000", "330100"),
                   ("320000", "320100"), ("510000", "510100"), ("420000", "420100")]
        OTHER = ["US", "DE", "JP"]

        def fields(n):
            """The fields of entry number n, as the bench's Fixture.fields(n)."""
            f = {"name": "用户%d" % n,
                 "birthday": "19%d-%02d-%02d" % (50 + n % 50, 1 + n % 12, 1 + n % 28),
                 "contact_method": "phone"}
            slot = n % 9
            if slot < len(REGIONS):
                f["country"] = "CN"
                f["province"], f["city"] = REGIONS[slot]
                f["phone"] = "+86138%08d" % (n % 100000000)
            else:
                f["country"] = OTHER[slot - len(REGIONS)]
                f["contact_method"] = "email"
                f["email"] = "user%d@example.com" % n
            return f

        def main():
            path, first, count, seconds, window = sys.argv[1:6]
            first, count, seconds, window = int(first), int(count), float(seconds), int(window)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            print("ready", flush=True)
            sys.stdin.readline()
            sent = adds = errors = 0

            def call():
                nonlocal sent
                n = first + sent % count
                sent += 1
                body = {"method": "\#(Method.entriesAdd.rawValue)", "parameters": {"fields": fields(n)}}
                return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode() + b"\0"

            end = time.time() + seconds
            s.sendall(b"".join(call() for _ in range(window)))
            buffer = b""
            while adds + errors < sent:
                chunk = s.recv(65536)
                if not chunk:
                    raise SystemExit("entryd closed the connection")
                buffer += chunk
                *replies, buffer = buffer.split(b"\0")
                more = []
                for r in replies:
                    if "error" in json.loads(r):
                        errors += 1
                    else:
                        adds += 1
                    if time.time() < end:
                        more.append(call())
                if more:
                    s.sendall(b"".join(more))
            print(json.dumps({"adds": adds, "errors": errors, "end": time.time()}))

        main()
        """#

    /// Runs `clients` Python clients against `socket`, each keeping `window`
    /// Adds in flight for `seconds` after a common start (given once all have
    /// started and connected, so Python's start-up is not timed).
    /// - Parameter numbers: entry numbers; each client gets its own block.
    /// - Returns: acknowledged adds per second over the wall time (common start
    ///   to the last client's last reply), and the error replies.
    /// - Throws: ``BenchFailure`` when python3 is missing or a client fails.
    static func run(
        socket: String, directory: String, clients: Int, window: Int, seconds: Double,
        numbers: Counter
    ) throws -> (rate: Double, errors: Int) {
        let scriptPath = directory + "/add-client.py"
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        // Far more numbers than any client can use (≈ 50,000 Adds/s); a client that ran out would repeat its block.
        let block = Int(seconds * 50_000) + 10_000
        let log = directory + "/add-client.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        var running: [(process: Process, input: Pipe, output: Pipe)] = []
        defer { for r in running where r.process.isRunning { kill(r.process.processIdentifier, SIGKILL) } }
        for _ in 0..<clients {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            p.arguments = [
                "python3", scriptPath, socket, String(numbers.reserve(block).lowerBound), String(block),
                String(seconds), String(window),
            ]
            let (input, output) = (Pipe(), Pipe())
            p.standardInput = input
            p.standardOutput = output
            let logHandle = FileHandle(forWritingAtPath: log)
            defer { try? logHandle?.close() }  // the child has its own copy once started
            p.standardError = logHandle
            try p.run()
            running.append((p, input, output))
        }
        for r in running where readLine(r.output.fileHandleForReading) != "ready" {
            throw BenchFailure("a Python client did not connect to \(socket); see \(log)")
        }
        let start = Date().timeIntervalSince1970
        for r in running { r.input.fileHandleForWriting.write(Data("go\n".utf8)) }
        var adds = 0
        var errors = 0
        var end = start
        var failures: [String] = []
        for (p, _, out) in running {
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            guard p.terminationStatus == 0,
                let line = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                let a = line["adds"] as? Int, let e = line["errors"] as? Int, let t = line["end"] as? Double
            else {
                failures.append("exit \(p.terminationStatus): \(text.prefix(200))")
                continue
            }
            adds += a
            errors += e
            end = max(end, t)
        }
        guard failures.isEmpty else {
            throw BenchFailure("\(failures.count) Python client(s) failed (see \(log)): \(failures[0])")
        }
        return (Double(adds) / (end - start), errors)
    }

    /// One line read from `handle` byte by byte (newline dropped), or `nil` at end of file.
    private static func readLine(_ handle: FileHandle) -> String? {
        var bytes: [UInt8] = []
        while let byte = try? handle.read(upToCount: 1), let b = byte.first {
            if b == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(b)
        }
        return nil
    }
}
