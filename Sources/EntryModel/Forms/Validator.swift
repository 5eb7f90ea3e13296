import Foundation

/// The outcome of validating one entry's fields.
package struct ValidationResult: Sendable, Equatable {
    /// The complete canonical field map (input applied over the current
    /// values); empty optional fields are omitted. Only meaningful to store
    /// when ``problems`` is empty.
    package var fields: [String: String]
    /// Every problem found, in form field order, then unknown fields by name.
    package var problems: [Problem]

    /// True when there are no problems.
    package var isValid: Bool { problems.isEmpty }
}

/// Parses lenient input into canonical field values and checks an entry
/// against its form (doc/design.md, "Forms and values"; the rules per type are on
/// ``FieldType`` and the parsers: ``DateText``, ``PhoneNumber``,
/// ``EmailAddress``, and ``ReferenceData`` for countries and divisions).
package struct Validator: Sendable {
    /// The reference lists that country, province and city values resolve against.
    package let reference: ReferenceData

    /// A validator over `reference` (the tables compiled into the binary by default).
    package init(reference: ReferenceData = .shared) {
        self.reference = reference
    }

    /// Validates and normalises an entry (Add, Check, Import) or a change to one (Update).
    ///
    /// Each input value is NFC-normalised and trimmed; for every type but
    /// `text`, full-width ASCII and the ideographic space are folded too. An
    /// empty value clears the field. Only fields present in `input` are parsed
    /// and held to the current lists, so stored values (e.g. a retired city
    /// code) stay valid; the rules between fields (`required`, `required-when`,
    /// a city within its province, a city for a province that has cities) are
    /// checked on the merged result. A city given without a province sets the
    /// province when the city name is unique.
    ///
    /// - Parameters:
    ///   - form: The form the entry belongs to.
    ///   - input: Field values as sent, by field name.
    ///   - current: For an update, the stored canonical values; `nil` for a new entry.
    ///   - locale: The language of problem messages.
    ///   - now: The time at which `today` (in date bounds) is evaluated.
    package func validate(
        form: FormDefinition, input: [String: String], current: [String: String]? = nil,
        locale: EntryLocale, now: Date = Date()
    ) -> ValidationResult {
        var run = ValidationRun(
            form: form, reference: reference, locale: locale, today: DateText.latestToday(at: now),
            earliestNow: DateText.earliestNow(at: now))
        run.fields = (current ?? [:]).filter { form.field(named: $0.key) != nil && !$0.value.isEmpty }
        // Cities read the province, phones the country: parse those after the rest.
        var known = 0
        for later in [false, true] {
            for field in form.fields where (field.type == .city || field.type == .phone) == later {
                guard let raw = input[field.name] else { continue }
                known += 1
                run.apply(Validator.clean(raw, for: field.type), to: field)
            }
        }
        // A field shown only for one value of another (`required-when`) is cleared
        // when this call changes that value away from it, unless the same call sets
        // the field, and so are the fields below it (`parent`): the rule of the form
        // on screen, for every client (contact_method phone → email clears the phone;
        // country CN → US clears province and city).
        if let current {
            var hidden: Set<String> = []
            for field in form.fields where input[field.name] == nil {
                if let parent = field.parent, hidden.contains(parent) {
                    hidden.insert(field.name)
                } else if let condition = field.requiredWhen, input[condition.field] != nil,
                    current[condition.field] != run.fields[condition.field], !condition.holds(in: run.fields)
                {
                    hidden.insert(field.name)
                }
            }
            for name in hidden { run.fields[name] = nil }
        }
        for field in form.fields where field.type == .city && input[field.name] == nil {
            run.checkStoredCity(field, parentCleared: field.parent.map { input[$0] != nil } ?? false)
        }
        run.checkRequired()
        var problems =
            run.failures.isEmpty
            ? []
            : form.fields.compactMap { field in run.failures[field.name]?.problem(field: field, locale: locale) }
        // Every input name was a field of the form (field names are unique).
        if known == input.count { return ValidationResult(fields: run.fields, problems: problems) }
        // Unknown names are listed one by one up to a bound, then summed up, so a
        // message with thousands of made-up fields gets a reply of bounded size.
        let unknown = input.keys.filter { form.field(named: $0) == nil }.sorted()
        for name in unknown.prefix(Validator.maxUnknownFieldProblems) {
            let shown = name.count > 64 ? String(name.prefix(64)) + "…" : name
            let message = ProblemReason.unknownField(form: form.name).message(label: shown, locale: locale)
            // Field names are not values, so they go into the message, not `suggestions`
            // (doc/protocol.md: "canonical values the input may have meant").
            let near = Validator.nearFieldNames(name, in: form).joined(separator: ", ")
            let hint = near.isEmpty ? "" : locale == .zh ? "是否指 \(near)？" : " Did you mean \(near)?"
            problems.append(
                Problem(
                    field: name.count > 256 ? String(name.prefix(256)) : name, code: .unknownField,
                    message: message + hint))
        }
        if unknown.count > Validator.maxUnknownFieldProblems {
            let more = unknown.count - Validator.maxUnknownFieldProblems
            problems.append(
                Problem(
                    field: "", code: .unknownField,
                    message: locale == .zh
                        ? "另有 \(more) 个字段不属于表单 \(form.name)。" : "\(more) more fields are not part of form \(form.name)."
                ))
        }
        return ValidationResult(fields: run.fields, problems: problems)
    }

    /// The form's field names within two edits of a misspelt `name` (`nmae` →
    /// `name`), nearest first; none for names longer than 64 characters.
    static func nearFieldNames(_ name: String, in form: FormDefinition) -> [String] {
        guard name.count <= 64 else { return [] }
        let key = MatchKey(name)
        return form.fields.compactMap { f in key.distance(to: MatchKey(f.name), limit: 2).map { (f.name, $0) } }
            .sorted { $0.1 < $1.1 }.prefix(3).map(\.0)
    }

    /// Unknown fields reported one by one; beyond this, one problem sums up the rest.
    package static let maxUnknownFieldProblems = 20

    /// NFC, trimmed; full-width forms folded except in text fields.
    static func clean(_ raw: String, for type: FieldType) -> String {
        let folded = type == .text ? raw : MatchKey.foldFullWidth(raw)
        // Most picker and client input (ASCII, Latin, Chinese) is NFC and trimmed already.
        if isNFCWithoutOuterSpace(folded) { return folded }
        return folded.precomposedStringWithCanonicalMapping.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Unicode White_Space, with ASCII answered without the property tables
    /// (in ASCII it is exactly TAB, LF, VT, FF, CR and SPACE).
    static func isWhitespace(_ s: Unicode.Scalar) -> Bool {
        s.isASCII ? s.value == 0x20 || (0x09...0x0D).contains(s.value) : s.properties.isWhitespace
    }

    /// True when `text` is certainly NFC already and has no white space at
    /// either end, so cleaning would return it unchanged: every scalar is
    /// below U+0300 (ASCII, Latin-1 and the Latin Extended, IPA and spacing
    /// modifier blocks: no combining marks, and none that normalisation
    /// changes) or a CJK Unified Ideograph (U+3400–U+4DBF, U+4E00–U+9FFF),
    /// which NFC never changes or composes (Unicode UAX #15, NFC_Quick_Check =
    /// Yes, canonical combining class 0); the first and last are not white
    /// space. Anything else (combining marks, compatibility ideographs,
    /// Hangul jamo…) takes the full path.
    static func isNFCWithoutOuterSpace(_ text: String) -> Bool {
        let scalars = text.unicodeScalars
        guard let first = scalars.first, let last = scalars.last,
            !isWhitespace(first), !isWhitespace(last)
        else { return false }
        return scalars.allSatisfy { s in
            s.value < 0x300 || (0x4E00...0x9FFF).contains(s.value) || (0x3400...0x4DBF).contains(s.value)
        }
    }
}

/// The state of one ``Validator/validate(form:input:current:locale:now:)`` call.
struct ValidationRun {
    let form: FormDefinition
    let reference: ReferenceData
    /// The language of names inside messages.
    let locale: EntryLocale
    /// Today in UTC+14, for `today` bounds.
    let today: String
    /// Now in UTC−12 (`YYYY-MM-DD HH:mm`), for `not-before = now`.
    let earliestNow: String
    /// The merged canonical values so far.
    var fields: [String: String] = [:]
    /// The problem of each field that has one.
    var failures: [String: FieldFailure] = [:]

    /// Parses one input value into `fields`, or records its failure.
    mutating func apply(_ text: String, to field: FieldDefinition) {
        let stored = fields[field.name]
        fields[field.name] = nil
        guard !text.isEmpty else { return }
        do throws(FieldFailure) {
            let value = try value(of: text, for: field)
            // `not-before = now`: a new value may not be past; a stored one kept
            // as it is (an Update that sends it again) is not refused.
            if field.notBefore == "now", value != stored, value < earliestNow {
                throw FieldFailure(code: .outOfRange, reason: .inThePast(earliestNow))
            }
            fields[field.name] = value
        } catch {
            failures[field.name] = error
        }
    }

    /// A stored city (not in the input) must still lie in the province, which
    /// the input may have changed; with no province, the city sets it, unless
    /// the input cleared the province (`parentCleared`): that is refused, as
    /// the stored city would be left without its province.
    mutating func checkStoredCity(_ field: FieldDefinition, parentCleared: Bool) {
        guard let parent = field.parent, let city = fields[field.name], failures[parent] == nil,
            let cityProvince = reference.provinceCode(ofCity: city)
        else { return }
        guard let province = fields[parent] else {
            if parentCleared {
                failures[parent] = FieldFailure(code: .required, reason: .cityNeedsProvince(city: divisionName(city)))
            } else {
                fields[parent] = cityProvince
            }
            return
        }
        do throws(FieldFailure) {
            try requireCities(in: province)
            if cityProvince != province {
                throw FieldFailure(code: .parentMismatch, reason: .notInProvince(province: divisionName(province)))
            }
        } catch {
            failures[field.name] = error
        }
    }

    /// Throws `parent-mismatch` for a province without cities (710000,
    /// 810000, 820000), which takes an empty city only.
    func requireCities(in province: String) throws(FieldFailure) {
        if reference.cities(ofProvince: province).isEmpty {
            throw FieldFailure(code: .parentMismatch, reason: .provinceHasNoCities(province: divisionName(province)))
        }
    }

    /// Adds a `required` problem for every empty field that the merged values
    /// require and that has no problem yet.
    mutating func checkRequired() {
        for field in form.fields where failures[field.name] == nil && fields[field.name] == nil {
            var required = field.required || field.requiredWhen?.holds(in: fields) == true
            if field.type == .city, let parent = field.parent, let province = fields[parent] {
                required = required || !reference.cities(ofProvince: province).isEmpty
            }
            if required { failures[field.name] = FieldFailure(code: .required, reason: .required) }
        }
    }

    /// The name of a province or city code in the messages' locale.
    func divisionName(_ code: String) -> String {
        reference.displayName(forDivisionCode: code, locale: locale)
    }
}
