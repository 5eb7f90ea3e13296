import Foundation

/// A form file that cannot be used: where, which key, and what to do.
package struct FormDefinitionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file (or directory) concerned.
    package var path: String
    /// The physical line, from 1; 0 for the file (or directory) as a whole.
    package var line: Int
    /// The key concerned, if any.
    package var key: String?
    /// What is wrong and what to do about it.
    package var message: String

    /// An error at `path:line`, about `key` if given.
    package init(path: String, line: Int, key: String? = nil, message: String) {
        self.path = path
        self.line = line
        self.key = key
        self.message = message
    }

    /// A malformed INI line.
    init(_ error: IniError) {
        self.init(path: error.path, line: error.line, message: error.message)
    }

    /// `path:line: key 'k': message`.
    package var description: String {
        "\(path):\(line): " + (key.map { "key '\($0)': " } ?? "") + message
    }
}

extension FormDefinition {
    /// Reads a form definition file (format: the comment at the top of
    /// config/forms/registration.conf).
    ///
    /// - Throws: ``FormDefinitionError`` for a missing or repeated `[form]`,
    ///   an unknown section or key, a bad value, a field defined twice, a key
    ///   given twice, a `parent` or `required-when` naming a missing field, or
    ///   a city without a province parent.
    package init(ini: IniFile) throws {
        let reader = FormFileReader(path: ini.path)
        var header: (section: IniFile.Section, keys: [String: IniFile.Item])?
        var fields: [FieldDefinition] = []
        var fieldSections: [String: (line: Int, keys: [String: IniFile.Item])] = [:]
        for section in ini.sections {
            let keys = try reader.keys(of: section)
            let words = section.name.split(separator: " ", omittingEmptySubsequences: true)
            if section.name == "form" {
                guard header == nil else { throw reader.error(section.line, nil, "[form] appears twice; keep one") }
                header = (section, keys)
            } else if words.count == 2, words[0] == "field" {
                let name = String(words[1])
                if let first = fieldSections[name] {
                    throw reader.error(
                        section.line, nil,
                        "field '\(name)' is already defined on line \(first.line); rename or remove one")
                }
                fieldSections[name] = (section.line, keys)
                fields.append(try reader.field(name: name, section: section, keys: keys))
            } else if section.line == 0 {
                throw reader.error(
                    section.items[0].line, section.items[0].key,
                    "is outside a section; put it under [form] or [field NAME]")
            } else {
                throw reader.error(section.line, nil, "unknown section [\(section.name)]; use [form] or [field NAME]")
            }
        }
        guard let header else {
            throw reader.error(0, nil, "no [form] section; start the file with [form] and name = …")
        }
        let stem = URL(fileURLWithPath: ini.path).deletingPathExtension().lastPathComponent
        let name = header.keys["name"]?.value ?? stem
        if let item = header.keys["name"], name != stem {
            throw reader.error(item.line, "name", "is '\(name)' but the file is \(stem).conf; make them equal")
        }
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
        else {
            throw reader.error(
                header.keys["name"]?.line ?? header.section.line, "name", "must be letters, digits, _ or -")
        }
        try reader.onlyKnownKeys(header.keys, allowed: ["name", "title", "title.zh"], what: "[form]")
        guard !fields.isEmpty else {
            throw reader.error(header.section.line, nil, "the form has no fields; add a [field NAME] section")
        }
        try reader.checkReferences(fields, sections: fieldSections)
        try reader.checkHeaderAliases(fields, sections: fieldSections)
        self.init(name: name, titles: reader.localized(header.keys, "title", default: name), fields: fields)
    }
}

/// Reads the sections of one form file; every error names the file.
private struct FormFileReader {
    let path: String

    func error(_ line: Int, _ key: String?, _ message: String) -> FormDefinitionError {
        FormDefinitionError(path: path, line: line, key: key, message: message)
    }

    /// The items of `section` by key; a key given twice is an error.
    func keys(of section: IniFile.Section) throws -> [String: IniFile.Item] {
        var keys: [String: IniFile.Item] = [:]
        for item in section.items {
            if let first = keys[item.key] {
                throw error(item.line, item.key, "is already given on line \(first.line); keep one")
            }
            keys[item.key] = item
        }
        return keys
    }

    func onlyKnownKeys(_ keys: [String: IniFile.Item], allowed: [String], what: String, optionValues: [String] = [])
        throws
    {
        let optionKeys = optionValues.flatMap { ["option.\($0)", "option.\($0).zh", "option.\($0).aliases"] }
        for item in keys.values.sorted(by: { $0.line < $1.line })
        where !allowed.contains(item.key) && !optionKeys.contains(item.key) {
            let hint =
                item.key.hasPrefix("option.") && !optionValues.isEmpty
                ? "names no value of 'options'"
                : "is not allowed in \(what); use one of: \(allowed.joined(separator: ", "))"
            throw error(item.line, item.key, hint)
        }
    }

