import EntryModel
import EntryProtocol

/// Writes comma-separated values as RFC 4180 defines them.
///
/// Byte layout (RFC 4180 §2): records end in CRLF, the last one too; fields are
/// separated by `,`; a field holding `,`, `"`, CR or LF is enclosed in double
/// quotes, with each `"` inside doubled. Other fields, spaces included, are
/// written as they are. Text is UTF-8 without a byte order mark.
///
/// Values are written verbatim (plain RFC 4180), unless the file is for a
/// spreadsheet (``record(_:lineEnd:separator:spreadsheet:)``): then a value that
/// a spreadsheet would run as a formula or read as a number is neutralised
/// (``spreadsheetSafe(_:)``), and import undoes it
/// (``DataColumns/importElement(_:columns:)``).
package enum CSVWriter {
    /// The first characters that make a spreadsheet treat a cell as a formula
    /// (OWASP, "CSV Injection": `=`, `+`, `-`, `@`, TAB, CR).
    static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]

    /// `value` as a spreadsheet keeps it text: a leading `'` before a value that
    /// starts with a formula character (`=HYPERLINK(…)` → `'=HYPERLINK(…)`,
    /// `+8613800138000` → `'+8613800138000`, which also keeps a phone from
    /// becoming `8.61E+12`); other values unchanged.
    package static func spreadsheetSafe(_ value: String) -> String {
        guard let first = value.unicodeScalars.first, formulaStarts.contains(first) else { return value }
        return "'" + value
    }

    /// The record terminator, CR LF.
    package static let lineEnd = "\r\n"

    /// One field, quoted if it needs to be: `a,b` → `"a,b"`, `say "hi"` → `"say ""hi"""`.
    /// With another `separator` (`;`, tab), a field holding it is quoted instead of one holding `,`.
    package static func field(_ value: String, separator: Unicode.Scalar = ",") -> String {
        let needsQuotes = value.unicodeScalars.contains { $0 == separator || $0 == "\"" || $0 == "\r" || $0 == "\n" }
        guard needsQuotes else { return value }
        // Scalar by scalar: a quote followed by a combining mark is one Character.
        var quoted = String.UnicodeScalarView()
        quoted.append("\"")
        for scalar in value.unicodeScalars {
            quoted.append(scalar)
            if scalar == "\"" { quoted.append("\"") }
        }
        quoted.append("\"")
        return String(quoted)
    }

    /// One record, its fields quoted as needed and separated by `separator`
    /// (`,` unless a report follows its input's), ending in `end` (CRLF,
    /// RFC 4180, unless a report follows its input's line ends).
    /// With `spreadsheet`, each value is first made ``spreadsheetSafe(_:)`` (`export --excel`).
    package static func record(
        _ fields: [String], lineEnd end: String = lineEnd, separator: Unicode.Scalar = ",",
        spreadsheet: Bool = false
    ) -> String {
        fields.map { field(spreadsheet ? spreadsheetSafe($0) : $0, separator: separator) }
            .joined(separator: String(Character(separator))) + end
    }

    /// A whole document: the header record, then one record per row.
    package static func document(header: [String], rows: [[String]]) -> String {
        ([header] + rows).map { record($0) }.joined()
    }
}
