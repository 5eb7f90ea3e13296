import EntryModel
import EntryProtocol
@testable import EntryWeb
import Foundation
import Testing

/// Issue 18 part 3: the web users file and the password hashes (EntryWeb).
@Suite struct WebUsersTests {
    /// One real hash, made once (each costs about 0.1 s and 64 MiB).
    static let hash = try! PasswordHash.hash("correct horse")

    @Test(
        "a hash is an Argon2id string at the interactive limits; the right password verifies, a wrong one and a malformed hash do not"
    )
    func hashAndVerify() throws {
        #expect(Self.hash.hasPrefix("$argon2id$v=19$m=65536,t=2,p=1$"), "\(Self.hash)")
        #expect(WebUsers.isValidHash(Self.hash))
        #expect(PasswordHash.verify("correct horse", against: Self.hash))
        #expect(!PasswordHash.verify("correct horsE", against: Self.hash))
        #expect(!PasswordHash.verify("", against: Self.hash))
        #expect(!PasswordHash.verify("correct horse", against: "$argon2id$garbage"))
        #expect(!PasswordHash.verify("correct horse", against: ""))
        // Salted: the same password twice gives two hashes.
        #expect(try PasswordHash.hash("correct horse") != Self.hash)
        #expect(PasswordHash.verify("", against: try PasswordHash.hash("")))
    }

