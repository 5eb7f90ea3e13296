import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// Issue 8: the man pages render without warnings, name every command, install
/// with mk/docs.mk; the bash completion parses and completes.
@Suite struct ManualTests {
    static let root = EntryctlProcess.packageRoot.path
    static let pages = ["doc/man/entryd.8", "doc/man/entryctl.1", "doc/man/entryd.conf.5"]

    /// The first of `names` found on the PATH (or in /usr/bin, /bin).
    static func tool(_ name: String) -> String? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static let environment = ["PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "MANWIDTH": "80", "HOME": "/tmp"]

    @Test("each man page renders with man -l (or groff) without a warning", arguments: pages)
    func manPageRenders(page: String) throws {
        let file = Self.root + "/" + page
        if let man = Self.tool("man") {
            let r = try runProcess(man, ["--warnings", "-l", file], environment: Self.environment)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.isEmpty, "man -l \(page) warned: \(r.stderr)")
            #expect(r.stdout.contains("NAME") && r.stdout.contains("SEE ALSO"))
        }
        if let groff = Self.tool("groff") {
            let r = try runProcess(groff, ["-k", "-man", "-Tutf8", "-ww", "-z", file], environment: Self.environment)
            #expect(r.status == 0 && r.stderr.isEmpty, "groff \(page): \(r.stderr)")
        }
    }

    @Test("entryctl(1) and the completion name every command of entryctl --help")
    func everyCommandDocumented() throws {
        let help = try runProcess(productsDirectory() + "/entryctl", ["--help"])
        let commands = help.stdout.components(separatedBy: "Commands:\n")[1].components(separatedBy: "\n\n")[0]
            .split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }.filter { $0 != "help" }
        #expect(commands.contains("export") && commands.contains("import") && commands.contains("backup"))
        let page = try String(contentsOfFile: Self.root + "/doc/man/entryctl.1", encoding: .utf8)
        let completion = try String(contentsOfFile: Self.root + "/completion/entryctl.bash", encoding: .utf8)
        for command in commands {
            #expect(page.contains(".B \(command)") || page.contains(".BI \"\(command) "), "entryctl.1 lacks \(command)")
            #expect(completion.contains(" \(command) ") || completion.contains("\"\(command) ") || completion.contains(" \(command)\""),
                    "the completion lacks \(command)")
        }
    }

    /// Runs the completion function with COMP_WORDS set; returns COMPREPLY, one per line.
    func complete(_ words: [String], path: String = "/usr/bin:/bin") throws -> [String] {
        let quoted = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let script = "source '\(Self.root)/completion/entryctl.bash'; COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); "
            + "_entryctl; printf '%s\\n' \"${COMPREPLY[@]}\""
        var env = Self.environment
        env["PATH"] = path
        let r = try runProcess("/bin/bash", ["--norc", "-c", script], environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").map(String.init)
    }

    @Test("the bash completion parses and completes commands, options, fields and picker values")
    func completion() throws {
        let check = try runProcess("/bin/bash", ["-n", Self.root + "/completion/entryctl.bash"])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(try complete(["entryctl", "ex"]) == ["export"])
        #expect(try complete(["entryctl", "im"]) == ["import"])
        #expect(try complete(["entryctl", "export", "--in"]) == ["--include-deleted"])
        #expect(try complete(["entryctl", "export", "--format", ""]) == ["jsonl", "csv", "json"])
        #expect(try complete(["entryctl", "--locale", ""]) == ["zh", "en"])

        // Field names and picker values come from the daemon.
        let d = try Daemon()
        let path = productsDirectory() + ":/usr/bin:/bin"
        #expect(try complete(["entryctl", "--socket", d.socket, "add", "bi"], path: path) == ["birthday="])
        #expect(try complete(["entryctl", "--socket", d.socket, "list", "--country", "中国"], path: path).contains("CN"))
        #expect(try complete(["entryctl", "--socket", d.socket, "add", "province", "=", "广东"], path: path) == ["440000"])
        #expect(try complete(["entryctl", "--socket", d.socket, "add", "province", "=", "广东", "city", "=", "深圳"], path: path) == ["440300"])
        #expect(d.stop() == 0)
    }

    @Test("mk/docs.mk installs the pages and the completion under DESTDIR and removes them")
    func installRules() throws {
        guard let make = Self.tool("make") else { return }
        let dest = try TemporaryDirectory()
        defer { dest.remove() }
        let makefile = dest.url.appendingPathComponent("Makefile").path
        try "include mk/docs.mk\n".write(toFile: makefile, atomically: true, encoding: .utf8)
        let install = try runProcess(make, ["-C", Self.root, "-f", makefile, "install-docs", "DESTDIR=\(dest.url.path)/root", "PREFIX=/usr"])
        #expect(install.status == 0, "\(install.stderr)")
        for file in ["usr/share/man/man8/entryd.8", "usr/share/man/man1/entryctl.1", "usr/share/man/man5/entryd.conf.5",
                     "usr/share/bash-completion/completions/entryctl"] {
            #expect(FileManager.default.fileExists(atPath: dest.url.path + "/root/" + file), "\(file)")
        }
        let uninstall = try runProcess(make, ["-C", Self.root, "-f", makefile, "uninstall-docs", "DESTDIR=\(dest.url.path)/root", "PREFIX=/usr"])
        #expect(uninstall.status == 0)
        #expect(!FileManager.default.fileExists(atPath: dest.url.path + "/root/usr/share/man/man1/entryctl.1"))
    }
}
