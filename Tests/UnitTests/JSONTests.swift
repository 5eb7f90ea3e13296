import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// The wire JSON parser and writer (Protocol/JSON.swift).
@Suite struct JSONTests {
    @Test("round-trips nested values and keeps member order")
    func roundTrip() throws {
        let text = #"{"b":[1,-2,3.5,true,false,null],"a":{"s":"中国\n\"x\"","e":""}}"#
        let v = try JSON.parse(text)
        #expect(v.text == text)
        #expect(v["a"]?["s"]?.stringValue == "中国\n\"x\"")
        #expect(v["b"]?.arrayValue?.count == 6)
    }

    @Test("decodes escapes and surrogate pairs")
    func escapes() throws {
        let v = try JSON.parse(#""\u00e9\ud83c\udde8\u0041\/""#)
        #expect(v.stringValue == "é🇨A/")
    }

    @Test(
        "refuses malformed input with the offset",
        arguments: [
            ("{\"a\":1,}", "expected a member name"),
            ("[1 2]", "expected ',' or ']'"),
            ("{\"a\":1,\"a\":2}", "duplicate member name"),
            ("\"\\ud800\"", "unpaired surrogate in string"),
            ("01", "unexpected bytes after the value"),
            ("\"a\u{01}\"", "control character in string"),
            ("{} x", "unexpected bytes after the value"),
        ])
    func refusesMalformed(input: String, reason: String) {
        #expect(throws: JSONParseError.self) { try JSON.parse(input) }
        do { _ = try JSON.parse(input) } catch { #expect(error.reason == reason) }
    }

    @Test(
        "finds a duplicate member name in objects of any size (linear check, then a set)",
        arguments: [2, 15, 16, 17, 40])
    func duplicateInAnySizeObject(members: Int) throws {
        let names = (0..<members).map { "k\($0)" }
        let unique = "{" + names.map { "\"\($0)\":1" }.joined(separator: ",") + "}"
        #expect(try JSON.parse(unique).objectValue?.map(\.0) == names)
        for repeated in [names[0], names[members - 1], names[members / 2]] {
            let text = "{" + (names + [repeated]).map { "\"\($0)\":1" }.joined(separator: ",") + "}"
            do {
                _ = try JSON.parse(text)
                Issue.record("accepted a repeated \(repeated)")
            } catch {
                #expect(error.reason == "duplicate member name")
            }
        }
    }

    @Test("writes strings with and without escapes, ASCII and not, whole")
    func writesStrings() {
        for s in ["", "plain", "用户12", "a\"b", "back\\slash", "tab\there", "🇨🇳 中国", String(repeating: "x", count: 300)] {
            #expect((try? JSON.parse(JSON.string(s).text)) == .string(s), "\(s)")
        }
        #expect(
            JSON.object([("t", .bool(true)), ("f", .bool(false)), ("n", .null), ("i", .int(-42))]).text
                == #"{"t":true,"f":false,"n":null,"i":-42}"#)
    }

    @Test("refuses invalid UTF-8 and overlong encodings")
    func invalidUTF8() {
        for bytes: [UInt8] in [
            [0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xE4, 0xB8, 0x22],
        ] {
            #expect(throws: JSONParseError.self) { try JSON.parse(bytes) }
        }
    }

    @Test("bounds nesting depth")
    func depth() throws {
        let ok = String(repeating: "[", count: JSON.maxDepth) + String(repeating: "]", count: JSON.maxDepth)
        _ = try JSON.parse(ok)
        let deep = String(repeating: "[", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSON.parse(deep) }
    }

    @Test("keeps big integers exact and escapes control characters on write")
    func numbersAndEscapes() throws {
        #expect(try JSON.parse("9007199254740993") == .int(9_007_199_254_740_993))
        #expect(try JSON.parse("18446744073709551616") == .double(18_446_744_073_709_551_616))
        // Beyond Double: infinity, which no parameter takes (InvalidParameter, connection kept).
        #expect(try JSON.parse("1e999") == .double(.infinity))
        #expect(try JSON.parse("[-1e999]").isFinite == false)
        #expect(Parameters(try JSON.parse("{\"limit\":1e309}")).json["limit"]?.intValue == nil)
        #expect(JSON.string("a\u{0}b\u{1F}").text == #""a\u0000b\u001f""#)
    }
}
