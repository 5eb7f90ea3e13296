import EntryClient
import EntryModel
import Foundation
import Testing

/// Issue 16, item 8: every message entryctl prints exists in zh and en.
/// entryctl's own words are ``Localized`` values (both texts required by the
/// initializer); these tests read entryctl's and EntryClient's sources and
/// fail when a message is written in one language only.
@Suite struct MessageCatalogTests {
    /// The Swift files of entryctl and EntryClient, with their text.
    static let sources: [(path: String, text: String)] = {
        let root = repositoryRoot()
        var files: [(String, String)] = []
        for directory in ["Sources/entryctl", "Sources/EntryClient"] {
            let base = root.appendingPathComponent(directory)
            let walker = FileManager.default.enumerator(atPath: base.path)
            while let relative = walker?.nextObject() as? String {
                guard relative.hasSuffix(".swift"),
                    let text = try? String(contentsOf: base.appendingPathComponent(relative), encoding: .utf8)
                else { continue }
                files.append((directory + "/" + relative, Self.joiningBrokenLiterals(text)))
            }
        }
        return files.sorted { $0.0 < $1.0 }
    }()

    /// `text` with a string literal that swift format moved to the next line (after
    /// `(`, `[` or a label's `:`) joined back to its call, and the line it left kept
    /// empty, so the scans see `en: "…"` and `UsageError("…"` and the line numbers hold.
    static func joiningBrokenLiterals(_ text: String) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for k in lines.indices.dropLast() {
            let next = lines[k + 1].drop(while: { $0 == " " })
            guard next.hasPrefix("\""), let last = lines[k].last, "([:".contains(last) else { continue }
            lines[k] += (last == ":" ? " " : "") + next
            lines[k + 1] = ""
        }
        return lines.joined(separator: "\n")
    }

    /// Whether `text` holds a CJK ideograph or CJK punctuation.
    static func hasChinese(_ text: String) -> Bool {
        text.unicodeScalars.contains {
            (0x4E00...0x9FFF).contains($0.value) || (0x3000...0x303F).contains($0.value)
                || (0xFF00...0xFFEF).contains($0.value)
        }
    }

    /// The string literal that `text` starts inside of (escapes and interpolations kept), up to its closing quote.
    static func literal(in text: Substring) -> String? {
        var out = ""
        var escaped = false
        var depth = 0
        for c in text {
            if escaped {
                out.append(c)
                escaped = false
                if c == "(" { depth += 1 }
                continue
            }
            if c == "\\" {
                out.append(c)
                escaped = true
                continue
            }
            if c == "(" { depth += 1 } else if c == ")" { depth -= 1 }
            if c == "\"" && depth <= 0 { return out }
            out.append(c)
        }
        return nil
    }

    @Test(
        "every zh text of the catalog is Chinese and every message has an en text; the sources have some hundreds of them"
    )
    func catalogEntries() throws {
        var count = 0
        for (path, text) in Self.sources {
            do {
                let marker = "zh: \""
                var rest = text[...]
                while let range = rest.range(of: marker) {
                    rest = rest[range.upperBound...]
                    guard let zh = Self.literal(in: rest) else { continue }
                    count += 1
                    let line = text[..<range.lowerBound].filter { $0 == "\n" }.count + 1
                    #expect(Self.hasChinese(zh), "\(path):\(line): zh text without Chinese: \(zh)")
                    // The en text follows (same call): it must be there and not empty.
                    let after = rest.dropFirst(zh.count + 1).prefix(2000)
                    let en = after.range(of: "en: \"").flatMap { Self.literal(in: after[$0.upperBound...]) }
                    #expect(en?.isEmpty == false, "\(path):\(line): no en text after zh \(zh)")
                }
            }
        }
        #expect(count > 200, "found \(count) zh texts")
        // The type itself: both texts, chosen by locale.
        let text = Localized(zh: "缺少 ID", en: "missing ID")
        #expect(text(.zh) == "缺少 ID" && text(.en) == "missing ID")
    }

    /// Calls whose string argument is printed or thrown to people as it is.
    static let printing = [
        "UsageError(\"", "Refusal(\"", "RowsRejected(lines: [\"", "Terminal.message(\"", "Terminal.out(lines: [\"",
        "print(\"", "help: \"", "summary: \"", "details: [\"", "HeaderError(message: \"", "lines.append(\"",
    ]

    @Test(
        "no English-only literal is printed: usage errors, refusals, messages, help, summaries and details all go through Localized"
    )
    func noEnglishOnlyLiterals() {
        var found: [String] = []
        for (path, text) in Self.sources {
            for (k, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                if line.trimmingCharacters(in: .whitespaces).hasPrefix("//") { continue }
                for call in Self.printing {
                    var rest = line[...]
                    while let range = rest.range(of: call) {
                        rest = rest[range.upperBound...]
                        guard let literal = Self.literal(in: rest) else { continue }
                        // Words (a letter run of three or more) in a literal with no Chinese: English only.
                        let words = literal.split { !$0.isLetter }.filter { $0.count >= 3 && $0.allSatisfy(\.isASCII) }
                        if !Self.hasChinese(literal) && !words.isEmpty {
                            found.append("\(path):\(k + 1): \(call)\(literal)\"")
                        }
                    }
                }
            }
        }
        #expect(found.isEmpty, "English-only messages:\n\(found.joined(separator: "\n"))")
    }

    @Test("the scan finds an English-only message when there is one")
    func scanWorks() {
        let line = #"throw UsageError("missing ID")"#
        let range = line.range(of: "UsageError(\"")!
        #expect(Self.literal(in: line[range.upperBound...]) == "missing ID")
        #expect(!Self.hasChinese("missing ID") && Self.hasChinese("缺少 ID") && Self.hasChinese("（"))
        let broken =
            "throw UsageError(\n    \"missing ID\")\nLocalized(\n    zh: \"缺少\",\n    en:\n        \"missing\")"
        #expect(
            Self.joiningBrokenLiterals(broken)
                == "throw UsageError(\"missing ID\")\n\nLocalized(\n    zh: \"缺少\",\n    en: \"missing\")\n")
    }

    /// Words the zh texts do not use, with the one they use instead: 化身
    /// (an avatar, a god's earthly form) for a node's incarnation reads oddly
    /// to an operator; 数据代次 (the generation of the node's data) is the word.
    static let avoided: [(word: String, instead: String)] = [("化身", "数据代次")]

    @Test("no zh text of Sources, web, doc or config uses an avoided word (化身: 数据代次)")
    func avoidedWords() throws {
        let root = repositoryRoot()
        var found: [String] = []
        for directory in ["Sources", "web", "doc", "config", "completion"] {
            let base = root.appendingPathComponent(directory)
            let walker = FileManager.default.enumerator(atPath: base.path)
            while let relative = walker?.nextObject() as? String {
                guard let text = try? String(contentsOf: base.appendingPathComponent(relative), encoding: .utf8)
                else { continue }
                for (word, instead) in Self.avoided where text.contains(word) {
                    found.append("\(directory)/\(relative): \(word) (say \(instead))")
                }
            }
        }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }
}
