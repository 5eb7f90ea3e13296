import EntryModel

/// A change-log row in its wire form (doc/protocol.md `io.entryd.Sync.Change`),
/// written straight from the row selected with ``EntryStore/changeColumns``.
///
/// `Changes` serves each change once per puller: a hub with 200 edges reads
/// every change 200 times. Decoding a row's `fields` and `base` into
/// dictionaries, building a ``ChangeRecord`` and encoding it again took most of
/// a hub's time (issue 34: about half of a 200-edge SQLite hub's CPU). The
/// stored `fields` and `base` are already the wire's JSON objects (written by
/// ``JSON/stringMap(_:)``: keys sorted, no white space), so a row whose maps
/// hold plain strings is copied as it is; any other stored text (an escape in
/// a value, white space) goes through the decoder and ``JSON/stringMap(_:)``.
///
/// The members and their order are those of `ChangeRecord.json` in EntrySync
/// (`seq node hlc entry form op fields base actor at [reason] [superseded]`);
/// a test holds the two to the same bytes.
enum ChangeWire {
    /// The row's change, encoded (``JSON/raw(_:)``).
    /// - Throws: ``SQLiteError`` (SQLITE_CORRUPT) when `fields` or `base` is not a JSON object of strings.
    static func json(from row: any SQLRow) throws -> JSON {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        JSON.append("{\"seq\":", to: &out)
        out.append(contentsOf: String(row.int(0)).utf8)
        member("node", row.text(1), &out)
        member("hlc", (HLC(row.text(2)) ?? .zero).description, &out)
        member("entry", row.text(3), &out)
        member("form", row.text(4), &out)
        member("op", (ChangeOp(rawValue: row.text(5)) ?? .update).rawValue, &out)
        JSON.append(",\"fields\":", to: &out)
        try map(row.text(6), &out)
        JSON.append(",\"base\":", to: &out)
        try map(row.text(7), &out)
        member("actor", row.text(8), &out)
        member("at", row.text(9), &out)
        if !row.isNull(10) { member("reason", row.text(10), &out) }
        let superseded = row.text(12)
        if !superseded.isEmpty {
            JSON.append(",\"superseded\":", to: &out)
            JSON.array(superseded.split(separator: ",").map { .string(String($0)) }).write(to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return .raw(out)
    }

    /// Appends `,"name":"value"`.
    private static func member(_ name: StaticString, _ value: String, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: ","))
        out.append(UInt8(ascii: "\""))
        JSON.append(name, to: &out)
        JSON.append("\":", to: &out)
        JSON.writeString(value, to: &out)
    }

    /// Appends a stored JSON object of strings: its own bytes when
    /// ``isPlainStringMap(_:)``, else decoded and encoded again.
    private static func map(_ stored: String, _ out: inout [UInt8]) throws {
        var stored = stored
        let copied = stored.withUTF8 { bytes -> Bool in
            guard isPlainStringMap(bytes) else { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if !copied { JSON.stringMap(try EntryStore.stringMap(stored)).write(to: &out) }
    }

    /// Whether `b` is a JSON object whose keys and values are strings without
    /// escapes or control characters, with no key twice and nothing after it
    /// (white space between tokens allowed): text that is valid JSON as it is
    /// and reads as the same map the decoder gives. `b` is valid UTF-8 (a
    /// Swift string's bytes), so a string's bytes need no further check.
    static func isPlainStringMap(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        var keys: [Range<Int>] = []
        return EntryStore.scanPlainStringMap(b) { key, _ in
            guard keys.count < 256, !keys.contains(where: { $0.count == key.count && b[$0].elementsEqual(b[key]) })
            else { return false }
            keys.append(key)
            return true
        }
    }
}
