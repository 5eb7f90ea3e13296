import Foundation
import EntryModel
import EntryProtocol

/// One `FIELD=VALUE` argument (`name=李雷`, `姓名=李雷`, `Birthday=1990-05-17`, `phone=`).
///
/// The text is split at the first `=`: the value may itself hold `=`
/// (`note=a=b` sets `note` to `a=b`) and may be empty (`email=`), which on
/// update clears an optional field. FIELD is a field name, a field's label in
/// either language, or one of its header aliases (`手机=…`, `mobile=…`), as the
/// form defines them (``resolve(_:fields:)`` turns them into names before the
/// call; the wire keeps field names); white space around it is dropped. Whether the form has such a field is for the form to say.
package struct FieldAssignment: Sendable, Equatable {
    /// The field name or label as typed (trimmed), e.g. `name` or `姓名`.
    package var name: String
    /// Everything after the first `=` (may be empty or hold `=`).
    package var value: String

    /// Sets field `name` to `value`.
    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Parses one argument.
    /// - Throws: ``UsageError`` when there is no `=` or nothing before it.
    package static func parse(_ argument: String) throws(UsageError) -> FieldAssignment {
        guard let eq = argument.firstIndex(of: "=") else {
            throw UsageError(
                zh: "“\(argument)”不是 FIELD=VALUE（字段名或标签、'='、再是值，例如 name=李雷 或 姓名=李雷）",
                en:
                    "'\(argument)' is not FIELD=VALUE (a field name or label, '=', then the value, e.g. name=李雷 or 姓名=李雷)"
            )
        }
        let name = argument[..<eq].trimmingCharacters(in: .whitespaces)
        let value = String(argument[argument.index(after: eq)...])
        guard !name.isEmpty else {
            throw UsageError(zh: "“\(argument)”的 '=' 前没有字段名", en: "'\(argument)' has no field name before '='")
        }
        return FieldAssignment(name: name, value: value)
    }

    /// Parses every argument into a field map, keyed as typed.
    /// - Throws: ``UsageError`` for the first malformed argument, or when a field is given twice.
    package static func parseAll(_ arguments: [String]) throws(UsageError) -> [String: String] {
        var fields: [String: String] = [:]
        for argument in arguments {
            let assignment = try parse(argument)
            guard fields[assignment.name] == nil else {
                throw UsageError(zh: "字段“\(assignment.name)”给了两次", en: "field '\(assignment.name)' is given twice")
            }
            fields[assignment.name] = assignment.value
        }
        return fields
    }

    /// Field values keyed as typed (names, labels or header aliases, ``DataColumns/fieldName(for:in:aliases:)``),
    /// keyed by field name instead. A key that is no field's name or label is
    /// kept as it is and listed in `unknown` (sorted), so that the form reports
    /// it with the other problems.
    /// - Throws: ``UsageError`` when two keys stand for one field (`name` and `姓名`).
    package static func resolve(_ typed: [String: String], fields: [DataColumns.FieldNames])
        throws(UsageError) -> (fields: [String: String], unknown: [String])
    {
        var out: [String: String] = [:]
        var spelled: [String: String] = [:]
        var unknown: [String] = []
        for key in typed.keys.sorted() {
            let resolved = DataColumns.fieldName(for: key, in: fields, aliases: true)
            if resolved == nil { unknown.append(key) }
            let name = resolved ?? key
            if let first = spelled[name] {
                throw UsageError(
                    zh: "字段“\(name)”给了两次（作为“\(first)”和“\(key)”）",
                    en: "field '\(name)' is given twice (as '\(first)' and '\(key)')")
            }
            spelled[name] = key
            out[name] = typed[key]
        }
        return (out, unknown)
    }

    /// The message for a typed field name that is no field's name or label:
    /// the form's fields, or the nearest name or label (did you mean).
    package static func unknownFieldMessage(
        _ typed: String, form: String, fields: [DataColumns.FieldNames],
        locale: EntryLocale
    ) -> String {
        let shown = typed.count > 64 ? String(typed.prefix(64)) + "…" : typed
        if let near = DataColumns.nearestName(to: typed, in: fields) {
            return locale == .zh
                ? "表单“\(form)”没有名称或标签为“\(shown)”的字段。是否指“\(near)”？"
                : "Form '\(form)' has no field named or labelled '\(shown)'. Did you mean '\(near)'?"
        }
        let known = fields.map { "\($0.name) (\($0.zh), \($0.en))" }
        return locale == .zh
            ? "表单“\(form)”没有名称或标签为“\(shown)”的字段；字段有：\(known.joined(separator: "、"))。"
            : "Form '\(form)' has no field named or labelled '\(shown)'; the fields are \(known.joined(separator: ", "))."
    }
}
