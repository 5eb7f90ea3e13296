// Interim wiring until MethodAccess (entryd's role table) and WebUsers land; replaced at merge.
import EntryModel
import EntryWeb
import Foundation

enum WebPolicy {
    static let methods = MethodPolicy(roleOf: { method in
        let write: Set = ["io.entryd.Entries.Add", "io.entryd.Entries.Update", "io.entryd.Entries.Delete",
                          "io.entryd.Entries.Restore", "io.entryd.Entries.Import"]
        let admin: Set = ["io.entryd.Sync.Resolve", "io.entryd.Entries.Erase", "io.entryd.Entries.FindSubject",
                          "io.entryd.Entries.VerifyErasure", "io.entryd.Sync.Compact"]
        if write.contains(method) { return .write }
        if admin.contains(method) { return .admin }
        return method.hasPrefix("io.entryd.") || method.hasPrefix("org.varlink.service.") ? .read : nil
    }, socketOnly: ["io.entryd.Sync.Apply", "io.entryd.Sync.SyncPeer", "io.entryd.Sync.HeldFrom", "io.entryd.Entries.Backup"])
    static let openAPI: @Sendable () -> JSON = { .object([("openapi", .string("3.1.0"))]) }
}

final class WebUserDirectory: UserDirectory, @unchecked Sendable {
    init(path: String, log: Log) throws {}
    func reload() {}
    func verify(name: String, password: String) -> Role? { nil }
    func role(of name: String) -> Role? { nil }
}
