import EntryModel
import EntryProtocol
import EntryLedger

/// Deterministic registration-form entries for every phase, so the daemon,
/// raw SQLite and PostgreSQL store rows of the same shape and size.
///
/// Entries spread over six Chinese provinces (one city each) and three other
/// countries, so a List filter of country + province selects about 1/8 of them.
enum Fixture {
    /// (province, city) GB/T 2260 codes used for CN entries.
    static let regions: [(String, String)] = [
        ("440000", "440100"), ("440000", "440300"), ("330000", "330100"),
        ("320000", "320100"), ("510000", "510100"), ("420000", "420100"),
    ]
    static let otherCountries = ["US", "DE", "JP"]

    /// The canonical fields of entry number `n` (as entryd stores them after validation).
    static func fields(_ n: Int) -> [String: String] {
        var f: [String: String] = [
            "name": "用户\(n)",
            "birthday": "19\(50 + n % 50)-\(pad(1 + n % 12))-\(pad(1 + n % 28))",
            "contact_method": "phone",
        ]
        let slot = n % 9
        if slot < regions.count {
            f["country"] = "CN"
            f["province"] = regions[slot].0
            f["city"] = regions[slot].1
            f["phone"] = "+86138\(pad8(n))"
        } else {
            f["country"] = otherCountries[slot - regions.count]
            f["contact_method"] = "email"
            f["email"] = "user\(n)@example.com"
        }
        return f
    }

    static func pad(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
    static func pad8(_ v: Int) -> String {
        let s = String(v % 100_000_000)
        return String(repeating: "0", count: 8 - s.count) + s
    }

    /// The wire bytes (NUL included) of an `io.entryd.Entries.Add` call for entry `n`.
    static func addCall(_ n: Int) -> [UInt8] {
        VarlinkCall(
            .entriesAdd,
            parameters: .object([("fields", .stringMap(fields(n)))])
        ).encoded
    }

    /// The wire bytes of an `Import` call of entries `range` (no ids: entryd
    /// makes UUIDv7s), entry `i` with `fields(i)` (by default ``fields(_:)``).
    static func importCall(_ range: Range<Int>, fields: (Int) -> [String: String] = fields) -> [UInt8] {
        VarlinkCall(
            .entriesImport,
            parameters: .object([
                ("entries", .array(range.map { .object([("fields", .stringMap(fields($0)))]) }))
            ])
        ).encoded
    }
}
