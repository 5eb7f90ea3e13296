import Foundation
import EntryModel

/// A person to look for before an erasure (doc/design.md "Erasure"): canonical
/// values, as the validator makes them.
package struct SubjectQuery: Sendable {
    /// Values any field may hold exactly: canonical phone numbers (E.164) and
    /// e-mail addresses.
    package var values: [String]
    /// A name and a birthday (`YYYY-MM-DD`) one entry holds both of (the name
    /// compared case-insensitively, and as search folds it:
    /// ``SearchKeys/fold(_:)``, so 黄志明 finds 黃志明), or `nil`.
    package var nameAndBirthday: (name: String, birthday: String)?

    /// A query for `values` and, optionally, a name with a birthday.
    package init(values: [String], nameAndBirthday: (name: String, birthday: String)? = nil) {
        self.values = values
        self.nameAndBirthday = nameAndBirthday
    }
}

/// An entry that holds a subject's data: its id and form.
package struct SubjectMatch: Sendable, Equatable, Hashable {
    /// The entry's id.
    package var id: String
    /// The entry's form name.
    package var form: String

    /// A value with every member given.
    package init(id: String, form: String) {
        self.id = id
        self.form = form
    }
}

/// What ``EntryStore/verifyErasure(id:values:)`` found.
package struct ErasureVerification: Sendable, Equatable {
    /// One file scanned.
    package struct FileScan: Sendable, Equatable {
        /// The file's path.
        package var path: String
        /// Its size in bytes (0 when absent).
        package var bytes: Int64
        /// Whether it exists.
        package var exists: Bool
        /// Occurrences of the values' bytes in it.
        package var hits: Int

        /// A value with every member given.
        package init(path: String, bytes: Int64, exists: Bool, hits: Int) {
            self.path = path
            self.bytes = bytes
            self.exists = exists
            self.hits = hits
        }
    }

    /// The erasure, `nil` when the entry was not erased here.
    package var erasure: ErasureRecord?
    /// Rows of the entry that still hold a payload: its entries row, conflict
    /// records, change-log rows with fields, base or reason (0 expected).
    package var payloadRows: Int
    /// Whether the WAL was truncated before the scan.
    package var walTruncated: Bool
    /// The database file, its WAL, the erasure ledger and `DATABASE.before-restore`
    /// (with its WAL), each with its hits.
    package var files: [FileScan]
    /// The purge after an erasure, while one is pending (``EntryStore/purgeProgress``):
    /// until it ends, the files may still hold stale copies of erased values.
    package var purge: PurgeProgress?

    /// A value with every member given.
    package init(
        erasure: ErasureRecord?, payloadRows: Int, walTruncated: Bool, files: [FileScan], purge: PurgeProgress? = nil
    ) {
        self.erasure = erasure
        self.payloadRows = payloadRows
        self.walTruncated = walTruncated
        self.files = files
        self.purge = purge
    }
}

extension EntryStore {
    /// The entries (deleted ones too) whose change log ever held the subject's
    /// data: so every entry holding it now, in its history or in a conflict
    /// record is found (those all come from the change log). Erased entries
    /// hold nothing and are never found. Scans the change log.
    /// - Throws: ``SQLiteError``.
    package func findSubject(_ query: SubjectQuery) throws -> [SubjectMatch] {
        // Without case: an e-mail's local part is stored as typed (`Chen.Qi@…`), and a
        // request may spell it otherwise; phones and dates have no case.
        let values = Set(query.values.filter { !$0.isEmpty }.map { $0.lowercased() })
        let pair = query.nameAndBirthday.map { (name: foldedName($0.name), birthday: $0.birthday) }
        // The name as search folds it too (黄志明 for 黃志明, no spaces in a Chinese name): a
        // request spelled in the other script must find the person. ICU's folding is
        // only run on values of the name's length (without spaces), not on every value.
        let searchName = query.nameAndBirthday.map { SearchKeys.fold($0.name) } ?? ""
        let searchLength = searchName.filter { !$0.isWhitespace }.count
        func isName(_ value: String) -> Bool {
            guard let pair else { return false }
            if foldedName(value) == pair.name { return true }
            return !searchName.isEmpty && value.filter({ !$0.isWhitespace }).count == searchLength
                && SearchKeys.fold(value) == searchName
        }
        guard !values.isEmpty || pair != nil else { return [] }
        return try readers.read { db in
            var found: [SubjectMatch] = []
            var seen = Set<String>()
            var names = Set<String>()
            var birthdays = Set<String>()  // entries that held the name, the birthday
            try db.statement(
                "SELECT entry, form, fields FROM changes WHERE op <> 'erase' AND fields <> '{}' ORDER BY seq"
            ).query { row in
                let entry = row.text(0)
                guard !seen.contains(entry) else { return }
                let held = try EntryStore.stringMap(row.text(2)).values
                var hit = held.contains { values.contains($0.lowercased()) }
                if let pair {
                    if held.contains(where: isName) { names.insert(entry) }
                    if held.contains(pair.birthday) { birthdays.insert(entry) }
                    hit = hit || (names.contains(entry) && birthdays.contains(entry))
                }
                if hit {
                    seen.insert(entry)
                    found.append(SubjectMatch(id: entry, form: row.text(1)))
                }
            }
            return found
        }
    }

