import EntryModel
import EntryProtocol
import Foundation
import Testing

/// Find a person by what you know (issue 33 item 3), end to end: `entryctl
/// list --search` and the `search` Filter member on the wire.
@Suite(.serialized) struct SearchCLITests {
    /// Names of `entryctl list --format json --all` with `args`, sorted.
    func names(_ d: Daemon, _ args: [String]) throws -> [String] {
        let r = try d.entryctl(["list", "--format", "json", "--all"] + args)
        try #require(r.status == 0, "\(r.stderr)")
        return try #require(try JSON.parse(r.stdout).arrayValue).compactMap { $0["fields"]?["name"]?.stringValue }
            .sorted()
    }

    @Test("list --search: Traditional and Simplified names, pinyin, a given name, phones in any format, e-mail")
    func listSearch() throws {
        let d = try Daemon()
        let people: [(String, String)] = [
            ("黃志明", "phone=+86 136 1234 5678"), ("黄小明", "phone=139 8765 4321"),
            ("Anna Smith", "email=Anna.Smith@example.org"),
        ]
        for (name, contact) in people {
            let method = contact.hasPrefix("phone") ? "phone" : "email"
            let add = try d.entryctl([
                "add", "name=\(name)", "birthday=1990-01-01", "country=CN", "province=440000", "city=440100",
                "contact_method=\(method)", contact,
            ])
            try #require(add.status == 0, "\(add.stderr)")
        }
        #expect(try names(d, ["--search", "黄志明"]) == ["黃志明"])
        #expect(try names(d, ["--search", "黃志明"]) == ["黃志明"])
        #expect(try names(d, ["--search", "明"]) == ["黃志明", "黄小明"])
        #expect(try names(d, ["--search", "huangzhiming"]) == ["黃志明"])
        #expect(try names(d, ["--search", "xiao ming"]) == ["黄小明"])
        #expect(try names(d, ["--search", "+86 136 1234 5678"]) == ["黃志明"])
        #expect(try names(d, ["--search", "136-1234-5678"]) == ["黃志明"])
        #expect(try names(d, ["--search", "008613987654321"]) == ["黄小明"])
        #expect(try names(d, ["--search", "ANNA.SMITH@"]) == ["Anna Smith"])
        #expect(try names(d, ["--search", "Smith"]) == ["Anna Smith"])
        #expect(try names(d, ["--name-contains", "mit"]) == ["Anna Smith"])
        // The table's total counts the matches.
        let table = try d.entryctl(["--locale", "en", "list", "--search", "ming"])
        #expect(table.status == 0 && table.stdout.contains("2 of 2 entries"), "\(table.stdout)")

        // Bad input: ValidationFailed naming search (entryctl: --search), in the locale asked for; exit 65.
        let blank = try d.entryctl(["--locale", "en", "list", "--search", "  "])
        #expect(blank.status == 65 && blank.stderr.contains("--search: [required]"), "\(blank.stderr)")
        let long = try d.entryctl(["--locale", "zh", "list", "--search", String(repeating: "长", count: 101)])
        #expect(long.status == 65 && long.stderr.contains("搜索内容超过 100 个字符"), "\(long.stderr)")
        let control = try d.entryctl(["--locale", "en", "list", "--search", "a\u{7}b"])
        #expect(control.status == 65 && control.stderr.contains("control character"), "\(control.stderr)")

        // On the wire: the member is named; "" is no search.
        let c = try d.connect()
        do {
            _ = try c.call(
                "io.entryd.Entries.List",
                .object([("filter", .object([("search", .string("\n"))])), ("locale", .string("en"))]))
            Issue.record("List accepted a control character")
        } catch let e as WireError {
            #expect(e.name == "io.entryd.Entries.ValidationFailed")
            #expect(e.parameters["problems"]?.arrayValue?.first?["field"]?.stringValue == "search")
        }
        let all = try c.call("io.entryd.Entries.List", .object([("filter", .object([("search", .string(""))]))]))
        #expect(all["total"]?.intValue == 3)
        #expect(d.stop() == 0)
    }
}
