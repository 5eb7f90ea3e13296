import EntryModel
import EntryProtocol
import EntryLedger
import Foundation

/// Find a person by what you know (issue 33 item 3): `List` with
/// `Filter.search` by a Traditional name, a Simplified name, its pinyin, and a
/// phone number in national and international format, one call at a time,
/// 50 per page, with the total. Target: p99 < 20 ms at 1,000,000 entries.
enum SearchPhase {
    /// The target p99 of a search, in milliseconds.
    static let targetMs = 20.0

    /// The kinds of search text measured, each with how to write it for entry `n` of `fields`.
    static func queries(_ fields: [String: String]) -> [(what: String, text: String)] {
        let name = fields["name"] ?? ""
        var out: [(String, String)] = [
            ("Traditional name", traditional(name)), ("Simplified name", name),
            ("pinyin", pinyin(name)),
        ]
        if let phone = fields["phone"], let national = PhoneNumber.format(phone, national: true),
            let international = PhoneNumber.format(phone)
        {
            out.append(("phone, national (\(national))", national))
            out.append(("phone, international", international))
        }
        return out.map { (what: $0.0, text: $0.1) }
    }

    /// Simplified characters of the fixtures written in Traditional ones (the search folds them back).
    static let toTraditional: [Character: Character] = [
        "户": "戶", "张": "張", "陈": "陳", "黄": "黃", "孙": "孫", "罗": "羅", "刘": "劉", "志": "誌", "华": "華",
        "伟": "偉", "丽": "麗", "军": "軍", "强": "強", "杰": "傑", "涛": "濤", "兰": "蘭", "刚": "剛", "辉": "輝",
        "鹏": "鵬", "飞": "飛", "红": "紅", "国": "國", "云": "雲", "龙": "龍", "静": "靜", "艳": "艷",
        "娟": "娟", "马": "馬", "赵": "趙", "吴": "吳", "杨": "楊", "郭": "郭",
    ]

    /// `name` with the characters of ``toTraditional`` in Traditional form.
    static func traditional(_ name: String) -> String { String(name.map { toTraditional[$0] ?? $0 }) }

    /// The toneless pinyin of `name` without spaces, as a person types it (`huangzhiming`).
    static func pinyin(_ name: String) -> String {
        SearchKeys.nameKeys(name).filter { $0.allSatisfy(\.isASCII) }.max { $0.count < $1.count }.map {
            String($0.dropFirst(2))
        } ?? name
    }

    /// Runs `perKind` searches of each kind for entries among `numbers` (of `fields`),
    /// one call at a time, on `socket`; each must find its entry (a page and a total ≥ 1).
    /// - Returns: a row per kind, with p50 / p99 and the target.
    static func run(
        socket: String, numbers: Range<Int>, fields: (Int) -> [String: String], perKind: Int, entries: Int
    ) throws -> [ReportRow] {
        let client = try RawClient(path: socket)
        var rng = SplitMix64(seed: 33)
        var latencies: [String: Latencies] = [:]
        var order: [String] = []
        var matched: [String: Int] = [:]
        for _ in 0..<perKind {
            var n: Int
            var f: [String: String]
            repeat {
                n = numbers.lowerBound + Int(rng.next() % UInt64(numbers.count))
                f = fields(n)
            } while f["phone"] == nil
            for (what, text) in queries(f) {
                let kind = what.hasPrefix("phone, national") ? "phone, national" : what
                if latencies[kind] == nil {
                    order.append(kind)
                    latencies[kind] = Latencies()
                }
                let call = VarlinkCall(
                    .entriesList,
                    parameters: .object([("filter", .object([("search", .string(text))])), ("limit", .int(50))])
                ).encoded
                let t = now()
                try client.send(call)
                let reply = try client.receive()
                latencies[kind]!.add(now() - t)
                let total = Scan.int(after: "\"total\":", in: reply) ?? 0
                if RawClient.isError(reply) || total < 1 {
                    throw BenchFailure(
                        "search '\(text)' (\(what)) found nothing: \(String(decoding: reply.prefix(300), as: UTF8.self))"
                    )
                }
                matched[kind, default: 0] += Int(total)
            }
        }
        return order.map { kind in
            let lat = latencies[kind]!
            let p99 = lat.ms(0.99) ?? 99
            return ReportRow(
                what: "Search by \(kind), 50/page + total, p50 / p99 at \(format(Double(entries))) entries",
                value: "\(msText(lat.ms(0.5))) / \(msText(lat.ms(0.99)))",
                baseline: "\(format(Double(matched[kind]!) / Double(perKind))) matches per search",
                target: "p99 < \(Int(targetMs)) ms " + (p99 < targetMs ? "✓" : "✗"))
        }
    }
}

