import Foundation

/// From the varlink interface files (interfaces/NAME.varlink):
///
/// - InterfaceDescriptions.swift, so the daemon serves them byte for byte (LF
///   line ends) through org.varlink.service.GetInterfaceDescription;
/// - WireNames.swift, the wire surface as types: the enums WireInterface, Method
///   and WireErrorName, one case per interface, method and error declared, with
///   the interface each belongs to. Every rule about a method or an error (role,
///   peer-only, HTTP status, exit code, the client's words, the handler) is an
///   exhaustive switch over these elsewhere, so a method or an error added to a
///   .varlink file is a compile error until every place handles it.
///
/// Case names: an interface is the last part of its name, lower-cased (Entries:
/// entries, org.varlink.service: service); a method is its interface's case name
/// followed by the method name (entriesAdd, serviceGetInfo); an error is its own
/// name in lowerCamelCase (entryNotFound), prefixed like a method only when two
/// interfaces declare that name (entriesFormNotFound, formsFormNotFound).
///
/// The interfaces come in doc/protocol.md's order (its fenced blocks that declare
/// an interface), then org.varlink.service. Each io.entryd.* file holds its
/// interface block of doc/protocol.md (the contract) with the project's additions;
/// Tests/interop checks, with the PyPI varlink parser, that every contract member
/// is served with its shape and that every addition inside a contract member is
/// optional (or an enum value at the end).
enum InterfaceGenerator {
    /// The interface names declared by the fenced blocks (```` ``` ````) of
    /// doc/protocol.md, in order, each once.
    static func contract(_ protocolText: String) -> [String] {
        let text = Array(protocolText.utf8)
        let open = Array("```\n".utf8)
        let fence = Array("```".utf8)
        var names: [String] = []
        var position = 0
        while let start = find(open, in: text, from: position) {
            guard let end = find(fence, in: text, from: start + open.count) else { break }
            let block = String(decoding: text[(start + open.count)..<end], as: UTF8.self)
            position = end + fence.count
            for line in block.split(separator: "\n", omittingEmptySubsequences: false)
            where line.hasPrefix("interface ") {
                let name = line.dropFirst("interface ".count).prefix(while: { !$0.isWhitespace })
                if !name.isEmpty {
                    if !names.contains(String(name)) { names.append(String(name)) }
                    break
                }
            }
        }
        return names
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard haystack.count >= needle.count, from <= haystack.count - needle.count else { return nil }
        for i in from...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        }
        return nil
    }

    /// (name, doc lines) of each `kind` ("method" or "error") declared in an
    /// interface text, in file order; the doc lines are the comment lines right
    /// above the declaration.
    static func members(_ text: String, _ kind: String) -> [(name: String, doc: [String])] {
        var found: [(String, [String])] = []
        var comment: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") {
                comment.append(String(line.dropFirst()).trimmed)
                continue
            }
            if line.hasPrefix(kind + " ") {
                let name = line.dropFirst(kind.count + 1).prefix(while: { $0.isLetter || $0.isNumber || $0 == "_" })
                if !name.isEmpty { found.append((String(name), comment)) }
            }
            comment = []
        }
        return found
    }

    static func caseOfInterface(_ name: String) -> String {
        String(name.split(separator: ".").last ?? "").lowercased()
    }

    static func lowerCamel(_ name: String) -> String { name.prefix(1).lowercased() + name.dropFirst() }

    static func doc(_ lines: [String], indent: String = "    ") -> [String] {
        lines.map { "\(indent)/// \($0)".trimmedAtEnd }
    }

    static func generate(root: String, descriptionsOutput: String, namesOutput: String) throws {
        let order = contract(try readText(join(root, "doc/protocol.md")))
        let contractNames = Set(order)
        let all = order + ["org.varlink.service"]
        var texts: [String: String] = [:]
        for name in all {
            let path = join(root, "interfaces/\(name).varlink")
            let text = try readText(path)
            if !text.hasSuffix("\n") || text.contains("\"\"\"#") {
                throw Failure("\(path): must end with LF and hold no \"\"\"#")
            }
            if contractNames.contains(name),
                !text.split(separator: "\n", omittingEmptySubsequences: false).contains(where: {
                    $0 == "interface \(name)"
                })
            {
                throw Failure("\(path): does not declare interface \(name)")
            }
            texts[name] = text
        }

        var out = [
            "// Generated at build time from interfaces/*.varlink by Sources/entryd-embed (the Embed plugin);",
            "// not in git. Edit the interface files; Tests/interop checks the served texts.",
            "",
            "/// The varlink interface descriptions entryd serves, keyed by interface name.",
            "package enum InterfaceDescriptions {",
        ]
        for name in all {
            out.append("    /// `\(name)`: interfaces/\(name).varlink.")
            out.append("    static let \(caseOfInterface(name)) = #\"\"\"\n\(texts[name]!)\n\"\"\"#")
        }
        out.append("    /// Every interface, in doc/protocol.md order, then org.varlink.service.")
        out.append("    package static let all: [(name: String, text: String)] = [")
        for name in all { out.append("        (\"\(name)\", \(caseOfInterface(name))),") }
        out += ["    ]", "}"]
        try write(out, to: descriptionsOutput)

        var names = [
            "// Generated at build time from interfaces/*.varlink by Sources/entryd-embed (the Embed plugin);",
            "// not in git. After an edit of an interface file, handle the compile errors it gives:",
            "// every rule about a method or an error is an exhaustive switch over these enums.",
            "",
            "/// An interface entryd serves, by its qualified name: one file",
            "/// interfaces/NAME.varlink each, in doc/protocol.md order, then org.varlink.service.",
            "package enum WireInterface: String, CaseIterable, Sendable {",
        ]
        for name in all {
            names.append("    /// `\(name)`: interfaces/\(name).varlink.")
            names.append("    case \(caseOfInterface(name)) = \"\(name)\"")
        }
        names.append("}")

        // One enum of qualified names with its `interface` property: methods, then errors.
        func nameEnum(
            _ header: [String], _ members: [(iface: String, name: String, doc: [String])],
            caseName: (String, String) -> String
        ) {
            names += [""] + header
            for m in members {
                names.append("    /// `\(m.iface).\(m.name)`" + (m.doc.isEmpty ? "." : ":"))
                names += doc(m.doc)
                names.append("    case \(caseName(m.iface, m.name)) = \"\(m.iface).\(m.name)\"")
            }
            names += [
                "", "    /// The interface that declares the \(header.last!.contains("Method") ? "method" : "error").",
                "    package var interface: WireInterface {", "        switch self {",
            ]
            for iface in all {
                let cases = members.filter { $0.iface == iface }.map { "." + caseName(iface, $0.name) }
                if !cases.isEmpty {
                    names.append("        case \(cases.joined(separator: ", ")): .\(caseOfInterface(iface))")
                }
            }
            names += ["        }", "    }", "}"]
        }
        let methods = all.flatMap { iface in members(texts[iface]!, "method").map { (iface, $0.name, $0.doc) } }
        nameEnum(
            [
                "/// Every method entryd serves, by its qualified name (the raw value, e.g.",
                "/// `io.entryd.Entries.Add`), one case per `method` of interfaces/*.varlink,",
                "/// in interface and file order. `Method(rawValue:)` is `nil` for a name no",
                "/// interface declares. Its rules: ``role``, ``isPeerOnly`` (MethodAccess.swift),",
                "/// EntryService's dispatch, entryd-web's policy and OpenAPI document.",
                "package enum Method: String, CaseIterable, Sendable {",
            ],
            methods, caseName: { caseOfInterface($0) + $1 })
        let errors = all.flatMap { iface in members(texts[iface]!, "error").map { (iface, $0.name, $0.doc) } }
        var counts: [String: Int] = [:]
        for (_, e, _) in errors { counts[e, default: 0] += 1 }
        nameEnum(
            [
                "/// Every error declared in interfaces/*.varlink, by its qualified name (the",
                "/// raw value, e.g. `io.entryd.Entries.EntryNotFound`), in interface and file",
                "/// order (doc/protocol.md lists each with its parameters).",
                "///",
                "/// A ``WireError`` keeps the name as it came (``WireError/name``, a string: a",
                "/// peer or a newer entryd may send one this build does not declare);",
                "/// ``WireError/known`` is the case of this enum, or `nil` for such a name.",
                "/// Its rules, each an exhaustive switch: ExitCode(wireError:), EntryWeb's",
                "/// WebError.status(for:), entryctl's words (FailureReport.wire).",
                "package enum WireErrorName: String, CaseIterable, Sendable {",
            ],
            errors, caseName: { counts[$1]! > 1 ? caseOfInterface($0) + $1 : lowerCamel($1) })
        try write(names, to: namesOutput)
    }
}
