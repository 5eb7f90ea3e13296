import Foundation
import Synchronization
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync

/// The daemon's calls: `org.varlink.service`, `io.entryd.Entries`,
/// `io.entryd.Forms` and `io.entryd.Sync`, over one store (any ``EntryStore``:
/// entryd passes its SQLite ``EntryStore``).
///
/// Thread-safe: sessions on many threads call ``handle(_:)`` at once. The form
/// registry can be swapped at run time (reload) under a lock.
package final class EntryService: CallHandler, Sendable {
    /// The store every call reads and writes.
    package let store: EntryStore
    /// This instance's name (`Status`'s `instance`); `nil`: not given.
    let instance: String?
    /// The limits in force; a reload replaces them (``reconfigure(limits:defaultLocale:peers:)``).
    package var limits: Limits { configuration.withLock { $0.limits } }
    /// Locale for calls without `locale` (doc/protocol.md: the configured one, `zh` by default).
    package var defaultLocale: EntryLocale { configuration.withLock { $0.locale } }

    /// What a reload replaces.
    private struct Configuration {
        var limits: Limits
        var locale: EntryLocale
        var registry: FormRegistry
        var peers: [PeerConfig]
    }

    private let configuration: Mutex<Configuration>
    /// Validates against the shared reference data.
    let validator = Validator()
    /// Where events worth an operator's eye go (a peer re-read after its restore), if anywhere.
    let log: Log?
    /// Syncs in flight, one per peer.
    let peerRuns = PeerRuns()
    /// The monitoring counters (`Metrics`); entryd sets the watchdog's state on it.
    package let metrics = ServiceMetrics()

    /// - Parameters:
    ///   - forms: the form definitions to validate against.
    ///   - peers: the configured peers (the only ones whose `exec:` addresses run).
    ///   - log: receives re-reads and re-sends of peers (doc/design.md "Incarnations").
    ///   - instance: this instance's name, for `Status` (several instances may serve one node).
    package init(
        store: EntryStore, forms: FormRegistry, limits: Limits = Limits(), defaultLocale: EntryLocale = .zh,
        peers: [PeerConfig] = [], log: Log? = nil, instance: String? = nil
    ) {
        self.log = log
        self.instance = instance
        self.store = store
        self.configuration = Mutex(Configuration(limits: limits, locale: defaultLocale, registry: forms, peers: peers))
    }

    /// The current form registry.
    package var forms: FormRegistry { configuration.withLock { $0.registry } }

    /// The configured peers.
    package var peers: [PeerConfig] { configuration.withLock { $0.peers } }

    /// Replaces the form registry (reload). Stored entries are never touched.
    package func replaceForms(_ forms: FormRegistry) {
        configuration.withLock { $0.registry = forms }
    }

    /// Replaces the limits, the default locale and the configured peers (reload,
    /// SIGHUP). Calls already running keep what they read; connections
    /// opened before keep their message-size and idle limits.
    package func reconfigure(limits: Limits, defaultLocale: EntryLocale, peers: [PeerConfig]) {
        configuration.withLock {
            $0.limits = limits
            $0.locale = defaultLocale
            $0.peers = peers
        }
    }

    /// Runs a call of `method` and sends its reply (or replies): the one
    /// dispatch, an exhaustive switch over the generated ``Method`` (a method
    /// added to interfaces/*.varlink does not compile until it has a handler
    /// here). Handlers live in files by concern: `+Entries`, `+List`,
    /// `+Backup`, `+Erase`, `+Forms`, `+Sync`, `+Peers`, `+Compact`.
    func run(_ method: Method, _ c: CallContext, _ p: Parameters) throws {
        switch method {
        case .serviceGetInfo: try getInfo(c)
        case .serviceGetInterfaceDescription: try getInterfaceDescription(c, p)
        case .entriesAdd: try add(c, p)
        case .entriesGet: try get(c, p)
        case .entriesList: try list(c, p)
        case .entriesUpdate: try update(c, p)
        case .entriesDelete: try delete(c, p)
        case .entriesRestore: try restore(c, p)
        case .entriesHistory: try history(c, p)
        case .entriesImport: try importEntries(c, p)
        case .entriesBackup: try backup(c, p)
        case .entriesErase: try erase(c, p)
        case .entriesFindSubject: try findSubject(c, p)
        case .entriesErasures: try listErasures(c)
        case .entriesVerifyErasure: try verifyErasure(c, p)
        case .formsListForms: try listForms(c, p)
        case .formsGetForm: try getForm(c, p)
        case .formsOptions: try options(c, p)
        case .formsCheck: try check(c, p)
        case .formsCheckStored: try checkStored(c, p)
        case .syncStatus: try status(c)
        case .syncChanges: try changes(c, p)
        case .syncApply: try applyChanges(c, p)
        case .syncSyncPeer: try syncPeer(c, p)
        case .syncListConflicts: try listConflicts(c, p)
        case .syncResolve: try resolve(c, p)
        case .syncHeldFrom: try heldFrom(c, p)
        case .syncCompact: try compact(c)
        case .syncMetrics: try metrics(c)
        }
    }

    /// Dispatches a call by its fully qualified method name (``Method``).
    /// - Throws: ``WireError`` `MethodNotFound` for an unknown method of a known
    ///   interface, `InterfaceNotFound` otherwise, `PermissionDenied(role)` when
    ///   no role of the caller allows the method (``Role/allows(_:)``; `role`
    ///   names the least of read, write and admin that does, ``Method/role``; `admin` and
    ///   `gateway: true` for a gateway calling a ``Method/isPeerOnly`` method,
    ///   `gateway` for any other caller that sends `actor`),
    ///   `InvalidParameter(actor)`; then whatever the method throws.
    package func handle(_ context: CallContext) throws {
        let call = context.call
        guard let method = Method(rawValue: call.method) else {
            if WireInterface(rawValue: call.interface) != nil {
                throw WireError.methodNotFound(call.method)
            }
            throw WireError.interfaceNotFound(call.interface)
        }
        if context.caller.isGateway, method.isPeerOnly {
            // `gateway: true` says why, for a caller that is admin otherwise (root listed as gateway).
            throw WireError(
                .permissionDenied, parameters: .object([("role", .string(Role.admin.name)), ("gateway", .bool(true))]))
        }
        guard context.caller.allows(method) else { throw EntryError.permissionDenied(role: method.role) }
        let parameters = Parameters(call.parameters)
        try run(method, try acting(context, parameters), parameters)
    }

    /// Pipelined Add and Import calls start here, on the session's thread:
    /// validated and queued to the writer at once, answered by the returned
    /// closure after their commit, so a next call already buffered is
    /// validated while this one is stored. Every other call (and an Add or
    /// Import the caller may not make: Add needs `write` or `submit`, Import
    /// `write`, ``Role/allows(_:)``) returns `nil` and is handled by
    /// ``handle(_:)`` in turn, which answers `PermissionDenied(write)` for those.
    /// - Throws: what ``handle(_:)`` would throw for the call before anything
    ///   is queued (`PermissionDenied(gateway)`, `InvalidParameter(actor)`,
    ///   then the errors of ``startAdd(_:_:)`` or ``startImport(_:_:)``).
    package func begin(_ context: CallContext) throws -> (() throws -> Void)? {
        let start: (CallContext, Parameters) throws -> () throws -> Void
        guard let method = Method(rawValue: context.call.method) else { return nil }
        switch method {
        case .entriesAdd: start = startAdd
        case .entriesImport: start = startImport
        case .serviceGetInfo, .serviceGetInterfaceDescription, .entriesGet, .entriesList, .entriesUpdate,
            .entriesDelete,
            .entriesRestore, .entriesHistory, .entriesBackup, .entriesErase, .entriesFindSubject, .entriesErasures,
            .entriesVerifyErasure, .formsListForms, .formsGetForm, .formsOptions, .formsCheck, .formsCheckStored,
            .syncStatus, .syncChanges, .syncApply, .syncSyncPeer, .syncListConflicts, .syncResolve, .syncHeldFrom,
            .syncCompact, .syncMetrics:
            return nil
        }
        guard context.caller.allows(method) else { return nil }
        let parameters = Parameters(context.call.parameters)
        return try start(try acting(context, parameters), parameters)
    }

    /// `context` with its ``CallContext/actor`` set from the call's `actor`
    /// parameter: `web:NAME` when a gateway names the web user `NAME`, else the
    /// caller's user name (doc/design.md "Security and limits").
    /// - Throws: `PermissionDenied(gateway)` when a caller that is not a
    ///   gateway sends `actor`; `InvalidParameter(actor)` when a gateway sends
    ///   one that is not 1-64 letters, digits, `.`, `_`, `-` or `@`.
    func acting(_ context: CallContext, _ p: Parameters) throws -> CallContext {
        guard let value = p.json["actor"], !value.isNull else { return context }
        guard context.caller.isGateway else {
            throw WireError(.permissionDenied, parameters: .object([("role", .string("gateway"))]))
        }
        guard let name = value.stringValue, ActorName.isValid(name) else { throw EntryError.invalidParameter("actor") }
        var acting = context
        acting.actor = "web:" + name
        return acting
    }

    /// Counts the call (``ServiceMetrics/answered(_:error:)``).
    package func answered(_ call: VarlinkCall, error: WireError?) {
        metrics.answered(call.method, error: error)
    }

    /// Sends a single, final reply.
    func reply(_ context: CallContext, _ members: [(String, JSON)]) throws {
        try context.send(VarlinkReply(parameters: .object(members)))
    }

    // MARK: - org.varlink.service

    /// `org.varlink.service.GetInfo` (varlink.org "Service"): vendor, product,
    /// version, url and the interfaces served.
    func getInfo(_ c: CallContext) throws {
        try reply(
            c,
            [
                ("vendor", .string("entryd project")), ("product", .string("entryd")),
                ("version", .string(EntrydVersion.string)), ("url", .string("man:entryd(8)")),
                ("interfaces", .array(InterfaceDescriptions.all.map { .string($0.name) }.reversed())),
            ])
    }

    /// `org.varlink.service.GetInterfaceDescription(interface)`: the interface's IDL text.
    /// - Throws: `InterfaceNotFound`.
    func getInterfaceDescription(_ c: CallContext, _ p: Parameters) throws {
        let name = try p.string("interface")
        guard let found = InterfaceDescriptions.all.first(where: { $0.name == name }) else {
            throw WireError.interfaceNotFound(name)
        }
        try reply(c, [("description", .string(found.text))])
    }

    /// The `locale` parameter, or the default.
    func locale(_ p: Parameters) throws -> EntryLocale {
        guard let tag = try p.optionalString("locale") else { return defaultLocale }
        guard let l = EntryLocale(tag: tag) else { throw EntryError.invalidParameter("locale") }
        return l
    }
}
