import EntryProtocol

/// One varlink interface description, parsed (the varlink IDL,
/// https://varlink.org/Interface-Definition): its name, doc comments, type
/// declarations, methods and errors, each list in file order.
///
/// entryd-web reads the texts entryd serves (``InterfaceDescriptions``,
/// compiled from interfaces/*.varlink) to describe its HTTP API
/// (``OpenAPIDocument``), so the description cannot drift from the methods.
///
/// Doc comments are the `#` lines directly above a declaration or a field (a
/// blank line between them and it breaks the link), without `# ` and joined by
/// newlines.
package struct VarlinkIDL: Sendable, Equatable {
    /// A field type.
    package indirect enum VarlinkType: Sendable, Equatable {
        /// `string`.
        case string
        /// `int` (a JSON integer; entryd's are 64-bit).
        case int
        /// `float`.
        case float
        /// `bool`.
        case bool
        /// `object`: any JSON object.
        case object
        /// `?T`: may be absent (or null).
        case optional(VarlinkType)
        /// `[]T`: an array.
        case array(VarlinkType)
        /// `[string]T`: an object with any keys and values of type T.
        case map(VarlinkType)
        /// A type declared with `type NAME` in the same interface.
        case named(String)
        /// An inline struct `(a: T, b: U)`.
        case structure([Field])
        /// An inline enum `(a, b, c)`: one of the names, as a JSON string.
        case enumeration([String])
    }

    /// A member of a struct, of method parameters or replies, or of error parameters.
    package struct Field: Sendable, Equatable {
        /// The member name.
        package let name: String
        /// Its type.
        package let type: VarlinkType
        /// The doc comment above it, or "".
        package let doc: String
    }

    /// `type NAME (...)`: a struct or an enum.
    package struct TypeDeclaration: Sendable, Equatable {
        /// The name, e.g. `Entry`.
        package let name: String
        /// The doc comment, or "".
        package let doc: String
        /// ``VarlinkType/structure(_:)`` or ``VarlinkType/enumeration(_:)``.
        package let type: VarlinkType
    }

    /// `method NAME (parameters) -> (reply)`.
    package struct MethodDeclaration: Sendable, Equatable {
        /// The name, e.g. `Add`.
        package let name: String
        /// The doc comment, or "".
        package let doc: String
        /// The parameters, in order.
        package let parameters: [Field]
        /// The reply's members, in order.
        package let reply: [Field]
    }

    /// `error NAME (parameters)`.
    package struct ErrorDeclaration: Sendable, Equatable {
        /// The name, e.g. `EntryNotFound`.
        package let name: String
        /// The doc comment, or "".
        package let doc: String
        /// The error's parameters.
        package let parameters: [Field]
    }

    /// The interface name, e.g. `io.entryd.Entries`.
    package let name: String
    /// The doc comment above `interface`, or "".
    package let doc: String
    /// The `type` declarations.
    package let types: [TypeDeclaration]
    /// The methods.
    package let methods: [MethodDeclaration]
    /// The errors.
    package let errors: [ErrorDeclaration]

    /// The method named `name` (unqualified), or nil.
    package func method(_ name: String) -> MethodDeclaration? { methods.first { $0.name == name } }
    /// The type named `name` (unqualified), or nil.
    package func type(_ name: String) -> TypeDeclaration? { types.first { $0.name == name } }

    /// Every interface entryd serves (``InterfaceDescriptions/all``), parsed, in that order.
    /// The texts are the project's own and checked by the tests, so a parse
    /// failure here is a build mistake and stops the process.
    package static let served: [VarlinkIDL] = InterfaceDescriptions.all.map { entry in
        do { return try VarlinkIDL(parsing: entry.text) } catch {
            fatalError("interfaces/\(entry.name).varlink: \(error)")
        }
    }

    /// Parses one interface description.
    /// - Throws: ``VarlinkIDLError`` naming the line and what was expected.
    package init(parsing text: String) throws(VarlinkIDLError) {
        var p = Parser(tokens: try Lexer.tokens(text))
        try p.expectWord("interface")
        doc = p.lastDoc
        name = try p.word()
        var types: [TypeDeclaration] = []
        var methods: [MethodDeclaration] = []
        var errors: [ErrorDeclaration] = []
        var names = Set<String>()
        while !p.atEnd {
            let keyword = try p.word()
            let doc = p.lastDoc
            let line = p.line
            let member = try p.word()
            guard names.insert(member).inserted else {
                throw VarlinkIDLError(line: line, message: "'\(member)' is declared twice")
            }
            switch keyword {
            case "type":
                let t = try p.inlineType()
                types.append(TypeDeclaration(name: member, doc: doc, type: t))
            case "method":
                let parameters = try p.fields()
                try p.expect("->")
                methods.append(MethodDeclaration(name: member, doc: doc, parameters: parameters, reply: try p.fields()))
            case "error":
                errors.append(ErrorDeclaration(name: member, doc: doc, parameters: try p.fields()))
            default:
                throw VarlinkIDLError(line: line, message: "expected type, method or error, found '\(keyword)'")
            }
        }
        self.types = types
        self.methods = methods
        self.errors = errors
    }
}

/// A varlink interface description that does not parse: where and why.
package struct VarlinkIDLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The line, from 1.
    package let line: Int
    /// What was expected or found.
    package let message: String
    /// `line N: MESSAGE`.
    package var description: String { "line \(line): \(message)" }
}

/// A token of the IDL: a word (names, keywords, dotted interface names) or a
/// punctuation mark, with its line and the doc comment directly above it.
private struct Token {
    enum Kind: Equatable {
        case word(String)
        case mark(String)
    }
    let kind: Kind
    let line: Int
    let doc: String
}

