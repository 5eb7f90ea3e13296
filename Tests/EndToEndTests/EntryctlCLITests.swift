import Foundation
import Testing
import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer

/// The built `entryctl` binary: exit codes, stderr and stdout, as a user sees them.
///
/// Commands that need a daemon talk to ``FakeDaemon``, which answers exactly as
/// doc/protocol.md says entryd does; the real daemon is covered by the integration tests.
@Suite(.serialized) struct EntryctlCLITests {
    typealias Run = EntryctlProcess

    // MARK: - Without a daemon

    /// `--help` is a tested artifact: compared with Tests/Snapshots/EntryctlCLITests/help.txt.
    /// Run with `SNAPSHOT_RECORD=1` to write the snapshot after a deliberate change.
    @Test("--help lists commands, global options and exit codes (exit 0)")
    func help() throws {
        let outcome = try Run.entryctl(["--help"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stderr.isEmpty)
        let snapshot = Run.packageRoot.appendingPathComponent("Tests/Snapshots/EntryctlCLITests/help.txt")
        if ProcessInfo.processInfo.environment["SNAPSHOT_RECORD"] == "1" {
            try FileManager.default.createDirectory(at: snapshot.deletingLastPathComponent(), withIntermediateDirectories: true)
            try outcome.stdout.write(to: snapshot, atomically: true, encoding: .utf8)
        }
        #expect(outcome.stdout == (try String(contentsOf: snapshot, encoding: .utf8)))
        for word in ["add", "list", "watch", "call", "--socket PATH", "--locale zh|en", "64", "65", "69", "75"] {
            #expect(outcome.stdout.contains(word), "help lacks \(word)")
        }
        #expect(try Run.entryctl(["-h"]).stdout == outcome.stdout)
        #expect(try Run.entryctl(["help"]).stdout == outcome.stdout)
        #expect(try Run.entryctl(["help", "help"]).stdout == outcome.stdout)
    }

    @Test("every command has --help with usage, options and an example (exit 0)", arguments: [
        "add", "get", "update", "delete", "restore", "history", "list", "options", "forms", "check", "status", "watch", "call",
    ])
    func commandHelp(command: String) throws {
        let outcome = try Run.entryctl([command, "--help"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stdout.contains("Usage: entryctl \(command)"))
        #expect(outcome.stdout.contains("Options:\n"))
        #expect(outcome.stdout.contains("Example"))
        #expect(try Run.entryctl(["help", command]).stdout == outcome.stdout)
    }

    @Test("the add example is a realistic Chinese entry")
    func addExample() throws {
        let outcome = try Run.entryctl(["add", "-h"])
        #expect(outcome.stdout.contains(
            "entryctl add name=李雷 birthday=1990-05-17 country=中国 province=广东 city=广州 contact_method=phone phone=13800138000"))
    }

    @Test("--version prints the version (exit 0)")
    func version() throws {
        let outcome = try Run.entryctl(["--version"])
        #expect(outcome.status == 0)
        #expect(outcome.stdout == "entryctl \(EntrydVersion.string)\n")
    }

    @Test("an unknown command is a usage error (exit 64)")
    func unknownCommand() throws {
        let outcome = try Run.entryctl(["frobnicate"])
        #expect(outcome.status == 64, "\(outcome)")
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr.hasPrefix("entryctl: unknown command 'frobnicate'"))
        #expect(outcome.stderr.contains("Usage: entryctl "))
    }

    @Test("usage errors come before any connection (exit 64)", arguments: [
        (["add", "name李雷"], "entryctl: 'name李雷' is not FIELD=VALUE", "Usage: entryctl add FIELD=VALUE..."),
        (["add", "=李雷"], "entryctl: '=李雷' has no field name", "Usage: entryctl add"),
        (["add"], "entryctl: missing FIELD=VALUE", "Usage: entryctl add"),
        (["get"], "entryctl: missing ID", "Usage: entryctl get ID"),
        (["list", "--limit", "zero"], "entryctl: --limit takes a whole number", "Usage: entryctl list"),
        (["list", "--frob"], "entryctl: unknown option '--frob'", "Usage: entryctl list"),
        (["--locale", "fr", "forms"], "entryctl: --locale is zh or en, not 'fr'", "Usage: entryctl forms"),
        ([], "entryctl: no command given", "Usage: entryctl"),
    ])
    func usageErrors(arguments: [String], message: String, usage: String) throws {
        // The socket does not exist: a 64 proves validation ran before connecting.
        let outcome = try Run.entryctl(["--socket", "/nonexistent/x.sock"] + arguments)
        #expect(outcome.status == 64, "\(outcome)")
        #expect(outcome.stderr.hasPrefix(message), "\(outcome)")
        #expect(outcome.stderr.contains(usage), "\(outcome)")
    }

    @Test("an unreachable socket names the path and how to start entryd (exit 69)")
    func unreachable() throws {
        let outcome = try Run.entryctl(["--socket", "/nonexistent/x.sock", "get", "0193a5e2-7c4b-7def-8a12-3456789abcde"])
        #expect(outcome.status == 69, "\(outcome)")
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr.hasPrefix("entryctl: cannot reach entryd"))
        #expect(outcome.stderr.contains("/nonexistent/x.sock"))
        #expect(outcome.stderr.contains("entryd --socket PATH"))
        #expect(outcome.stderr.contains("systemctl start entryd.socket"))
    }

    @Test("without --socket, every default path tried is reported (exit 69)")
    func unreachableDefaults() throws {
        let outcome = try Run.entryctl(["status"], environment: ["ENTRYD_SOCKET": "/nonexistent/env.sock", "XDG_RUNTIME_DIR": "/nonexistent/run"])
        #expect(outcome.status == 69, "\(outcome)")
        for path in ["/nonexistent/env.sock", "/nonexistent/run/entryd.sock", "./entryd.sock"] {
            #expect(outcome.stderr.contains(path), "\(outcome)")
        }
    }
}
