import Foundation
import Testing

/// Runs the built `entryctl` binary and captures what it did.
enum EntryctlProcess {
    /// What one run produced.
    struct Outcome: CustomStringConvertible {
        /// The exit status (128 + N when killed by signal N).
        var status: Int32
        var stdout: String
        var stderr: String

        var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
    }

    /// Why a run could not happen.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The path of the built `entryctl`, or `nil`. Looked for, in order:
    /// `$ENTRYCTL_PATH`; the products directory, which is the directory of the
    /// running test bundle (`…/debug/entrydPackageTests.xctest` on Linux, the
    /// parent of the `.xctest` bundle on macOS); the output of
    /// `swift build --show-bin-path` in the package root.
    static let binary: String? = {
        let fm = FileManager.default
        let environment = ProcessInfo.processInfo.environment
        if let explicit = environment["ENTRYCTL_PATH"], fm.isExecutableFile(atPath: explicit) { return explicit }
        var directories: [URL] = []
        if let exe = try? fm.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            directories.append(URL(fileURLWithPath: exe).deletingLastPathComponent())
        }
        for bundle in [Bundle.main] + Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            directories.append(URL(fileURLWithPath: bundle.bundlePath).deletingLastPathComponent())
        }
        if let first = CommandLine.arguments.first {
            directories.append(URL(fileURLWithPath: first).standardizedFileURL.deletingLastPathComponent())
        }
        for dir in directories {
            let candidate = dir.appendingPathComponent("entryctl").path
            if fm.isExecutableFile(atPath: candidate) { return candidate }
        }
        if let bin = try? run(
            executable: "/usr/bin/env", ["swift", "build", "--show-bin-path"],
            environment: environment, directory: packageRoot, timeout: 120),
            bin.status == 0
        {
            let candidate = bin.stdout.trimmingCharacters(in: .whitespacesAndNewlines) + "/entryctl"
            if fm.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }()

    /// The package root: two levels above this file's directory.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `entryctl arguments` in an empty temporary directory, with only
    /// `environment` plus `PATH`, `TZ=UTC` and `LANG=C.UTF-8` set (so that no
    /// socket of the machine is found by accident and times are UTC).
    /// - Throws: ``Failure`` when the binary is missing or the run times out.
    static func entryctl(
        _ arguments: [String], environment: [String: String] = [:],
        timeout: TimeInterval = 30
    ) throws -> Outcome {
        guard let binary else {
            throw Failure(
                description: "entryctl is not built; run 'swift build --product entryctl' or set ENTRYCTL_PATH")
        }
        var env = ["PATH": "/usr/bin:/bin", "TZ": "UTC", "LANG": "C.UTF-8"]
        env.merge(environment) { _, new in new }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        return try run(executable: binary, arguments, environment: env, directory: directory.url, timeout: timeout)
    }

    /// Runs a program to completion, its output going to files (no pipe can fill up).
    /// - Parameter input: text for standard input (default: none, /dev/null).
    static func run(
        executable: String, _ arguments: [String], environment: [String: String],
        directory: URL, timeout: TimeInterval, input: String? = nil
    ) throws -> Outcome {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let outURL = scratch.url.appendingPathComponent("stdout")
        let errURL = scratch.url.appendingPathComponent("stderr")
        let inURL = scratch.url.appendingPathComponent("stdin")
        guard FileManager.default.createFile(atPath: outURL.path, contents: nil),
            FileManager.default.createFile(atPath: errURL.path, contents: nil),
            FileManager.default.createFile(atPath: inURL.path, contents: Data((input ?? "").utf8))
        else {
            throw Failure(description: "cannot create output files in \(scratch.url.path)")
        }
        // Our copies of the child's stdin, stdout and stderr are closed on every way
        // out (before `scratch` is removed: the defers run in reverse), never left to
        // Foundation: a whole run of the suite starts thousands of children.
        let stdinHandle = try input.map { _ in try FileHandle(forReadingFrom: inURL) }
        defer { try? stdinHandle?.close() }
        let stdoutHandle = try FileHandle(forWritingTo: outURL)
        defer { try? stdoutHandle.close() }
        let stderrHandle = try FileHandle(forWritingTo: errURL)
        defer { try? stderrHandle.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.currentDirectoryURL = directory
        process.standardInput = stdinHandle ?? FileHandle.nullDevice
        process.standardOutput = stdoutHandle
        process.standardError = stderrHandle
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline {
                process.terminate()
                process.waitUntilExit()
                throw Failure(description: "\(executable) \(arguments) ran longer than \(timeout) s")
            }
            usleep(5_000)
        }
        // Returns at once (the child has exited), and breaks the cycle between the
        // Process and its run-loop source that only waitUntilExit() breaks in
        // swift-corelibs-foundation: without it no Process is ever freed, nor what it holds.
        process.waitUntilExit()
        let status =
            process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return Outcome(
            status: status,
            stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }
}

/// A fresh directory under /tmp (short, so socket paths fit in sun_path), removed by ``remove()``.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        var template = Array("/tmp/entryctl-e2e-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw EntryctlProcess.Failure(description: "mkdtemp failed") }
        url = URL(fileURLWithPath: String(cString: made))
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}
