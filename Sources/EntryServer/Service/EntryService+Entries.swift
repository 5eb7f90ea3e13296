import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync
extension EntryService {
    /// The form named `name`, or the default form when `nil`.
    /// - Throws: ``EntryError/formNotFound(_:)`` (on the wire, the FormNotFound of the interface called).
    func form(_ name: String?) throws -> FormDefinition {
        let wanted = name ?? FormRegistry.defaultFormName
        guard let form = forms.form(named: wanted) else { throw EntryError.formNotFound(wanted) }
        return form
    }

    /// The `id` parameter as a canonical UUID.
    /// - Throws: `InvalidParameter(id)` when it is not a UUID.
    func entryID(_ p: Parameters, _ name: String = "id") throws -> String {
        let text = try p.string(name)
        guard let id = UUIDv7.canonical(text) else { throw EntryError.invalidParameter(name) }
        return id
    }

    /// The id of an existing entry: a non-UUID can name no entry.
    func existingID(_ p: Parameters) throws -> String {
        let text = try p.string("id")
        guard let id = UUIDv7.canonical(text) else { throw EntryError.entryNotFound(text) }
        return id
    }

    /// The optional `ifVersion`: an HLC, 16 hex digits.
    /// - Throws: `InvalidParameter(ifVersion)` for anything else.
    func version(_ p: Parameters) throws -> String? {
        guard let text = try p.optionalString("ifVersion") else { return nil }
        guard let hlc = HLC(text) else { throw EntryError.invalidParameter("ifVersion") }
        return hlc.description
    }

    /// The write origin: the call's actor (``CallContext/actor``: the caller's
    /// user name from SO_PEERCRED, or `web:NAME` named by a gateway), and the
    /// call's optional `reason`, checked before anything else of the call so
    /// that a refused reason stores nothing.
    /// - Throws: ``EntryError`` `InvalidParameter(reason)` when it is not a string;
    ///   `ValidationFailed` naming `reason` (``FreeText/reasonProblem(locale:)``,
    ///   the message in `locale`) when it has a control character or a line or
    ///   paragraph separator (``FreeText/isLineSafe(_:)``).
    func origin(_ c: CallContext, _ p: Parameters, locale: EntryLocale) throws -> WriteOrigin {
        let reason = try p.optionalString("reason")
        if let reason, !FreeText.isLineSafe(reason) {
            throw EntryError.validationFailed([FreeText.reasonProblem(locale: locale)])
        }
        return WriteOrigin(actor: c.actor, reason: reason)
    }

    // MARK: - Methods

    /// `io.entryd.Entries.Add` handled in turn (not pipelined): ``startAdd(_:_:)``,
    /// then wait for the commit and reply.
    func add(_ c: CallContext, _ p: Parameters) throws {
        try startAdd(c, p)()
    }

    /// Validates an Add and queues its write; the returned closure waits for
    /// the commit and sends the reply. Validation problems throw here.
    func startAdd(_ c: CallContext, _ p: Parameters) throws -> () throws -> Void {
        let locale = try locale(p)
        let form = try form(try p.optionalString("form"))
        let id = try p.optionalString("id") == nil ? nil : try entryID(p)
        let input = try p.stringMap("fields")
        let result = validator.validate(form: form, input: input, locale: locale)
        guard result.problems.isEmpty else { throw EntryError.validationFailed(result.problems) }
        // Derived here, on the session's thread, once for the write and the duplicate lookup.
        let keys = SearchKeys.derive(fields: result.fields, layout: form.layout)
        let pending = try store.beginCreate(
            form: form.name, id: id, fields: result.fields, layout: form.layout,
            origin: try origin(c, p, locale: locale), keys: keys.all)
        return { [self] in
            let entry: StoredEntry
            do {
                entry = try pending.wait().entry
            } catch let error as EntryError {
                // An Add with the id of an erased entry is a change refused for it: counted (doc/design.md "Erasure").
                if case .entryErased = error { try? store.countRefusedErased(1) }
                throw error
            }
            // Looked for after the commit: entries committed meanwhile count, the new one never does.
            let duplicates = duplicatesMember(c, form: form, keys: keys.duplicates, excluding: entry.id)
            try reply(c, [("entry", entryJSON(entry, locale: locale))] + duplicates)
        }
    }

