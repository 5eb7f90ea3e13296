import Foundation

/// A fresh database in its own temporary directory, removed afterwards.
final class TestDatabase {
    let directory: String
    var path: String { directory + "/entries.db" }

    init() {
        directory = NSTemporaryDirectory() + "entryd-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}
