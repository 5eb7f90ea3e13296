import Foundation
import Testing
@testable import EntryLedger
@testable import EntryModel

/// A closed store lets go of its database: the test suite opens hundreds of
/// stores in one process, and each one whose writer connection stayed open
/// took its descriptors along (a serial run went past 1,300 open descriptors).
@Suite struct StoreCloseTests {
    /// The test process's descriptors that name a file under `directory`.
    static func descriptors(under directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)
        }.filter { $0.hasPrefix(directory + "/") }
    }

    @Test("a closed store, once released, holds no descriptor of its database, its WAL or its lock; the store is freed")
    func closedStoreLetsGo() throws {
        let db = TestDatabase()
        weak var released: EntryStore?
        do {
            let store = try EntryStore(path: db.path, readers: 2)
            released = store
            _ = try store.create(
                form: "f", id: nil, fields: ["name": "a"], layout: .registration, origin: WriteOrigin(actor: "u"))
            _ = try store.get("none")
            #expect(!Self.descriptors(under: db.directory).isEmpty)
            store.close()
        }
        #expect(released == nil, "the store is kept alive after close()")
        let left = Self.descriptors(under: db.directory)
        #expect(left.isEmpty, "still open: \(left)")
    }
}
