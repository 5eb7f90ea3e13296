// Parsing one field's input by its type (the rules are on Validator and the parsers).

extension ValidationRun {
    /// The canonical value of `text` (cleaned, non-empty) for `field`.
    /// A city may also set its province field (see ``city(_:_:)``).
    mutating func value(of text: String, for field: FieldDefinition) throws(FieldFailure) -> String {
        // No value of a picker, date, phone or e-mail holds a control character; a NUL
        // would end the string a C library (libidn2, libphonenumber, ICU) is handed.
        if field.type != .text,
            text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        {
            throw FieldFailure(code: .invalidFormat, reason: .controlCharacters)
        }
        // The longest name, code or value of a list is far shorter; a longer input is
        // refused before any lookup, whose cost grows with the input.
        if field.type != .text, text.utf8.count > Self.maxListedValueBytes {
            throw FieldFailure(code: .tooLong, reason: .tooLong(maximum: Self.maxListedValueBytes))
        }
        switch field.type {
        case .text: return try Self.text(text, maxLength: field.maxLength)
        case .date: return try inRange(DateText.parseDate(text), field)
        case .datetime:
            let value = try DateText.parseDateTime(text)
            if let interval = field.minuteInterval, Int(value.suffix(2))! % interval != 0 {
                throw FieldFailure(code: .notOnInterval, reason: .offInterval(minutes: interval))
            }
            return try inRange(value, field)
        case .country: return try country(text)
        case .province: return try province(text)
        case .city: return try city(text, field)
        case .choice: return try choice(text, field)
        case .phone:
            return try PhoneNumber.parse(
                text, region: PhoneNumber.defaultRegion(country: entryCountry), types: field.phoneTypes,
                regionName: { code in reference.country(alpha2: code)?.name(in: locale) ?? code },
                locale: locale)
        case .email: return try EmailAddress.parse(text)
        }
    }

    /// The most UTF-8 bytes a value of any field type but text may have: an
    /// e-mail address is at most 254 octets in its stored form (RFC 5321), and
    /// its Unicode spelling, a place name with its spaces, a phone number as
    /// people write it or a date are shorter than this.
    static let maxListedValueBytes = 1024

    /// Text: no control characters (Unicode category Cc, e.g. line breaks and
    /// tabs), no line or paragraph separators, and none of the invisible
    /// formatting characters that can disguise text: the bidirectional
    /// embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069; the
    /// "Trojan Source" characters, CVE-2021-42574), zero-width space U+200B,
    /// BOM U+FEFF and the interlinear annotation marks U+FFF9–U+FFFB. Joiners
    /// (U+200C, U+200D) and the marks LRM/RLM stay, as real names use them.
    /// No tag characters (U+E0000–U+E007F): invisible, they can carry a
    /// hidden text inside a name (the subdivision flags they spell are no
    /// part of a name).
    /// At most `maxLength` characters (grapheme clusters), and, since one
    /// character can hold any number of combining marks (5 letters with
    /// 1,000,000 marks are 5 characters and 2 MB), at most
    /// ``scalarsPerCharacter`` × `maxLength` Unicode scalars and so at most
    /// 4 × that in UTF-8 bytes (``maxTextBytes(maxLength:)``, checked first,
    /// without reading the text).
    ///
    /// The categories are fixed sets (Unicode's stability policy): Cc is
    /// exactly U+0000–U+001F and U+007F–U+009F, Zl is U+2028 alone and Zp
    /// U+2029 alone, so no character property tables are consulted.
    static func text(_ text: String, maxLength: Int?) throws(FieldFailure) -> String {
        // The set is FreeText's, which Sync.Apply holds peers' values to as well.
        if text.unicodeScalars.contains(where: FreeText.isRefusedInValue) {
            throw FieldFailure(code: .invalidFormat, reason: .controlCharacters)
        }
        if text.unicodeScalars.contains(where: { (0xE0000...0xE007F).contains($0.value) }) {
            throw FieldFailure(code: .invalidFormat, reason: .tagCharacters)
        }
        if !hasVisibleCharacter(text) { throw FieldFailure(code: .invalidFormat, reason: .noVisibleCharacters) }
        // A character is at least one UTF-8 byte: only long texts need counting.
        if let maxLength, text.utf8.count > maxLength {
            let maxScalars = maxLength * scalarsPerCharacter
            let tooBig = text.utf8.count > maxTextBytes(maxLength: maxLength)
            // Counting stops after maxLength + 1 characters.
            var characters = 0
            for _ in text {
                characters += 1
                if characters > maxLength { break }
            }
            if characters > maxLength { throw FieldFailure(code: .tooLong, reason: .tooLong(maximum: maxLength)) }
            if tooBig || text.unicodeScalars.count > maxScalars {
                throw FieldFailure(
                    code: .tooLong, reason: .tooManyCodePoints(characters: maxLength, codePoints: maxScalars))
            }
        }
        return text
    }

    /// The most Unicode scalars a text field's character has on average:
    /// `max-length` N allows 4 × N scalars. A letter with two or three marks
    /// (Vietnamese ệ decomposed is 3), an Indic conjunct (क्षि is 4), a flag
    /// or an emoji with its skin tone (2) fit; a wall of stacked marks does not.
    static let scalarsPerCharacter = 4

    /// The most UTF-8 bytes of a text field with `max-length` `maxLength`:
    /// 4 bytes (the longest scalar) for each of its scalars.
    static func maxTextBytes(maxLength: Int) -> Int {
        maxLength * scalarsPerCharacter * 4
    }

