import EntryLedger
import EntryModel

/// Stored phones and e-mails under changed rules (issue 16): when the
/// libraries that canonicalise them (``LibraryVersions``) differ from those
/// the database was last checked with, each stored value is read again; one
/// the rules now write otherwise is updated by an ordinary `update` change
/// (actor ``actor``, a reason naming the library), so it syncs, and every node
/// computes the same value from the same stored one — two nodes doing it
/// concurrently write equal values, which is never a conflict (doc/design.md
/// "Conflicts from the change log"). A value the rules now refuse stays as
/// stored and is reported.
public enum StoredValues {
    /// One stored value that the current rules refuse; it stays as stored.
    public struct Refused: Sendable, Equatable {
        /// The entry id.
        public var id: String
        /// The field name.
        public var field: String
        /// The stored value.
        public var value: String
        /// Why it is refused (``ProblemCode``, e.g. `invalid-format`).
        public var code: ProblemCode
        /// What is wrong (the validator's message, in the locale asked for).
        public var message: String
    }

    /// The stored phones and e-mails of live entries that the current rules
    /// refuse, by id then field; nothing is written.
    /// - Throws: ``SQLiteError`` and the store's errors.
    public static func refused(store: any LedgerStore, forms: FormRegistry, validator: Validator = Validator(),
                               locale: EntryLocale) throws -> [Refused] {
        try examine(store: store, forms: forms, validator: validator, locale: locale).refused
    }

    /// Each stored phone and e-mail of a live entry with its outcome under the
    /// current rules: refused, or its canonical value now (with the form).
    private static func examine(store: any LedgerStore, forms: FormRegistry, validator: Validator, locale: EntryLocale) throws
        -> (refused: [Refused], changes: [(id: String, field: FieldDefinition, form: FormDefinition, old: String, new: String)]) {
        var refused: [Refused] = []
        var changes: [(id: String, field: FieldDefinition, form: FormDefinition, old: String, new: String)] = []
        for (id, entry) in try store.storedEntries().sorted(by: { $0.key < $1.key }) where !entry.deleted {
            guard let form = forms.form(named: entry.form) else { continue }
            for field in form.fields where field.type == .phone || field.type == .email {
                guard let value = entry.fields[field.name], !value.isEmpty else { continue }
                let result = validator.validate(form: form, input: [field.name: value], current: entry.fields, locale: locale)
                if let problem = result.problems.first(where: { $0.field == field.name }) {
                    refused.append(Refused(id: id, field: field.name, value: value, code: problem.code, message: problem.message))
                } else if let new = result.fields[field.name], new != value {
                    changes.append((id, field, form, value, new))
                }
            }
        }
        return (refused, changes)
    }

    /// The actor recorded on re-canonicalisation changes.
    public static let actor = "entryd:migration"

    /// The node-table key under which the rules of the last pass are kept.
    public static let rulesKey = "canonical_rules"

    /// The rules values are canonicalised with now: `phonenumber 8.12.57, idn2 2.3.3`.
    public static var rules: String { LibraryVersions.all.map { "\($0.name) \($0.version)" }.joined(separator: ", ") }

    /// Reads every stored phone and e-mail of every live entry (deleted
    /// entries keep their tombstone values) again with `validator`, with the
    /// entry's other fields as context (a phone's country), and updates those
    /// whose canonical value changed; a value changed by someone meanwhile is
    /// left alone.
    /// - Parameters:
    ///   - progressEvery: how many changes between two calls of `progress`.
    ///   - progress: told (values written, values to write) every
    ///     `progressEvery` changes and at the end, so a long pass can say how
    ///     far it is (entryd extends systemd's start timeout with it).
    /// - Returns: how many values changed, and those now refused, by id then field.
    /// - Throws: ``SQLiteError`` and the store's errors.
    public static func recanonicalise(store: any LedgerStore, forms: FormRegistry, validator: Validator = Validator(),
                                      progressEvery: Int = 1_000,
                                      progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }) throws -> (changed: Int, refused: [Refused]) {
        let found = try examine(store: store, forms: forms, validator: validator, locale: .en)
        defer { progress(found.changes.count, found.changes.count) }
        for (done, change) in found.changes.enumerated() {
            if done > 0, done % max(1, progressEvery) == 0 { progress(done, found.changes.count) }
            let library = change.field.type == .phone ? "libphonenumber \(PhoneNumber.libraryVersion)"
                : "libidn2 \(LibraryVersions.all.first { $0.name == "idn2" }?.version ?? "")"
            let origin = WriteOrigin(actor: actor, reason: "\(change.field.type.rawValue) re-canonicalised by \(library)")
            _ = try store.update(id: change.id, ifVersion: nil, layoutOf: { forms.form(named: $0)?.layout ?? change.form.layout },
                                 origin: origin) { current in
                guard current.fields[change.field.name] == change.old else { return current.fields }
                var fields = current.fields
                fields[change.field.name] = change.new
                return fields
            }
        }
        return (found.changes.count, found.refused)
    }
}
