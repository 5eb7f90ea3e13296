import EntryModel

extension WriteOrigin {
    /// The actor of a change that only re-spells a stored value into its
    /// canonical form under newer rules (a phone or e-mail re-canonicalised by
    /// a newer libphonenumber or libidn2, doc/design.md "Stored values under
    /// changed rules"). No user can have it: a Unix user name holds no `:`.
    /// Such a change loses to every concurrent change by anyone else and never
    /// opens a conflict (FieldConflicts.swift).
    package static let migrationActor = "entryd:migration"
}

/// One stored value the rules now spell otherwise: `field` becomes `value`,
/// recorded with `reason` (e.g. `phone re-canonicalised by libphonenumber 8.12.57`).
package struct ValueRewrite: Sendable, Equatable {
    /// The field's name.
    package var field: String
    /// Its canonical value now.
    package var value: String
    /// Why, for the change log: the rule's library and version.
    package var reason: String

    /// A rewrite of `field` to `value` for `reason`.
    package init(field: String, value: String, reason: String) {
        self.field = field
        self.value = value
        self.reason = reason
    }
}

/// The rules that re-spell stored values: given an entry's form name and
/// fields, the rewrites its values need now (none when every value is
/// canonical; a value the rules refuse is left out). The server supplies it
/// (StoredValues in EntryServer); the store calls it on the writer thread for
/// values that arrive from elsewhere or come back to life.
package typealias Canonicaliser = @Sendable (_ form: String, _ fields: [String: String]) -> [ValueRewrite]

extension WriteContext {
    /// Rewrites into canonical spelling the values of entry `id` that the
    /// canonicaliser now writes otherwise, as one `update` change by
    /// ``WriteOrigin/migrationActor`` (which has seen the values it replaces).
    /// Only fields in `scope` are looked at (`nil`: all); a deleted entry is
    /// left as it is (its values are re-spelled when it is restored).
    /// - Parameter rules: the rules (`nil`: the store's, given at open).
    /// - Returns: how many values were rewritten.
    @discardableResult
    func canonicalise(_ id: String, scope: Set<String>?, rules: Canonicaliser? = nil, layout: (String) -> FieldLayout)
        throws -> Int
    {
        guard let canonicaliser = rules ?? canonicaliser, let current = try load(id), !current.deleted else { return 0 }
        let rewrites = canonicaliser(current.form, current.fields).filter { scope?.contains($0.field) ?? true }
        guard !rewrites.isEmpty else { return 0 }
        let fieldLayout = layout(current.form)
        var fields = current.fields
        for rewrite in rewrites { fields[rewrite.field] = rewrite.value }
        var changed: [String: String] = [:]
        for rewrite in rewrites {
            for member in fieldLayout.group(of: rewrite.field) { changed[member] = fields[member] ?? "" }
        }
        let reason = Array(Set(rewrites.map(\.reason))).sorted().joined(separator: "; ")
        _ = try record(
            .update, on: current, fields: changed, layout: fieldLayout,
            origin: WriteOrigin(actor: WriteOrigin.migrationActor, reason: reason))
        return rewrites.count
    }
}

extension EntryStore {
    /// Re-spells the stored values of `ids` that `rules` now write otherwise,
    /// in one transaction: one `update` change per entry that needs it, by
    /// ``WriteOrigin/migrationActor``. Unknown and deleted ids are passed over.
    /// - Returns: how many values were rewritten.
    /// - Throws: ``SQLiteError``.
    package func recanonicalise(
        ids: [String], rules: @escaping Canonicaliser, layoutOf: @escaping (String) -> FieldLayout
    ) throws -> Int {
        try writer.submit { ctx in
            var rewritten = 0
            for id in ids { rewritten += try ctx.canonicalise(id, scope: nil, rules: rules, layout: layoutOf) }
            return rewritten
        }
    }
}