    /// Labels from `key` (English) and `key.zh` (Chinese, defaulting to English).
    func localized(_ keys: [String: IniFile.Item], _ key: String, default fallback: String) -> [EntryLocale: String] {
        let en = keys[key]?.value ?? fallback
        return [.en: en, .zh: keys["\(key).zh"]?.value ?? en]
    }

    func field(name: String, section: IniFile.Section, keys: [String: IniFile.Item]) throws -> FieldDefinition {
        guard let first = name.first, first.isASCII, first.isLowercase,
            name.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") })
        else {
            throw error(
                section.line, nil,
                "field name '\(name)' must be a lower-case letter, then lower-case letters, digits or _")
        }
        guard let typeItem = keys["type"] else {
            throw error(
                section.line, "type",
                "is missing; give one of: \(FieldType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let type = FieldType(rawValue: typeItem.value) else {
            throw error(
                typeItem.line, "type",
                "'\(typeItem.value)' is unknown; use one of: \(FieldType.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        var allowed = ["type", "label", "label.zh", "required", "required-when", "aliases.zh", "aliases.en"]
        switch type {
        case .city: allowed.append("parent")
        case .date: allowed += ["min", "max"]
        case .datetime: allowed += ["min", "max", "minute-interval", "not-before"]
        case .text: allowed.append("max-length")
        case .choice: allowed.append("options")
        case .phone: allowed.append("phone-types")
        default: break
        }
        let options = try choiceOptions(keys)
        try onlyKnownKeys(keys, allowed: allowed, what: "a \(type.rawValue) field", optionValues: options.map(\.value))
        var field = FieldDefinition(
            name: name, type: type, labels: localized(keys, "label", default: name), options: options)
        if let item = keys["required"] {
            guard ["yes", "no"].contains(item.value) else { throw error(item.line, item.key, "must be yes or no") }
            field.required = item.value == "yes"
        }
        if let item = keys["required-when"] {
            let parts = item.value.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw error(item.line, item.key, "must be FIELD=VALUE, e.g. contact_method=phone")
            }
            guard !field.required else { throw error(item.line, item.key, "cannot go with required = yes; drop one") }
            field.requiredWhen = FieldCondition(field: parts[0], value: parts[1])
        }
        field.headerAliases = try headerAliases(keys)
        field.parent = keys["parent"]?.value
        if type == .city, field.parent == nil {
            throw error(section.line, "parent", "is missing; a city field needs parent = its province field")
        }
        field.minuteInterval = try integer(
            keys["minute-interval"], in: 1...60, extra: { 60 % $0 == 0 }, hint: "a divisor of 60 (1–60), e.g. 30")
        field.maxLength = try integer(keys["max-length"], in: 1...1_000_000, hint: "a positive number of characters")
        for key in ["min", "max"] {
            guard let item = keys[key] else { continue }
            let valid =
                type == .date
                ? (item.value == "today" || DateText.isCanonicalDate(item.value))
                : DateText.isCanonicalDateTime(item.value)
            guard valid else {
                throw error(item.line, key, type == .date ? "must be YYYY-MM-DD or today" : "must be YYYY-MM-DD HH:mm")
            }
        }
        field.min = keys["min"]?.value
        field.max = keys["max"]?.value
        if let item = keys["not-before"] {
            guard item.value == "now" else {
                throw error(item.line, item.key, "must be now (no past values on Add), or be left out")
            }
            field.notBefore = item.value
        }
        if let item = keys["phone-types"] {
            let choosable = PhoneNumberType.allCases.filter { $0 != .fixedLineOrMobile && $0 != .unknown }
            let names = item.value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            let types = names.compactMap { name in choosable.first { $0.rawValue == name } }
            guard !names.isEmpty, types.count == names.count else {
                throw error(
                    item.line, item.key,
                    "must be comma-separated number types from: \(choosable.map(\.rawValue).joined(separator: ", "))")
            }
            field.phoneTypes = Set(types)
        }
        if let min = field.min, let max = field.max, min != "today", max != "today", min > max {
            throw error(keys["max"]!.line, "max", "is before min (\(min)); swap them")
        }
        return field
    }

    /// The options of a choice field from `options`, `option.VALUE(.zh)` and
    /// `option.VALUE.aliases`; no word may select two options.
    private func choiceOptions(_ keys: [String: IniFile.Item]) throws -> [ChoiceOption] {
        guard let item = keys["options"] else {
            if keys["type"]?.value == FieldType.choice.rawValue {
                throw error(keys["type"]!.line, "options", "is missing; a choice field needs options = a, b, …")
            }
            return []
        }
        let values = item.value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard !values.isEmpty, !values.contains(where: \.isEmpty), Set(values).count == values.count else {
            throw error(item.line, item.key, "must be distinct comma-separated values, e.g. phone, email")
        }
        let options = try values.map { value in
            var aliases: [String] = []
            if let item = keys["option.\(value).aliases"] {
                aliases = item.value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                guard !aliases.contains(where: { MatchKey($0).isEmpty }) else {
                    throw error(
                        item.line, item.key, "must be comma-separated words that select this option, e.g. mobile, 手机")
                }
            }
            return ChoiceOption(
                value: value, labels: localized(keys, "option.\(value)", default: value), aliases: aliases)
        }
        // A word (compared as a match key) must select one option only.
        var owner: [MatchKey: String] = [:]
        for option in options {
            for name in Set(option.names.map(MatchKey.init)) {
                if let other = owner[name], other != option.value {
                    let item =
                        keys["option.\(option.value).aliases"] ?? keys["option.\(option.value)"] ?? keys[
                            "option.\(option.value).zh"] ?? item
                    throw error(
                        item.line, item.key,
                        "names option '\(other)' too ('\(name.text)'); give each word to one option")
                }
                owner[name] = option.value
            }
        }
        return options
    }

    /// A field's `aliases.zh` and `aliases.en`: other column headers that name
    /// it in an import, comma-separated.
    private func headerAliases(_ keys: [String: IniFile.Item]) throws -> [EntryLocale: [String]] {
        var aliases: [EntryLocale: [String]] = [:]
        for locale in EntryLocale.allCases {
            guard let item = keys["aliases.\(locale.rawValue)"] else { continue }
            let words = item.value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard !words.contains(where: \.isEmpty) else {
                throw error(item.line, item.key, "must be comma-separated column headers, e.g. 电话, 手机, 手机号")
            }
            aliases[locale] = words
        }
        return aliases
    }

    /// A header alias must name one field: it may be no other field's name,
    /// label or alias (compared as import compares headers: trimmed, any case).
    func checkHeaderAliases(_ fields: [FieldDefinition], sections: [String: (line: Int, keys: [String: IniFile.Item])])
        throws
    {
        var owner: [String: String] = [:]
        for field in fields {
            for word in [field.name] + field.labels.values.sorted() {
                owner[word.lowercased()] = owner[word.lowercased()] ?? field.name
            }
        }
        for field in fields {
            for locale in EntryLocale.allCases {
                for word in field.headerAliases[locale] ?? [] {
                    if let other = owner[word.lowercased()], other != field.name {
                        let item = sections[field.name]?.keys["aliases.\(locale.rawValue)"]
                        throw error(
                            item?.line ?? 0, item?.key,
                            "'\(word)' names field '\(other)' too; give each header to one field")
                    }
                    owner[word.lowercased()] = field.name
                }
            }
        }
    }

    private func integer(
        _ item: IniFile.Item?, in range: ClosedRange<Int>, extra: (Int) -> Bool = { _ in true }, hint: String
    ) throws -> Int? {
        guard let item else { return nil }
        guard let value = Int(item.value), range.contains(value), extra(value) else {
            throw error(item.line, item.key, "must be \(hint)")
        }
        return value
    }

    /// `parent` must name a province field; `required-when` another field
    /// (and, for a choice field, one of its options).
    func checkReferences(_ fields: [FieldDefinition], sections: [String: (line: Int, keys: [String: IniFile.Item])])
        throws
    {
        let byName = Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0) })
        for field in fields {
            let keys = sections[field.name]?.keys ?? [:]
            if let parent = field.parent, byName[parent]?.type != .province {
                throw error(
                    keys["parent"]?.line ?? 0, "parent", "names '\(parent)', which is not a province field of this form"
                )
            }
            guard let condition = field.requiredWhen else { continue }
            let line = keys["required-when"]?.line ?? 0
            guard let target = byName[condition.field], target.name != field.name else {
                throw error(
                    line, "required-when", "names '\(condition.field)', which is not another field of this form")
            }
            if target.type == .choice, !target.options.contains(where: { $0.value == condition.value }) {
                throw error(line, "required-when", "'\(condition.value)' is not an option of '\(target.name)'")
            }
        }
    }
}