    @Test("tokens are 43 base64url characters and distinct; constant-time equality compares whole strings")
    func tokens() {
        let tokens = (0..<200).map { _ in PasswordHash.token() }
        #expect(Set(tokens).count == 200)
        for t in tokens {
            #expect(
                t.utf8.count == 43
                    && t.utf8.allSatisfy {
                        $0 == 45 || $0 == 95 || (48...57).contains($0) || (65...90).contains($0)
                            || (97...122).contains($0)
                    }, "\(t)")
        }
        let t = tokens[0]
        #expect(PasswordHash.constantTimeEqual(t, String(t)))
        #expect(!PasswordHash.constantTimeEqual(t, tokens[1]))
        #expect(!PasswordHash.constantTimeEqual(t, String(t.dropLast())))
        #expect(!PasswordHash.constantTimeEqual(t, String(t.dropLast()) + (t.last == "A" ? "B" : "A")))
        #expect(PasswordHash.constantTimeEqual("", ""))
        #expect(!PasswordHash.constantTimeEqual("", "a"))
        #expect(
            PasswordHash.base64url([0xFB, 0xFF]) == "-_8" && PasswordHash.base64url([]) == ""
                && PasswordHash.base64url(Array("foobar".utf8)) == "Zm9vYmFy")
    }

    @Test("names: letters of any script, digits and . _ - @, 1 to 64 scalars")
    func names() {
        for good in ["alice", "李雷", "a.b_c-d@e", "x", "a\u{0301}", String(repeating: "n", count: 64), "Ωμέγα", "user1"]
        {
            #expect(ActorName.isValid(good), "\(good)")
        }
        for bad in [
            "", "a b", "a:b", "web:alice", String(repeating: "n", count: 65), "a/b", "😀", "\u{0301}a", "a\tb", "#x",
            "a+b",
        ] {
            #expect(!ActorName.isValid(bad), "\(bad)")
        }
    }

    @Test(
        "a good file parses: comments, blank lines, CRLF and trailing blanks kept aside; users in order with their roles"
    )
    func parseGood() throws {
        let text =
            "# users\n\nalice:admin:\(Self.hash)\n  # indented comment\n李雷:write:\(Self.hash)\r\nbob:read:\(Self.hash)  \n"
        let users = try WebUsers(parsing: text, path: "/etc/entryd/web-users")
        #expect(users.users.map(\.name) == ["alice", "李雷", "bob"])
        #expect(users.users.map(\.role) == [.admin, .write, .read])
        #expect(users.user(named: "李雷")?.role == .write)
        #expect(users.user(named: "Alice") == nil)
        #expect(try WebUsers(parsing: "", path: "f").users.isEmpty)
        #expect(try WebUsers(parsing: "# only\n", path: "f").users.isEmpty)
    }

    @Test(
        "a bad line is named by file and line, says what to do, and never shows the hash",
        arguments: [
            ("alice:admin\n", 1, WebUsersError.LineProblem.notThreeParts),
            ("# c\nalice:boss:$argon2id$x\n", 2, .badRole("boss")),
            ("# c\n\nalice:none:$argon2id$x\n", 3, .badRole("none")),
            ("a b:read:$argon2id$x\n", 1, .badName("a b")),
            (":read:$argon2id$x\n", 1, .badName("")),
            ("alice:read:$2y$10$bcrypt\n", 1, .badHash),
            ("alice:read:\n", 1, .badHash),
            (
                "alice:read:$argon2id$x\nbob:read:$argon2id$y\nalice:write:$argon2id$z\n", 3,
                .duplicate(name: "alice", firstLine: 1)
            ),
        ])
    func parseBad(text: String, line: Int, problem: WebUsersError.LineProblem) {
        #expect(throws: WebUsersError.malformed(path: "/srv/users", line: line, problem: problem)) {
            try WebUsers(parsing: text, path: "/srv/users")
        }
        do {
            _ = try WebUsers(parsing: text, path: "/srv/users")
        } catch {
            #expect(
                error.description.hasPrefix("/srv/users:\(line): ")
                    && error.description.contains("fix or remove the line"), "\(error)")
            #expect(!error.description.contains("$argon2id$x") && !error.description.contains("$2y$"), "\(error)")
        }
    }

    @Test("text round-trips: comments stay, add appends, replace keeps the place, remove drops the line")
    func roundTrip() throws {
        let text = "# users\nalice:admin:\(Self.hash)\n\nbob:read:\(Self.hash)\n"
        var users = try WebUsers(parsing: text, path: "f")
        #expect(users.text == text)
        #expect(try WebUsers(parsing: users.text, path: "f") == users)
        let carol = WebUser(name: "carol", role: .write, passwordHash: Self.hash)
        try users.add(carol, replace: false)
        #expect(throws: WebUsersError.exists(name: "carol")) { try users.add(carol, replace: false) }
        try users.add(WebUser(name: "alice", role: .read, passwordHash: Self.hash), replace: true)
        #expect(users.users.map(\.name) == ["alice", "bob", "carol"] && users.users[0].role == .read)
        #expect(throws: WebUsersError.invalidName("web:x")) {
            try users.add(WebUser(name: "web:x", role: .read, passwordHash: Self.hash), replace: true)
        }
        try users.remove(named: "bob")
        #expect(throws: WebUsersError.unknownUser(name: "bob")) { try users.remove(named: "bob") }
        #expect(users.text == "# users\nalice:read:\(Self.hash)\n\ncarol:write:\(Self.hash)\n")
        // A new file gets a comment naming the format.
        var fresh = WebUsers()
        try fresh.add(carol, replace: false)
        #expect(
            fresh.text.hasPrefix("# entryd-web users: NAME:ROLE:HASH")
                && fresh.text.hasSuffix("carol:write:\(Self.hash)\n"))
        #expect(try WebUsers(parsing: fresh.text, path: "f").users == [carol])
        #expect("\(carol)" == "carol (write)")
    }

    @Test("verify: the right password gives the user; a wrong one or an unknown name gives nil and takes about as long")
    func verify() throws {
        let users = try WebUsers(parsing: "alice:write:\(Self.hash)\n", path: "f")
        #expect(users.verify(name: "alice", password: "correct horse")?.role == .write)
        let clock = ContinuousClock()
        var wrong: WebUser?
        var unknown: WebUser?
        _ = PasswordHash.dummy  // made once, outside the measured calls
        // The fastest of five each: a call the scheduler paused (a loaded machine, the
        // suite's other tests) is only ever slower, never faster.
        let wrongTime = (0..<5).map { _ in
            clock.measure { wrong = users.verify(name: "alice", password: "wrong horse") }
        }.min()!
        let unknownTime = (0..<5).map { _ in
            clock.measure { unknown = users.verify(name: "mallory", password: "correct horse") }
        }.min()!
        #expect(wrong == nil && unknown == nil)
        // Both run one Argon2id check (tens of milliseconds); the unknown name is not answered at once.
        #expect(unknownTime > wrongTime / 4, "unknown \(unknownTime), wrong \(wrongTime)")
        #expect(WebUsers.isValidHash(PasswordHash.dummy))
    }

    @Test(
        "names match scalar by scalar: a canonically equivalent spelling (Kelvin sign, decomposed é, a compatibility ideograph) is another name"
    )
    func exactNames() throws {
        let users = try WebUsers(
            parsing: "Kim:read:\(Self.hash)\nJos\u{E9}:read:\(Self.hash)\n\u{674E}\u{96F7}:read:\(Self.hash)\n",
            path: "f")
        #expect(users.user(named: "Kim")?.name == "Kim")
        #expect(users.user(named: "\u{212A}im") == nil)
        #expect(users.user(named: "Jose\u{301}") == nil)
        #expect(users.user(named: "\u{F9E1}\u{96F7}") == nil)
        #expect(users.verify(name: "\u{212A}im", password: "correct horse") == nil)
    }

    @Test("a FIFO or a directory in place of the users file is refused at once, never read")
    func notARegularFile() throws {
        let dir = NSTemporaryDirectory() + "webusers-fifo-" + String(UUID().uuidString.prefix(8))
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(mkfifo(dir + "/users", 0o600) == 0)
        #expect(throws: WebUsersError.self) { _ = try WebUsers.load(path: dir + "/users") }
        #expect(throws: WebUsersError.self) { _ = try WebUsers.load(path: dir) }
    }

    @Test(
        "update writes atomically with mode 0640 under a lock, re-reads the file, refuses a malformed one untouched; load and stamp"
    )
    func updateFile() throws {
        let dir = NSTemporaryDirectory() + "webusers-" + String(UUID().uuidString.prefix(8))
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/web-users"
        #expect(throws: WebUsersError.missing(path: path)) { try WebUsers.load(path: path) }
        #expect(FileStamp(path: path) == nil)
        #expect(throws: WebUsersError.missing(path: path)) { try WebUsers.update(path: path, create: false) { _ in } }
        try WebUsers.update(path: path, create: true) {
            try $0.add(WebUser(name: "alice", role: .admin, passwordHash: Self.hash), replace: false)
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o640)
        let first = try #require(FileStamp(path: path))
        try WebUsers.update(path: path, create: false) {
            try $0.add(WebUser(name: "bob", role: .read, passwordHash: Self.hash), replace: false)
        }
        #expect(try WebUsers.load(path: path).users.map(\.name) == ["alice", "bob"])
        #expect(FileStamp(path: path) != first)
        // Nothing is left behind but the lock file.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["web-users", "web-users.lock"])
        // A throwing change writes nothing.
        #expect(throws: WebUsersError.unknownUser(name: "zed")) {
            try WebUsers.update(path: path, create: false) { try $0.remove(named: "zed") }
        }
        // A malformed file is refused, not rewritten.
        let broken = try String(contentsOfFile: path, encoding: .utf8) + "carol:root:x\n"
        try broken.write(toFile: path, atomically: false, encoding: .utf8)
        #expect(throws: WebUsersError.malformed(path: path, line: 4, problem: .badRole("root"))) {
            try WebUsers.update(path: path, create: true) { try $0.remove(named: "bob") }
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == broken)
        // The directory must exist: the lock cannot be created.
        #expect(throws: WebUsersError.cannotWrite(path: dir + "/none/web-users.lock", call: "open", errno: ENOENT)) {
            try WebUsers.update(path: dir + "/none/web-users", create: true) { _ in }
        }
    }

    @Test("the users file: --users, else $ENTRYD_WEB_USERS, else /etc/entryd/web-users")
    func defaultPath() {
        #expect(WebUsers.path(option: "/x", environment: ["ENTRYD_WEB_USERS": "/y"]) == "/x")
        #expect(WebUsers.path(option: nil, environment: ["ENTRYD_WEB_USERS": "/y"]) == "/y")
        #expect(WebUsers.path(option: nil, environment: ["ENTRYD_WEB_USERS": ""]) == "/etc/entryd/web-users")
        #expect(WebUsers.path(option: nil, environment: [:]) == "/etc/entryd/web-users")
    }
}
