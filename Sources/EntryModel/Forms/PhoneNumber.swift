import CPhoneNumber
import Foundation

/// The kinds of telephone number libphonenumber tells apart
/// (`PhoneNumberUtil::PhoneNumberType`), named as in form files' `phone-types`
/// (doc/design.md "Phone numbers").
package enum PhoneNumberType: String, Sendable, CaseIterable, Hashable {
    /// A landline (`FIXED_LINE`).
    case fixedLine = "fixed-line"
    /// A mobile (`MOBILE`).
    case mobile
    /// A number that may be either, where the numbering plan does not tell
    /// (`FIXED_LINE_OR_MOBILE`: the US, Canada, …); counts as both.
    case fixedLineOrMobile = "fixed-line-or-mobile"
    /// Free to the caller (`TOLL_FREE`: 800 numbers).
    case tollFree = "toll-free"
    /// Charged above the normal rate (`PREMIUM_RATE`).
    case premiumRate = "premium-rate"
    /// Cost shared between caller and callee (`SHARED_COST`).
    case sharedCost = "shared-cost"
    /// Voice over IP (`VOIP`).
    case voip
    /// A personal number routed to another line (`PERSONAL_NUMBER`).
    case personal
    /// A pager (`PAGER`).
    case pager
    /// A universal access (company) number (`UAN`).
    case uan
    /// A voice-mail access number (`VOICEMAIL`).
    case voicemail
    /// Valid but of no known type (`UNKNOWN`).
    case unknown

    /// The type of the shim's `cphone_type`.
    init(_ type: cphone_type) {
        self = Self.allCases[Int(type.rawValue)]
    }

    /// Whether a field that takes `accepted` takes a number of this type:
    /// `fixed-line-or-mobile` is taken by a field for either.
    func isAccepted(by accepted: Set<PhoneNumberType>) -> Bool {
        accepted.contains(self) || (self == .fixedLineOrMobile && !accepted.isDisjoint(with: [.fixedLine, .mobile]))
    }

    /// The name of the type in `locale`, for messages (`固定电话`, `landline`).
    func name(in locale: EntryLocale) -> String {
        let names: (zh: String, en: String) =
            switch self {
            case .fixedLine: ("固定电话", "landline")
            case .mobile: ("手机", "mobile")
            case .fixedLineOrMobile: ("固定电话或手机", "landline or mobile")
            case .tollFree: ("免费电话", "toll-free")
            case .premiumRate: ("付费声讯电话", "premium-rate")
            case .sharedCost: ("分摊付费电话", "shared-cost")
            case .voip: ("网络电话（VoIP）", "VoIP")
            case .personal: ("个人号码", "personal")
            case .pager: ("寻呼机", "pager")
            case .uan: ("统一接入号码", "universal access")
            case .voicemail: ("语音信箱", "voicemail")
            case .unknown: ("未知类型", "unknown type")
            }
        return locale == .zh ? names.zh : names.en
    }
}

