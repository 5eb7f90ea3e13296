import Foundation
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync

extension EntryService {
    /// `io.entryd.Forms.ListForms(locale?)`: every form, in the requested locale.
    func listForms(_ c: CallContext, _ p: Parameters) throws {
        let locale = try locale(p)
        try reply(c, [("forms", .array(forms.forms.map { formJSON($0, locale: locale) }))])
    }

    /// `io.entryd.Forms.GetForm(name?, locale?)`: one form, the default without `name`.
    /// - Throws: `io.entryd.Forms.FormNotFound`.
    func getForm(_ c: CallContext, _ p: Parameters) throws {
        let locale = try locale(p)
        try reply(c, [("form", formJSON(try form(try p.optionalString("name")), locale: locale))])
    }

    /// `io.entryd.Forms.CheckStored(locale?)`: the stored values the current forms and libraries refuse.
    func checkStored(_ c: CallContext, _ p: Parameters) throws {
        let locale = try locale(p)
        let refused = try StoredValues.refused(store: store, forms: forms, validator: validator, locale: locale)
        try reply(
            c,
            [
                (
                    "problems",
                    .array(
                        refused.map { r in
                            .object([
                                ("id", .string(r.id)), ("field", .string(r.field)), ("value", .string(r.value)),
                                ("code", .string(r.code.rawValue)), ("message", .string(r.message)),
                            ])
                        })
                )
            ])
    }

    /// `io.entryd.Forms.Options(form?, field, parent?, query?, limit?, locale?)`;
    /// `limit` is capped at 100 000 rows.
    /// - Throws: `io.entryd.Forms.FieldNotFound` when the form has no such field,
    ///   it is not a picker field, or `parent` names no single province;
    ///   `InvalidParameter(limit)` for a limit below 1.
    func options(_ c: CallContext, _ p: Parameters) throws {
        let locale = try locale(p)
        let form = try form(try p.optionalString("form"))
        let fieldName = try p.string("field")
        var limit: Int?
        if let l = try p.optionalInt("limit") {
            guard l > 0 else { throw EntryError.invalidParameter("limit") }
            limit = Int(min(l, 100_000))
        }
        guard form.field(named: fieldName) != nil else {
            throw EntryError.fieldNotFound(form: form.name, field: fieldName)
        }
        let rows = try OptionRows.options(
            form: form, field: fieldName, parent: try p.optionalString("parent"),
            query: try p.optionalString("query"), limit: limit, locale: locale)
        try reply(
            c,
            [
                (
                    "options",
                    .array(
                        rows.map { row in
                            var members: [(String, JSON)] = [
                                ("value", .string(row.value)), ("label", .string(row.label)),
                            ]
                            if let flag = row.flag { members.append(("flag", .string(flag))) }
                            if let parent = row.parent { members.append(("parent", .string(parent))) }
                            members.append(("aliases", .array(row.aliases.map { .string($0) })))
                            return .object(members)
                        })
                )
            ])
    }

    /// `io.entryd.Forms.Check(form?, fields, locale?, id?)`: validates without storing and
    /// replies canonical `fields`, `display` text and `problems` (never `ValidationFailed`),
    /// and for a caller that may read entries the possible `duplicates` of the valid
    /// values, never entry `id` (the one being edited).
    /// - Throws: `InvalidParameter(id)` when `id` is not a UUID; `FormNotFound`.
    func check(_ c: CallContext, _ p: Parameters) throws {
        let locale = try locale(p)
        let form = try form(try p.optionalString("form"))
        let editing = try p.optionalString("id") == nil ? nil : try entryID(p)
        let result = validator.validate(form: form, input: try p.stringMap("fields"), locale: locale)
        try reply(
            c,
            [
                ("fields", .stringMap(result.fields)),
                ("display", .stringMap(Display.render(form: form, fields: result.fields, locale: locale))),
                ("problems", .array(result.problems.map(\.json))),
            ] + duplicatesMember(c, form: form, fields: result.fields, excluding: editing))
    }

    /// The wire `Form` (doc/protocol.md io.entryd.Forms), labels in `locale`.
    func formJSON(_ form: FormDefinition, locale: EntryLocale) -> JSON {
        let today = DateText.latestToday(at: Date())
        let earliest = DateText.earliestNow(at: Date())
        return .object([
            ("name", .string(form.name)), ("title", .string(form.title(in: locale))),
            (
                "fields",
                .array(
                    form.fields.map { f in
                        var m: [(String, JSON)] = [
                            ("name", .string(f.name)), ("type", .string(f.type.rawValue)),
                            ("label", .string(f.label(in: locale))),
                            ("required", .bool(f.required)),
                        ]
                        if let w = f.requiredWhen { m.append(("requiredWhen", .string(w.description))) }
                        if let parent = f.parent { m.append(("parent", .string(parent))) }
                        if let i = f.minuteInterval { m.append(("minuteInterval", .int(Int64(i)))) }
                        // `today` is sent resolved (today in UTC+14), so pickers can use it as a bound.
                        if let v = f.min { m.append(("min", .string(v == "today" ? today : v))) }
                        if let v = f.max { m.append(("max", .string(v == "today" ? today : v))) }
                        if let v = f.maxLength { m.append(("maxLength", .int(Int64(v)))) }
                        // Header aliases in every language: a spreadsheet's header is in whichever one it was made in.
                        let aliases = EntryLocale.allCases.flatMap { f.headerAliases[$0] ?? [] }
                        if !aliases.isEmpty { m.append(("headerAliases", .array(aliases.map(JSON.string)))) }
                        // In the library's order, so every call sends the same list.
                        if let types = f.phoneTypes {
                            m.append(
                                (
                                    "phoneTypes",
                                    .array(PhoneNumberType.allCases.filter(types.contains).map { .string($0.rawValue) })
                                ))
                        }
                        // `now` sent resolved (now in UTC−12), as `today` is for min and max.
                        if f.notBefore == "now" { m.append(("notBefore", .string(earliest))) }
                        return .object(m)
                    })
            ),
        ])
    }
}
