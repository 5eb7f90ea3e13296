import EntryModel
import EntryLedger
import EntryProtocol

extension EntryService {
    /// The optional `duplicates` member of an Add, Check or Import reply
    /// (doc/protocol.md "Possible duplicates"): live entries that may be the
    /// same person as `fields` (``EntryStore/possibleDuplicates(form:fields:excluding:)``),
    /// never `excluding`. Nothing for a caller whose role may not read
    /// entries (a `submit` kiosk must not learn who is registered,
    /// ``Role/seesEntries``), and nothing when there are none. A failed
    /// lookup is left out too: it is a warning, and the call has done its work.
    func duplicatesMember(_ c: CallContext, form: FormDefinition, fields: [String: String], excluding: String?)
        -> [(String, JSON)]
    {
        duplicatesMember(c, form: form, probe: DuplicateProbe(fields: fields, excluding: excluding))
    }

    /// ``duplicatesMember(_:form:fields:excluding:)`` by the duplicate keys an
    /// Add derived before its write (``SearchKeys/Derived/duplicates``).
    func duplicatesMember(_ c: CallContext, form: FormDefinition, keys: [String], excluding: String?)
        -> [(String, JSON)]
    {
        duplicatesMember(c, form: form, probe: DuplicateProbe(fields: [:], excluding: excluding, keys: keys))
    }

    private func duplicatesMember(_ c: CallContext, form: FormDefinition, probe: DuplicateProbe) -> [(String, JSON)] {
        guard c.caller.roles.contains(where: \.seesEntries) else { return [] }
        guard let found = try? store.possibleDuplicates(form: form, probes: [probe])[0], !found.isEmpty else {
            return []
        }
        return [("duplicates", .array(found.map(duplicateJSON)))]
    }

    /// The wire `Duplicate (id, form, name, matched)`.
    func duplicateJSON(_ d: PossibleDuplicate) -> JSON {
        .object([
            ("id", .string(d.id)), ("form", .string(d.form)), ("name", .string(d.name)),
            ("matched", .array(d.matched.map { .string($0.rawValue) })),
        ])
    }

    /// The optional `duplicates` member of an Import reply: each added live
    /// row (in input order) with the entries it may be the same person as —
    /// stored before, or added by another row of the same import — never
    /// itself; rows with none are left out, and so is the member when none
    /// has any, or the caller may not read entries. One lookup for all rows
    /// (``EntryStore/possibleDuplicates(form:probes:)``), after the commit.
    func importDuplicatesMember(_ c: CallContext, form: FormDefinition, result: ImportResult) -> [(String, JSON)] {
        guard c.caller.roles.contains(where: \.seesEntries), !result.addedLive.isEmpty else { return [] }
        let rows = result.addedLive
        guard
            let found = try? store.possibleDuplicates(
                form: form,
                probes: rows.map { DuplicateProbe(fields: $0.fields, excluding: $0.id, keys: $0.duplicateKeys) })
        else { return [] }
        let listed = zip(rows, found).filter { !$0.1.isEmpty }
        guard !listed.isEmpty else { return [] }
        return [
            (
                "duplicates",
                .array(
                    listed.map { row, duplicates in
                        .object([
                            ("index", .int(Int64(row.index))), ("id", .string(row.id)),
                            ("duplicates", .array(duplicates.map(duplicateJSON))),
                        ])
                    })
            )
        ]
    }
}
