import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync

extension ErasureRecord {
    /// The wire form (`io.entryd.Entries.Erasure`).
    var json: JSON {
        .object([
            ("entry", .string(entry)), ("form", .string(form)), ("hlc", .string(hlc.description)),
            ("node", .string(node)),
            ("actor", .string(actor)), ("at", .string(at)), ("reason", .string(reason)),
        ])
    }
}

extension EntryService {
    /// `io.entryd.Entries.Erase(id, reason)`.
    /// - Throws: `InvalidParameter(reason)` for a missing or blank reason (checked
    ///   first: nothing is looked up), `EntryNotFound`, `EntryErased`.
    func erase(_ c: CallContext, _ p: Parameters) throws {
        guard let reason = try p.optionalString("reason"), reason.contains(where: { !$0.isWhitespace }) else {
            throw EntryError.invalidParameter("reason")
        }
        let id = try existingID(p)
        let outcome = try store.erase(id: id, origin: WriteOrigin(actor: c.actor, reason: reason))
        try reply(c, [("erasure", outcome.record.json), ("walTruncated", .bool(outcome.walTruncated))])
    }

    /// `io.entryd.Entries.FindSubject(phone?, email?, name?, birthday?, country?, form?)`:
    /// the values are canonicalised as Add does (the validator, with `form`'s
    /// phone, e-mail, name and birthday fields), then looked up in every form.
    /// - Throws: `InvalidParameter(phone)` when nothing to look for is given (or
    ///   `name` without `birthday`, `InvalidParameter(birthday)`);
    ///   `ValidationFailed` for a value the validator refuses; `FormNotFound`.
    func findSubject(_ c: CallContext, _ p: Parameters) throws {
        let form = try form(try p.optionalString("form"))
        let phone = try p.optionalString("phone")
        let email = try p.optionalString("email")
        let name = try p.optionalString("name")
        let birthday = try p.optionalString("birthday")
        if name != nil && birthday == nil { throw EntryError.invalidParameter("birthday") }
        if birthday != nil && name == nil { throw EntryError.invalidParameter("name") }
        guard phone != nil || email != nil || name != nil else { throw EntryError.invalidParameter("phone") }
        // An empty value finds nobody: say so rather than answer "no entry".
        for (parameter, value) in [("phone", phone), ("email", email), ("name", name), ("birthday", birthday)]
        where value.map({ $0.allSatisfy(\.isWhitespace) }) == true {
            throw EntryError.invalidParameter(parameter)
        }
        let layout = form.layout
        var input: [String: String] = [:]
        var wanted: [(field: String, parameter: String)] = []
        func want(_ value: String?, field: String?, parameter: String) throws {
            guard let value else { return }
            guard let field else { throw EntryError.invalidParameter(parameter) }
            input[field] = value
            wanted.append((field, parameter))
        }
        try want(phone, field: form.fields.first { $0.type == .phone }?.name, parameter: "phone")
        try want(email, field: form.fields.first { $0.type == .email }?.name, parameter: "email")
        try want(name, field: layout.name, parameter: "name")
        try want(birthday, field: layout.birthday, parameter: "birthday")
        if phone != nil, let country = layout.country { input[country] = try p.optionalString("country") ?? "CN" }
        let result = validator.validate(form: form, input: input, locale: try locale(p))
        let problems = result.problems.filter { problem in wanted.contains { $0.field == problem.field } }
        guard problems.isEmpty else { throw EntryError.validationFailed(problems) }
        func canonical(_ parameter: String) -> String? {
            wanted.first { $0.parameter == parameter }.flatMap { result.fields[$0.field] }
        }
        var query = SubjectQuery(values: [canonical("phone"), canonical("email")].compactMap { $0 })
        if let n = canonical("name"), let b = canonical("birthday") { query.nameAndBirthday = (n, b) }
        let found = try store.findSubject(query)
        try reply(
            c, [("entries", .array(found.map { .object([("id", .string($0.id)), ("form", .string($0.form))]) }))])
    }

    /// `io.entryd.Entries.Erasures()`: the audit list, oldest first.
    func listErasures(_ c: CallContext) throws {
        try reply(c, [("erasures", .array(try store.erasures().map(\.json)))])
    }

    /// `io.entryd.Entries.VerifyErasure(id, values)`, with `alsoHeldBy`: the
    /// first 100 other entries whose change log holds one of the values, and
    /// `purge` while an erasure's purge is pending.
    /// - Throws: `InvalidParameter(values)` when an element is not a string.
    func verifyErasure(_ c: CallContext, _ p: Parameters) throws {
        let id = try existingID(p)
        let values = try p.array("values").map { item -> String in
            guard let text = item.stringValue, !text.isEmpty else { throw EntryError.invalidParameter("values") }
            return text
        }
        // A proof with nothing to look for proves nothing.
        guard !values.isEmpty else { throw EntryError.invalidParameter("values") }
        let v = try store.verifyErasure(id: id, values: values)
        // Other entries (not erased) that hold one of the values account for hits the
        // byte scan cannot tell apart: say which, so a shared phone is not taken for a leak.
        let others = try store.findSubject(SubjectQuery(values: values)).map(\.id).filter { $0 != id }
        var members: [(String, JSON)] = []
        if let e = v.erasure { members.append(("erasure", e.json)) }
        members += [
            ("payloadRows", .int(Int64(v.payloadRows))), ("walTruncated", .bool(v.walTruncated)),
            (
                "files",
                .array(
                    v.files.map { f in
                        .object([
                            ("path", .string(f.path)), ("bytes", .int(f.bytes)), ("exists", .bool(f.exists)),
                            ("hits", .int(Int64(f.hits))),
                        ])
                    })
            ),
            ("alsoHeldBy", .array(others.prefix(100).map(JSON.string))),
        ]
        if let purge = v.purge {
            var progress: [(String, JSON)] = [
                ("pagesDone", .int(Int64(purge.pagesDone))), ("pages", .int(Int64(purge.pages))),
            ]
            if let left = purge.secondsLeft { progress.append(("secondsLeft", .double((left * 10).rounded() / 10))) }
            members.append(("purge", .object(progress)))
        }
        try reply(c, members)
    }
}