/// Telephone numbers through libphonenumber (Debian `libphonenumber-dev`,
/// reached through the C shim `CPhoneNumber`): parsed with the entry's
/// country as the default region, validated against the library's metadata,
/// stored in ITU-T E.164 (`+8613800138000`). doc/design.md "Phone numbers"
/// states the rules; `Tests/interop/phone_golden.tsv` pins them to the PyPI
/// `phonenumbers` of the same version.
package enum PhoneNumber {
    /// The version of the loaded libphonenumber, e.g. `8.12.57` (the Debian
    /// package's: the library itself has no version call; see
    /// `cphone_library_version` in cphonenumber.h).
    package static let libraryVersion = String(cString: cphone_library_version())

    /// What libphonenumber makes of `input` read with `region` as the
    /// default region (ISO 3166-1 alpha-2; `ZZ` for none): valid or why not,
    /// the E.164 form and the region (`cphone_result.region`) when it
    /// parsed, the type when valid. No checks of entryd's own (characters,
    /// scientific notation, types a field takes).
    static func library(_ input: String, region: String)
        -> (outcome: cphone_outcome, e164: String, region: String, type: PhoneNumberType)
    {
        var result = cphone_parse(input, region)
        let text = { (pointer: UnsafeRawBufferPointer) in
            String(cString: pointer.bindMemory(to: CChar.self).baseAddress!)
        }
        let e164 = withUnsafeBytes(of: &result.e164, text)
        let owner = withUnsafeBytes(of: &result.region, text)
        return (result.outcome, e164, owner, PhoneNumberType(result.type))
    }

    /// The default region for numbers typed without their calling code:
    /// `country` when libphonenumber knows its numbering plan, else `CN`
    /// (no country, or one without a plan of its own, such as AQ).
    static func defaultRegion(country: String?) -> String {
        guard let country, !country.isEmpty, cphone_country_code_for_region(country) != 0 else { return "CN" }
        return country
    }

    /// Reads a number as people type it and returns it in E.164 form.
    ///
    /// - Characters: digits (any script's decimal digits; full-width ones
    ///   were folded by the validator), spaces, `-` and other dashes, `.`,
    ///   `/`, parentheses, and `+` first; letters (vanity numbers, `ext.`)
    ///   and anything else are refused, so nothing typed is silently dropped.
    /// - libphonenumber then reads it: `+` or `00` (or the region's own
    ///   international prefix) before a calling code, else a national number
    ///   of `region`; a trunk prefix is dropped wherever it stands
    ///   (`0138…` in CN, `+44 (0)20…`, `+49 030…`); a national number that
    ///   starts with the region's own calling code (`8613800138000` in CN) is
    ///   read as carrying it when that is what makes it a number of the region.
    /// - Digits typed without `+` that make a valid number only with it
    ///   (`8613800138000` for a US entry) are refused with the `+` number as
    ///   the suggestion; digits valid both ways, starting with the region's
    ///   own code, are refused as ambiguous with both numbers suggested.
    /// - Digits that are no number of `region` but make one after `00` read
    ///   as `+` (the international prefix of most countries, not of all), or
    ///   as a Chinese number, are refused with that number as the suggestion.
    /// - The number must be valid (not merely of a possible length) and, when
    ///   `types` is given, of one of them (``PhoneNumberType/isAccepted(by:)``).
    ///
    /// - Parameters:
    ///   - region: the default region (``defaultRegion(country:)``).
    ///   - types: the number types the field takes (`phone-types`); `nil` for any.
    ///   - regionName: the name of a region code in the message's locale.
    /// - Throws: ``FieldFailure``: `invalid-format` for characters, scientific
    ///   notation (`1.38001E+10`, see ``isScientificNotation(_:)``), a short,
    ///   invalid or country-code-less number; `not-in-list` for an unknown
    ///   calling code; `too-long`; `ambiguous`; `out-of-range` for a type the field does not take.
    static func parse(
        _ input: String, region: String, types: Set<PhoneNumberType>? = nil,
        regionName: (String) -> String, locale: EntryLocale
    ) throws(FieldFailure) -> String {
        if isScientificNotation(input) { throw FieldFailure(code: .invalidFormat, reason: .phoneScientificNotation) }
        guard hasOnlyNumberCharacters(input) else { throw FieldFailure(code: .invalidFormat, reason: .phoneCharacters) }
        let read = library(input, region: region)
        // Digits typed without `+`: would they make a number with it?
        let typedPlus = input.unicodeScalars.first { !isWhitespace($0) } == "+"
        let digits = String(String.UnicodeScalarView(input.unicodeScalars.compactMap(decimalDigit)))
        // Only asked when its answer can matter: `read` invalid, or the digits start with
        // the region's own calling code (`86 138 …` in CN): a second parse costs as much as the first.
        if !typedPlus, read.e164 != "+" + digits,
            read.outcome != CPHONE_VALID || digits.hasPrefix(String(cphone_country_code_for_region(region)))
        {
            let plus = library("+" + digits, region: "ZZ")
            if plus.outcome == CPHONE_VALID {
                let shown = format(plus.e164) ?? plus.e164
                if read.outcome != CPHONE_VALID {
                    throw FieldFailure(
                        code: .invalidFormat, reason: .phoneCallingCodeWithoutPlus(suggestion: shown),
                        suggestions: [plus.e164])
                }
                if digits.hasPrefix(String(cphone_country_code_for_region(region))) {
                    throw FieldFailure(
                        code: .ambiguous,
                        reason: .phoneAmbiguous(international: shown, national: format(read.e164) ?? read.e164),
                        suggestions: [plus.e164, read.e164])
                }
            }
        }
        if !typedPlus, read.outcome != CPHONE_VALID {
            // `00` is not the international prefix everywhere (011 in the US, 001 in
            // Hong Kong): `0086 …` for such a region is the +86 number.
            if digits.hasPrefix("00"), case let plus = library("+" + digits.dropFirst(2), region: "ZZ"),
                plus.outcome == CPHONE_VALID
            {
                throw FieldFailure(
                    code: .invalidFormat,
                    reason: .phoneCallingCodeWithoutPlus(suggestion: format(plus.e164) ?? plus.e164),
                    suggestions: [plus.e164])
            }
            // A Chinese number for an entry of another country (entryd's users are mostly in China).
            if region != "CN", case let chinese = library(input, region: "CN"), chinese.outcome == CPHONE_VALID {
                throw FieldFailure(
                    code: .invalidFormat,
                    reason: .phoneOfChina(region: regionName(region), suggestion: format(chinese.e164) ?? chinese.e164),
                    suggestions: [chinese.e164])
            }
        }
        switch read.outcome {
        case CPHONE_VALID: break
        case CPHONE_INVALID_COUNTRY_CODE: throw FieldFailure(code: .notInList, reason: .unknownCallingCode)
        case CPHONE_TOO_SHORT: throw FieldFailure(code: .invalidFormat, reason: .phoneTooShort)
        case CPHONE_TOO_LONG: throw FieldFailure(code: .tooLong, reason: .phoneTooLong)
        case CPHONE_NOT_A_NUMBER: throw FieldFailure(code: .invalidFormat, reason: .phoneCharacters)
        default:
            // Of an impossible length or no number of its region: name the region its code belongs to.
            throw FieldFailure(
                code: .invalidFormat,
                reason: .phoneInvalid(region: regionName(read.region.isEmpty ? region : read.region)))
        }
        if let types, !read.type.isAccepted(by: types) {
            throw FieldFailure(
                code: .outOfRange,
                reason: .phoneWrongType(
                    type: read.type.name(in: locale),
                    accepted: PhoneNumberType.allCases.filter(types.contains).map { $0.name(in: locale) }))
        }
        return read.e164
    }

    /// `e164` formatted for people: the INTERNATIONAL format
    /// (`+86 138 0013 8000`), or the NATIONAL one (`138 0013 8000`); `nil`
    /// when libphonenumber cannot read it (a value stored under older rules).
    package static func format(_ e164: String, national: Bool = false) -> String? {
        var out = [CChar](repeating: 0, count: 64)
        let length = cphone_format(e164, national ? 1 : 0, &out, out.count)
        guard length >= 0 else { return nil }
        return String(decoding: out.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `input` has only what people write in a phone number: decimal
    /// digits, white space, one `+` before the first digit (`+86 …`, `(+86) …`),
    /// `-` and the Unicode dashes (U+2010–U+2015, U+2212), `.`, `/`, `(` and `)`.
    static func hasOnlyNumberCharacters(_ input: String) -> Bool {
        var seenDigitOrPlus = false
        var seenVisible = false
        for scalar in input.unicodeScalars {
            if isWhitespace(scalar) { continue }
            seenVisible = true
            if decimalDigit(scalar) != nil {
                seenDigitOrPlus = true
                continue
            }
            switch scalar {
            case "+":
                if seenDigitOrPlus { return false }
                seenDigitOrPlus = true
            case "-", ".", "/", "(", ")", "\u{2010}"..."\u{2015}", "\u{2212}": continue
            default: return false
            }
        }
        return seenVisible
    }

    /// Unicode's White_Space property; ASCII answered without the property tables.
    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII ? scalar == " " || (0x09...0x0D).contains(scalar.value) : scalar.properties.isWhitespace
    }

    /// The ASCII digit of a decimal digit of any script (`٣` → `3`,
    /// Numeric_Type=Decimal), `nil` for anything else; ASCII answered without
    /// the property tables.
    static func decimalDigit(_ scalar: Unicode.Scalar) -> Unicode.Scalar? {
        if scalar.isASCII { return ("0"..."9").contains(scalar) ? scalar : nil }
        let p = scalar.properties
        return p.numericType == .decimal ? p.numericValue.map { Unicode.Scalar(UInt8(48 + Int($0))) } : nil
    }

    /// Whether `input` is a number in scientific notation as spreadsheets write
    /// it: digits, a decimal point or comma and more digits (optional), `E` or
    /// `e`, an optional sign and the exponent (`1.38001E+10`, `1,38001E+10`,
    /// `8.6138E12`). Excel shows a number of 12 digits or more this way and
    /// keeps 15 significant digits at most, so the number cannot be recovered.
    static func isScientificNotation(_ input: String) -> Bool {
        guard input.utf8.contains(where: { $0 == UInt8(ascii: "E") || $0 == UInt8(ascii: "e") }) else { return false }
        var rest = Substring(input.trimmingCharacters(in: .whitespaces))
        if rest.first == "+" || rest.first == "-" { rest = rest.dropFirst() }
        let mantissa = rest.prefix(while: { $0.isASCIIDigit || $0 == "." || $0 == "," })
        rest = rest.dropFirst(mantissa.count)
        guard mantissa.first?.isASCIIDigit == true, mantissa.filter({ $0 == "." || $0 == "," }).count <= 1,
            rest.first == "E" || rest.first == "e"
        else { return false }
        rest = rest.dropFirst()
        if rest.first == "+" || rest.first == "-" { rest = rest.dropFirst() }
        return !rest.isEmpty && rest.allSatisfy(\.isASCIIDigit)
    }
}
