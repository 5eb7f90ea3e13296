@testable import EntryModel
@testable import EntryProtocol
@testable import EntryServer

/// Wire errors for expectations, built through the server's one mapping
/// (`WireError(mapping:interface:)`), so tests say what the daemon sends.
extension WireError {
    static func validationFailed(_ problems: [Problem]) -> WireError {
        WireError(mapping: EntryError.validationFailed(problems))
    }
    static func entryNotFound(_ id: String) -> WireError { WireError(mapping: EntryError.entryNotFound(id)) }
    static func storageFailed(_ reason: String) -> WireError { WireError(mapping: EntryError.storageFailed(reason)) }
    static func limitExceeded(_ limit: String, maximum: Int) -> WireError {
        WireError(mapping: EntryError.limitExceeded(limit, maximum: maximum))
    }
}