/// Entries with names people have: a surname (some written in Traditional
/// characters by the people who gave them) and two given-name characters,
/// 20 × 40 × 40 = 32,000 names, so at 1,000,000 entries each name is held
/// by about 31 people and a surname by 50,000; a unique mobile number each.
enum SearchFixture {
    static let surnames = Array("王李張刘陳杨黃赵吴周徐孫马朱胡郭何高林羅")
    static let given = Array("志明小华伟芳娜敏静丽强磊军洋勇艳杰娟涛超秀英玉兰平刚桂文辉鹏飞红霞建国海云龙峰婷")

    /// The canonical fields of entry `n`.
    static func fields(_ n: Int) -> [String: String] {
        let name = String([
            surnames[n % surnames.count], given[(n / surnames.count) % given.count],
            given[(n / (surnames.count * given.count)) % given.count],
        ])
        var f = Fixture.fields(n)
        f["name"] = name
        f["contact_method"] = "phone"
        f.removeValue(forKey: "email")
        f["phone"] = "+86139\(Fixture.pad8(n))"
        return f
    }

    /// The wire bytes of an `Import` call of entries `range`.
    static func importCall(_ range: Range<Int>) -> [UInt8] { Fixture.importCall(range, fields: fields) }
}

/// `entryd-bench --search`: one entryd on SQLite, `--entries` entries of
/// ``SearchFixture`` imported, then ``SearchPhase``.
struct SearchBench {
    let options: BenchOptions
    let entryd: String
    let directory: String

    func run() throws -> Report {
        let report = Report()
        let n = options.entries
        let a = DaemonProcess(executable: entryd, directory: directory, name: "search")
        try a.start()
        defer { a.stop() }
        let numbers = Counter()
        let w = DaemonWorkload(socket: a.socket, counter: numbers)
        let range = numbers.reserve(n)
        progress("entryd: Import of \(n) entries (names of \(SearchFixture.surnames.count) surnames) for search")
        let rate = try w.importEntries(
            range, batch: options.importBatch,
            onProgress: { done in if done % 100_000 == 0 { progress("entryd: imported \(done)") } },
            call: SearchFixture.importCall)
        report.add(
            ReportRow(
                what: "Import \(format(Double(n))) entries with their search keys", value: "\(format(rate)) entries/s"))
        progress("entryd: searches at \(n) entries")
        for row in try SearchPhase.run(
            socket: a.socket, numbers: range, fields: SearchFixture.fields, perKind: options.quick ? 50 : 300,
            entries: n)
        {
            report.add(row)
        }
        // The keys built at start-up, as after the upgrade that brings migration 8
        // (none yet) — the most an ICU or libphonenumber upgrade can cost: the keys
        // and the stored versions removed while entryd is stopped.
        progress("entryd: restart without search keys (all \(n) entries' keys built before serving)")
        a.stop()
        do {
            let db = try SQLiteConnection(path: a.database)
            try db.execute("DELETE FROM entry_keys; DELETE FROM node WHERE key = 'search_keys'")
        }
        // entryd listens before its store is open (calls wait): timed to the first answer.
        let t0 = now()
        try a.start(timeout: 1800)
        _ = try w.status()
        let ready = now() - t0
        let log = (try? String(contentsOfFile: a.logPath, encoding: .utf8)) ?? ""
        guard log.contains("rebuilt the search keys of \(n) entries") else {
            throw BenchFailure("entryd did not log a rebuild of \(n) entries' search keys; see \(a.logPath)")
        }
        report.add(
            ReportRow(
                what:
                    "start-up building the search keys of \(format(Double(n))) entries (as after migration 8), to the first answer",
                value: String(format: "%.2f s", ready),
                baseline: "\(format(Double(n) / max(ready, 0.001))) entries/s"))
        report.note(
            "Search: List with Filter.search, one call at a time, 50 per page with the total; each search of a random entry's "
                + "name (Traditional, Simplified, pinyin) or phone (national, international) must find it. "
                + "SQLite only: the bench has no List phase on a PostgreSQL hub.")
        return report
    }
}
