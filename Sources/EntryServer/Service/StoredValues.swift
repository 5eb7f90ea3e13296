import EntryLedger
import EntryModel

/// Stored phones and e-mails under changed rules (issue 16, doc/design.md
/// "Stored values under changed rules"). The canonical spelling of a phone
/// (libphonenumber) or an e-mail domain (libidn2) can change with the
/// library. A value spelled by older rules is re-spelled by an `update`
/// change of ``WriteOrigin/migrationActor`` that has seen it:
/// - at start-up, when the libraries (``LibraryVersions``) differ from those of
///   the last pass, for every live entry (``recanonicalise(store:forms:validator:batch:shouldStop:progress:)``,
///   in pages and batches, while entryd serves);
/// - when a value arrives from a node with older rules, or comes back by a
///   restore or a conflict's lost value (the store calls ``canonicaliser(forms:validator:)``).
///
/// Every node computes the same value from the same stored one, so two nodes
/// re-spelling concurrently write equal values; and a re-spelling never beats
/// a person's edit it did not see (FieldConflicts.swift). A value the rules
/// now refuse stays as stored and is reported.
package enum StoredValues {
    /// One stored value that the current rules refuse; it stays as stored.
    package struct Refused: Sendable, Equatable {
        /// The entry id.
        package var id: String
        /// The field name.
        package var field: String
        /// The stored value.
        package var value: String
        /// Why it is refused (``ProblemCode``, e.g. `invalid-format`).
        package var code: ProblemCode
        /// What is wrong (the validator's message, in the locale asked for).
        package var message: String
    }

    /// The outcome of reading one entry's phones and e-mails again.
    private struct Outcome {
        var refused: [Refused] = []
        var rewrites: [ValueRewrite] = []
    }

    /// Reads the phones and e-mails of `fields` (an entry of `form`) again,
    /// with the entry's other fields as context (a phone's country).
    private static func examine(
        id: String, fields: [String: String], form: FormDefinition, validator: Validator,
        locale: EntryLocale
    ) -> Outcome {
        var outcome = Outcome()
        for field in form.fields where field.type == .phone || field.type == .email {
            guard let value = fields[field.name], !value.isEmpty else { continue }
            let result = validator.validate(form: form, input: [field.name: value], current: fields, locale: locale)
            if let problem = result.problems.first(where: { $0.field == field.name }) {
                outcome.refused.append(
                    Refused(id: id, field: field.name, value: value, code: problem.code, message: problem.message))
            } else if let new = result.fields[field.name], new != value {
                outcome.rewrites.append(ValueRewrite(field: field.name, value: new, reason: reason(for: field.type)))
            }
        }
        return outcome
    }

    /// The change log's reason for a re-spelled value of `type`.
    static func reason(for type: FieldType) -> String {
        let library =
            type == .phone
            ? "libphonenumber \(PhoneNumber.libraryVersion)"
            : "libidn2 \(LibraryVersions.byName["idn2"] ?? "")"
        return "\(type.rawValue) re-canonicalised by \(library)"
    }

    /// The rules the store re-spells arriving values with: the phones and
    /// e-mails of an entry of a form in `forms()` (asked at each call, so a
    /// reload's forms count) that the current rules write otherwise. Values of
    /// unknown forms, and values the rules refuse, are left as they are.
    package static func canonicaliser(
        forms: @escaping @Sendable () -> FormRegistry,
        validator: Validator = Validator()
    ) -> Canonicaliser {
        { formName, fields in
            guard let form = forms().form(named: formName) else { return [] }
            return examine(id: "", fields: fields, form: form, validator: validator, locale: .en).rewrites
        }
    }

    /// Pages through the live entries, oldest created first, `batch` at a time.
    private static func forEachPage(
        store: EntryStore, batch: Int, shouldStop: () -> Bool = { false },
        _ body: (_ page: [StoredEntry], _ total: Int) throws -> Void
    ) throws {
        var query = ListQuery()
        query.order = .created
        query.descending = false
        query.limit = min(max(batch, 1), 1000)
        while !shouldStop() {
            let page = try store.list(query)
            try body(page.entries, page.total)
            guard let next = page.next else { return }
            query.after = next
        }
    }

    /// The stored phones and e-mails of live entries that the current rules
    /// refuse, oldest entry first; nothing is written.
    /// - Throws: ``StorageError`` and the store's errors.
    package static func refused(
        store: EntryStore, forms: FormRegistry, validator: Validator = Validator(),
        locale: EntryLocale
    ) throws -> [Refused] {
        var refused: [Refused] = []
        try forEachPage(store: store, batch: 1000) { page, _ in
            for entry in page {
                guard let form = forms.form(named: entry.form) else { continue }
                refused +=
                    examine(id: entry.id, fields: entry.fields, form: form, validator: validator, locale: locale)
                    .refused
            }
        }
        return refused
    }

    /// The node-table key under which the rules of the last pass are kept.
    package static let rulesKey = "canonical_rules"

    /// The rules values are canonicalised with now: `phonenumber 8.12.57, idn2 2.3.3`.
    package static var rules: String { LibraryVersions.all.map { "\($0.name) \($0.version)" }.joined(separator: ", ") }

    /// What a pass did.
    package struct Pass: Sendable, Equatable {
        /// A pass's figures (all 0, unfinished, by default).
        package init(changed: Int = 0, examined: Int = 0, refused: Int = 0, finished: Bool = false) {
            self.changed = changed
            self.examined = examined
            self.refused = refused
            self.finished = finished
        }

        /// Values re-spelled.
        package var changed = 0
        /// Live entries read.
        package var examined = 0
        /// Values the rules now refuse (each was handed to `refused`).
        package var refused = 0
        /// False when `shouldStop` ended it early: the rules are not yet done.
        package var finished = false
    }

    /// Reads every stored phone and e-mail of every live entry again (deleted
    /// entries are re-spelled when restored), a page of `batch` entries at a
    /// time, and re-spells those the rules now write otherwise: one store
    /// transaction per page (``EntryStore/recanonicalise(ids:layoutOf:)``, which
    /// reads each value again inside it, so an edit made meanwhile is never
    /// overwritten). Memory stays at one page however many entries there are.
    /// - Parameters:
    ///   - shouldStop: asked between pages; true ends the pass early (entryd stops).
    ///   - refused: told each value the rules now refuse (it stays as stored).
    ///   - progress: told (entries read, live entries) after each page.
    /// - Throws: ``StorageError`` and the store's errors.
    package static func recanonicalise(
        store: EntryStore, forms: FormRegistry, validator: Validator = Validator(),
        batch: Int = 500, shouldStop: () -> Bool = { false },
        refused: (Refused) -> Void = { _ in },
        progress: (_ examined: Int, _ total: Int) -> Void = { _, _ in }
    ) throws -> Pass {
        var pass = Pass()
        let rules = canonicaliser(forms: { forms }, validator: validator)
        try forEachPage(store: store, batch: batch, shouldStop: shouldStop) { page, total in
            var ids: [String] = []
            for entry in page {
                guard let form = forms.form(named: entry.form) else { continue }
                let outcome = examine(id: entry.id, fields: entry.fields, form: form, validator: validator, locale: .en)
                outcome.refused.forEach(refused)
                pass.refused += outcome.refused.count
                if !outcome.rewrites.isEmpty { ids.append(entry.id) }
            }
            if !ids.isEmpty {
                pass.changed += try store.recanonicalise(
                    ids: ids, rules: rules, layoutOf: { forms.form(named: $0)?.layout ?? .registration })
            }
            pass.examined += page.count
            progress(pass.examined, max(total, pass.examined))
        }
        pass.finished = !shouldStop()
        return pass
    }
}