    /// `io.entryd.Entries.Get(id, locale?)`: the entry, deleted ones too.
    /// - Throws: `EntryNotFound` (also for an `id` that is not a UUID); `EntryErased`.
    func get(_ c: CallContext, _ p: Parameters) throws {
        let locale = try locale(p)
        let id = try existingID(p)
        guard let entry = try store.get(id) else {
            if let erased = try store.erasure(of: id) { throw EntryError.entryErased(id: id, at: erased.at) }
            throw EntryError.entryNotFound(id)
        }
        try reply(c, [("entry", entryJSON(entry, locale: locale))])
    }

    /// `io.entryd.Entries.Update(id, fields, ifVersion?, reason?, locale?)`: validates
    /// `fields` against the stored values (on the writer thread) and keeps values of
    /// fields the form no longer defines.
    /// - Throws: `EntryNotFound`, `VersionMismatch`, `ValidationFailed` (for the
    ///   fields, or first for a `reason` with a control character: ``origin(_:_:locale:)``);
    ///   `FormNotFound` when the entry's form is no longer defined.
    func update(_ c: CallContext, _ p: Parameters) throws {
        let locale = try locale(p)
        let origin = try origin(c, p, locale: locale)
        let id = try existingID(p)
        let input = try p.stringMap("fields")
        let ifVersion = try version(p)
        let entry = try store.update(
            id: id, ifVersion: ifVersion, layoutOf: { [self] in layout(ofForm: $0) }, origin: origin
        ) { [self] current in
            let form = try form(current.form)
            let result = self.validator.validate(form: form, input: input, current: current.fields, locale: locale)
            guard result.problems.isEmpty else { throw EntryError.validationFailed(result.problems) }
            // A changed form never invalidates stored entries (issue 4): values of
            // fields the form no longer defines are kept through edits of the others.
            var fields = result.fields
            for (name, value) in current.fields where form.field(named: name) == nil { fields[name] = value }
            return fields
        }
        try reply(c, [("entry", entryJSON(entry, locale: locale))])
    }

    /// `io.entryd.Entries.Delete(id, ifVersion?, reason?, locale?)`; the reply in
    /// `locale` (default: the daemon's). An entry of an unknown form uses the registration layout.
    /// - Throws: `ValidationFailed` first for a `reason` with a control character
    ///   (``origin(_:_:locale:)``); `EntryNotFound`, `VersionMismatch`.
    func delete(_ c: CallContext, _ p: Parameters) throws {
        let locale = try locale(p)
        let origin = try origin(c, p, locale: locale)
        let id = try existingID(p)
        let entry = try store.delete(
            id: id, ifVersion: try version(p), layoutOf: { [self] in layout(ofForm: $0) }, origin: origin)
        try reply(c, [("entry", entryJSON(entry, locale: locale))])
    }

    /// `io.entryd.Entries.Restore(id, reason?, locale?)`; the reply in `locale` (default: the daemon's).
    /// - Throws: `ValidationFailed` first for a `reason` with a control character
    ///   (``origin(_:_:locale:)``); `EntryNotFound`.
    func restore(_ c: CallContext, _ p: Parameters) throws {
        let locale = try locale(p)
        let origin = try origin(c, p, locale: locale)
        let id = try existingID(p)
        let entry = try store.restore(id: id, layoutOf: { [self] in layout(ofForm: $0) }, origin: origin)
        try reply(c, [("entry", entryJSON(entry, locale: locale))])
    }

    /// `io.entryd.Entries.History(id)`: every change of the entry, oldest first.
    /// - Throws: `EntryNotFound` when the change log has none.
    func history(_ c: CallContext, _ p: Parameters) throws {
        _ = try locale(p)
        let id = try existingID(p)
        let changes = try store.history(id)
        guard !changes.isEmpty else { throw EntryError.entryNotFound(id) }
        // Where compaction removed superseded changes of it (doc/design.md "Compaction").
        let through = try store.compactedThrough(entry: id)
        try reply(
            c, [("changes", .array(changes.map(\.json)))] + (through.map { [("compactedThrough", JSON.int($0))] } ?? [])
        )
    }

    /// `io.entryd.Entries.Import(form?, entries, atomic?, locale?)` handled in
    /// turn (not pipelined): ``startImport(_:_:)``, then wait for the commit and reply.
    func importEntries(_ c: CallContext, _ p: Parameters) throws {
        try startImport(c, p)()
    }

