import EntryModel

/// The writes a change had seen, as its `base` names them (doc/design.md
/// "Conflicts from the change log").
///
/// A base names writes by HLC alone (doc/protocol.md: each field's value, and
/// the lists under ``EntryStore/headsKey`` and ``EntryStore/deletedBaseKey``),
/// but two nodes stamp concurrent writes with the same HLC whenever they write
/// in the same millisecond with clocks a sync has aligned. Read by HLC alone, a
/// write that saw one of them would have seen both, and the other's value
/// would be lost with no conflict. So a local write also names the node of each
/// write it saw, under ``EntryStore/nodesKey`` (`@nodes`): an HLC listed there
/// (`HLC:NODE`, comma-separated) means the writes of the nodes listed with it;
/// an HLC not listed means the write's own node's. A base without the key (an
/// entryd before it) means any write with that HLC, as it always did.
struct SeenWrites: Sendable, Equatable {
    /// `HLC NODE` for a write named with its node; `HLC` alone for any node's.
    private var keys: Set<String> = []

    /// Nothing seen.
    init() {}

    /// The writes `hlcs` name (HLC texts; empty ones name nothing) in the base
    /// `base` of a change made on `node`.
    init(_ hlcs: some Sequence<String>, base: [String: String], node: String) {
        let nodes = SeenWrites.listedNodes(base)
        for hlc in hlcs where !hlc.isEmpty {
            guard let nodes else {
                keys.insert(hlc)
                continue
            }
            for writer in nodes[hlc] ?? [node] { keys.insert(hlc + " " + writer) }
        }
    }

    /// The writes a create or update saw of the field group `group`: its base
    /// values for the group's fields and the heads it listed.
    init(group: some Sequence<String>, base: [String: String], node: String) {
        let heads = (base[EntryStore.headsKey] ?? "").split(separator: ",").map(String.init)
        self.init(group.compactMap { base[$0] } + heads, base: base, node: node)
    }

    /// The deletes and restores a change saw (``EntryStore/deletedBaseKey``);
    /// `nil` when its base has no such key (an older entryd: it saw every earlier one).
    static func deletes(base: [String: String], node: String) -> SeenWrites? {
        base[EntryStore.deletedBaseKey].map {
            SeenWrites($0.split(separator: ",").map(String.init), base: base, node: node)
        }
    }

    /// True when the write with `stamp` is one of these.
    func contains(_ stamp: Stamp) -> Bool {
        let hlc = stamp.hlc.description
        return keys.contains(hlc + " " + stamp.node) || keys.contains(hlc)
    }

    /// Adds the writes `other` names.
    mutating func formUnion(_ other: SeenWrites) { keys.formUnion(other.keys) }

    /// The `@nodes` of a base: HLC → the nodes of the writes it means; `nil`
    /// when the base has no such key.
    private static func listedNodes(_ base: [String: String]) -> [String: [String]]? {
        guard let text = base[EntryStore.nodesKey] else { return nil }
        var nodes: [String: [String]] = [:]
        for item in text.split(separator: ",") {
            let parts = item.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { nodes[String(parts[0]), default: []].append(String(parts[1])) }
        }
        return nodes
    }

    /// The `@nodes` value for a local write on `node` that names the writes
    /// `named`: each HLC named with a write of another node is listed with the
    /// nodes of every write named at that HLC; the others mean `node`'s own.
    static func nodesValue(naming named: some Sequence<Stamp>, own node: String) -> String {
        let byHLC = Dictionary(grouping: Set(named).filter { $0.hlc != .zero }, by: \.hlc)
        return byHLC.filter { $0.value.contains { $0.node != node } }
            .flatMap { hlc, stamps in stamps.map { "\(hlc):\($0.node)" } }
            .sorted().joined(separator: ",")
    }
}

extension EntryStore {
    /// The `base` key of a local write naming the node of each write it saw
    /// whose HLC alone could mean another node's write too (``SeenWrites``).
    package static let nodesKey = "@nodes"

    /// True when `value` is a well-formed ``nodesKey`` value (a received change is
    /// checked with it): empty, or comma-separated `HLC:NODE` items (16 hex
    /// digits, a canonical UUID).
    package static func isValidNodesValue(_ value: String) -> Bool {
        value.isEmpty
            || value.split(separator: ",", omittingEmptySubsequences: false).allSatisfy { item in
                let parts = item.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                return parts.count == 2 && HLC(String(parts[0])) != nil
                    && UUIDv7.canonical(String(parts[1])) == String(parts[1])
            }
    }
}
