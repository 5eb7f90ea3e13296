import EntryModel
import EntryLedger
import EntryProtocol

extension ChangeRecord {
    /// The wire form (doc/protocol.md `Change`).
    package var json: JSON {
        var members: [(String, JSON)] = [
            ("seq", .int(seq)), ("node", .string(node)), ("hlc", .string(hlc.description)), ("entry", .string(entry)),
            ("form", .string(form)), ("op", .string(op.rawValue)), ("fields", .stringMap(fields)),
            ("base", .stringMap(base)), ("actor", .string(actor)), ("at", .string(at)),
        ]
        if let reason { members.append(("reason", .string(reason))) }
        if !superseded.isEmpty { members.append(("superseded", .array(superseded.map(JSON.string)))) }
        return .object(members)
    }
}

extension ChangeRecord {
    /// Reads a wire `Change` (doc/protocol.md). `seq` is the sender's and is kept
    /// only for reference; the receiver assigns its own.
    /// - Throws: ``EntryError`` `.invalidParameter("changes")` when a member is
    ///   missing or malformed: HLC not 16 hex digits or zero, node or entry not a
    ///   UUID, `at` not RFC 3339, an unknown op, a field name a form file could not
    ///   declare, a base key that is neither such a name nor `@heads`/`@deleted`,
    ///   a base value that is not an HLC (a comma-separated list of them for the
    ///   `@` keys), a value with a character Add refuses in every value (a
    ///   control character, U+2028, U+2029, the invisible ones of
    ///   ``FreeText/isRefusedInValue(_:)``), or a NUL in `reason`.
    package init(json: JSON) throws(EntryError) {
        let p = Parameters(json)
        func need<T>(_ v: T?) throws(EntryError) -> T {
            guard let v else { throw .invalidParameter("changes") }
            return v
        }
        let record: ChangeRecord
        do {
            record = ChangeRecord(
                seq: try p.optionalInt("seq") ?? 0, node: try p.string("node"), hlc: try need(HLC(try p.string("hlc"))),
                entry: try need(UUIDv7.canonical(try p.string("entry"))), form: try p.string("form"),
                op: try need(ChangeOp(rawValue: try p.string("op"))), fields: try p.optionalStringMap("fields") ?? [:],
                base: try p.optionalStringMap("base") ?? [:], actor: try p.optionalString("actor") ?? "",
                at: try p.optionalString("at") ?? "", reason: try p.optionalString("reason"), via: nil,
                superseded: try (json["superseded"].map { try need($0.arrayValue) } ?? []).map {
                    item throws(EntryError) in try need(item.stringValue)
                })
        } catch {
            throw .invalidParameter("changes")
        }
        self = record
        // Peers are trusted as admins, but what they send is still held to the shape
        // every node writes: a UUID node id, a real stamp and time, field names as
        // form files allow them, and values as Add takes them.
        func isFieldName(_ name: String) -> Bool {
            guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) else { return false }
            return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
        }
        // The control characters (general category Cc) are fixed by Unicode's stability
        // policy: U+0000–U+001F and U+007F–U+009F. Checked on the UTF-8 bytes: no
        // scalar property lookups (this runs for every value of every pulled change).
        let clean = { (text: String) in
            var text = text
            return text.withUTF8 { bytes in
                var previous: UInt8 = 0
                for b in bytes {
                    // U+0080–U+009F is C2 80 … C2 9F in UTF-8.
                    if b < 0x20 || b == 0x7F || (previous == 0xC2 && b >= 0x80 && b <= 0x9F) { return false }
                    previous = b
                }
                return true
            }
        }
        // A base names, per field, the HLC of the value the write replaced (empty: none);
        // and under the keys no field can have, `@heads` (the other heads of its groups it
        // had in view) and `@deleted` (the deletes and restores it had seen), each a
        // comma-separated list of HLCs, possibly empty (doc/design.md "Conflicts from the change log");
        // and under `@nodes`, the node of each named write an HLC alone could confuse.
        func isBaseEntry(_ key: String, _ value: String) -> Bool {
            if key == EntryStore.nodesKey { return EntryStore.isValidNodesValue(value) }
            if key == EntryStore.headsKey || key == EntryStore.deletedBaseKey {
                return value.isEmpty
                    || value.split(separator: ",", omittingEmptySubsequences: false).allSatisfy {
                        HLC(String($0)) != nil
                    }
            }
            return isFieldName(key) && (value.isEmpty || HLC(value) != nil)
        }
        guard UUIDv7.canonical(node) == node, hlc != .zero, Timestamp.milliseconds(rfc3339: at) != nil, !form.isEmpty,
            // Values as Add takes them: no character Add refuses in every value (U+2028 too).
            fields.keys.allSatisfy(isFieldName), fields.values.allSatisfy(FreeText.isAcceptableValue), clean(actor),
            clean(form),
            // A reason holds no NUL: no node ever stored one whole (SQLite and PostgreSQL cut the
            // text there), so one is forged. Other control characters are taken: Update took them
            // in a reason before it refused them, and such changes must still sync.
            reason.map({ !$0.utf8.contains(0) }) ?? true,
            superseded.allSatisfy({ fields[$0] != nil }),
            // An erase carries no values and the reason an Erase call gave it.
            op != .erase || (fields.isEmpty && reason.map(ErasureRecord.isValidReason) == true),
            base.allSatisfy({ isBaseEntry($0.key, $0.value) })
        else {
            throw .invalidParameter("changes")
        }
    }
}
