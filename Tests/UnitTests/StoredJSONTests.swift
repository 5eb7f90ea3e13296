import Foundation
import Testing
@testable import EntryLedger
@testable import EntryModel

/// The stored JSON objects of strings read without a JSON tree
/// (``EntryStore/flatStringMap(_:)``), and HLCs read from their bytes: both
/// give what the general readers give.
@Suite struct StoredJSONTests {
    /// What ``EntryStore/stringMap(_:)`` gave before its shortcut: the JSON parser's object, strings only.
    func parsed(_ text: String) -> [String: String]? {
        guard let members = (try? JSON.parse(text))?.objectValue else { return nil }
        var map: [String: String] = [:]
        for (k, v) in members { if let s = v.stringValue { map[k] = s } }
        return map
    }

    @Test("a flat object of strings is read as the JSON parser reads it; anything else is left to the parser")
    func flatStringMaps() throws {
        let texts = [
            "{}", " { } ", #"{"name":"用户1","phone":"+8613800000001"}"#, #"{"a":""}"#,
            #"{ "a" : "1" , "b":"2" }"#, "{\"a\":\"x\u{7F}y\"}", #"{"a":"x\"y"}"#, #"{"a":"\u00e9"}"#,
            #"{"a":1}"#, #"{"a":null,"b":"c"}"#, #"{"a":"1","a":"2"}"#, #"{"a":"1"} x"#, #"{"a":"1""#, "",
            #"["a"]"#, #"{"a":{"b":"c"}}"#, "{\"a\":\"x\ny\"}", #"{"a":"1",}"#,
            JSON.stringMap(["k": "v\\w", "é": "ü"]).text,
        ]
        for text in texts {
            let fast = EntryStore.flatStringMap(text)
            if let fast { #expect(fast == parsed(text), "\(text)") }
            #expect((try? EntryStore.stringMap(text)) == parsed(text), "\(text)")
        }
        #expect(EntryStore.flatStringMap(#"{"name":"用户1","b":""}"#) == ["name": "用户1", "b": ""])
        #expect(EntryStore.flatStringMap(#"{"a":"x\"y"}"#) == nil)
        #expect(throws: SQLiteError.self) { try EntryStore.stringMap(#"{"a":"1","a":"2"}"#) }
    }

    @Test("an HLC is 16 hex digits, either case")
    func hlcText() {
        #expect(HLC("0000000000000001") == HLC(rawValue: 1))
        #expect(HLC("018cAbCdEf012345") == HLC(rawValue: 0x018c_abcd_ef01_2345))
        #expect(HLC(HLC(rawValue: 0xffff_ffff_ffff_ffff).description) == HLC(rawValue: 0xffff_ffff_ffff_ffff))
        for bad in ["", "123", "018cabcdef01234g", "+18cabcdef012345", "018cabcdef0123456", "018cabcdef01234５"] {
            #expect(HLC(bad) == nil, "\(bad)")
        }
    }
}
