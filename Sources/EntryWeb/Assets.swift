/// The embedded pages (``WebAssets``), looked up by request path.
package enum Assets {
    /// The file served at `path` (`/` is `index.html`, `/list` is `list.html`,
    /// `/assets/form.js` is `assets/form.js`), or nil.
    package static func file(at path: String) -> (contentType: String, etag: String, body: [UInt8])? {
        var name = path.hasPrefix("/") ? String(path.dropFirst()) : path
        if name.isEmpty { name = "index.html" }
        guard let file = served[name] ?? served[name + ".html"] else { return nil }
        return (file.contentType, file.etag, file.body)
    }

    /// Every file with its bytes, made once (not on each request).
    private static let served: [String: (contentType: String, etag: String, body: [UInt8])] =
        WebAssets.files.mapValues { ($0.contentType, $0.etag, Array($0.text.utf8)) }
}
