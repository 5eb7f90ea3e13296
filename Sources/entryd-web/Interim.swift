// Interim wiring until MethodAccess (entryd's role table) and WebUsers land; replaced at merge.
import EntryModel
import EntryProtocol
import EntryWeb
import Foundation

enum WebPolicy {
    static let methods = MethodPolicy(roleOf: { MethodAccess.role(of: $0) }, socketOnly: MethodAccess.peerOnly)
    static let openAPI: @Sendable () -> JSON = { .object([("openapi", .string("3.1.0"))]) }
}

final class WebUserDirectory: UserDirectory, @unchecked Sendable {
    init(path: String, log: Log) throws {}
    func reload() {}
    func verify(name: String, password: String) -> Role? { nil }
    func role(of name: String) -> Role? { nil }
}
