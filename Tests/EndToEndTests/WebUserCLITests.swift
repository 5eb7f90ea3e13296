import Foundation
import Testing
import EntryModel
import EntryWeb

/// Issue 18 part 3: `entryctl web-user add | remove | list` on a users file, as a user (and
/// Tests/web/conftest.py) runs them: exit codes, messages in zh and en, the file it leaves.
@Suite struct WebUserCLITests {
    /// A fresh directory for one test's users file.
    final class Scratch {
        let directory: TemporaryDirectory
        var path: String { directory.url.path + "/web-users" }
        init() throws { directory = try TemporaryDirectory() }
        deinit { directory.remove() }
    }

    /// Runs entryctl with `input` on standard input (nil: /dev/null), in English unless `locale` says.
    static func run(
        _ arguments: [String], input: String? = nil, locale: String = "en",
        environment: [String: String] = [:]
    ) throws -> EntryctlProcess.Outcome {
        guard let binary = EntryctlProcess.binary else {
            throw EntryctlProcess.Failure(description: "entryctl is not built")
        }
        var env = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "ENTRYCTL_LOCALE": locale]
        env.merge(environment) { _, new in new }
        return try EntryctlProcess.run(
            executable: binary, arguments, environment: env,
            directory: URL(fileURLWithPath: "/tmp"), timeout: 60, input: input)
    }

    static func add(
        _ name: String, role: String, password: String = "s3cret-pass\n", file: String, extra: [String] = []
    ) throws -> EntryctlProcess.Outcome {
        try run(["web-user", "add", name, "--role", role, "--users", file] + extra, input: password)
    }

    @Test("add with the password on stdin (as Tests/web/conftest.py does), list as a table and JSON, remove")
    func addListRemove() throws {
        let s = try Scratch()
        let added = try Self.add("alice", role: "admin", password: "correct horse battery\n", file: s.path)
        #expect(
            added.status == 0 && added.stdout == "added web user alice (admin) to \(s.path)\n" && added.stderr.isEmpty,
            "\(added)")
        // no newline at the end
        #expect(try Self.add("李雷", role: "write", password: "another password", file: s.path).status == 0)
        #expect(try Self.add("bob", role: "read", password: "windows line\r\n", file: s.path).status == 0)
        #expect(try Self.add("kiosk", role: "submit", password: "front desk tablet", file: s.path).status == 0)
        // The file: a comment, then NAME:ROLE:HASH lines; mode 0640.
        let text = try String(contentsOfFile: s.path, encoding: .utf8)
        let lines = text.split(separator: "\n")
        #expect(
            lines.count == 5 && lines[0].hasPrefix("#") && lines[1].hasPrefix("alice:admin:$argon2id$")
                && lines[2].hasPrefix("李雷:write:$argon2id$"))
        #expect((try FileManager.default.attributesOfItem(atPath: s.path)[.posixPermissions] as? Int) == 0o640)
        // The trailing newline (and CR) is not part of the password.
        let users = try WebUsers.load(path: s.path)
        #expect(users.verify(name: "alice", password: "correct horse battery")?.role == .admin)
        #expect(users.verify(name: "alice", password: "correct horse battery\n") == nil)
        #expect(users.verify(name: "李雷", password: "another password")?.role == .write)
        #expect(users.verify(name: "bob", password: "windows line")?.role == .read)
        #expect(users.verify(name: "kiosk", password: "front desk tablet")?.role == .submit)
        #expect(lines[4].hasPrefix("kiosk:submit:$argon2id$"))

        let table = try Self.run(["web-user", "list", "--users", s.path])
        #expect(table.status == 0, "\(table)")
        #expect(
            table.stdout.contains("alice") && table.stdout.contains("admin") && table.stdout.contains("李雷")
                && table.stdout.hasSuffix("4 web user(s)\n"))
        #expect(!table.stdout.contains("argon2id"))
        let json = try Self.run(["web-user", "list", "--users", s.path, "--format", "json"])
        #expect(
            json.stdout
                == #"{"users":[{"name":"alice","role":"admin"},{"name":"李雷","role":"write"},{"name":"bob","role":"read"},{"name":"kiosk","role":"submit"}]}"#
                + "\n")
        #expect(try Self.run(["--json", "web-user", "list", "--users", s.path]).stdout == json.stdout)

        let removed = try Self.run(["web-user", "remove", "bob", "--users", s.path])
        #expect(removed.status == 0 && removed.stdout == "removed web user bob from \(s.path)\n", "\(removed)")
        let unknown = try Self.run(["web-user", "remove", "bob", "--users", s.path])
        #expect(unknown.status == 1 && unknown.stderr.contains("no web user bob in '\(s.path)'"), "\(unknown)")
        #expect(try WebUsers.load(path: s.path).users.map(\.name) == ["alice", "李雷", "kiosk"])
        // $ENTRYD_WEB_USERS names the file when --users is not given.
        let env = try Self.run(["web-user", "list", "--format", "json"], environment: ["ENTRYD_WEB_USERS": s.path])
        #expect(env.status == 0 && env.stdout.contains("李雷"), "\(env)")
    }

    @Test(
        "an existing name is refused unless --replace, before the password is read; --replace sets a new password and role"
    )
    func replace() throws {
        let s = try Scratch()
        #expect(try Self.add("alice", role: "read", password: "first password\n", file: s.path).status == 0)
        let before = try String(contentsOfFile: s.path, encoding: .utf8)
        let again = try Self.add("alice", role: "admin", password: "second password\n", file: s.path)
        #expect(
            again.status == 1
                && again.stderr.contains("the web user alice exists; give --replace to set a new password and role"),
            "\(again)")
        #expect(try String(contentsOfFile: s.path, encoding: .utf8) == before)
        let replaced = try Self.add(
            "alice", role: "admin", password: "second password\n", file: s.path, extra: ["--replace"])
        #expect(replaced.status == 0 && replaced.stdout.contains("replaced web user alice (admin)"), "\(replaced)")
        let users = try WebUsers.load(path: s.path)
        #expect(users.users.count == 1 && users.verify(name: "alice", password: "second password")?.role == .admin)
        #expect(users.verify(name: "alice", password: "first password") == nil)
    }

    @Test("a malformed file is never rewritten: add, remove and list refuse and name the line (exit 1)")
    func malformedUntouched() throws {
        let s = try Scratch()
        #expect(try Self.add("alice", role: "read", file: s.path).status == 0)
        let broken =
            try String(contentsOfFile: s.path, encoding: .utf8) + "# a comment\nbob:superuser:$argon2id$v=19$secret\n"
        try broken.write(toFile: s.path, atomically: false, encoding: .utf8)
        for arguments in [
            ["add", "carol", "--role", "read"], ["add", "carol", "--role", "read", "--replace"], ["remove", "alice"],
            ["list"],
        ] {
            let r = try Self.run(["web-user"] + arguments + ["--users", s.path], input: "s3cret-pass\n")
            #expect(r.status == 1, "\(arguments): \(r)")
            #expect(r.stderr.contains("\(s.path):4: the role 'superuser' is not submit, read, write or admin"), "\(r)")
            #expect(
                r.stderr.contains("fix or remove that line; the file was not changed") && !r.stderr.contains("secret"),
                "\(r)")
            #expect(try String(contentsOfFile: s.path, encoding: .utf8) == broken)
        }
    }

    @Test(
        "exit codes: 64 for bad arguments, 66 for a missing file to remove from or list, 73 when the file cannot be written, 1 for a bad password"
    )
    func exitCodes() throws {
        let s = try Scratch()
        for (arguments, message) in [
            (["web-user"], "missing a subcommand: add, remove or list"),
            (["web-user", "rename", "x"], "unknown subcommand 'rename' (add, remove or list)"),
            (["web-user", "add", "alice"], "add needs --role submit|read|write|admin"),
            (
                ["web-user", "add", "alice", "--role", "root"],
                "--role is one of submit, read, write, admin, not 'root'"
            ),
            (
                ["web-user", "add", "alice", "--role", "none"],
                "--role is one of submit, read, write, admin, not 'none'"
            ),
            (
                ["web-user", "add", "web:alice", "--role", "read"],
                "the user name 'web:alice' is not 1 to 64 letters, digits, '.', '_', '-' or '@'"
            ),
            (["web-user", "add", "--role", "read"], "missing NAME"),
            (["web-user", "remove", "a", "b"], "unexpected argument 'b'"),
            (["web-user", "remove", "a", "--role", "read"], "web-user remove does not take --role"),
            (["web-user", "list", "--format", "csv"], "--format is one of table, json, not 'csv'"),
        ] {
            let r = try Self.run(arguments + ["--users", s.path], input: "s3cret-pass\n")
            #expect(r.status == 64 && r.stderr.contains(message), "\(arguments): \(r)")
        }
        #expect(!FileManager.default.fileExists(atPath: s.path))
        let list = try Self.run(["web-user", "list", "--users", s.path])
        #expect(
            list.status == 66 && list.stderr.contains("no users file '\(s.path)'")
                && list.stderr.contains("add a user first: entryctl web-user add NAME --role ROLE --users \(s.path)"),
            "\(list)")
        #expect(try Self.run(["web-user", "remove", "alice", "--users", s.path]).status == 66)
        let nowhere = try Self.add("alice", role: "read", file: s.directory.url.path + "/no/such/dir/users")
        #expect(
            nowhere.status == 73 && nowhere.stderr.contains("cannot write '")
                && nowhere.stderr.contains("the users file was not changed"), "\(nowhere)")
        // Passwords: 8 to 1024 bytes; nothing on stdin is too short.
        // Piped: the message says what to give, not how input is read.
        let short = try Self.add("alice", role: "read", password: "short\n", file: s.path)
        #expect(
            short.status == 1 && short.stderr.contains("the password is too short: 5 bytes, at least 8 are needed")
                && short.stderr.contains("Give a longer password as the first line of the input"), "\(short)")
        let shortZh = try Self.run(
            ["web-user", "add", "alice", "--role", "read", "--users", s.path], input: "短\n", locale: "zh")
        #expect(
            shortZh.status == 1 && shortZh.stderr.contains("密码太短：只有 3 字节，至少要 8 字节")
                && shortZh.stderr.contains("请在传入内容的第一行给出更长的密码") && !shortZh.stderr.contains("标准输入"),
            "\(shortZh)")
        let none = try Self.run(["web-user", "add", "alice", "--role", "read", "--users", s.path])
        #expect(
            none.status == 1 && none.stderr.contains("no password was given")
                && none.stderr.contains("Run this on a terminal"), "\(none)")
        let long = try Self.add(
            "alice", role: "read", password: String(repeating: "x", count: 1025) + "\n", file: s.path)
        #expect(long.status == 1 && long.stderr.contains("the password is too long: at most 1024 bytes"), "\(long)")
        #expect(
            try Self.add("alice", role: "read", password: String(repeating: "x", count: 1024) + "\n", file: s.path)
                .status == 0)
        #expect(try Self.add("bob", role: "read", password: "12345678", file: s.path).status == 0)
    }

    @Test("concurrent adds from separate processes all survive (the lock)")
    func concurrentAdds() throws {
        let s = try Scratch()
        guard let binary = EntryctlProcess.binary else {
            Issue.record("entryctl is not built")
            return
        }
        let names = (1...6).map { "user\($0)" }
        var processes: [Process] = []
        for name in names {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: binary)
            p.arguments = ["web-user", "add", name, "--role", "write", "--users", s.path]
            let pipe = Pipe()
            p.standardInput = pipe
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            pipe.fileHandleForWriting.write(Data("password-of-\(name)\n".utf8))
            try pipe.fileHandleForWriting.close()
            processes.append(p)
        }
        for p in processes { p.waitUntilExit() }
        #expect(processes.allSatisfy { $0.terminationStatus == 0 })
        let users = try WebUsers.load(path: s.path)
        #expect(Set(users.users.map(\.name)) == Set(names) && users.users.count == names.count)
        #expect(users.verify(name: "user3", password: "password-of-user3")?.role == .write)
        // Nothing left behind but the lock file.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: s.directory.url.path).sorted() == [
                "web-users", "web-users.lock",
            ])
    }

    @Test("in zh: messages and refusals are Chinese")
    func chinese() throws {
        let s = try Scratch()
        let added = try Self.run(
            ["web-user", "add", "李雷", "--role", "read", "--users", s.path], input: "s3cret-pass\n", locale: "zh")
        #expect(added.stdout == "已添加网页用户 李雷（read），文件 \(s.path)\n", "\(added)")
        var outputs = [added.stdout]
        for arguments in [["add", "李雷", "--role", "read"], ["remove", "bob"], ["list"], ["add", "x"], ["frob"]] {
            let r = try Self.run(["web-user"] + arguments + ["--users", s.path], input: "s3cret-pass\n", locale: "zh")
            outputs.append(r.stdout + r.stderr)
        }
        outputs.append(try Self.run(["web-user", "list", "--users", s.path + ".none"], locale: "zh").stderr)
        outputs.append(
            try Self.run(
                ["web-user", "add", "bob", "--role", "read", "--users", s.path], input: "short\n", locale: "zh"
            ).stderr)
        #expect(outputs[1].contains("网页用户 李雷 已存在；要设置新的密码和角色，请加 --replace"), "\(outputs[1])")
        #expect(outputs[6].contains("没有用户文件"), "\(outputs[6])")
        for text in outputs {
            let english = text.split(separator: "\n").map(String.init).filter(EntryctlCLITests.englishOnly)
            #expect(english.isEmpty, "\(english)")
        }
    }

    @Test("a short password typed on the terminal: told to run again with a longer one, nothing about standard input")
    func shortPasswordOnTheTerminal() throws {
        let s = try Scratch()
        guard let binary = EntryctlProcess.binary else {
            throw EntryctlProcess.Failure(description: "entryctl is not built")
        }
        let rc = s.directory.url.path + "/rc"
        let tmux = try Tmux(
            socket: s.directory.url.path + "/tmux.sock",
            command:
                "sh -c '\(binary) --locale zh web-user add alice --role read --users \(s.path); echo $? >\(rc); sleep 5'",
            environment: ["LANG": "C.UTF-8", "TERM": "xterm-256color"])
        defer { tmux.kill() }
        _ = try tmux.waitFor(text: "密码：")
        try tmux.type("short")
        try tmux.press("Enter")
        let screen = try tmux.waitFor(text: "密码太短")
        let text = screen.joined()  // the message wraps at 80 columns
        #expect(text.contains("请重新运行") && text.contains("更长的密码") && !text.contains("标准输入"), "\(text)")
        try tmux.waitFor("entryctl to exit") { _ in
            ((try? String(contentsOfFile: rc, encoding: .utf8)) ?? "").hasSuffix("\n")
        }
        #expect((try String(contentsOfFile: rc, encoding: .utf8)) == "1\n")
        #expect(!FileManager.default.fileExists(atPath: s.path))
    }
}
