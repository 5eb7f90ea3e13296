import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient
import EntryArguments

/// FIELD=VALUE arguments and entryctl's option scanning (Client/FieldAssignment.swift, Client/OptionSpec.swift over EntryArguments).
@Suite struct ClientArgumentTests {
    @Test(
        "splits FIELD=VALUE at the first '='",
        arguments: [
            ("name=李雷", "name", "李雷"),
            ("note=a=b=c", "note", "a=b=c"),
            ("email=", "email", ""),
            ("contact_method=phone", "contact_method", "phone"),
            ("x.y-z=1", "x.y-z", "1"),
            ("_private= spaced ", "_private", " spaced "),
            ("姓名=李雷", "姓名", "李雷"),
            (" Contact method =phone", "Contact method", "phone"),
        ])
    func splits(argument: String, name: String, value: String) throws {
        #expect(try FieldAssignment.parse(argument) == FieldAssignment(name: name, value: value))
    }

    @Test(
        "refuses malformed FIELD=VALUE with a message naming it",
        arguments: [
            ("name李雷", "'name李雷' is not FIELD=VALUE"),
            ("=李雷", "has no field name"),
            (" =李雷", "has no field name"),
        ])
    func refuses(argument: String, fragment: String) {
        #expect {
            try FieldAssignment.parse(argument)
        } throws: { error in
            (error as? UsageError)?.message.contains(fragment) == true
        }
    }

    @Test("collects fields and refuses a field given twice")
    func parseAll() throws {
        #expect(
            try FieldAssignment.parseAll(["name=李雷", "phone=", "city=广州"]) == ["name": "李雷", "phone": "", "city": "广州"])
        #expect { try FieldAssignment.parseAll(["name=a", "name=b"]) } throws: {
            ($0 as? UsageError)?.message == "field 'name' is given twice"
        }
    }

    static let options = [
        OptionSpec(["--limit"], value: "N", help: Localized(zh: "帮助", en: "help")),
        OptionSpec(["--all"], help: Localized(zh: "帮助", en: "help")),
        OptionSpec(["--help", "-h"], help: Localized(zh: "帮助", en: "help")),
        OptionSpec(["--search"], value: "Q", help: Localized(zh: "帮助", en: "help")),
    ]

    @Test("reads options in both spellings, anywhere among positionals")
    func scan() throws {
        let (s, consumed) = try ArgumentScanner.scan(
            ["name=李雷", "--limit", "5", "-h", "--search=a=b", "x", "--", "--all", "-"], options: Self.options)
        #expect(consumed == 9)
        #expect(s.value("--limit") == "5")
        #expect(s.value("--search") == "a=b")
        #expect(s.has("--help") && !s.has("--all"))
        #expect(s.positionals == ["name=李雷", "x", "--all", "-"])
    }

    @Test("a repeatable option keeps every value in order; others are still refused twice")
    func repeatable() throws {
        let options =
            Self.options + [
                OptionSpec(["--map"], value: "COLUMN=FIELD", help: Localized(zh: "帮助", en: "help"), repeatable: true)
            ]
        let (s, _) = try ArgumentScanner.scan(["--map", "电话=phone", "x", "--map=a=b"], options: options)
        #expect(s.values("--map") == ["电话=phone", "a=b"])
        #expect(s.values("--limit").isEmpty && s.positionals == ["x"])
        #expect {
            try ArgumentScanner.scan(["--map", "a=b", "--limit", "1", "--limit", "2"], options: options)
        } throws: { ($0 as? UsageError)?.message == "option '--limit' is given twice" }
    }

    @Test("a value may start with '-'")
    func dashValue() throws {
        let (s, _) = try ArgumentScanner.scan(["--search", "-x"], options: Self.options)
        #expect(s.value("--search") == "-x")
    }

    @Test("stops at the first positional for global options")
    func stops() throws {
        let (s, consumed) = try ArgumentScanner.scan(
            ["--all", "get", "--limit", "1"], options: Self.options, stopAtPositional: true)
        #expect(consumed == 1)
        #expect(s.has("--all") && s.positionals.isEmpty)
    }

    @Test(
        "refuses unknown options, missing values, values on flags and repeats",
        arguments: [
            (["--frob"], "unknown option '--frob'"),
            (["-x"], "unknown option '-x'"),
            (["--limit"], "option '--limit' needs a value (--limit N)"),
            (["--all=yes"], "option '--all' takes no value"),
            (["--limit", "1", "--limit=2"], "option '--limit' is given twice"),
            (["-h", "--help"], "option '--help' is given twice"),
        ])
    func scanErrors(arguments: [String], message: String) {
        #expect { try ArgumentScanner.scan(arguments, options: Self.options) } throws: {
            ($0 as? UsageError)?.message == message
        }
    }
}
