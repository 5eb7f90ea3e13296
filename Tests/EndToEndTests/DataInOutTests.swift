import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer
import Foundation
import Testing

/// Issue 8 end to end: `entryctl export` and `import` against real daemons.
@Suite(.serialized) struct DataInOutTests {
    /// Runs the built entryctl against `d` with a longer timeout than the harness default.
    func entryctl(_ d: Daemon, _ arguments: [String], input: String? = nil, timeout: Double = 300) throws
        -> ProcessResult
    {
        try runProcess(
            productsDirectory() + "/entryctl", ["--socket", d.socket] + arguments, input: input, timeout: timeout)
    }

    /// (id, fields, deleted) of every line of a JSON-lines export, by id.
    func entries(jsonl text: String) throws -> [String: JSON] {
        var byID: [String: JSON] = [:]
        for line in text.split(separator: "\n") {
            let e = try JSON.parse(String(line))
            let id = try #require(e["id"]?.stringValue)
            byID[id] = .object([("fields", e["fields"] ?? .null), ("deleted", e["deleted"] ?? .null)])
        }
        return byID
    }

    @Test("round trip of 10,000 entries with Chinese names, every field type and some deleted")
    func roundTrip() throws {
        let source = try Daemon()
        let directory = source.directory
        let input = directory + "/generated.jsonl"
        try DataFixtures.jsonLines(count: 10_000).write(toFile: input, atomically: true, encoding: .utf8)

        let imported = try entryctl(source, ["--json", "import", input])
        try #require(imported.status == 0, "\(imported.stderr)")
        let counts = try JSON.parse(imported.stdout)
        #expect(counts["added"]?.intValue == 10_000)
        #expect(counts["rejected"]?.intValue == 0)
        let status = try source.connect().call("io.entryd.Sync.Status")
        #expect(status["entries"]?.intValue == 9_000)
        #expect(status["deleted"]?.intValue == 1_000)

        // Export JSON lines and CSV, import each into an empty daemon, export again.
        let exported = try entryctl(source, ["export", "--include-deleted", "-o", directory + "/a.jsonl"])
        try #require(exported.status == 0, "\(exported.stderr)")
        let original = try entries(jsonl: String(contentsOfFile: directory + "/a.jsonl", encoding: .utf8))
        #expect(original.count == 10_000)
        #expect(original.values.filter { $0["deleted"]?.boolValue == true }.count == 1_000)
        let csv = try entryctl(
            source,
            [
                "export", "--format", "csv", "--labels", "--excel", "--include-deleted",
                "-o", directory + "/a.csv",
            ])
        try #require(csv.status == 0, "\(csv.stderr)")
        let csvBytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/a.csv"))
        #expect(Array(csvBytes.prefix(3)) == [0xEF, 0xBB, 0xBF])

        for file in ["a.jsonl", "a.csv"] {
            let target = try Daemon()
            let again = try entryctl(target, ["--json", "import", directory + "/" + file])
            try #require(again.status == 0, "\(file): \(again.stderr)")
            #expect(try JSON.parse(again.stdout)["added"]?.intValue == 10_000, "\(file)")
            let back = try entryctl(target, ["export", "--include-deleted"])
            try #require(back.status == 0, "\(back.stderr)")
            let copy = try entries(jsonl: back.stdout)
            #expect(copy.count == original.count, "\(file)")
            #expect(copy == original, "\(file): ids, fields and deleted flags differ after the round trip")
            // Importing the export again changes nothing.
            let rerun = try entryctl(target, ["--json", "import", directory + "/" + file])
            #expect(rerun.status == 0)
            #expect(try JSON.parse(rerun.stdout)["unchanged"]?.intValue == 10_000, "\(file)")
            #expect(target.stop() == 0)
        }
        #expect(source.stop() == 0)
    }

    /// A spreadsheet export: BOM, Chinese label headers, lenient values; rows 4, 6 and 8 are bad.
    static let spreadsheet =
        "\u{FEFF}"
        + [
            "姓名,生日,国家,省份,城市,联系方式,手机号码,邮箱,预约时间",
            "王小明,1990年5月17日,中国,广东,广州,电话,138 0013 8000,,",
            "李华,1985/3/9,China,浙江省,杭州,邮箱,,LiHua@Example.COM,2036-12-01 09:30",
            "张伟,1990-02-30,中国,广东,深圳,电话,13800138001,,",
            "\"赵,敏\",19920102,CN,Guangdong,Shenzhen,phone,+86 139-0013-9000,,",
            "陈静,2001-07-08,亚特兰蒂斯,,,邮箱,,chen@example.cn,",
            "Jane Doe,1980-01-01,US,,,email,,jane@example.com,",
            "刘洋,1995-06-15,中国,广东,广州,电话,,,",
            "周杰,1979-01-18,日本,,,电话,+81 90 1234 5678,,",
        ].joined(separator: "\r\n") + "\r\n"

