import Foundation

/// WebAssets.swift from the files of web/ (the pages, plain HTML, CSS and
/// JavaScript), so entryd-web serves them from its own binary.
///
/// Each file web/PATH is served at /PATH, and web/NAME.html also at /NAME (and
/// web/index.html at /). Text files only (UTF-8, LF line ends); the ETag is the
/// first 16 hex digits of the file's SHA-256.
///
/// The service worker, web/sw.js, gets the build's version: its
/// `@ENTRYD_BUILD@` becomes the first 16 hex digits of the SHA-256 of every
/// other file's path and text, and `/* @ENTRYD_PRECACHE@ */ []` the JSON array of the
/// paths they are served at (pages at /NAME, web/index.html at /). So a change
/// of any page changes sw.js, and the browser installs the new worker, which
/// caches the new files under a new name (issue 32).
enum WebGenerator {
    /// The service worker's file under web/.
    static let serviceWorker = "sw.js"
    static let types: [String: String] = [
        ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
        ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml",
        ".json": "application/json", ".webmanifest": "application/manifest+json",
        ".txt": "text/plain; charset=utf-8",
    ]

    /// The files under `web` (relative paths, `/`-separated), in byte order.
    static func files(in web: String) throws -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: web) else { throw Failure("\(web): cannot list") }
        var found: [String] = []
        for case let rel as String in enumerator {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: join(web, rel), isDirectory: &isDirectory), !isDirectory.boolValue
            {
                found.append(rel)
            }
        }
        return found.sorted { $0.byteOrder(before: $1) }
    }

    /// The extension as Python's os.path.splitext gives it (`.js`; `` for `.hidden`).
    static func suffix(_ rel: String) -> String {
        let name = rel.split(separator: "/").last.map(String.init) ?? rel
        let body = name.drop(while: { $0 == "." })
        guard let dot = body.lastIndex(of: ".") else { return "" }
        return String(body[dot...])
    }

    static func generate(web: String, output: String) throws {
        let files = try files(in: web)
        var texts: [String: String] = [:]
        for rel in files { texts[rel] = try readText(join(web, rel)) }
        let others = files.filter { $0 != serviceWorker }
        let version = String(
            SHA256.hex(Array(others.map { "\($0)\n\(texts[$0]!)\n" }.joined().utf8)).prefix(16))
        let precache = others.map { rel -> String in
            if rel == "index.html" { return "\"/\"" }
            return rel.hasSuffix(".html") && !rel.contains("/") ? "\"/\(rel.dropLast(5))\"" : "\"/\(rel)\""
        }
        var out = [
            "// Generated at build time from web/ by Sources/entryd-embed (the Embed plugin); not in git.",
            "// Edit the files in web/: the next build embeds them.",
            "",
            "/// The pages entryd-web serves, from web/ at build time.",
            "enum WebAssets {",
            "    /// A served file: its content type, its ETag and its text.",
            "    struct File: Sendable {",
            "        let contentType: String",
            "        let etag: String",
            "        let text: String",
            "    }",
            "",
            "    /// The build's version of the pages: a SHA-256 prefix of every file but sw.js.",
            "    static let version = \"\(version)\"",
            "",
            "    /// Every file by its path under web/ (`index.html`, `assets/form.js`).",
            "    static let files: [String: File] = [",
        ]
        for rel in files {
            let path = join(web, rel)
            guard let type = types[suffix(rel)] else {
                throw Failure(
                    "\(path): no content type for '\(suffix(rel))' (add it to Sources/entryd-embed/Web.swift)")
            }
            var text = texts[rel]!
            if rel == serviceWorker {
                text = text.replacingOccurrences(of: "@ENTRYD_BUILD@", with: version)
                    .replacingOccurrences(
                        of: "/* @ENTRYD_PRECACHE@ */ []", with: "[" + precache.joined(separator: ", ") + "]")
            }
            if text.contains("\"\"\"#") { throw Failure("\(path): holds \"\"\"#") }
            let etag = SHA256.hex(Array(text.utf8)).prefix(16)
            out.append(
                "        \"\(rel)\": File(contentType: \"\(type)\", etag: \"\\\"\(etag)\\\"\", text: #\"\"\"\n\(text)\n\"\"\"#),"
            )
        }
        if files.isEmpty { out.append("        :") }
        out += ["    ]", "}"]
        try write(out, to: output)
    }
}