private enum Lexer {
    static func tokens(_ text: String) throws(VarlinkIDLError) -> [Token] {
        var out: [Token] = []
        var comment: [String] = []
        var line = 1
        let s = Array(text.unicodeScalars)
        var i = 0
        var lineHasToken = false
        var lineHasComment = false
        func isWord(_ c: Unicode.Scalar) -> Bool {
            ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "_" || c == "."
        }
        while i < s.count {
            let c = s[i]
            if c == "\n" {
                // A blank line parts a comment from what follows.
                if !lineHasToken && !lineHasComment { comment = [] }
                line += 1
                lineHasToken = false
                lineHasComment = false
                i += 1
                continue
            }
            if c == " " || c == "\t" || c == "\r" {
                i += 1
                continue
            }
            if c == "#" {
                var j = i + 1
                while j < s.count, s[j] != "\n" { j += 1 }
                var body = String(String.UnicodeScalarView(s[(i + 1)..<j]))
                if body.hasPrefix(" ") { body.removeFirst() }
                // A comment after a token on its line documents nothing.
                if !lineHasToken { comment.append(body) }
                lineHasComment = true
                i = j
                continue
            }
            let doc = comment.joined(separator: "\n")
            comment = []
            lineHasToken = true
            if isWord(c) {
                var j = i
                while j < s.count, isWord(s[j]) { j += 1 }
                out.append(Token(kind: .word(String(String.UnicodeScalarView(s[i..<j]))), line: line, doc: doc))
                i = j
            } else if c == "-", i + 1 < s.count, s[i + 1] == ">" {
                out.append(Token(kind: .mark("->"), line: line, doc: doc))
                i += 2
            } else if "(),:?[]".unicodeScalars.contains(c) {
                out.append(Token(kind: .mark(String(c)), line: line, doc: doc))
                i += 1
            } else {
                throw VarlinkIDLError(line: line, message: "unexpected character '\(c)'")
            }
        }
        return out
    }
}

private struct Parser {
    let tokens: [Token]
    var k = 0
    /// The doc comment of the last token taken.
    var lastDoc = ""

    init(tokens: [Token]) { self.tokens = tokens }

    var atEnd: Bool { k >= tokens.count }
    var line: Int { k < tokens.count ? tokens[k].line : (tokens.last?.line ?? 1) }

    func peek(_ offset: Int = 0) -> Token.Kind? { k + offset < tokens.count ? tokens[k + offset].kind : nil }

    mutating func take() throws(VarlinkIDLError) -> Token {
        guard k < tokens.count else { throw VarlinkIDLError(line: line, message: "unexpected end of the description") }
        defer { k += 1 }
        lastDoc = tokens[k].doc
        return tokens[k]
    }

    mutating func word() throws(VarlinkIDLError) -> String {
        let t = try take()
        guard case .word(let w) = t.kind else {
            throw VarlinkIDLError(line: t.line, message: "expected a name, found \(t.kind)")
        }
        return w
    }

    mutating func expectWord(_ w: String) throws(VarlinkIDLError) {
        let t = try take()
        guard t.kind == .word(w) else {
            throw VarlinkIDLError(line: t.line, message: "expected '\(w)', found \(t.kind)")
        }
    }

    mutating func expect(_ mark: String) throws(VarlinkIDLError) {
        let t = try take()
        guard t.kind == .mark(mark) else {
            throw VarlinkIDLError(line: t.line, message: "expected '\(mark)', found \(t.kind)")
        }
    }

    /// `( name: type, … )`.
    mutating func fields() throws(VarlinkIDLError) -> [VarlinkIDL.Field] {
        let t = try inlineType()
        guard case .structure(let fields) = t else {
            throw VarlinkIDLError(line: line, message: "expected fields (name: type, …), found an enum")
        }
        return fields
    }

    /// `( … )`: a struct when it is empty or its first member has a type, else an enum.
    mutating func inlineType() throws(VarlinkIDLError) -> VarlinkIDL.VarlinkType {
        try expect("(")
        if peek() == .mark(")") {
            _ = try take()
            return .structure([])
        }
        if peek(1) == .mark(":") {
            var fields: [VarlinkIDL.Field] = []
            while true {
                let name = try word()
                let doc = lastDoc
                try expect(":")
                fields.append(VarlinkIDL.Field(name: name, type: try type(), doc: doc))
                if peek() == .mark(",") {
                    _ = try take()
                    continue
                }
                try expect(")")
                return .structure(fields)
            }
        }
        var names: [String] = []
        while true {
            names.append(try word())
            if peek() == .mark(",") {
                _ = try take()
                continue
            }
            try expect(")")
            return .enumeration(names)
        }
    }

    /// A field type: `?T`, `[]T`, `[string]T`, a primitive, a type name or an inline struct or enum.
    mutating func type() throws(VarlinkIDLError) -> VarlinkIDL.VarlinkType {
        switch peek() {
        case .mark("?")?:
            _ = try take()
            return .optional(try type())
        case .mark("[")?:
            _ = try take()
            if peek() == .mark("]") {
                _ = try take()
                return .array(try type())
            }
            try expectWord("string")
            try expect("]")
            return .map(try type())
        case .mark("(")?:
            return try inlineType()
        default:
            switch try word() {
            case "string": return .string
            case "int": return .int
            case "float": return .float
            case "bool": return .bool
            case "object": return .object
            case let name: return .named(name)
            }
        }
    }
}
