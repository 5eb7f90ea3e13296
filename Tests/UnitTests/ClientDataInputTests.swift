import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// Streaming readers and CSV columns of import/export (Client/DataInput.swift, Client/DataColumns.swift).
@Suite struct ClientDataInputTests {
    func records(_ text: String) throws -> [[String]] {
        let reader = CSVReader(ByteInput(bytes: Array(text.utf8)))
        var out: [[String]] = []
        while let r = try reader.next() { out.append(r.fields) }
        return out
    }

    @Test("reads what CSVWriter writes, quoted fields with commas, quotes and line breaks included")
    func roundTripWithWriter() throws {
        let rows = [["id", "name", "note"], ["1", "李雷", "广州,天河"], ["2", "say \"hi\"", "two\r\nlines"], ["3", "", ""]]
        let doc = rows.map { CSVWriter.record($0) }.joined()
        #expect(try records(doc) == rows)
    }

    @Test("skips a BOM and blank lines, accepts LF and a last line without an end, keeps stray quotes")
    func lenientInput() throws {
        #expect(try records("\u{FEFF}a,b\n\n1,2\r\n3,x\"y") == [["a", "b"], ["1", "2"], ["3", "x\"y"]])
        #expect(try records("\"\",x\n") == [["", "x"]])
    }

    @Test("reports the line of a quoted field left open")
    func unclosedQuote() throws {
        let reader = CSVReader(ByteInput(bytes: Array("a,b\n1,\"open\nmore".utf8)))
        _ = try reader.next()
        #expect(throws: CSVError(line: 2, reason: "a quoted field is not closed before the end of the input")) { try reader.next() }
    }

    @Test("line numbers count the physical lines of multi-line records")
    func lineNumbers() throws {
        let reader = CSVReader(ByteInput(bytes: Array("h\n\"a\nb\"\nc\n".utf8)))
        #expect(try reader.next()?.line == 1)
        #expect(try reader.next()?.line == 2)
        #expect(try reader.next()?.line == 4)
    }

    @Test("line reader: BOM, CRLF, blank lines, numbering")
    func lines() throws {
        let reader = LineReader(ByteInput(bytes: Array("\u{FEFF}{\"a\":1}\r\n\n{\"b\":2}".utf8)))
        let first = try #require(try reader.next())
        #expect(String(decoding: first.bytes, as: UTF8.self) == "{\"a\":1}" && first.line == 1)
        let second = try #require(try reader.next())
        #expect(String(decoding: second.bytes, as: UTF8.self) == "{\"b\":2}" && second.line == 3)
        #expect(try reader.next() == nil)
    }

    static let fields = [
        DataColumns.FieldNames(name: "name", zh: "姓名", en: "Name"),
        DataColumns.FieldNames(name: "birthday", zh: "生日", en: "Birthday"),
    ]

    @Test("headers by name, zh or en label, meta columns in both locales; export headers read back")
    func headers() throws {
        let columns = try DataColumns.resolve(header: ["编号", "姓名", " Birthday ", "已删除", "版本", "display.name"], fields: Self.fields).columns
        #expect(columns == [.id, .field("name"), .field("birthday"), .deleted, .ignored, .ignored])
        for labels in [false, true] {
            for locale in EntryLocale.allCases {
                let header = DataColumns.exportHeader(fields: Self.fields, labels: labels, locale: locale, display: true)
                let back = try DataColumns.resolve(header: header, fields: Self.fields).columns
                #expect(back.prefix(3) == [.id, .field("name"), .field("birthday")] && back[3] == .deleted, "\(header)")
            }
        }
        #expect(throws: DataColumns.HeaderError.self) { try DataColumns.resolve(header: ["name", "brithday"], fields: Self.fields) }
        #expect(throws: DataColumns.HeaderError.self) { try DataColumns.resolve(header: ["name", "姓名"], fields: Self.fields) }
    }

