import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// RFC 4180 output (Client/CSVWriter.swift).
@Suite struct ClientCSVWriterTests {
    @Test(
        "quotes exactly the fields that need it",
        arguments: [
            ("plain", "plain"), ("", ""), ("李雷", "李雷"), (" spaced ", " spaced "),
            ("a,b", "\"a,b\""), ("say \"hi\"", "\"say \"\"hi\"\"\""), ("two\nlines", "\"two\nlines\""),
            ("cr\rhere", "\"cr\rhere\""), ("\"", "\"\"\"\""), ("+8613800138000", "+8613800138000"),
        ])
    func quoting(value: String, expected: String) {
        #expect(CSVWriter.field(value) == expected)
    }

    /// A quote followed by a combining mark is one Character but still two scalars to escape.
    @Test("doubles a quote that combines with the next scalar")
    func combiningQuote() {
        #expect(CSVWriter.field("a\"\u{301}b") == "\"a\"\"\u{301}b\"")
    }

    @Test("ends every record with CRLF, the last too")
    func records() {
        #expect(CSVWriter.record(["id", "name"]) == "id,name\r\n")
        let doc = CSVWriter.document(header: ["id", "name", "city"], rows: [["1", "李雷", "广州,天河"], ["2", "", ""]])
        #expect(doc == "id,name,city\r\n1,李雷,\"广州,天河\"\r\n2,,\r\n")
    }

    @Test(
        "a spreadsheet file neutralises formula starts (OWASP) and import reads the value back",
        arguments: [
            ("=HYPERLINK(\"http://evil\")", "'=HYPERLINK(\"http://evil\")"), ("+8613800138000", "'+8613800138000"),
            ("-1+2", "'-1+2"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"), ("\rx", "'\rx"),
            ("李雷", "李雷"), ("a=b", "a=b"), ("'quoted", "'quoted"), ("", ""),
        ])
    func spreadsheetSafe(value: String, written: String) throws {
        #expect(CSVWriter.spreadsheetSafe(value) == written)
        // Plain CSV is RFC 4180: written as stored.
        #expect(CSVWriter.record([value]) == CSVWriter.field(value) + "\r\n")
        let element = DataColumns.importElement([written], columns: [.field("name")], spreadsheetSafe: true)
        let read = element["fields"]?["name"]?.stringValue ?? ""
        #expect(read == value, "import of a spreadsheet file gives back what was stored")
        // A plain CSV (no BOM) is read as written: a stored `'=1+1` exported plainly comes back the same.
        let plain = DataColumns.importElement([written], columns: [.field("name")], spreadsheetSafe: false)
        #expect((plain["fields"]?["name"]?.stringValue ?? "") == written)
    }
}
