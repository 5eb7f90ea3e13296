import CIDN2

/// E-mail addresses: the shape of RFC 5321/5322 `addr-spec` (dot-atom local
/// part, host-name domain), non-ASCII letters in the local part as RFC 6531
/// (SMTPUTF8) permits, and the domain through libidn2 (IDNA2008 with the
/// Unicode TR46 mapping, non-transitional), stored in its A-label form
/// (`xn--fsqu00a.xn--fiqs8s`) whichever spelling came in (doc/design.md
/// "E-mail addresses"). Quoted local parts and address literals
/// (`user@[192.0.2.1]`) are not accepted.
package enum EmailAddress {
    /// Characters allowed in an atom of the local part besides letters and
    /// digits (RFC 5322 `atext`).
    private static let atomSymbols = Set("!#$%&'*+/=?^_`{|}~-")

    /// The dots people type in a domain besides `.`: the ideographic full stop
    /// `。` (U+3002), the full-width `．` (U+FF0E) and the half-width ideographic
    /// `｡` (U+FF61): the label separators of IDNA2003 (RFC 3490 §3.1), which
    /// TR46 maps to `.` as well.
    static let fullWidthDots: Set<Character> = ["\u{3002}", "\u{FF0E}", "\u{FF61}"]

    /// libidn2 flags: TR46 non-transitional processing (IDNA2008 as browsers
    /// and mail software do it now: `ß`, `ς` and the joiners stay themselves
    /// instead of becoming `ss`, `σ` or nothing, so `faß.de` is not `fass.de`)
    /// and NFC of the input. Not `IDN2_USE_STD3_ASCII_RULES`: libidn2 2.3.3
    /// then drops a `_` without a word (`ex_ample` → `example`, another
    /// domain), so the host-name rule is checked on the result instead.
    static let flags = Int32(IDN2_NONTRANSITIONAL.rawValue | IDN2_NFC_INPUT.rawValue)

    /// Checks `input` and returns its stored form: the local part as typed
    /// (it may be case-sensitive, RFC 5321 §2.4), `@`, the domain in A-labels.
    ///
    /// Rules: one `@`; a local part of 1–64 octets of dot-separated atoms; a
    /// domain whose full-width dots read as dots, of at least two labels, each
    /// a valid IDNA2008 label (libidn2 `idn2_lookup_u8` with ``flags``; `xn--`
    /// labels must decode to one) whose A-label is a host name label (1–63
    /// letters, digits and hyphens, no hyphen at either end: libidn2 passes
    /// ASCII labels through unchecked), the last not all digits; the domain at most
    /// 255 octets and the whole address at most 254 (RFC 5321 §4.5.3.1: the
    /// path of 256 octets less its angle brackets), counted in the stored form.
    /// - Throws: ``FieldFailure``: `invalid-format` (the reason names a bad
    ///   domain label), or `too-long` for the lengths.
    static func parse(_ input: String) throws(FieldFailure) -> String {
        let format = FieldFailure(code: .invalidFormat, reason: .emailFormat)
        let parts = input.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw format }
        let local = parts[0]
        let typedDomain = String(parts[1].map { fullWidthDots.contains($0) ? "." : $0 })
        guard local.utf8.count <= 64 else { throw FieldFailure(code: .tooLong, reason: .emailTooLong) }
        let atoms = local.split(separator: ".", omittingEmptySubsequences: false)
        guard !local.isEmpty, atoms.allSatisfy({ !$0.isEmpty && $0.allSatisfy(isAtomCharacter) }) else { throw format }
        let labels = typedDomain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty }) else { throw format }
        // Label by label, so that a refusal names the label at fault.
        var ascii: [String] = []
        for label in labels {
            guard let converted = toASCII(String(label)), (1...63).contains(converted.utf8.count),
                converted.first != "-", converted.last != "-",
                converted.allSatisfy({ $0.isASCIILetter || $0.isASCIIDigit || $0 == "-" })
            else {
                throw FieldFailure(code: .invalidFormat, reason: .emailDomainLabel(label: String(label)))
            }
            ascii.append(converted)
        }
        guard !ascii.last!.allSatisfy(\.isASCIIDigit) else { throw format }
        // The whole domain once more: the bidi and joiner rules look across labels.
        guard let domain = toASCII(typedDomain) else {
            throw FieldFailure(code: .invalidFormat, reason: .emailDomainLabel(label: typedDomain))
        }
        let address = local + "@" + domain
        guard domain.utf8.count <= 255, address.utf8.count <= 254 else {
            throw FieldFailure(code: .tooLong, reason: .emailTooLong)
        }
        return address
    }

    /// `address` for people: the domain's A-labels as Unicode
    /// (`李雷@例子.中国`); as it is when it has no `@` or its domain does not decode.
    package static func display(_ address: String) -> String {
        guard let at = address.lastIndex(of: "@"), address[at...].contains("xn--") else { return address }
        var output: UnsafeMutablePointer<CChar>?
        guard idn2_to_unicode_8z8z(String(address[address.index(after: at)...]), &output, 0) == IDN2_OK.rawValue,
            let output
        else { return address }
        defer { idn2_free(output) }
        return String(address[...at]) + String(cString: output)
    }

    /// A domain (or label) in lower-case A-labels, or `nil` when libidn2 refuses it.
    private static func toASCII(_ domain: String) -> String? {
        var output: UnsafeMutablePointer<UInt8>?
        let rc = idn2_lookup_u8(domain, &output, flags)
        guard rc == IDN2_OK.rawValue, let output else { return nil }
        defer { idn2_free(output) }
        return String(cString: output).lowercased()
    }

    private static func isAtomCharacter(_ c: Character) -> Bool {
        c.isASCII ? (c.isASCIILetter || c.isASCIIDigit || atomSymbols.contains(c)) : (c.isLetter || c.isNumber)
    }
}