    /// Checks an erasure (issue 17 "Proof, not promise"): truncates the WAL,
    /// counts the entry's rows that still hold a payload, and scans the
    /// database file, its WAL, the erasure ledger and `DATABASE.before-restore`
    /// (and its WAL) for the bytes of `values`, as given (UTF-8) and as the
    /// stored JSON writes them, and for the forms the search keys derive from
    /// them (``SearchKeys/derivedForms(of:)``: folded, pinyin, phone digits).
    /// The store keeps no value to look for: the caller gives them.
    /// On a database server, an erasure's rewrite still pending (an older
    /// snapshot or a lock held it off) is tried again first; `walTruncated`
    /// then says whether the server's files are rewritten.
    /// - Throws: ``SQLiteError``.
    package func verifyErasure(id: String, values: [String]) throws -> ErasureVerification {
        let pending = try server != nil && readers.read(EntryStore.isRewritePending)
        let truncated = pending ? rewriteAfterErasure() : truncateWAL()
        let (record, payload) = try readers.read { db -> (ErasureRecord?, Int) in
            var n = 0
            try db.statement("SELECT COUNT(*) FROM entries WHERE id = ?").query([.text(id)]) { n += Int($0.int(0)) }
            try db.statement("SELECT COUNT(*) FROM conflicts WHERE entry = ?").query([.text(id)]) {
                n += Int($0.int(0))
            }
            try db.statement(
                """
                SELECT COUNT(*) FROM changes WHERE entry = ? AND op <> 'erase'
                  AND (fields <> '{}' OR base <> '{}' OR reason IS NOT NULL)
                """
            ).query([.text(id)]) { n += Int($0.int(0)) }
            return (try EntryStore.erasure(db, id), n)
        }
        // The derived forms too (the search keys: folded, pinyin, national digits,
        // SearchKeys.derivedForms): an erasure must leave none of them either.
        let values = Array(Set(values + values.flatMap(SearchKeys.derivedForms(of:)))).sorted()
        var needles = Set<[UInt8]>()
        for value in values where !value.isEmpty {
            needles.insert(Array(value.utf8))
            let json = JSON.string(value).text
            needles.insert(Array(json.utf8.dropFirst().dropLast()))
        }
        if let server {
            let tables = try readers.read { db in try server.scan(values, on: db) }
            return ErasureVerification(
                erasure: record, payloadRows: payload, walTruncated: truncated, files: tables, purge: purgeProgress)
        }
        let paths = [
            path, path + "-wal", ErasureLedger(database: path).path, path + ".before-restore",
            path + ".before-restore-wal",
        ]
        let files = paths.map { file -> ErasureVerification.FileScan in
            let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int64) ?? nil
            return ErasureVerification.FileScan(
                path: file, bytes: size ?? 0, exists: size != nil,
                hits: size == nil ? 0 : ByteScan.count(needles.filter { !$0.isEmpty }, in: file))
        }
        return ErasureVerification(
            erasure: record, payloadRows: payload, walTruncated: truncated, files: files, purge: purgeProgress)
    }
}

/// Counting byte strings in a file, read in chunks (a database may be large).
enum ByteScan {
    /// Occurrences of each of `needles` in the file at `path` (0 when it cannot be read).
    static func count(_ needles: Set<[UInt8]>, in path: String) -> Int {
        guard let handle = FileHandle(forReadingAtPath: path), let longest = needles.map(\.count).max(), longest > 0
        else { return 0 }
        defer { try? handle.close() }
        var hits = 0
        var carry: [UInt8] = []
        while true {
            let chunk = handle.readData(ofLength: 8 << 20)
            if chunk.isEmpty { break }
            let window = carry + [UInt8](chunk)
            // A match ending in the carried-over tail was counted in the previous window.
            let skipEnd = carry.count
            for needle in needles { hits += occurrences(of: needle, in: window, endingAfter: skipEnd) }
            carry = Array(window.suffix(longest - 1))
        }
        return hits
    }

    /// Occurrences of `needle` in `haystack` that end past index `endingAfter`.
    static func occurrences(of needle: [UInt8], in haystack: [UInt8], endingAfter: Int) -> Int {
        guard !needle.isEmpty, haystack.count >= needle.count else { return 0 }
        var n = 0
        let first = needle[0]
        var i = 0
        let last = haystack.count - needle.count
        while i <= last {
            if haystack[i] == first, i + needle.count > endingAfter,
                haystack[i..<(i + needle.count)].elementsEqual(needle)
            {
                n += 1
            }
            i += 1
        }
        return n
    }
}
