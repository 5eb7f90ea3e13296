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
        let rows = [
            ["id", "name", "note"], ["1", "李雷", "广州,天河"], ["2", "say \"hi\"", "two\r\nlines"], ["3", "", ""],
        ]
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
        #expect(throws: CSVError(line: 2, reason: "a quoted field is not closed before the end of the input")) {
            try reader.next()
        }
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

    // MARK: Encodings (issue 16)

    /// `姓名,生日\n韩梅梅,1990-05-17\n` as Excel in China saves it: GB18030 (姓 D0 D5, 名 C3 FB, 生 C9 FA, 日 C8 D5, 韩梅梅 BA AB C3 B7 C3 B7).
    static let gb18030CSV: [UInt8] =
        [
            0xD0, 0xD5, 0xC3, 0xFB, 0x2C, 0xC9, 0xFA, 0xC8, 0xD5, 0x0A,
            0xBA, 0xAB, 0xC3, 0xB7, 0xC3, 0xB7,
        ] + Array(",1990-05-17\n".utf8)

    func records(_ input: ByteInput) throws -> [[String]] {
        let reader = CSVReader(input)
        var out: [[String]] = []
        while let r = try reader.next() { out.append(r.fields) }
        return out
    }

    @Test("GB18030 (GBK) bytes that are not UTF-8 are detected and decoded: 韩梅梅, not U+FFFD")
    func gb18030() throws {
        let input = ByteInput(bytes: Self.gb18030CSV)
        #expect(try records(input) == [["姓名", "生日"], ["韩梅梅", "1990-05-17"]])
        #expect(input.encoding == .gb18030)
        // A character cut between two reads is decoded whole.
        let decoder = InputDecoder()
        var text: [UInt8] = []
        for k in stride(from: 0, to: Self.gb18030CSV.count, by: 3) {
            text += try decoder.decode(Array(Self.gb18030CSV[k..<min(k + 3, Self.gb18030CSV.count)]), final: false)
        }
        text += try decoder.decode([], final: true)
        #expect(String(decoding: text, as: UTF8.self) == "姓名,生日\n韩梅梅,1990-05-17\n")
        // ASCII first, GB18030 later: still decided at the first byte that is not ASCII.
        let late = InputDecoder()
        let ascii = try late.decode(Array("name,birthday\n".utf8), final: false)
        let rest = try late.decode([0xBA, 0xAB, 0xC3, 0xB7, 0xC3, 0xB7, 0x0A], final: true)
        #expect(late.encoding == .gb18030 && String(decoding: ascii + rest, as: UTF8.self) == "name,birthday\n韩梅梅\n")
    }

    @Test(
        "UTF-16 with a byte order mark, little- and big-endian, is decoded; UTF-8 with or without BOM is read as it is")
    func utf16() throws {
        let text = "姓名,生日\r\n韩梅梅,1990-05-17\r\n"
        let le: [UInt8] =
            [0xFF, 0xFE] + text.utf16.flatMap { unit -> [UInt8] in [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        let be: [UInt8] =
            [0xFE, 0xFF] + text.utf16.flatMap { unit -> [UInt8] in [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        for (bytes, encoding) in [(le, InputEncoding.utf16LE), (be, InputEncoding.utf16BE)] {
            let input = ByteInput(bytes: bytes)
            let start = try input.peekFirstLine()
            #expect(start.byteOrderMark && String(decoding: start.line, as: UTF8.self) == "姓名,生日")
            let reader = CSVReader(input)
            #expect(try reader.next()?.fields == ["姓名", "生日"])
            #expect(try reader.next()?.fields == ["韩梅梅", "1990-05-17"])
            #expect(try reader.next() == nil)
            #expect(input.encoding == encoding && reader.hadByteOrderMark)
        }
        for bytes in [Array(text.utf8), utf8ByteOrderMark + Array(text.utf8)] {
            let input = ByteInput(bytes: bytes)
            #expect(try records(input) == [["姓名", "生日"], ["韩梅梅", "1990-05-17"]] && input.encoding == .utf8)
        }
    }

    @Test(
        "UTF-16 without a byte order mark (Windows 'Unicode text') is told by its NUL bytes and decoded; other NUL bytes are refused"
    )
    func utf16WithoutBOM() throws {
        let text = "姓名,生日,手机号码\r\n韩梅梅,1990-05-17,13800138000\r\n李雷,1991-01-02,13800138001\r\n"
        let le = text.utf16.flatMap { unit -> [UInt8] in [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        let be = text.utf16.flatMap { unit -> [UInt8] in [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        for (bytes, encoding) in [(le, InputEncoding.utf16LE), (be, InputEncoding.utf16BE)] {
            let input = ByteInput(bytes: bytes)
            #expect(
                try records(input) == [
                    ["姓名", "生日", "手机号码"], ["韩梅梅", "1990-05-17", "13800138000"],
                    ["李雷", "1991-01-02", "13800138001"],
                ])
            #expect(input.encoding == encoding)
        }
        // Decoded chunk by chunk, a character split between reads included.
        let decoder = InputDecoder()
        let cut = 7
        let first = try decoder.decode(Array(le[..<cut]), final: false)
        let rest = try decoder.decode(Array(le[cut...]), final: true)
        #expect(decoder.encoding == .utf16LE && String(decoding: first + rest, as: UTF8.self) == text)
        // A lone surrogate later in it is refused where it is, never U+FFFD.
        #expect(throws: InputEncodingError(.invalid(.utf16LE), line: 3, byteOffset: 16)) {
            try records(
                ByteInput(
                    bytes: "a,b\n1,2\n".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } + [0x00, 0xD8, 0x62, 0x00])
            )
        }
        // NUL bytes that are not UTF-16's pattern: no text encoding read here.
        #expect(throws: InputEncodingError(.unknown, line: 2, byteOffset: 4)) {
            try records(ByteInput(bytes: Array("a,b\n".utf8) + [0x00, 0x31, 0x32, 0x00, 0x00, 0x0A]))
        }
        #expect(InputDecoder.utf16WithoutBOM(Array("name,birthday\n".utf8)[...]) == nil)
    }

    @Test(
        "Big5 read as GB18030 gives private-use characters: refused at their line and offset, naming Big5 and Shift-JIS"
    )
    func big5Refused() throws {
        // 陳美玲 in Big5 (Taiwan, Hong Kong): GB18030 decodes 陳 as 朝 and 美玲 as U+E117 U+E0DD.
        let big5: [UInt8] =
            Array("name,phone\n".utf8) + [0xB3, 0xAF, 0xAC, 0xFC, 0xAC, 0xC2] + Array(",0912345678\n".utf8)
        #expect(throws: InputEncodingError(.privateUse, line: 2, byteOffset: 13)) {
            try records(ByteInput(bytes: big5))
        }
        let message = InputEncodingError(.privateUse, line: 2, byteOffset: 13).message(file: "tw.csv", locale: .en)
        #expect(
            message.contains("Big5") && message.contains("Shift-JIS")
                && message.contains("iconv -f BIG5 -t UTF-8 tw.csv"), "\(message)")
        #expect(
            InputEncodingError(.privateUse, line: 2, byteOffset: 13).message(file: "tw.csv", locale: .zh).contains(
                "繁体中文"))
        // GB18030 text without private-use characters still reads; the scan finds U+E000 and U+F8FF, not U+F900.
        #expect(try records(ByteInput(bytes: Self.gb18030CSV)).count == 2)
        #expect(InputDecoder.firstPrivateUse(Array("a\u{E000}".utf8)[...]) == 1)
        #expect(InputDecoder.firstPrivateUse(Array("ab\u{F8FF}".utf8)[...]) == 2)
        #expect(InputDecoder.firstPrivateUse(Array("\u{F900}\u{FFFD}中".utf8)[...]) == nil)
    }

    @Test("bytes that are neither UTF-8 nor GB18030 are refused at their line and byte offset, never stored as U+FFFD")
    func invalidBytesRefused() throws {
        // 0xFF is neither UTF-8 nor GB18030.
        #expect(throws: InputEncodingError(.unknown, line: 3, byteOffset: 10)) {
            try records(ByteInput(bytes: Array("a,b\n1,2\n3,".utf8) + [0xFF, 0x0A]))
        }
        // Read as UTF-8 (a character that is UTF-8 came first), then GBK bytes: refused, not mangled.
        let decoder = InputDecoder()
        _ = try decoder.decode(Array("李雷\n".utf8), final: false)
        #expect(throws: InputEncodingError(.invalid(.utf8), line: 2, byteOffset: 8)) {
            try decoder.decode([0x31, 0xBA, 0xAB, 0x0A], final: true)
        }
        // The same in one read: a whole line of UTF-8 Chinese first means UTF-8, not GB18030 mojibake (鏉庨浄).
        #expect(throws: InputEncodingError(.invalid(.utf8), line: 3, byteOffset: 12)) {
            try records(ByteInput(bytes: Array("name\n李雷\n".utf8) + [0xBA, 0xAB, 0x0A]))
        }
        // A UTF-8 character cut off by the end of the input.
        #expect(throws: InputEncodingError(.invalid(.utf8), line: 1, byteOffset: 3)) {
            try records(ByteInput(bytes: Array("李雷".utf8).dropLast()))
        }
        // Surrogates and overlong forms are not UTF-8.
        #expect(InputDecoder.validateUTF8([0x61, 0xED, 0xA0, 0x80]).invalid == 1)
        #expect(InputDecoder.validateUTF8([0xC0, 0xAF]).invalid == 0)
        // UTF-16 with a lone surrogate.
        #expect(throws: InputEncodingError(.invalid(.utf16LE), line: 2, byteOffset: 6)) {
            try records(ByteInput(bytes: [0xFF, 0xFE, 0x61, 0x00, 0x0A, 0x00, 0x00, 0xD8, 0x62, 0x00]))
        }
    }

    @Test("JSON lines must be UTF-8: GB18030 is refused, not converted or mangled")
    func jsonLinesUTF8Only() throws {
        let input = ByteInput(
            bytes: Array("{\"fields\": {\"name\": \"".utf8) + [0xBA, 0xAB, 0xC3, 0xB7, 0xC3, 0xB7]
                + Array("\"}}\n".utf8))
        input.acceptsOnlyUTF8 = true
        let reader = LineReader(input)
        #expect(throws: InputEncodingError(.notUTF8(.gb18030), line: 1, byteOffset: 0)) { try reader.next() }
    }

    @Test(
        "a rejects report goes back in the input's encoding; the refusal names the problem and the iconv command, in zh and en"
    )
    func reportEncodingAndWords() {
        #expect(InputEncoding.gb18030.encode(Array("韩梅梅".utf8)) == [0xBA, 0xAB, 0xC3, 0xB7, 0xC3, 0xB7])
        #expect(InputEncoding.utf16LE.encode(utf8ByteOrderMark + Array("a".utf8)) == [0xFF, 0xFE, 0x61, 0x00])
        #expect(InputEncoding.utf8.encode(Array("李".utf8)) == Array("李".utf8))
        let error = InputEncodingError(.unknown, line: 3, byteOffset: 10)
        let en = error.message(file: "名单.csv", locale: .en)
        #expect(
            en.contains("line 3") && en.contains("byte offset 10") && en.contains("iconv -f GB18030 -t UTF-8 名单.csv"))
        let zh = error.message(file: "名单.csv", locale: .zh)
        #expect(zh.contains("第 3 行") && zh.contains("字节偏移 10") && zh.contains("iconv -f GB18030 -t UTF-8 名单.csv"))
        #expect(
            InputEncodingError(.notUTF8(.utf16LE), line: 1, byteOffset: 0).message(file: "-", locale: .en)
                .contains("iconv -f UTF-16LE -t UTF-8 FILE"))
    }

    static let fields = [
        DataColumns.FieldNames(name: "name", zh: "姓名", en: "Name"),
        DataColumns.FieldNames(name: "birthday", zh: "生日", en: "Birthday"),
    ]

    @Test("headers by name, zh or en label, meta columns in both locales; export headers read back")
    func headers() throws {
        let columns = try DataColumns.resolve(
            header: ["编号", "姓名", " Birthday ", "已删除", "版本", "display.name"], fields: Self.fields
        ).columns
        #expect(columns == [.id, .field("name"), .field("birthday"), .deleted, .ignored, .ignored])
        for labels in [false, true] {
            for locale in EntryLocale.allCases {
                let header = DataColumns.exportHeader(
                    fields: Self.fields, labels: labels, locale: locale, display: true)
                let back = try DataColumns.resolve(header: header, fields: Self.fields).columns
                #expect(
                    back.prefix(3) == [.id, .field("name"), .field("birthday")] && back[3] == .deleted, "\(header)")
            }
        }
        #expect(throws: DataColumns.HeaderError.self) {
            try DataColumns.resolve(header: ["name", "brithday"], fields: Self.fields)
        }
        #expect(throws: DataColumns.HeaderError.self) {
            try DataColumns.resolve(header: ["name", "姓名"], fields: Self.fields)
        }
    }

    @Test(
        "unknown columns: every one is named with a did-you-mean and the option to skip them, in the locale; skipped when asked"
    )
    func unknownColumns() throws {
        let header = ["name", "备注", "brithday", "Birthday"]
        #expect {
            try DataColumns.resolve(header: header, fields: Self.fields, locale: .en)
        } throws: { error in
            let message = (error as? DataColumns.HeaderError)?.message ?? ""
            return message.hasPrefix(
                "unknown columns '备注', 'brithday' (did you mean 'birthday'?): the columns are id, deleted and the fields name (姓名, Name)"
            )
                && message.hasSuffix("give --ignore-unknown-columns")
        }
        #expect {
            try DataColumns.resolve(header: header, fields: Self.fields, locale: .zh)
        } throws: { error in
            let message = (error as? DataColumns.HeaderError)?.message ?? ""
            return message.hasPrefix("未知的列 “备注”、“brithday”（是否指“birthday”？）")
                && message.contains("--ignore-unknown-columns")
        }
        let skipped = try DataColumns.resolve(header: header, fields: Self.fields, ignoreUnknown: true)
        #expect(skipped.columns == [.field("name"), .ignored, .ignored, .field("birthday")])
        #expect(skipped.unknown == ["备注", "brithday"])
        // Skipping unknown columns does not hide a header without any field.
        #expect(throws: DataColumns.HeaderError.self) {
            try DataColumns.resolve(header: ["备注"], fields: Self.fields, ignoreUnknown: true)
        }
    }

    @Test(
        "headers in Traditional characters or full-width letters find the label or alias they spell (國家, 聯繫方式, 手機號碼, ＮＡＭＥ)"
    )
    func traditionalHeaders() throws {
        let fields =
            Self.fields + [
                DataColumns.FieldNames(name: "country", zh: "国家", en: "Country"),
                DataColumns.FieldNames(name: "contact_method", zh: "联系方式", en: "Contact method"),
                DataColumns.FieldNames(name: "phone", zh: "手机号码", en: "Phone", aliases: ["电话", "手机"]),
            ]
        let mapped = try DataColumns.mapping(
            header: ["ＮＡＭＥ", "國家", "聯繫方式", "手機號碼", "備註"], fields: fields, map: [:],
            ignoreUnknown: true)
        #expect(
            mapped.columns == [.field("name"), .field("country"), .field("contact_method"), .field("phone"), .ignored])
        #expect(mapped.matches == [.label, .label, .label, .label, .unknown])
        // 電話 is an alias of phone, and phone is already mapped by 手機號碼: the second is refused as a repeat, not taken silently.
        #expect(throws: (any Error).self) {
            try DataColumns.mapping(header: ["手機號碼", "電話"], fields: fields, map: [:], ignoreUnknown: false)
        }
        #expect(
            try DataColumns.mapping(header: ["電話"], fields: fields, map: [:], ignoreUnknown: false).matches == [.alias])
        // Both columns in one sheet (电话 and 手机 are common together): the refusal says how to skip one, and that works.
        do {
            _ = try DataColumns.mapping(header: ["手機號碼", "電話"], fields: fields, map: [:], ignoreUnknown: false)
        } catch {
            #expect(error.message.contains("--map 電話=-"), "\(error.message)")
        }
        let map = try DataColumns.columnMap(["電話=-"], fields: fields)
        let skipped = try DataColumns.mapping(header: ["手機號碼", "電話"], fields: fields, map: map, ignoreUnknown: false)
        #expect(skipped.columns == [.field("phone"), .ignored] && skipped.matches == [.label, .map])
        #expect(skipped.lines(locale: .en)[1] == "  電話: not used (--map)")
    }

    @Test("--map and header aliases map columns; how each column was mapped is told in zh, en and JSON")
    func mappedColumns() throws {
        let fields =
            Self.fields + [
                DataColumns.FieldNames(name: "phone", zh: "手机号码", en: "Phone", aliases: ["电话", "手机", "mobile"])
            ]
        let map = try DataColumns.columnMap(["联系人=name", " 出生 = Birthday "], fields: fields)
        #expect(map == ["联系人": "name", "出生": "birthday"])
        let mapped = try DataColumns.mapping(
            header: ["联系人", "出生", "MOBILE", "编号", "版本", "备注"], fields: fields, map: map,
            ignoreUnknown: true)
        #expect(mapped.columns == [.field("name"), .field("birthday"), .field("phone"), .id, .ignored, .ignored])
        #expect(mapped.matches == [.map, .map, .alias, .label, .informational, .unknown])
        #expect(mapped.unknown == ["备注"])
        #expect(
            mapped.lines(locale: .en) == [
                "  联系人 → name (--map)", "  出生 → birthday (--map)", "  MOBILE → phone (header alias)",
                "  编号 → id (label)", "  版本: not used (informational column of an export)",
                "  备注: not used (no field of the form)",
            ])
        #expect(
            mapped.lines(locale: .zh)[2] == "  MOBILE → phone（表头别名）"
                && mapped.lines(locale: .zh)[5] == "  备注：未使用（不是表单的字段）")
        #expect(
            mapped.json.arrayValue?[2]
                == .object([("column", .string("MOBILE")), ("field", .string("phone")), ("by", .string("alias"))]))
        #expect(mapped.json.arrayValue?[5] == .object([("column", .string("备注")), ("by", .string("unknown"))]))
        // --map FIELD may be an alias; `add NAME=VALUE` takes names and labels only.
        #expect(DataColumns.fieldName(for: "手机", in: fields, aliases: true) == "phone")
        #expect(DataColumns.fieldName(for: "手机", in: fields) == nil)
        // --map wins over every other rule, and a column mapped onto a field that another column names is a repeat.
        #expect(
            try DataColumns.mapping(header: ["姓名", "x"], fields: fields, map: ["姓名": "phone", "x": "name"]).columns
                == [.field("phone"), .field("name")])
        #expect(throws: DataColumns.HeaderError.self) {
            try DataColumns.mapping(header: ["姓名", "x"], fields: fields, map: ["x": "name"])
        }
    }

    @Test("a bad --map is a usage error naming the column or field, with a did-you-mean, in zh and en")
    func badColumnMap() throws {
        func message(_ body: () throws -> Void) -> DataColumns.HeaderError? {
            do {
                try body()
                return nil
            } catch { return error as? DataColumns.HeaderError }
        }
        let field = message {
            _ = try DataColumns.columnMap(
                ["电话=phnoe"], fields: Self.fields + [.init(name: "phone", zh: "手机号码", en: "Phone")])
        }
        #expect(
            field?.usage == true
                && field?.message
                    == "--map 电话=phnoe: the form has no field 'phnoe' (did you mean 'phone'?); the fields are name, birthday, phone"
        )
        let zh = message {
            _ = try DataColumns.columnMap(
                ["电话=phnoe"], fields: Self.fields + [.init(name: "phone", zh: "手机号码", en: "Phone")], locale: .zh)
        }
        #expect(zh?.message.hasPrefix("--map 电话=phnoe：表单没有字段“phnoe”（是否指“phone”？）") == true)
        #expect(
            message { _ = try DataColumns.columnMap(["phone"], fields: Self.fields) }?.message
                == "--map 'phone' must be COLUMN=FIELD, e.g. --map 电话=phone")
        #expect(
            message { _ = try DataColumns.columnMap(["a=name", "a=birthday"], fields: Self.fields) }?.usage == true)
        let column = message {
            _ = try DataColumns.mapping(header: ["姓名", "电话号码"], fields: Self.fields, map: ["电话号吗": "name"])
        }
        #expect(column?.usage == true)
        #expect(
            column?.message == "--map column '电话号吗' is not in the header (did you mean '电话号码'?); the header is 姓名, 电话号码"
        )
    }

    @Test(
        "sniffing: '{' is JSON lines, '[' a JSON array, a header CSV; the separator is the header's most frequent of , ; tab outside quotes"
    )
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

    @Test(
        "export rows for people: picker values as labels, a label shared within one parent (or one that is another code) stays a code, deleted as 是/否 or Yes/No"
    )
    func labelledExportRows() {
        let options: [JSON] = [
            .object([("value", .string("110101")), ("label", .string("东城区"))]),
            .object([("value", .string("A")), ("label", .string("市辖区"))]),
            .object([("value", .string("B")), ("label", .string("市辖区"))]),
            .object([("value", .string("C")), ("label", .string("110101"))]),
        ]
        #expect(DataColumns.valueLabels(options: options) == ["110101": "东城区"])
        // A label shared by rows of different parents is kept (import reads a city within its
        // province); shared within one parent, it is a code.
        let cities: [JSON] = [
            ("110105", "110000", "Chaoyang"), ("211300", "210000", "Chaoyang"),
            ("X1", "990000", "Twin"), ("X2", "990000", "twin"),
        ].map { value, parent, label in
            .object([("value", .string(value)), ("label", .string(label)), ("parent", .string(parent))])
        }
        #expect(DataColumns.valueLabels(options: cities) == ["110105": "Chaoyang", "211300": "Chaoyang"])
        let fields = [
            DataColumns.FieldNames(name: "name", zh: "姓名", en: "Name", type: "text"),
            DataColumns.FieldNames(name: "city", zh: "城市", en: "City", type: "city"),
        ]
        let entry = JSON.object([
            ("id", .string("x")), ("fields", .stringMap(["name": "110101", "city": "110101"])),
            ("deleted", .bool(true)), ("version", .string("v")), ("updatedAt", .string("t")),
        ])
        let labels = ["city": DataColumns.valueLabels(options: options)]
        #expect(
            DataColumns.exportRow(entry, fields: fields, display: false, valueLabels: labels, locale: .zh)
                == ["x", "110101", "东城区", "是", "v", "t"])
        #expect(
            DataColumns.exportRow(entry, fields: fields, display: false, valueLabels: labels, locale: .en)[3] == "Yes")
        #expect(
            DataColumns.exportRow(entry, fields: fields, display: false) == ["x", "110101", "110101", "true", "v", "t"])
    }

    @Test("an import element leaves out empty cells and sends unreadable deleted flags as they are")
    func elements() {
        let columns: [DataColumns.Column] = [.id, .field("name"), .field("birthday"), .deleted]
        #expect(
            DataColumns.importElement(["", "李雷", "", "是"], columns: columns, spreadsheetSafe: false)
                == .object([("deleted", .bool(true)), ("fields", .object([("name", .string("李雷"))]))]))
        #expect(
            DataColumns.importElement(["x", "a", "b", "maybe"], columns: columns, spreadsheetSafe: false)["deleted"]
                == .string("maybe"))
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
        #expect(
            DataColumns.derivedID(form: "f", fields: [("ab", "c")])
                != DataColumns.derivedID(form: "f", fields: [("a", "bc")]))
    }
}
