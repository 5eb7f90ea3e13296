import EntryModel
import EntryProtocol
import EntryLedger
import Foundation

// entryd-bench: starts the built entryd, drives it over its socket, measures
// raw SQLite and PostgreSQL on the same machine in the same run, and prints a
// Markdown table of figures with their ratios (issue 6). Progress on stderr.

let options: BenchOptions
do {
    guard let parsed = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst())) else {
        print(BenchOptions.usage)
        exit(ExitCode.success.rawValue)
    }
    options = parsed
} catch {
    FileHandle.standardError.write(Data("entryd-bench: \(error)\n\(BenchOptions.usage)\n".utf8))
    exit(ExitCode.usage.rawValue)
}

let selfDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    .path
let entrydPath = options.entrydPath ?? selfDirectory + "/entryd"
guard FileManager.default.isExecutableFile(atPath: entrydPath) else {
    FileHandle.standardError.write(
        Data("entryd-bench: no entryd at \(entrydPath); build it or pass --entryd PATH\n".utf8))
    exit(ExitCode.unavailable.rawValue)
}
let directory = NSTemporaryDirectory() + "entryd-bench-" + String(UUID().uuidString.prefix(8))
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)

do {
    if options.hub {
        let (text, ok) = HubBench(
            options: options, entryd: entrydPath, directory: directory,
            searchFrom: [selfDirectory, FileManager.default.currentDirectoryPath]
        ).run()
        print(text)
        if !ok {
            FileHandle.standardError.write(
                Data("entryd-bench: the hub bench found a failure (see the table's notes)\n".utf8))
            if options.keep {
                progress("kept \(directory)")
            } else {
                try? FileManager.default.removeItem(atPath: directory)
            }
            exit(ExitCode.failure.rawValue)
        }
    } else if options.search {
        print(try SearchBench(options: options, entryd: entrydPath, directory: directory).run().render())
    } else if options.web {
        print(
            try WebBench(
                entryd: entrydPath, directory: directory, clients: options.clients,
                seconds: options.quick ? 1 : options.seconds
            ).run())
    } else {
        let report = try Bench(options: options, entryd: entrydPath, directory: directory).run()
        print(report.render())
    }
} catch {
    FileHandle.standardError.write(Data("entryd-bench: \(error)\n".utf8))
    if !options.keep { try? FileManager.default.removeItem(atPath: directory) }
    exit(ExitCode.failure.rawValue)
}
if options.keep { progress("kept \(directory)") } else { try? FileManager.default.removeItem(atPath: directory) }
