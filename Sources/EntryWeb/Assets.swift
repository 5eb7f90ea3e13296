/// The embedded pages (``WebAssets``), looked up by request path.
public enum Assets {
    /// The file served at `path` (`/` is `index.html`, `/list` is `list.html`,
    /// `/assets/form.js` is `assets/form.js`), or nil.
    public static func file(at path: String) -> (contentType: String, etag: String, body: [UInt8])? {
        var name = path.hasPrefix("/") ? String(path.dropFirst()) : path
        if name.isEmpty { name = "index.html" }
        guard let file = WebAssets.files[name] ?? WebAssets.files[name + ".html"] else { return nil }
        return (file.contentType, file.etag, Array(file.text.utf8))
    }
}