    /// Validates an `io.entryd.Entries.Import(form?, entries, atomic?, locale?)`
    /// on the calling (session) thread and queues its rows as one transaction
    /// (``EntryStore/beginImport(form:rows:layout:atomic:origin:)``); the
    /// returned closure, called by the same thread, waits for the commit and
    /// sends the reply. Bad rows are listed in `rejected` (by 0-based index),
    /// with their problems in `locale`, not thrown; with `atomic`, any
    /// rejected row stores nothing.
    /// - Throws: here, before anything is queued: `LimitExceeded(max-batch)`
    ///   for more than `max-batch` elements; `FormNotFound`; `InvalidParameter`.
    ///   From the closure: a storage failure (nothing stored).
    func startImport(_ c: CallContext, _ p: Parameters) throws -> () throws -> Void {
        let form = try form(try p.optionalString("form"))
        let items = try p.array("entries")
        let atomic = try p.optionalBool("atomic") ?? false
        let locale = try locale(p)
        guard items.count <= limits.maxBatch else {
            throw EntryError.limitExceeded("max-batch", maximum: limits.maxBatch)
        }
        var rows: [ImportRow] = []
        rows.reserveCapacity(items.count)
        let formFields = Set(form.fields.map(\.name))
        for (index, item) in items.enumerated() {
            rows.append(importRow(index: index, item: item, form: form, formFields: formFields, locale: locale))
        }
        let pending = try store.beginImport(
            form: form.name, rows: rows, layout: form.layout, atomic: atomic,
            origin: WriteOrigin(actor: c.actor))
        return { [self] in
            let result: ImportResult
            do {
                result = try pending.wait()
            } catch let refused as AtomicImportRefused {
                result = refused.result
            }
            try reply(c, importReply(result, locale: locale) + importDuplicatesMember(c, form: form, result: result))
        }
    }

    /// The members of an Import's reply: `added`, `unchanged` and `rejected`
    /// (index, id when known, problems in `locale`).
    func importReply(_ result: ImportResult, locale: EntryLocale) -> [(String, JSON)] {
        [
            ("added", .int(Int64(result.added))), ("unchanged", .int(Int64(result.unchanged))),
            (
                "rejected",
                .array(
                    result.rejected.map { r in
                        var members: [(String, JSON)] = [("index", .int(Int64(r.index)))]
                        if let id = r.id { members.append(("id", .string(id))) }
                        members.append(
                            (
                                "problems",
                                .array(
                                    r.problems.map { problem in
                                        // The store's own problems come in English: said here in `locale`.
                                        var problem = problem
                                        let id = r.id ?? ""
                                        switch problem.code {
                                        case .exists:
                                            problem.message =
                                                locale == .zh
                                                ? "编号为 \(id) 的条目已存在且值不同，或已被删除：换一个编号，或去掉编号列以新增条目"
                                                : "an entry with id \(id) already exists with other values, or is deleted: use another id, or leave the id out to add a new entry"
                                        case .erased:
                                            problem.message =
                                                locale == .zh
                                                ? "编号为 \(id) 的条目已被抹除，不能再导入：删去这一行（抹除的数据不会回来）"
                                                : "the entry with id \(id) was erased and cannot be imported again: drop this row (erased data never comes back)"
                                        default:
                                            break
                                        }
                                        return problem.json
                                    })
                            ))
                        return .object(members)
                    })
            ),
        ]
    }

