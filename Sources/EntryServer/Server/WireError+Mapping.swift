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
    package init(mapping error: any Error, interface: String = WireInterface.entries.rawValue) {
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
            self.init(.validationFailed, parameters: object(("problems", .array(problems.map(\.json)))))
        case .entryNotFound(let id):
            self.init(.entryNotFound, parameters: object(("id", .string(id))))
        case .entryExists(let id):
            self.init(.entryExists, parameters: object(("id", .string(id))))
        case .versionMismatch(let id, let version):
            self.init(.versionMismatch, parameters: object(("id", .string(id)), ("version", .string(version))))
        case .formNotFound(let form):
            let name: WireErrorName =
                interface == WireInterface.forms.rawValue ? .formsFormNotFound : .entriesFormNotFound
            self.init(name, parameters: object(("form", .string(form))))
        case .fieldNotFound(let form, let field):
            self.init(.fieldNotFound, parameters: object(("form", .string(form)), ("field", .string(field))))
        case .limitExceeded(let limit, let maximum):
            self.init(.limitExceeded, parameters: object(("limit", .string(limit)), ("maximum", .int(Int64(maximum)))))
        case .storageFailed(let reason):
            self.init(.storageFailed, parameters: object(("reason", .string(reason))))
        case .invalidParameter(let parameter):
            self = .invalidParameter(parameter)
        case .permissionDenied(let role):
            self.init(.permissionDenied, parameters: object(("role", .string(role.name))))
        case .clockSkew(let node, let aheadMs):
            self.init(.clockSkew, parameters: object(("node", .string(node)), ("aheadMs", .int(aheadMs))))
        case .conflictNotFound(let id):
            self.init(.conflictNotFound, parameters: object(("id", .string(id))))
        case .peerNotFound(let peer):
            self.init(.peerNotFound, parameters: object(("peer", .string(peer))))
        case .peerUnreachable(let peer, let reason):
            self.init(.peerUnreachable, parameters: object(("peer", .string(peer)), ("reason", .string(reason))))
        case .peerRefused(let peer, let role):
            self.init(
                .peerUnreachable,
                parameters: object(
                    ("peer", .string(peer)),
                    ("reason", .string(EntryError.peerRefused(peer: peer, role: role).description)),
                    ("role", .string(role))))
        case .peerRefusedGateway(let peer):
            self.init(
                .peerUnreachable,
                parameters: object(
                    ("peer", .string(peer)), ("reason", .string(EntryError.peerRefusedGateway(peer: peer).description)),
                    ("role", .string("admin")), ("gateway", .bool(true))))
        case .entryErased(let id, let at):
            self.init(.entryErased, parameters: object(("id", .string(id)), ("at", .string(at))))
        case .backupUnsupported(let database, let tool):
            self.init(.backupUnsupported, parameters: object(("database", .string(database)), ("tool", .string(tool))))
        }
    }
}