    @Test("unknown columns: every one is named with a did-you-mean and the option to skip them, in the locale; skipped when asked")
    func unknownColumns() throws {
        let header = ["name", "备注", "brithday", "Birthday"]
        #expect {
            try DataColumns.resolve(header: header, fields: Self.fields, locale: .en)
        } throws: { error in
            let message = (error as? DataColumns.HeaderError)?.message ?? ""
            return message.hasPrefix("unknown columns '备注', 'brithday' (did you mean 'birthday'?): the columns are id, deleted and the fields name (姓名, Name)")
                && message.hasSuffix("give --ignore-unknown-columns")
        }
        #expect {
            try DataColumns.resolve(header: header, fields: Self.fields, locale: .zh)
        } throws: { error in
            let message = (error as? DataColumns.HeaderError)?.message ?? ""
            return message.hasPrefix("未知的列 “备注”、“brithday”（是否指“birthday”？）") && message.contains("--ignore-unknown-columns")
        }
        let skipped = try DataColumns.resolve(header: header, fields: Self.fields, ignoreUnknown: true)
        #expect(skipped.columns == [.field("name"), .ignored, .ignored, .field("birthday")])
        #expect(skipped.unknown == ["备注", "brithday"])
        // Skipping unknown columns does not hide a header without any field.
        #expect(throws: DataColumns.HeaderError.self) { try DataColumns.resolve(header: ["备注"], fields: Self.fields, ignoreUnknown: true) }
    }

    @Test("sniffing: '{' is JSON lines, '[' a JSON array, a header CSV; the separator is the header's most frequent of , ; tab outside quotes")
    func sniffing() throws {
        #expect(InputSniffer.format(firstLine: Array("  {\"fields\":{}}".utf8)) == .jsonLines)
        #expect(InputSniffer.format(firstLine: Array("[{}]".utf8)) == .jsonArray)
        #expect(InputSniffer.format(firstLine: Array("姓名,生日".utf8)) == .csv)
        #expect(InputSniffer.format(firstLine: []) == .jsonLines)
        #expect(InputSniffer.separator(header: Array("name;birthday;country".utf8)) == UInt8(ascii: ";"))
        #expect(InputSniffer.separator(header: Array("\"a;b;c\",name,x".utf8)) == UInt8(ascii: ","))
        #expect(InputSniffer.separator(header: Array("name\tbirthday\tcity".utf8)) == 0x09)
        #expect(InputSniffer.separator(header: Array("name".utf8)) == UInt8(ascii: ","))
    }

    @Test("peeking at the first line consumes nothing: a BOM is reported, blank lines skipped, quoted line ends kept")
    func peek() throws {
        let text = "\u{FEFF}\r\n\"a\nb\";c;d\r\n1;2;3\r\n"
        let input = ByteInput(bytes: Array(text.utf8))
        let start = try input.peekFirstLine()
        #expect(start.byteOrderMark)
        #expect(String(decoding: start.line, as: UTF8.self) == "\"a\nb\";c;d")
        let reader = CSVReader(input, separator: InputSniffer.separator(header: start.line))
        #expect(try reader.next()?.fields == ["a\nb", "c", "d"])
        #expect(try reader.next()?.fields == ["1", "2", "3"])
        #expect(try reader.next() == nil)
        // What CSVWriter writes with a separator reads back with it.
        let rows = [["a;b", "c"], ["x\ty", "\"q\""]]
        for separator: Unicode.Scalar in [";", "\t"] {
            let doc = rows.map { CSVWriter.record($0, separator: separator) }.joined()
            let back = CSVReader(ByteInput(bytes: Array(doc.utf8)), separator: UInt8(separator.value))
            #expect(try back.next()?.fields == rows[0])
            #expect(try back.next()?.fields == rows[1])
        }
    }

    @Test("export rows for people: picker values as labels, a shared label (or one that is another code) stays a code, deleted as 是/否 or Yes/No")
    func labelledExportRows() {
        let options: [JSON] = [
            .object([("value", .string("110101")), ("label", .string("东城区"))]),
            .object([("value", .string("A")), ("label", .string("市辖区"))]),
            .object([("value", .string("B")), ("label", .string("市辖区"))]),
            .object([("value", .string("C")), ("label", .string("110101"))]),
        ]
        #expect(DataColumns.valueLabels(options: options) == ["110101": "东城区"])
        let fields = [DataColumns.FieldNames(name: "name", zh: "姓名", en: "Name", type: "text"),
                      DataColumns.FieldNames(name: "city", zh: "城市", en: "City", type: "city")]
        let entry = JSON.object([("id", .string("x")), ("fields", .stringMap(["name": "110101", "city": "110101"])),
                                 ("deleted", .bool(true)), ("version", .string("v")), ("updatedAt", .string("t"))])
        let labels = ["city": DataColumns.valueLabels(options: options)]
        #expect(DataColumns.exportRow(entry, fields: fields, display: false, valueLabels: labels, locale: .zh)
                == ["x", "110101", "东城区", "是", "v", "t"])
        #expect(DataColumns.exportRow(entry, fields: fields, display: false, valueLabels: labels, locale: .en)[3] == "Yes")
        #expect(DataColumns.exportRow(entry, fields: fields, display: false) == ["x", "110101", "110101", "true", "v", "t"])
    }

    @Test("an import element leaves out empty cells and sends unreadable deleted flags as they are")
    func elements() {
        let columns: [DataColumns.Column] = [.id, .field("name"), .field("birthday"), .deleted]
        #expect(DataColumns.importElement(["", "李雷", "", "是"], columns: columns)
                == .object([("deleted", .bool(true)), ("fields", .object([("name", .string("李雷"))]))]))
        #expect(DataColumns.importElement(["x", "a", "b", "maybe"], columns: columns)["deleted"] == .string("maybe"))
    }

    @Test("derived ids are stable UUIDv8s that depend on form and values, not on field order")
    func derivedIDs() {
        let a = DataColumns.derivedID(form: "registration", fields: [("name", "李雷"), ("birthday", "1990-05-17")])
        let b = DataColumns.derivedID(form: "registration", fields: [("birthday", "1990-05-17"), ("name", "李雷")])
        #expect(a == b)
        #expect(UUIDv7.canonical(a) == a && Array(a)[14] == "8")
        #expect(a != DataColumns.derivedID(form: "other", fields: [("name", "李雷"), ("birthday", "1990-05-17")]))
        #expect(a != DataColumns.derivedID(form: "registration", fields: [("name", "李雷"), ("birthday", "1990-05-18")]))
        // Cells are delimited: moving a character between name and value changes the id.
        #expect(DataColumns.derivedID(form: "f", fields: [("ab", "c")]) != DataColumns.derivedID(form: "f", fields: [("a", "bc")]))
    }
}
