import Testing
import EntryArguments

/// The one command-line scanner (Sources/EntryArguments): what the four programs share.
@Suite struct ArgumentScannerTests {
    static let options = [
        ArgumentOption(["--limit"], value: "N"), ArgumentOption(["--all"]),
        ArgumentOption(["--help", "-h"]), ArgumentOption(["--country"], value: "CODE"),
        ArgumentOption(["--peer"], value: "NAME=ADDRESS", repeatable: true),
    ]

    /// The items `arguments` scan to, or the error.
    static func items(_ arguments: [String], positionals: Bool = true) -> Result<[ArgumentScanner.Item], ArgumentError>
    {
        var scanner = ArgumentScanner(arguments, options: options, positionals: positionals)
        var items: [ArgumentScanner.Item] = []
        do {
            while let item = try scanner.next() { items.append(item) }
            return .success(items)
        } catch {
            return .failure(error)
        }
    }

    @Test("--flag=value is --flag value, split at the first '='; an empty value is a value")
    func inlineValue() throws {
        let (s, consumed) = try ArgumentScanner.scan(
            ["--limit=5", "--country", "CN", "--peer=a=unix:/x", "--peer", "b=exec:ssh b"], options: Self.options)
        #expect(consumed == 6)
        #expect(s.value("--limit") == "5" && s.value("--country") == "CN")
        #expect(s.values("--peer") == ["a=unix:/x", "b=exec:ssh b"] && s.value("--peer") == "b=exec:ssh b")
        #expect(try ArgumentScanner.scan(["--limit="], options: Self.options).0.value("--limit") == "")
        #expect(
            Self.items(["--limit=-1", "--all"])
                == .success([.option(Self.options[0], value: "-1"), .option(Self.options[1], value: nil)]))
    }

    @Test("a missing value names the option and its synopsis, in both languages")
    func missingValue() {
        let error = ArgumentError(.missingValue("--limit", synopsis: "--limit N"))
        #expect(Self.items(["--all", "--limit"]) == .failure(error))
        #expect(error.en == "option '--limit' needs a value (--limit N)")
        #expect(error.zh == "选项 '--limit' 需要一个值（--limit N）")
        #expect(
            Self.items(["--limit", "--all"]) == .success([.option(Self.options[0], value: "--all")]),
            "a value may start with '-'")
    }

    @Test("an unknown option is refused with the nearest option, if one is near enough")
    func unknownOption() {
        let typo = Self.items(["--contry", "CN"])
        #expect(typo == .failure(ArgumentError(.unknownOption("--contry", suggestion: "--country"))))
        if case .failure(let error) = typo {
            #expect(error.en == "unknown option '--contry'; did you mean '--country'?")
            #expect(error.zh == "未知的选项 '--contry'；是否指 '--country'？")
        }
        #expect(
            Self.items(["--LIMIT=3"]) == .failure(ArgumentError(.unknownOption("--LIMIT", suggestion: "--limit"))),
            "case costs nothing")
        #expect(
            Self.items(["--límit"]) == .failure(ArgumentError(.unknownOption("--límit", suggestion: "--limit"))),
            "a non-ASCII letter is one edit")
        #expect(
            Self.items(["--frobnicate"]) == .failure(ArgumentError(.unknownOption("--frobnicate", suggestion: nil))))
        #expect(
            Self.items(["-x"]) == .failure(ArgumentError(.unknownOption("-x", suggestion: nil))), "too short to guess")
        #expect(ArgumentError(.unknownOption("--frob", suggestion: nil)).en == "unknown option '--frob'")
    }

    @Test("'--' ends the options and '-' is positional, where positionals are taken")
    func endOfOptions() throws {
        #expect(
            Self.items(["x", "--", "--all", "-", "--nope"])
                == .success([
                    .positional("x"), .endOfOptions, .positional("--all"), .positional("-"), .positional("--nope"),
                ]))
        let (s, consumed) = try ArgumentScanner.scan(["--all", "--", "--limit", "1"], options: Self.options)
        #expect(consumed == 4 && s.has("--all") && s.value("--limit") == nil && s.positionals == ["--limit", "1"])
        // Before a command: stop after '--', or before the first positional.
        #expect(
            try ArgumentScanner.scan(["--all", "--", "get"], options: Self.options, stopAtPositional: true).consumed
                == 2)
        #expect(
            try ArgumentScanner.scan(["--all", "get", "--limit"], options: Self.options, stopAtPositional: true)
                .consumed == 1)
    }

    @Test("where no positionals are taken, '--' and '-' are unknown options and any other argument is unexpected")
    func noPositionals() {
        #expect(
            Self.items(["--all", "--"], positionals: false)
                == .failure(ArgumentError(.unknownOption("--", suggestion: nil))))
        #expect(Self.items(["-"], positionals: false) == .failure(ArgumentError(.unknownOption("-", suggestion: nil))))
        let stray = ArgumentError(.unexpectedArgument("db.sqlite"))
        #expect(Self.items(["--limit", "1", "db.sqlite"], positionals: false) == .failure(stray))
        #expect(stray.en == "unexpected argument 'db.sqlite'" && stray.zh == "多余的参数“db.sqlite”")
    }

    @Test("a flag takes no value; an option is refused twice unless repeatable")
    func flagsAndRepeats() {
        #expect(Self.items(["--all=yes"]) == .failure(ArgumentError(.unexpectedValue("--all"))))
        #expect(ArgumentError(.unexpectedValue("--all")).en == "option '--all' takes no value")
        #expect(Self.items(["-h", "--help"]) == .failure(ArgumentError(.repeated("--help"))))
        #expect(ArgumentError(.repeated("--help")).zh == "选项 '--help' 给了两次")
        let peer = Self.options[4]
        #expect(
            Self.items(["--peer", "a=unix:/a", "--peer=b=unix:/b"])
                == .success([.option(peer, value: "a=unix:/a"), .option(peer, value: "b=unix:/b")]))
    }

    @Test("did you mean: one implementation, with the key of the caller")
    func nearest() {
        #expect(
            NearestName.nearest("--max_conections", among: ["--max-connections", "--max-batch"]) == "--max-connections")
        #expect(NearestName.nearest("lsit", among: ["list", "edit", "get"]) == "list", "a swap of two letters")
        #expect(NearestName.nearest("abcd", among: ["abce", "abcf"]) == nil, "two equally near")
        #expect(NearestName.distance(Array("kitten".unicodeScalars), Array("sitting".unicodeScalars), limit: 3) == 3)
        #expect(NearestName.distance(Array("kitten".unicodeScalars), Array("sitting".unicodeScalars), limit: 2) == nil)
        #expect(NearestName.nearest("ABC", among: ["abd"], key: { $0 }) == nil, "a key that keeps case")
    }
}
