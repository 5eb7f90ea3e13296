/// E-mail addresses, checked for the shape of RFC 5321/5322 `addr-spec`
/// (dot-atom local part, host-name domain), with non-ASCII letters allowed as
/// RFC 6531 (SMTPUTF8) and IDNA permit. Quoted local parts and address
/// literals (`user@[192.0.2.1]`) are not accepted.
enum EmailAddress {
    /// Characters allowed in an atom of the local part besides letters and
    /// digits (RFC 5322 `atext`).
    private static let atomSymbols = Set("!#$%&'*+/=?^_`{|}~-")

    /// Checks `input` and returns it with the domain lower-cased (the local part
    /// may be case-sensitive, RFC 5321 §2.4, so it is kept as typed).
    ///
    /// Rules: one `@`; a local part of 1–64 bytes of dot-separated atoms; a
    /// domain of at least two dot-separated labels of 1–63 bytes (letters,
    /// digits, `-` not at either end), the last not all digits; 254 bytes in
    /// all (RFC 5321 §4.5.3.1 limits with the path's angle brackets removed).
    /// - Throws: ``FieldFailure``: `invalid-format`, or `too-long` for the lengths.
    static func parse(_ input: String) throws(FieldFailure) -> String {
        let format = FieldFailure(code: .invalidFormat, reason: .emailFormat)
        let parts = input.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw format }
        let local = parts[0], domain = parts[1].lowercased()
        guard local.utf8.count <= 64, input.utf8.count <= 254 else {
            throw FieldFailure(code: .tooLong, reason: .emailTooLong)
        }
        let atoms = local.split(separator: ".", omittingEmptySubsequences: false)
        guard !local.isEmpty, atoms.allSatisfy({ !$0.isEmpty && $0.allSatisfy(isAtomCharacter) }) else { throw format }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy(isLabel), !labels.last!.allSatisfy(\.isASCIIDigit) else { throw format }
        return local + "@" + domain
    }

    private static func isAtomCharacter(_ c: Character) -> Bool {
        c.isASCII ? (c.isASCIILetter || c.isASCIIDigit || atomSymbols.contains(c)) : (c.isLetter || c.isNumber)
    }

    private static func isLabel(_ label: Substring) -> Bool {
        (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
            && label.allSatisfy { $0.isASCII ? ($0.isASCIILetter || $0.isASCIIDigit || $0 == "-") : ($0.isLetter || $0.isNumber) }
    }
}