    /// Reads and validates one Import element `{"id"?, "fields", "deleted"?}`.
    /// Values the form cannot take — fields it does not define, values not in
    /// its lists — are kept aside, not refused at once: they may be a re-import
    /// of an entry that holds them (schema drift); the store decides
    /// (``ImportRow/matches(_:form:)``), so an exported entry imports back as
    /// unchanged, and a row that leaves out fields the form does not define
    /// never clears them.
    /// A row refused for other reasons lists every problem, those of values
    /// the form cannot take too, so an import reports what `Check` reports.
    /// - Parameter formFields: the names of `form`'s fields.
    /// - Parameter locale: the language of the problems' messages.
    func importRow(index: Int, item: JSON, form: FormDefinition, formFields: Set<String>, locale: EntryLocale)
        -> ImportRow
    {
        /// A row refused for its shape, with the message in `locale` (zh, en).
        func rejected(_ field: String, _ zh: String, _ en: String, id: String? = nil) -> ImportRow {
            ImportRow(
                index: index, id: id, fields: [:], deleted: false,
                problems: [Problem(field: field, code: .invalidFormat, message: locale == .zh ? zh : en)])
        }
        guard case .object = item else {
            return rejected(
                "", "entries 的每个元素都必须是含 fields 的对象", "each element of entries must be an object with fields")
        }
        let p = Parameters(item)
        var id: String?
        if let text = try? p.optionalString("id") {
            guard let canonical = UUIDv7.canonical(text) else {
                return rejected("id", "id 必须是 UUID", "id must be a UUID", id: text)
            }
            id = canonical
        } else if item["id"].map({ !$0.isNull }) ?? false {
            return rejected("id", "id 必须是字符串形式的 UUID", "id must be a string UUID")
        }
        guard let input = try? p.stringMap("fields") else {
            return rejected("fields", "fields 必须是值为字符串的对象", "fields must be an object of strings", id: id)
        }
        // `deleted` is optional: absent means false (a `try?` here once refused every row without it).
        let deleted: Bool
        do { deleted = try p.optionalBool("deleted") ?? false } catch {
            return rejected("deleted", "deleted 必须是 true 或 false", "deleted must be true or false", id: id)
        }
        let result = validator.validate(form: form, input: input, locale: locale)
        // Values this node's form cannot take (a field or an option it does not know) are
        // held aside with their problems: they may confirm an entry that holds them. A row
        // with any other problem is refused whatever it confirms, with all of them.
        let unknownProblems = result.problems.filter { $0.code == .unknownField || $0.code == .notInList }
        let problems = result.problems.count == unknownProblems.count ? [] : result.problems
        var unknown = input.filter { !$0.value.isEmpty && form.field(named: $0.key) == nil }
        for problem in unknownProblems where problem.code == .notInList {
            if let value = input[problem.field], !value.isEmpty { unknown[problem.field] = value }
        }
        let fields = result.fields.filter { unknown[$0.key] == nil }
        // A row the store may add gets its search keys here, on the session's thread, not the writer's.
        let keys = problems.isEmpty && unknown.isEmpty ? SearchKeys.derive(fields: fields, layout: form.layout) : nil
        return ImportRow(
            index: index, id: id, fields: fields, deleted: deleted, problems: problems, unknown: unknown,
            unknownProblems: unknownProblems, formFields: formFields, keys: keys)
    }

    // MARK: - Wire form

    /// The configured peers' sync states, for `syncedTo` (read once per call).
    func configuredPeerStates() -> [PeerState] {
        let names = Set(peers.map(\.name))
        guard !names.isEmpty else { return [] }
        return ((try? store.peerStates()) ?? []).filter { names.contains($0.name) }
    }

    /// Names of the peers that hold the entry's latest change: those whose push
    /// checkpoint has passed it, and the peer where it was made.
    func syncedTo(_ e: StoredEntry, peers: [PeerState]) -> [String] {
        guard !peers.isEmpty else { return [] }
        let latestNode = (Array(e.clocks.values) + [e.deletedClock].compactMap { $0 }).max()?.node
        return peers.filter { $0.pushedSeq >= e.seq || ($0.node != nil && $0.node == latestNode) }.map(\.name)
    }

    /// The wire `Entry` (doc/protocol.md), with `display` rendered in `locale`,
    /// and the project's optional members `unknownFields` and `unknownValues`
    /// (interfaces/io.entryd.Entries.varlink) when this node's form does not
    /// know some of its fields or values (``Display/unknown(form:fields:reference:)``;
    /// every field of an entry whose form this node does not have).
    /// - Parameter peers: from ``configuredPeerStates()``; `nil` reads them.
    func entryJSON(_ e: StoredEntry, locale: EntryLocale, peers: [PeerState]? = nil) -> JSON {
        let form = forms.form(named: e.form)
        let display = form.map { Display.render(form: $0, fields: e.fields, locale: locale) } ?? e.fields
        let unknown: (fields: [String], values: [String]) =
            form.map { Display.unknown(form: $0, fields: e.fields) }
            ?? (fields: e.fields.filter { !$0.value.isEmpty }.keys.sorted(), values: [])
        let synced = syncedTo(e, peers: peers ?? configuredPeerStates())
        var members: [(String, JSON)] = [
            ("id", .string(e.id)), ("form", .string(e.form)), ("fields", .stringMap(e.fields)),
            ("display", .stringMap(display)), ("version", .string(e.version.description)),
            ("deleted", .bool(e.deleted)),
            ("createdAt", .string(e.createdAt)), ("updatedAt", .string(e.updatedAt)),
            ("createdBy", .string(e.createdBy)), ("updatedBy", .string(e.updatedBy)),
            ("syncedTo", .array(synced.map { .string($0) })),
        ]
        if !unknown.fields.isEmpty { members.append(("unknownFields", .array(unknown.fields.map { .string($0) }))) }
        if !unknown.values.isEmpty { members.append(("unknownValues", .array(unknown.values.map { .string($0) }))) }
        return .object(members)
    }
}