    /// True when `text` has a character that shows: not white space, not a
    /// default-ignorable code point (Unicode `Default_Ignorable_Code_Point`:
    /// the Hangul fillers U+3164 and U+1160, joiners, variation selectors…),
    /// not a combining mark on its own (categories Mn, Mc, Me), and not
    /// unassigned. A name of fillers alone looks empty on every screen.
    static func hasVisibleCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { s in
            if s.isASCII { return s.value > 0x20 && s.value != 0x7F }
            let p = s.properties
            if p.isWhitespace || p.isDefaultIgnorableCodePoint { return false }
            switch p.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark, .control, .format, .unassigned, .surrogate: return false
            default: return true
            }
        }
    }

    /// `value` if within the field's inclusive `min`/`max` (`today` = today in UTC+14).
    private func inRange(_ value: String, _ field: FieldDefinition) throws(FieldFailure) -> String {
        let bound = { (text: String?) in text == "today" ? today : text }
        if let min = bound(field.min), value < min { throw FieldFailure(code: .outOfRange, reason: .before(min)) }
        if let max = bound(field.max), value > max { throw FieldFailure(code: .outOfRange, reason: .after(max)) }
        return value
    }

    private func country(_ text: String) throws(FieldFailure) -> String {
        let named = { (c: Country) in "\(c.name(in: locale)) (\(c.alpha2))" }
        switch reference.resolveCountry(text) {
        case .found(let country): return country.alpha2
        case .ambiguous(let rows):
            throw FieldFailure(
                code: .ambiguous, reason: .ambiguous(names: rows.map(named)), suggestions: rows.map(\.alpha2))
        case .notFound(suggestions: let rows), .wrongParent(let rows):
            throw FieldFailure(code: .notInList, reason: .notACountry, suggestions: rows.map(\.alpha2))
        }
    }

    private func province(_ text: String) throws(FieldFailure) -> String {
        let named = { (d: Division) in "\(d.name(in: locale)) (\(d.code))" }
        switch reference.resolveProvince(text) {
        case .found(let province): return province.code
        case .ambiguous(let rows):
            throw FieldFailure(
                code: .ambiguous, reason: .ambiguous(names: rows.map(named)), suggestions: rows.map(\.code))
        case .notFound(suggestions: let rows), .wrongParent(let rows):
            throw FieldFailure(code: .notInList, reason: .notAProvince, suggestions: rows.map(\.code))
        }
    }

    /// A city of the province in the `parent` field; with no province (empty,
    /// or itself refused), any city, and a unique one sets an empty province.
    /// A province without cities (710000, 810000, 820000) takes none.
    private mutating func city(_ text: String, _ field: FieldDefinition) throws(FieldFailure) -> String {
        let parent = field.parent ?? ""
        let province = failures[parent] == nil ? fields[parent] : nil
        if let province { try requireCities(in: province) }
        let codes = { (rows: [Division]) in rows.map(\.code) }
        switch reference.resolveCity(text, province: province) {
        case .found(let city):
            if province == nil, failures[parent] == nil, let cityProvince = city.parentCode,
                form.field(named: parent) != nil
            {
                fields[parent] = cityProvince
            }
            return city.code
        case .ambiguous(let rows):
            let names = rows.map {
                Display.region(province: $0.parentCode, city: $0.code, locale: locale, reference: reference)
            }
            throw FieldFailure(code: .ambiguous, reason: .ambiguous(names: names), suggestions: codes(rows))
        case .wrongParent(let rows):
            throw FieldFailure(
                code: .parentMismatch, reason: .notInProvince(province: divisionName(province ?? "")),
                suggestions: codes(rows))
        case .notFound(suggestions: let rows):
            if let retired = reference.retiredDivision(code: text) {
                throw FieldFailure(
                    code: .notInList, reason: .retired(name: retired.name(in: locale)), suggestions: codes(rows))
            }
            // `北京` as a city: the municipalities' cities are their districts and counties.
            if case .found(let named) = reference.resolveProvince(text), province == nil || province == named.code {
                let districts = reference.cities(ofProvince: named.code)
                if !districts.isEmpty {
                    throw FieldFailure(
                        code: .notInList, reason: .provinceAsCity(province: named.name(in: locale)),
                        suggestions: codes(Array(districts.prefix(5))))
                }
            }
            throw FieldFailure(code: .notInList, reason: .notACity, suggestions: codes(rows))
        }
    }

    /// A choice: an option's value, its label in any locale or one of its
    /// aliases (`手机`, `mobile`: ``ChoiceOption/aliases``), compared as
    /// ``MatchKey``s (any case, accents and width folded).
    private func choice(_ text: String, _ field: FieldDefinition) throws(FieldFailure) -> String {
        // A picker sends the option's value itself.
        if let option = field.options.first(where: { $0.value == text }) { return option.value }
        let key = MatchKey(text)
        let matches = { (option: ChoiceOption) in option.names.contains { MatchKey($0) == key } }
        if let option = field.options.first(where: matches) { return option.value }
        throw FieldFailure(
            code: .notInList, reason: .notAnOption(labels: field.options.map { $0.label(in: locale) }),
            suggestions: field.options.map(\.value))
    }

    /// The entry's country (the value of the form's first country field), if any.
    private var entryCountry: String? {
        form.fields.first { $0.type == .country }.flatMap { fields[$0.name] }
    }
}
