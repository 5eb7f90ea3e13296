import EntryLedger
import EntryModel
import EntryProtocol
import EntrySync

extension WireError {
    /// Maps any error to the wire, in one place (doc/protocol.md "Errors").
    ///
    /// - ``EntryError``: its varlink error, with the parameters doc/protocol.md
    ///   gives it; `formNotFound` takes the name of the interface called
    ///   (`io.entryd.Entries.FormNotFound` or `io.entryd.Forms.FormNotFound`).
    /// - ``WireError``: as is (protocol-level errors of the server, and errors a
    ///   peer answered with).
    /// - a ``StorageError`` of the store (e.g. `SQLiteError`): `StorageFailed`
    ///   with a reason safe to show (``StorageError/entryError``).
    /// - anything else: `StorageFailed` with no detail (the daemon logs it).
    /// - Parameter interface: the interface of the call being answered, e.g. `io.entryd.Forms`.
    public init(mapping error: any Error, interface: String = "io.entryd.Entries") {
        switch error {
        case let e as EntryError: self.init(e, interface: interface)
        case let e as WireError: self = e
        case let e as any StorageError: self.init(e.entryError, interface: interface)
        default: self.init(EntryError.storageFailed("internal error; see the daemon log"), interface: interface)
        }
    }

    /// The varlink error of a domain error (see ``init(mapping:interface:)``).
    init(_ error: EntryError, interface: String) {
        func object(_ members: (String, JSON)...) -> JSON { .object(members) }
        switch error {
        case .validationFailed(let problems):
            self.init(name: WireErrorName.validationFailed, parameters: object(("problems", .array(problems.map(\.json)))))
        case .entryNotFound(let id):
            self.init(name: WireErrorName.entryNotFound, parameters: object(("id", .string(id))))
        case .entryExists(let id):
            self.init(name: WireErrorName.entryExists, parameters: object(("id", .string(id))))
        case .versionMismatch(let id, let version):
            self.init(name: WireErrorName.versionMismatch, parameters: object(("id", .string(id)), ("version", .string(version))))
        case .formNotFound(let form):
            let name = interface == "io.entryd.Forms" ? WireErrorName.formsFormNotFound : WireErrorName.entriesFormNotFound
            self.init(name: name, parameters: object(("form", .string(form))))
        case .fieldNotFound(let form, let field):
            self.init(name: WireErrorName.fieldNotFound, parameters: object(("form", .string(form)), ("field", .string(field))))
        case .limitExceeded(let limit, let maximum):
            self.init(name: WireErrorName.limitExceeded, parameters: object(("limit", .string(limit)), ("maximum", .int(Int64(maximum)))))
        case .storageFailed(let reason):
            self.init(name: WireErrorName.storageFailed, parameters: object(("reason", .string(reason))))
        case .invalidParameter(let parameter):
            self = .invalidParameter(parameter)
        case .permissionDenied(let role):
            self.init(name: WireErrorName.permissionDenied, parameters: object(("role", .string(role.name))))
        case .clockSkew(let node, let aheadMs):
            self.init(name: WireErrorName.clockSkew, parameters: object(("node", .string(node)), ("aheadMs", .int(aheadMs))))
        case .conflictNotFound(let id):
            self.init(name: WireErrorName.conflictNotFound, parameters: object(("id", .string(id))))
        case .peerNotFound(let peer):
            self.init(name: WireErrorName.peerNotFound, parameters: object(("peer", .string(peer))))
        case .peerUnreachable(let peer, let reason):
            self.init(name: WireErrorName.peerUnreachable, parameters: object(("peer", .string(peer)), ("reason", .string(reason))))
        case .entryErased(let id, let at):
            self.init(name: WireErrorName.entryErased, parameters: object(("id", .string(id)), ("at", .string(at))))
        case .backupUnsupported(let database, let tool):
            self.init(name: WireErrorName.backupUnsupported, parameters: object(("database", .string(database)), ("tool", .string(tool))))
        }
    }
}