    @Test("export --excel runs no formula and keeps phones text; import of that file gives back the same entries")
    func excelIsSafe() throws {
        let d = try Daemon()
        let added = try entryctl(
            d,
            [
                "add", "name==HYPERLINK(\"http://evil\")", "birthday=1990-05-17", "country=CN", "province=北京",
                "city=朝阳区", "contact_method=phone", "phone=13800138000",
            ])
        #expect(added.status == 0, "\(added.stderr)")
        let file = d.directory + "/excel.csv"
        #expect(try entryctl(d, ["export", "--excel", "-o", file]).status == 0)
        let text = try String(contentsOfFile: file, encoding: .utf8)
        #expect(
            text.contains("\"'=HYPERLINK(\"\"http://evil\"\")\"") && text.contains(",'+86 138 0013 8000,"), "\(text)")
        #expect(!text.contains(",=") && !text.contains(",+86"), "no cell starts with a formula character: \(text)")
        let again = try entryctl(d, ["--json", "import", file])
        #expect(try JSON.parse(again.stdout)["unchanged"]?.intValue == 1, "\(again.stdout) \(again.stderr)")
        // A name that starts with ' itself survives a plain (RFC 4180, no BOM) export and import.
        #expect(
            try entryctl(
                d,
                [
                    "add", "name='=1+1", "birthday=1990-02-01", "country=US", "contact_method=email",
                    "email=q@example.com",
                ]
            ).status == 0)
        let plain = d.directory + "/plain.csv"
        #expect(try entryctl(d, ["export", "--format", "csv", "-o", plain]).status == 0)
        let back = try entryctl(d, ["--json", "import", plain])
        #expect(try JSON.parse(back.stdout)["unchanged"]?.intValue == 2, "\(back.stdout) \(back.stderr)")
    }

    @Test("export -o NAME.csv writes CSV and -o NAME.json a JSON array without --format, as import reads them back")
    func exportFormatFromFileName() throws {
        let d = try Daemon()
        let added = try entryctl(
            d, ["add", "name=李雷", "birthday=1990-05-17", "country=US", "contact_method=email", "email=a@b.cn"])
        #expect(added.status == 0, "\(added.stderr)")
        let csv = d.directory + "/名单.csv"
        let json = d.directory + "/all.json"
        #expect(try entryctl(d, ["export", "-o", csv]).status == 0)
        #expect(try String(contentsOfFile: csv, encoding: .utf8).hasPrefix("id,"))
        #expect(try entryctl(d, ["export", "-o", json]).status == 0)
        #expect(try JSON.parse(String(contentsOfFile: json, encoding: .utf8)).arrayValue?.count == 1)
        let again = try entryctl(d, ["--json", "import", csv])
        #expect(try JSON.parse(again.stdout)["unchanged"]?.intValue == 1, "\(again.stdout) \(again.stderr)")
    }

    @Test(
        "list --limit beyond max-page-size says that fewer came and how to get all (stderr), in the locale; a refused filter is named by its option"
    )
    func listLimitCapped() throws {
        let d = try Daemon()
        let rows = JSON.array(
            (0..<1001).map { i in
                .object([
                    (
                        "fields",
                        .stringMap([
                            "name": "n\(i)", "birthday": "1990-05-17", "country": "CN", "province": "440000",
                            "city": "440100",
                            "contact_method": "phone", "phone": "+8613800138000",
                        ])
                    )
                ])
            })
        let imported = try d.connect().call("io.entryd.Entries.Import", .object([("entries", rows)]))
        #expect(imported["added"]?.intValue == 1001)
        let capped = try entryctl(d, ["--locale", "en", "--json", "list", "--limit", "1500"])
        #expect(capped.status == 0, "\(capped.stderr)")
        #expect(try JSON.parse(capped.stdout)["entries"]?.arrayValue?.count == 1000)
        #expect(
            capped.stderr.contains("at most 1000 entries a page (max-page-size), fewer than --limit 1500: use --all"),
            "\(capped.stderr)")
        let zh = try entryctl(d, ["--locale", "zh", "--json", "list", "--limit", "1500"])
        #expect(zh.stderr.contains("每页最多返回 1000 条"), "\(zh.stderr)")
        // A refused filter is named by the option typed, not the wire member.
        let badDate = try entryctl(d, ["--locale", "en", "list", "--born-from", "yesterday"])
        #expect(badDate.status == 65)
        #expect(
            badDate.stderr.contains("  --born-from: [invalid-format] The --born-from filter 'yesterday'"),
            "\(badDate.stderr)")
        #expect(!badDate.stderr.contains("bornFrom"), "\(badDate.stderr)")
        let exportBad = try entryctl(d, ["export", "--born-to", "2020-13-01", "-o", d.directory + "/x.jsonl"])
        #expect(exportBad.status == 65 && exportBad.stderr.contains("--born-to:"), "\(exportBad.stderr)")
        let fits = try entryctl(d, ["--json", "list", "--limit", "10"])
        #expect(fits.stderr.isEmpty, "\(fits.stderr)")
        #expect(d.stop() == 0)
    }

    @Test(
        "a rejects report follows its input: no BOM and LF line ends in, none and LF out; the problems column in English under --locale en"
    )
    func rejectsFollowInput() throws {
        let d = try Daemon()
        let file = d.directory + "/plain.csv"
        let report = d.directory + "/rejected.csv"
        try
            "name,birthday,country,contact_method,phone\nAda,1985-12-10,GB,phone,+44 7400 123 456\nBob,1990-02-30,US,phone,+1 202 555 0100\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        let run = try entryctl(d, ["--locale", "en", "import", "--rejects", report, file])
        #expect(run.status == 65, "\(run.stderr)")
        let text = String(decoding: try #require(FileManager.default.contents(atPath: report)), as: UTF8.self)
        #expect(!text.hasPrefix("\u{FEFF}"))
        #expect(!text.contains("\r"))
        #expect(text.hasPrefix("name,birthday,country,contact_method,phone,problems\nBob,1990-02-30,"), "\(text)")
        #expect(d.stop() == 0)
    }

    @Test(
        "import rejects a row with the same problems as its --dry-run (a city not in the list too), in the chosen locale"
    )
    func importProblemsAsDryRun() throws {
        let d = try Daemon()
        let file = d.directory + "/two.csv"
        try "name,birthday,country,province,city,contact_method,phone\n刘芳,2000-02-30,中国,上海,上海,电话,021-6212 3456\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        let fields = { (text: String) in ["birthday", "city", "phone"].filter { text.contains($0 + ": ") } }
        let dry = try entryctl(d, ["--locale", "en", "import", "--dry-run", file])
        let real = try entryctl(d, ["--locale", "en", "import", file])
        #expect(dry.status == 65 && real.status == 65, "\(dry.stderr)\n\(real.stderr)")
        #expect(fields(dry.stderr) == ["birthday", "city", "phone"], "\(dry.stderr)")
        #expect(fields(real.stderr) == ["birthday", "city", "phone"], "\(real.stderr)")
        #expect(
            !real.stderr.unicodeScalars.contains {
                (0x4E00...0x9FFF).contains($0.value) && !"刘芳上海".unicodeScalars.contains($0)
            },
            "Chinese words in an en report: \(real.stderr)")
        let zh = try entryctl(d, ["--locale", "zh", "import", file])
        #expect(zh.stderr.contains("没有这一天"), "\(zh.stderr)")
        #expect(try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 0)
        #expect(d.stop() == 0)
    }

    @Test(
        "a GB18030 CSV (Excel in China) with a Chinese header is decoded: 韩梅梅 stored, not U+FFFD; its rejects report is GB18030; undecodable bytes and GBK JSON lines are refused, naming the offset and iconv"
    )
    func gb18030Import() throws {
        let d = try Daemon()
        let file = d.directory + "/名单.csv"
        let report = d.directory + "/rejected.csv"
        let text =
            "姓名,生日,国家,省份,城市,联系方式,手机号码\r\n韩梅梅,1990年5月17日,中国,广东,广州,电话,138 0013 8000\r\n"
            + "张伟,1990-02-30,中国,广东,深圳,电话,13800138001\r\n"
        let bytes = InputEncoding.gb18030.encode(Array(text.utf8))
        #expect(
            bytes.count < text.utf8.count
                && bytes.indices.contains { bytes[$0...].starts(with: [0xBA, 0xAB, 0xC3, 0xB7, 0xC3, 0xB7]) })
        try Data(bytes).write(to: URL(fileURLWithPath: file))

        let run = try entryctl(d, ["--json", "import", "--rejects", report, file])
        #expect(run.status == 65, "\(run.stderr)")
        #expect(try JSON.parse(run.stdout)["added"]?.intValue == 1, "\(run.stdout) \(run.stderr)")
        let list = try entryctl(d, ["list", "--all", "--format", "json"])
        let stored = try #require(try JSON.parse(list.stdout).arrayValue)
        #expect(stored.map { $0["fields"]?["name"]?.stringValue } == ["韩梅梅"], "\(list.stdout)")
        #expect(stored.first?["fields"]?["city"]?.stringValue == "440100")

        // The report is in the input's encoding (GB18030), its header and problems column in Chinese.
        let raw = try #require(FileManager.default.contents(atPath: report))
        #expect(String(validating: Array(raw), as: UTF8.self) == nil, "the report is GB18030, as its input")
        let reportInput = try ByteInput(path: report)
        let reader = CSVReader(reportInput)
        #expect(try reader.next()?.fields == ["姓名", "生日", "国家", "省份", "城市", "联系方式", "手机号码", "问题"])
        #expect(try reader.next()?.fields.first == "张伟")
        #expect(reportInput.encoding == .gb18030)

        // Bytes in no encoding read: refused at their line and offset with the iconv command; nothing stored.
        let bad = d.directory + "/bad.csv"
        try Data(Array("name,birthday\nAda,1985-12-10\n".utf8) + [0xFF, 0x0A]).write(to: URL(fileURLWithPath: bad))
        let refused = try entryctl(d, ["import", bad])
        #expect(refused.status == 65)
        #expect(
            refused.stderr.contains("第 3 行（字节偏移 29）") && refused.stderr.contains("iconv -f GB18030 -t UTF-8"),
            "\(refused.stderr)")
        let english = try entryctl(d, ["--locale", "en", "import", bad])
        #expect(
            english.stderr.contains("line 3 (byte offset 29)") && english.stderr.contains("iconv -f GB18030 -t UTF-8"),
            "\(english.stderr)")

        // UTF-8 Chinese first, GBK bytes later: read as UTF-8 (not GB18030 mojibake) and refused at the bad
        // line; they are in the first read (64 KiB), so nothing of the file is stored.
        let mixed = d.directory + "/mixed.csv"
        try Data(
            Array(
                "name,birthday,country,contact_method,phone\n李雷,1991-01-02,CN,phone,13800138002\nAda,1985-12-10,GB,phone,+44 7400 123 456\n"
                    .utf8)
                + [0xBA, 0xAB, 0xC3, 0xB7, 0xC3, 0xB7] + Array(",1990-05-17,CN,phone,13800138003\n".utf8)
        ).write(to: URL(fileURLWithPath: mixed))
        let partial = try entryctl(d, ["--locale", "en", "import", "--batch", "1", mixed])
        #expect(partial.status == 65)
        #expect(
            partial.stderr.contains("read as UTF-8") && partial.stderr.contains("line 4 (byte offset 123)")
                && !partial.stderr.contains("already stored"), "\(partial.stderr)")
        #expect(try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 1)

        // JSON lines in GBK: refused, not mangled.
        let jsonl = d.directory + "/gbk.jsonl"
        try Data(
            InputEncoding.gb18030.encode(Array("{\"fields\": {\"name\": \"李雷\", \"birthday\": \"1990-05-17\"}}\n".utf8))
        )
        .write(to: URL(fileURLWithPath: jsonl))
        let json = try entryctl(d, ["--locale", "en", "import", jsonl])
        #expect(json.status == 65 && json.stderr.contains("JSON must be UTF-8"), "\(json.stderr)")
        #expect(try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 1)
        #expect(d.stop() == 0)
    }

    @Test("CSV with a BOM, Chinese label headers, lenient values and three bad rows: report, exit 65, re-run unchanged")
    func spreadsheetImport() throws {
        let d = try Daemon()
        let file = d.directory + "/名单.csv"
        let report = d.directory + "/rejected.csv"
        try Self.spreadsheet.write(toFile: file, atomically: true, encoding: .utf8)

        let first = try entryctl(d, ["--json", "import", "--rejects", report, file])
        #expect(first.status == 65, "\(first.stderr)")
        let counts = try JSON.parse(first.stdout)
        #expect(counts["added"]?.intValue == 5)
        #expect(counts["rejected"]?.intValue == 3)
        #expect(first.stderr.contains("8 行中 3 行被拒绝"), "\(first.stderr)")

        // The good rows are stored, canonical.
        let list = try entryctl(d, ["list", "--all", "--format", "json"])
        let stored = try #require(try JSON.parse(list.stdout).arrayValue)
        let byName = Dictionary(
            uniqueKeysWithValues: stored.compactMap { e in e["fields"]?["name"]?.stringValue.map { ($0, e["fields"]!) }
            })
        #expect(Set(byName.keys) == ["王小明", "李华", "赵,敏", "Jane Doe", "周杰"])
        #expect(
            byName["王小明"]
                == .stringMap([
                    "name": "王小明", "birthday": "1990-05-17", "country": "CN", "province": "440000",
                    "city": "440100", "contact_method": "phone", "phone": "+8613800138000",
                ]))
        #expect(byName["李华"]?["email"]?.stringValue == "LiHua@example.com")
        #expect(byName["李华"]?["appointment"]?.stringValue == "2036-12-01 09:30")
        #expect(byName["赵,敏"]?["city"]?.stringValue == "440300")
        #expect(byName["周杰"]?["country"]?.stringValue == "JP")

        // The report: the input's BOM and CRLF line ends, the header with the problems column in the
        // locale (zh by default), then each bad row as it was, with its problems.
        let raw = try #require(FileManager.default.contents(atPath: report))
        #expect(raw.starts(with: [0xEF, 0xBB, 0xBF]), "the rejects report keeps the input's BOM")
        #expect(
            String(decoding: raw, as: UTF8.self).components(separatedBy: "\r\n").count == 5, "header and 3 rows, CRLF")
        let reader = CSVReader(try ByteInput(path: report))
        let header = try #require(try reader.next())
        #expect(header.fields.last == "问题")
        #expect(header.fields.dropLast() == ["姓名", "生日", "国家", "省份", "城市", "联系方式", "手机号码", "邮箱", "预约时间"])
        var rejected: [String: String] = [:]
        while let record = try reader.next() { rejected[record.fields[0]] = record.fields.last }
        #expect(Set(rejected.keys) == ["张伟", "陈静", "刘洋"])
        #expect(rejected["张伟"]?.contains("birthday") == true && rejected["张伟"]?.contains("invalid-format") == true)
        #expect(rejected["陈静"]?.contains("country") == true && rejected["陈静"]?.contains("not-in-list") == true)
        #expect(rejected["刘洋"]?.contains("phone") == true && rejected["刘洋"]?.contains("required") == true)

        // A second run: every good row unchanged, the bad ones rejected again.
        let second = try entryctl(d, ["--json", "import", "--rejects", report, file])
        #expect(second.status == 65)
        let again = try JSON.parse(second.stdout)
        #expect(again["added"]?.intValue == 0)
        #expect(again["unchanged"]?.intValue == 5)
        #expect(again["rejected"]?.intValue == 3)
        #expect(try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 5)

        // --dry-run finds the same three and stores nothing.
        let fresh = try Daemon()
        let dry = try entryctl(fresh, ["--json", "import", "--dry-run", file])
        #expect(dry.status == 65)
        #expect(try JSON.parse(dry.stdout)["valid"]?.intValue == 5)
        #expect(try fresh.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 0)
        #expect(fresh.stop() == 0)
        #expect(d.stop() == 0)
    }

    @Test("--atomic with one bad row stores nothing; without it the good rows are stored")
    func atomicImport() throws {
        let d = try Daemon()
        let file = d.directory + "/one-bad.jsonl"
        var lines = DataFixtures.jsonLines(count: 50).split(separator: "\n").map(String.init)
        lines[37] =
            #"{"fields":{"name":"坏行","birthday":"1990-13-01","country":"中国","province":"广东","city":"广州","contact_method":"phone","phone":"13800138000"}}"#
        try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)

        let atomic = try entryctl(d, ["import", "--atomic", file])
        #expect(atomic.status == 65)
        #expect(atomic.stdout.contains("未存储任何内容"), "\(atomic.stdout)")
        #expect(atomic.stderr.contains("第 38 行"), "\(atomic.stderr)")
        #expect(try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 0)
        #expect(try d.connect().call("io.entryd.Sync.Status")["seq"]?.intValue == 0)

        let plain = try entryctl(d, ["--json", "import", file])
        #expect(plain.status == 65)
        #expect(try JSON.parse(plain.stdout)["added"]?.intValue == 49)

        // More rows than max-batch: refused before anything is sent.
        let big = try Daemon(arguments: [])
        let many = d.directory + "/many.jsonl"
        try DataFixtures.jsonLines(count: 10_001).write(toFile: many, atomically: true, encoding: .utf8)
        let refused = try entryctl(big, ["import", "--atomic", many])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("max-batch"))
        #expect(try big.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 0)
        #expect(big.stop() == 0)
        #expect(d.stop() == 0)
    }

    @Test("a flat JSON object (no fields member) is refused saying what shape a row needs; the others are stored")
    func flatJSONObjectRefusedClearly() throws {
        let d = try Daemon()
        let file = d.directory + "/flat.json"
        let good =
            #"{"fields":{"name":"好行","birthday":"1990-01-02","country":"中国","province":"广东","city":"广州","contact_method":"phone","phone":"13800138000"}}"#
        let flat = #"{"name":"平","birthday":"1980-01-01","country":"CN","contact_method":"email","email":"a@b.cn"}"#
        try "[\(good),\(flat)]".write(toFile: file, atomically: true, encoding: .utf8)
        let r = try entryctl(d, ["--locale", "en", "import", file])
        #expect(r.status == 65)
        #expect(r.stderr.contains("no \"fields\" object"), "\(r.stderr)")
        #expect(!r.stderr.contains("[required]"), "\(r.stderr)")
        #expect(try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 1)
        #expect(d.stop() == 0)
    }

    @Test("usage: --labels and --excel need CSV; an unknown CSV column is named")
    func usageErrors() throws {
        let d = try Daemon()
        #expect(try entryctl(d, ["export", "--format", "jsonl", "--excel"]).status == 64)
        #expect(try entryctl(d, ["export", "--format", "json", "--codes"]).status == 64)
        #expect(try entryctl(d, ["import"]).status == 64)
        let file = d.directory + "/typo.csv"
        try "name,brithday\n李雷,1990-05-17\n".write(toFile: file, atomically: true, encoding: .utf8)
        let typo = try entryctl(d, ["--locale", "en", "import", file])
        #expect(typo.status == 65)
        #expect(typo.stderr.contains("unknown column 'brithday' (did you mean 'birthday'?)"), "\(typo.stderr)")

        // --new-ids: the daemon makes time-ordered ids, so a second run adds the rows again.
        let rows = d.directory + "/three.jsonl"
        try DataFixtures.jsonLines(count: 3).write(toFile: rows, atomically: true, encoding: .utf8)
        for _ in 0..<2 {
            let run = try entryctl(d, ["--json", "import", "--new-ids", rows])
            #expect(try JSON.parse(run.stdout)["added"]?.intValue == 3, "\(run.stderr)")
        }
        #expect(d.stop() == 0)
    }

    @Test(
        "CSV on standard input without FILE or --format is read as CSV (sniffed); ';' and tab separators; JSON lines still JSON lines"
    )
    func sniffedStandardInput() throws {
        let d = try Daemon()
        func count() throws -> Int64? { try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue }
        let comma = "name,birthday,country,contact_method,phone\nAda,1985-12-10,GB,phone,+44 7400 123 456\n"
        let a = try entryctl(d, ["--json", "import"], input: comma)
        #expect(a.status == 0, "\(a.stderr)")
        #expect(try JSON.parse(a.stdout)["added"]?.intValue == 1)
        // Excel where the comma is a decimal sign: BOM, ';', CRLF, a quoted ';' and a comma inside a value.
        let semicolon = "\u{FEFF}姓名;生日;国家;联系方式;邮箱\r\n\"Lovelace; A,B\";1985-12-11;GB;邮箱;ada@example.com\r\n"
        let b = try entryctl(d, ["--json", "import", "-"], input: semicolon)
        #expect(b.status == 0, "\(b.stderr)")
        #expect(try JSON.parse(b.stdout)["added"]?.intValue == 1)
        let tab = "name\tbirthday\tcountry\tcontact_method\temail\nBob\t1990-01-01\tUS\temail\tbob@example.com\n"
        let c = try entryctl(d, ["--json", "import"], input: tab)
        #expect(c.status == 0, "\(c.stderr)")
        let jsonl =
            #"{"fields":{"name":"Cy","birthday":"1990-01-02","country":"US","contact_method":"email","email":"c@example.com"}}"#
            + "\n"
        let e = try entryctl(d, ["--json", "import"], input: jsonl)
        #expect(e.status == 0, "\(e.stderr)")
        #expect(try count() == 4)
        let names = try entryctl(d, ["list", "--all", "--format", "json"])
        let stored = try #require(try JSON.parse(names.stdout).arrayValue).compactMap {
            $0["fields"]?["name"]?.stringValue
        }
        #expect(Set(stored) == ["Ada", "Lovelace; A,B", "Bob", "Cy"])
        // A file without a telling extension is sniffed too; its rejects report keeps the ';'.
        let file = d.directory + "/liste.txt"
        let report = d.directory + "/rejects.csv"
        try "name;birthday;country;contact_method;email\nDe;1990-02-30;US;email;d@example.com\n".write(
            toFile: file, atomically: true, encoding: .utf8)
        let f = try entryctl(d, ["--locale", "en", "import", "--rejects", report, file])
        #expect(f.status == 65, "\(f.stderr)")
        let text = try String(contentsOfFile: report, encoding: .utf8)
        #expect(text.hasPrefix("name;birthday;country;contact_method;email;problems\nDe;1990-02-30;"), "\(text)")
        // --format still overrides: CSV read as JSON lines is rejected line by line.
        let forced = try entryctl(d, ["--json", "import", "--format", "jsonl"], input: comma)
        #expect(forced.status == 65)
        #expect(try count() == 4)
        // Nothing on standard input and no FILE is a usage error.
        #expect(try entryctl(d, ["import"]).status == 64)
        #expect(d.stop() == 0)
    }

    @Test(
        "unknown columns refuse the file naming each with the option to skip them (zh and en); --ignore-unknown-columns skips them with a notice"
    )
    func unknownColumns() throws {
        let d = try Daemon()
        let file = d.directory + "/extra.csv"
        try "姓名,生日,国家,联系方式,邮箱,备注,Remark\n李雷,1990-05-17,日本,邮箱,li@example.com,老客户,vip\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        let en = try entryctl(d, ["--locale", "en", "import", file])
        #expect(en.status == 65)
        #expect(
            en.stderr.contains(
                "line 1: unknown columns '备注', 'Remark': the columns are id, deleted and the fields name (姓名, Name)"),
            "\(en.stderr)")
        #expect(en.stderr.contains("give --ignore-unknown-columns"), "\(en.stderr)")
        let zh = try entryctl(d, ["import", file])
        #expect(zh.status == 65)
        #expect(zh.stderr.contains("第 1 行：未知的列 “备注”、“Remark”"), "\(zh.stderr)")
        #expect(try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 0)
        let skipped = try entryctl(d, ["--locale", "en", "--json", "import", "--ignore-unknown-columns", file])
        #expect(skipped.status == 0, "\(skipped.stderr)")
        #expect(try JSON.parse(skipped.stdout)["added"]?.intValue == 1)
        #expect(
            skipped.stderr.contains("skipping unknown columns '备注', 'Remark' (--ignore-unknown-columns)"),
            "\(skipped.stderr)")
        let stored = try entryctl(d, ["list", "--format", "json"])
        #expect(
            try JSON.parse(stored.stdout).arrayValue?.first?["fields"]
                == .stringMap([
                    "name": "李雷", "birthday": "1990-05-17", "country": "JP", "contact_method": "email",
                    "email": "li@example.com",
                ]))
        #expect(try entryctl(d, ["import", "--ignore-unknown-columns", d.directory + "/x.jsonl"]).status == 64)
        #expect(d.stop() == 0)
    }

    @Test(
        "--map and the form's header aliases map a spreadsheet's columns; --dry-run shows how (zh, en, JSON); a bad --map is a usage error"
    )
    func mappedColumns() throws {
        let d = try Daemon()
        let file = d.directory + "/通讯录.csv"
        try "联系人,出生日期,国家,联系方式,电话,备注\n李雷,1990-05-17,日本,电话,+81 90-1234-5678,老客户\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        let zh = try entryctl(d, ["import", "--dry-run", "--map", "联系人=姓名", "--ignore-unknown-columns", file])
        #expect(zh.status == 0, "\(zh.stderr)")
        for line in [
            "列的对应：", "  联系人 → name（--map）", "  出生日期 → birthday（表头别名）", "  国家 → country（标签）",
            "  电话 → phone（表头别名）", "  备注：未使用（不是表单的字段）",
        ] {
            #expect(zh.stdout.contains(line + "\n"), "\(line) in \(zh.stdout)")
        }
        let en = try entryctl(
            d, ["--locale", "en", "import", "--dry-run", "--map=联系人=name", "--ignore-unknown-columns", file])
        #expect(
            en.stdout.contains("columns:\n  联系人 → name (--map)\n  出生日期 → birthday (header alias)\n"), "\(en.stdout)")
        let json = try JSON.parse(
            try entryctl(d, ["--json", "import", "--dry-run", "--map", "联系人=name", "--ignore-unknown-columns", file])
                .stdout)
        #expect(json["valid"]?.intValue == 1)
        #expect(
            json["columns"]?.arrayValue?.compactMap { $0["by"]?.stringValue } == [
                "map", "alias", "label", "label", "alias", "unknown",
            ])
        #expect(try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 0)

        // Without --map the column is unknown, and the refusal says how to map it.
        let refused = try entryctl(d, ["--locale", "en", "import", file])
        #expect(refused.status == 65 && refused.stderr.contains("give --map COLUMN=FIELD"), "\(refused.stderr)")
        // A --map naming no column of the header, or no field, is a usage error naming it.
        let column = try entryctl(d, ["--locale", "en", "import", "--map", "出生日其=birthday", file])
        #expect(
            column.status == 64
                && column.stderr.contains("--map column '出生日其' is not in the header (did you mean '出生日期'?)"),
            "\(column.stderr)")
        let field = try entryctl(d, ["import", "--map", "联系人=nmae", file])
        #expect(field.status == 64 && field.stderr.contains("表单没有字段“nmae”（是否指“name”？）"), "\(field.stderr)")
        #expect(try entryctl(d, ["import", "--map", "a=name", d.directory + "/x.jsonl"]).status == 64)

        let stored = try entryctl(d, ["--json", "import", "--map", "联系人=name", "--ignore-unknown-columns", file])
        #expect(try JSON.parse(stored.stdout)["added"]?.intValue == 1, "\(stored.stderr)")
        let list = try JSON.parse(try entryctl(d, ["list", "--format", "json"]).stdout)
        #expect(list.arrayValue?.first?["fields"]?["name"]?.stringValue == "李雷")
        #expect(list.arrayValue?.first?["fields"]?["phone"]?.stringValue == "+819012345678")
        #expect(d.stop() == 0)
    }

    @Test(
        "UTF-16 without a BOM is imported; bad bytes after earlier batches were stored say which rows are stored and where it stopped, and a re-run after fixing adds only the rest"
    )
    func encodingsLate() throws {
        let d = try Daemon()
        let utf16 = d.directory + "/unicode.csv"
        let text = "姓名,生日,国家,联系方式,邮箱\r\n韩梅梅,1990-05-17,日本,邮箱,han@example.com\r\n"
        try Data(text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }).write(to: URL(fileURLWithPath: utf16))
        let run = try entryctl(d, ["--json", "import", utf16])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try JSON.parse(run.stdout)["added"]?.intValue == 1, "\(run.stdout)")
        #expect(
            try JSON.parse(try entryctl(d, ["list", "--format", "json"]).stdout).arrayValue?.first?["fields"]?["name"]?
                .stringValue == "韩梅梅")

        // 3000 rows (over 64 KiB), then bytes that are not UTF-8 at the end.
        let big = d.directory + "/big.csv"
        var rows = "name,birthday,country,contact_method,email\n"
        for i in 0..<3000 { rows += "李雷\(i),1990-05-17,JP,email,li\(i)@example.com\n" }
        try Data(Array(rows.utf8) + [0xBA, 0xAB] + Array(",1990-05-17,JP,email,x@example.com\n".utf8)).write(
            to: URL(fileURLWithPath: big))
        let late = try entryctl(d, ["--locale", "en", "import", "--batch", "100", big])
        #expect(late.status == 65)
        #expect(late.stderr.contains("line 3002") && late.stderr.contains("not valid UTF-8"), "\(late.stderr)")
        let stop = try #require(
            late.stderr.firstMatch(
                of: /the rows up to line (\d+) were sent in earlier batches and are stored: added (\d+),/),
            "\(late.stderr)")
        let lastLine = try #require(Int(stop.1))
        let added = try #require(Int(stop.2))
        #expect(lastLine > 1 && lastLine < 3001 && added == lastLine - 1)
        #expect(late.stderr.contains("no row after line \(lastLine) was stored"), "\(late.stderr)")
        #expect(try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == Int64(1 + added))
        // Fixed, the whole file again: the stored rows are unchanged, the rest added.
        try rows.write(toFile: big, atomically: true, encoding: .utf8)
        let again = try JSON.parse(try entryctl(d, ["--json", "import", big]).stdout)
        #expect(again["unchanged"]?.intValue == Int64(added) && again["added"]?.intValue == Int64(3000 - added))
        #expect(d.stop() == 0)
    }

    @Test(
        "a spreadsheet export writes labels (中国, 北京市, 电话, 否; China, Phone, No in en) unless --codes, and imports back into an empty daemon as the same entries"
    )
    func spreadsheetExportWritesLabels() throws {
        let source = try Daemon()
        let c = try source.connect()
        let rows: [JSON] = [
            .object([
                (
                    "fields",
                    .stringMap([
                        "name": "李雷", "birthday": "1990-05-17", "country": "CN", "province": "110000",
                        "city": "110101", "contact_method": "phone", "phone": "+8613800138000",
                    ])
                )
            ]),
            .object([
                (
                    "fields",
                    .stringMap([
                        "name": "王芳", "birthday": "1985-03-09", "country": "CN", "province": "440000",
                        "city": "440100", "contact_method": "email", "email": "wf@example.com",
                        "appointment": "2036-12-01 09:30",
                    ])
                ), ("deleted", .bool(true)),
            ]),
            .object([
                (
                    "fields",
                    .stringMap([
                        "name": "Jane Doe", "birthday": "1980-01-01", "country": "US",
                        "contact_method": "email", "email": "jane@例子.中国",
                    ])
                )
            ]),
            // Chaoyang is also a city of Liaoning in English: a label within its province all the same.
            .object([
                (
                    "fields",
                    .stringMap([
                        "name": "韩梅梅", "birthday": "1991-02-03", "country": "CN", "province": "110000",
                        "city": "110105", "contact_method": "email", "email": "hmm@example.com",
                    ])
                )
            ]),
        ]
        #expect(try c.call("io.entryd.Entries.Import", .object([("entries", .array(rows))]))["added"]?.intValue == 4)
        let file = source.directory + "/名单.csv"
        // --excel alone implies CSV.
        let export = try entryctl(source, ["export", "--labels", "--excel", "--include-deleted", "-o", file])
        #expect(export.status == 0, "\(export.stderr)")
        let bytes = try #require(FileManager.default.contents(atPath: file))
        #expect(Array(bytes.prefix(3)) == [0xEF, 0xBB, 0xBF])
        let text = String(decoding: bytes.dropFirst(3), as: UTF8.self)
        #expect(text.hasPrefix("ID,姓名,生日,国家,省份,城市,联系方式,手机号码,邮箱,预约时间,已删除,"), "\(text)")
        #expect(text.contains(",李雷,1990-05-17,中国,北京市,东城区,电话,'+86 138 0013 8000,,,否,"), "\(text)")
        #expect(text.contains(",王芳,1985-03-09,中国,广东省,广州市,邮箱,,wf@example.com,2036-12-01 09:30,是,"), "\(text)")
        #expect(text.contains(",Jane Doe,1980-01-01,美国,,,邮箱,,jane@例子.中国,,否,"), "\(text)")
        let en = try entryctl(source, ["--locale", "en", "export", "--excel"])
        #expect(
            en.stdout.contains(",李雷,1990-05-17,China,Beijing,Dongcheng,Phone,'+86 138 0013 8000,,,No,"), "\(en.stdout)")
        #expect(
            en.stdout.contains(",韩梅梅,1991-02-03,China,Beijing,Chaoyang,Email,,hmm@example.com,,No,"), "\(en.stdout)")
        let codes = try entryctl(source, ["export", "--labels", "--excel", "--codes"])
        #expect(
            codes.stdout.contains(",李雷,1990-05-17,CN,110000,110101,phone,'+8613800138000,,,false,"), "\(codes.stdout)")
        let plain = try entryctl(source, ["export", "--format", "csv"])
        #expect(plain.stdout.contains(",CN,110000,110101,phone,"), "plain CSV keeps codes: \(plain.stdout)")

        // Round trip: import the label export into an empty daemon; the same entries (ids, values, deleted).
        let target = try Daemon()
        for locale in ["zh", "en"] {
            let labelled = target.directory + "/\(locale).csv"
            let made = try entryctl(
                source, ["--locale", locale, "export", "--labels", "--excel", "--include-deleted", "-o", labelled])
            #expect(made.status == 0, "\(made.stderr)")
            let imported = try entryctl(target, ["--json", "import", labelled])
            #expect(imported.status == 0, "\(locale): \(imported.stderr)")
            #expect(
                try JSON.parse(imported.stdout)[locale == "zh" ? "added" : "unchanged"]?.intValue == 4,
                "\(locale): \(imported.stdout)")
        }
        let original = try entries(jsonl: try entryctl(source, ["export", "--include-deleted"]).stdout)
        let copy = try entries(jsonl: try entryctl(target, ["export", "--include-deleted"]).stdout)
        #expect(original.count == 4)
        #expect(copy == original)
        #expect(target.stop() == 0)
        #expect(source.stop() == 0)
    }

    @Test("export -o writes devices in place and follows symbolic links; never replaces them")
    func exportToDeviceAndSymlink() throws {
        let d = try Daemon()
        #expect(
            try d.entryctl([
                "add", "name=李雷", "birthday=1990-05-17", "country=CN", "province=广东", "city=广州",
                "contact_method=phone", "phone=13800138000",
            ]).status == 0)
        let toNull = try d.entryctl(["export", "-o", "/dev/null"])
        #expect(toNull.status == 0, "\(toNull.stderr)")
        var st = stat()
        #expect(stat("/dev/null", &st) == 0 && st.st_mode & S_IFMT == S_IFCHR)
        let target = d.directory + "/target.jsonl"
        let link = d.directory + "/link.jsonl"
        try #require(FileManager.default.createFile(atPath: target, contents: Data()))
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(try d.entryctl(["export", "-o", link]).status == 0)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == target)
        #expect((try String(contentsOfFile: target, encoding: .utf8)).contains("李雷"))
        let missingDirectory = try d.entryctl(["export", "-o", d.directory + "/nowhere/x.jsonl"])
        #expect(missingDirectory.status != 0 && missingDirectory.stderr.contains("不存在"), "\(missingDirectory.stderr)")
        #expect(d.stop() == 0)
    }

    @Test("import of a file that cannot be read exits 66 and says why in the locale (文件不存在; No such file or directory)")
    func importUnreadableFile() throws {
        let d = try Daemon()
        let zh = try entryctl(d, ["import", d.directory + "/没有这个文件.csv"])
        #expect(zh.status == 66 && zh.stderr.contains("无法读取") && zh.stderr.contains("文件不存在"), "\(zh)")
        let en = try entryctl(d, ["--locale", "en", "import", d.directory])
        #expect(en.status == 66 && en.stderr.contains("cannot read"), "\(en)")
        #expect(try d.connect().call("io.entryd.Sync.Status")["entries"]?.intValue == 0)
        #expect(d.stop() == 0)
    }
}

