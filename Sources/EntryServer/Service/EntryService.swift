import Foundation
import EntryModel
import EntryLedger
import EntryProtocol
import EntrySync

/// The daemon's calls: `org.varlink.service`, `io.entryd.Entries`,
/// `io.entryd.Forms` and `io.entryd.Sync`, over one store (any ``LedgerStore``:
/// entryd passes its SQLite ``EntryStore``).
///
/// Thread-safe: sessions on many threads call ``handle(_:)`` at once. The form
/// registry can be swapped at run time (reload) under a lock.
public final class EntryService: CallHandler, @unchecked Sendable {
    /// The store every call reads and writes.
    public let store: any LedgerStore
    /// The limits in force; a reload replaces them (``reconfigure(limits:defaultLocale:peers:)``).
    public var limits: Limits {
        lock.lock()
        defer { lock.unlock() }
        return currentLimits
    }
    /// Locale for calls without `locale` (doc/protocol.md: the configured one, `zh` by default).
    public var defaultLocale: EntryLocale {
        lock.lock()
        defer { lock.unlock() }
        return currentLocale
    }
    private var currentLimits: Limits
    private var currentLocale: EntryLocale
    /// Validates against the shared reference data.
    let validator = Validator()
    private let lock = NSLock()
    private var registry: FormRegistry
    private var configuredPeers: [PeerConfig]
    /// Where events worth an operator's eye go (a peer re-read after its restore), if anywhere.
    let log: Log?
    /// Syncs in flight, one per peer.
    let peerRuns = PeerRuns()

    /// - Parameters:
    ///   - forms: the form definitions to validate against.
    ///   - peers: the configured peers (the only ones whose `exec:` addresses run).
    ///   - log: receives re-reads and re-sends of peers (doc/design.md "Incarnations").
    public init(store: any LedgerStore, forms: FormRegistry, limits: Limits = Limits(), defaultLocale: EntryLocale = .zh,
                peers: [PeerConfig] = [], log: Log? = nil) {
        self.log = log
        self.store = store
        self.registry = forms
        self.configuredPeers = peers
        self.currentLimits = limits
        self.currentLocale = defaultLocale
    }

    /// The current form registry.
    public var forms: FormRegistry {
        lock.lock()
        defer { lock.unlock() }
        return registry
    }

    /// The configured peers.
    public var peers: [PeerConfig] {
        lock.lock()
        defer { lock.unlock() }
        return configuredPeers
    }

    /// Replaces the form registry (reload). Stored entries are never touched.
    public func replaceForms(_ forms: FormRegistry) {
        lock.lock()
        registry = forms
        lock.unlock()
    }

    /// Replaces the limits, the default locale and the configured peers (reload,
    /// SIGHUP). Calls already running keep what they read; connections
    /// opened before keep their message-size and idle limits.
    public func reconfigure(limits: Limits, defaultLocale: EntryLocale, peers: [PeerConfig]) {
        lock.lock()
        currentLimits = limits
        currentLocale = defaultLocale
        configuredPeers = peers
        lock.unlock()
    }

    typealias Method = (role: Role, run: @Sendable (EntryService, CallContext, Parameters) throws -> Void)

    /// Every method served, by fully qualified name, with the role it needs.
    static let methods: [String: Method] = {
        var m: [String: Method] = [
            "org.varlink.service.GetInfo": (.read, { s, c, _ in try s.getInfo(c) }),
            "org.varlink.service.GetInterfaceDescription": (.read, { s, c, p in try s.getInterfaceDescription(c, p) }),
        ]
        for (name, method) in entriesMethods { m["io.entryd.Entries." + name] = method }
        for (name, method) in erasureMethods { m["io.entryd.Entries." + name] = method }
        for (name, method) in formsMethods { m["io.entryd.Forms." + name] = method }
        for (name, method) in syncMethods { m["io.entryd.Sync." + name] = method }
        for (name, method) in compactionMethods { m["io.entryd.Sync." + name] = method }
        return m
    }()

    /// Dispatches a call by its fully qualified method name.
    /// - Throws: ``WireError`` `MethodNotFound` for an unknown method of a known
    ///   interface, `InterfaceNotFound` otherwise, `PermissionDenied(role)` when
    ///   the caller's role is too low; then whatever the method throws.
    public func handle(_ context: CallContext) throws {
        let call = context.call
        guard let method = EntryService.methods[call.method] else {
            if InterfaceDescriptions.all.contains(where: { $0.name == call.interface }) {
                throw WireError.methodNotFound(call.method)
            }
            throw WireError.interfaceNotFound(call.interface)
        }
        guard context.caller.role >= method.role else { throw EntryError.permissionDenied(role: method.role) }
        try method.run(self, context, Parameters(call.parameters))
    }

    /// Pipelined Add calls start here: validated and queued to the writer at
    /// once, answered by the returned closure after their group commit. Every
    /// other call (and an Add the caller may not make) returns `nil` and is
    /// handled by ``handle(_:)`` in turn.
    public func begin(_ context: CallContext) throws -> (() throws -> Void)? {
        guard context.call.method == "io.entryd.Entries.Add", context.caller.role >= .write else { return nil }
        return try startAdd(context, Parameters(context.call.parameters))
    }

    /// Sends a single, final reply.
    func reply(_ context: CallContext, _ members: [(String, JSON)]) throws {
        try context.send(VarlinkReply(parameters: .object(members)))
    }

    // MARK: - org.varlink.service

    /// `org.varlink.service.GetInfo` (varlink.org "Service"): vendor, product,
    /// version, url and the interfaces served.
    func getInfo(_ c: CallContext) throws {
        try reply(c, [
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
