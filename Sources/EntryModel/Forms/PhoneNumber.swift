import Foundation

/// Telephone numbers in ITU-T E.164 form: `+`, the country calling code, the
/// national number; at most 15 digits in all.
enum PhoneNumber {
    /// Reads a number as people type it and returns it in E.164 form.
    ///
    /// Spaces, hyphens, dots and parentheses are dropped, and so is a trunk
    /// prefix written `(0)` after the calling code (`+44 (0)20 …`). A leading `+` or `00`
    /// marks an international number, whose calling code must be one of
    /// `knownCallingCodes` (codes are prefix-free, so the first match is it).
    /// Any other number is national: one trunk `0` is dropped (except for
    /// `39`, Italy and Vatican City, which keep it) and `defaultCallingCode`
    /// is put in front. For `+86` the national number must look like a mobile
    /// (11 digits starting with 1) or a landline (area code and number: 9–11
    /// digits starting with 2–9, or Beijing's 10 and 8 digits). `13800138000`, `+86 138-0013-8000` and
    /// `0086 13800138000` all give `+8613800138000`.
    ///
    /// - Throws: ``FieldFailure``: `invalid-format` for a number in
    ///   scientific notation (`1.38001E+10`, what a spreadsheet makes of a long
    ///   number: its last digits are gone, see ``isScientificNotation(_:)``),
    ///   other characters, a national number under 4 digits or an implausible
    ///   Chinese number;
    ///   `not-in-list` for an unknown calling code; `too-long` beyond 15 digits.
    static func parse(_ input: String, defaultCallingCode: String, knownCallingCodes: Set<String>) throws(FieldFailure) -> String {
        // Canonical input (`+` and digits, as stored and as pickers send) needs no cleaning.
        let plain = input.utf8.allSatisfy { $0 == UInt8(ascii: "+") || ($0 >= 0x30 && $0 <= 0x39) }
        var text = plain ? input
            : String(input.replacingOccurrences(of: "(0)", with: "").filter { !$0.isWhitespace && !"-.()".contains($0) })
        let international = text.hasPrefix("+") || text.hasPrefix("00")
        text = String(text.dropFirst(text.hasPrefix("+") ? 1 : international ? 2 : 0))
        guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit) else {
            if isScientificNotation(input) { throw FieldFailure(code: .invalidFormat, reason: .phoneScientificNotation) }
            throw FieldFailure(code: .invalidFormat, reason: .phoneCharacters)
        }
        let callingCode: String
        var national: Substring
        if international {
            guard let code = (1...3).lazy.map({ String(text.prefix($0)) }).first(where: knownCallingCodes.contains) else {
                throw FieldFailure(code: .notInList, reason: .unknownCallingCode)
            }
            callingCode = code
            national = text.dropFirst(code.count)
        } else {
            callingCode = defaultCallingCode
            national = text[...]
            if callingCode != "39", national.hasPrefix("0") { national = national.dropFirst() }
        }
        guard callingCode.count + national.count <= 15 else { throw FieldFailure(code: .tooLong, reason: .phoneTooLong) }
        guard national.count >= 4 else { throw FieldFailure(code: .invalidFormat, reason: .phoneTooShort) }
        if callingCode == "86", !isPlausibleChinese(national) {
            throw FieldFailure(code: .invalidFormat, reason: .notAChineseNumber)
        }
        if callingCode == "1", !isPlausibleNANP(national) {
            throw FieldFailure(code: .invalidFormat, reason: .notANANPNumber)
        }
        return "+" + callingCode + national
    }

    /// Whether `input` is a number in scientific notation as spreadsheets write
    /// it: digits, a decimal point or comma and more digits (optional), `E` or
    /// `e`, an optional sign and the exponent (`1.38001E+10`, `1,38001E+10`,
    /// `8.6138E12`). Excel shows a number of 12 digits or more this way and
    /// keeps 15 significant digits at most, so the number cannot be recovered.
    static func isScientificNotation(_ input: String) -> Bool {
        var rest = Substring(input.trimmingCharacters(in: .whitespaces))
        if rest.first == "+" || rest.first == "-" { rest = rest.dropFirst() }
        let mantissa = rest.prefix(while: { $0.isASCIIDigit || $0 == "." || $0 == "," })
        rest = rest.dropFirst(mantissa.count)
        guard mantissa.first?.isASCIIDigit == true, mantissa.filter({ $0 == "." || $0 == "," }).count <= 1,
              rest.first == "E" || rest.first == "e" else { return false }
        rest = rest.dropFirst()
        if rest.first == "+" || rest.first == "-" { rest = rest.dropFirst() }
        return !rest.isEmpty && rest.allSatisfy(\.isASCIIDigit)
    }

    /// A Chinese mobile (`1`, then `3`–`9`, 11 digits in all: the mobile
    /// number segments of the MIIT numbering plan) or landline: area code
    /// without the trunk 0, then the subscriber number; 9–11 digits starting
    /// with 2–9, or Beijing's area code `10` and 8 digits.
    private static func isPlausibleChinese(_ national: Substring) -> Bool {
        guard let first = national.first else { return false }
        if national.hasPrefix("10") && national.count == 10 { return true }
        if first == "1" {
            return national.count == 11 && ("3"..."9").contains(national.dropFirst().first ?? "0")
        }
        return ("2"..."9").contains(first) && (9...11).contains(national.count)
    }

    /// A North American Numbering Plan number (+1: US, CA and the Caribbean):
    /// exactly 10 digits, `NXX-NXX-XXXX`, where the area code and the
    /// exchange each start with 2–9 (ATIS-0300051, NANP numbering plan).
    private static func isPlausibleNANP(_ national: Substring) -> Bool {
        let digits = Array(national)
        return digits.count == 10 && ("2"..."9").contains(digits[0]) && ("2"..."9").contains(digits[3])
    }
}