/// Generated entries for the data tests.
enum DataFixtures {
    static let surnames = Array("王李张刘陈杨黄赵吴周徐孙马朱胡郭何林罗高")
    static let given = Array("伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉兰萍红鹏辉建国文斌宇浩凯晨瑞博雪梅琳雅欣怡")
    /// (province, city) as lenient input.
    static let regions = [
        ("广东", "广州"), ("广东省", "深圳"), ("浙江", "杭州市"), ("Jiangsu", "Nanjing"), ("四川", "成都"), ("440000", "440100"),
    ]
    static let foreign = ["US", "日本", "United Kingdom", "DEU", "法国"]

    /// `count` JSON lines without ids: unique Chinese names, every field type
    /// (text, date, datetime, country, province, city, choice, phone, email),
    /// lenient values, and every tenth row deleted.
    static func jsonLines(count: Int) -> String {
        var out = ""
        out.reserveCapacity(count * 260)
        for i in 0..<count {
            let name =
                String(surnames[i % surnames.count]) + String(given[(i / surnames.count) % given.count])
                + String(given[(i / (surnames.count * given.count)) % given.count]) + (i % 7 == 0 ? "·\(i)" : "")
            let day = 1 + i % 28
            let month = 1 + (i / 28) % 12
            let year = 1940 + i % 80
            var fields: [(String, JSON)] = [
                ("name", .string(i % 5 == 0 ? " \(name) " : name)),
                (
                    "birthday",
                    .string(
                        i % 2 == 0 ? String(format: "%04d-%02d-%02d", year, month, day) : "\(year)年\(month)月\(day)日")
                ),
            ]
            if i % 4 == 3 {
                fields.append(("country", .string(foreign[i % foreign.count])))
            } else {
                let (province, city) = regions[i % regions.count]
                fields += [
                    ("country", .string(i % 2 == 0 ? "中国" : "CN")), ("province", .string(province)),
                    ("city", .string(city)),
                ]
            }
            if i % 2 == 0 {
                fields += [
                    ("contact_method", .string(i % 4 == 0 ? "电话" : "phone")),
                    ("phone", .string(String(format: "+86 139 %04d %04d", i / 10_000, i % 10_000))),
                ]
            } else {
                fields += [("contact_method", .string("email")), ("email", .string("user\(i)@Example.COM"))]
            }
            if i % 3 == 0 {
                fields.append(
                    (
                        "appointment",
                        .string(
                            String(format: "2036-12-%02d %02d:%@", 1 + i % 28, 8 + i % 10, i % 2 == 0 ? "00" : "30"))
                    ))
            }
            var members: [(String, JSON)] = [("fields", .object(fields))]
            if i % 10 == 0 { members.append(("deleted", .bool(true))) }
            out += JSON.object(members).text + "\n"
        }
        return out
    }
}
