import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// A seeded random fuzzer for every method's parameter decoding, in process:
/// random parameter objects (known names with values of every JSON kind,
/// unknown names, edge-case strings and numbers) must each get a reply or one
/// of the contract's named errors, never a crash, and read-only methods must
/// leave the store as it was. `ENTRYD_FUZZ_CASES` sets the number per method.
@Suite struct ParameterFuzzTests {
    static let knownNames = [
        "id", "form", "fields", "locale", "filter", "order", "descending", "limit", "cursor",
        "includeDeleted", "ifVersion", "reason", "entries", "atomic", "name", "field", "parent",
        "query", "since", "excludeNode", "changes", "peer", "entry", "includeResolved", "useLost",
        "interface", "country", "text", "bornFrom",
    ]
    static let strings = [
        "", "李雷", "CN", "广东", "1990-05-17", "0000000000000000", "zh", "en", "created", "registration",
        "unix:/nonexistent.sock", "exec:true", String(repeating: "长", count: 300), "\u{0}", "🇨🇳",
        "00000000-0000-7000-8000-000000000000", "io.entryd.Entries", "city", "contact_method=phone",
    ]

    func randomValue(_ rng: inout SplitMix64, depth: Int = 0) -> JSON {
        switch rng.next() % (depth > 2 ? 5 : 7) {
        case 0: return .null
        case 1: return .bool(rng.next() % 2 == 0)
        case 2: return .int([0, -1, 1, 50, Int64.max, Int64.min, 1_000_000][Int(rng.next() % 7)])
        case 3: return .double([0.5, -1e300, 1e300][Int(rng.next() % 3)])
        case 4: return .string(Self.strings[Int(rng.next() % UInt64(Self.strings.count))])
        case 5: return .array((0..<Int(rng.next() % 4)).map { _ in randomValue(&rng, depth: depth + 1) })
        default:
            return .object(
                (0..<Int(rng.next() % 5)).map { _ in
                    (
                        Self.knownNames[Int(rng.next() % UInt64(Self.knownNames.count))],
                        randomValue(&rng, depth: depth + 1)
                    )
                }.reduce(into: [(String, JSON)]()) { acc, kv in
                    if !acc.contains(where: { $0.0 == kv.0 }) { acc.append(kv) }
                })
        }
    }

    /// Every error name the contract defines (doc/protocol.md and org.varlink.service).
    static let contractErrors: Set<String> = {
        var names = Set<String>()
        for (iface, text) in InterfaceDescriptions.all {
            for line in text.split(separator: "\n") where line.hasPrefix("error ") {
                names.insert(iface + "." + String(line.dropFirst(6).prefix(while: { $0 != " " && $0 != "(" })))
            }
        }
        return names
    }()

    @Test("random parameters for every method: a reply or a named contract error, never a crash")
    func fuzzEveryMethod() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 2)
        defer { store.close() }
        let service = EntryService(store: store, forms: .builtIn)
        let caller = Caller(pid: 1, uid: 0, gid: 0, userName: "fuzz", role: .admin)
        let cases = Int(ProcessInfo.processInfo.environment["ENTRYD_FUZZ_CASES"] ?? "") ?? 1000
        var rng = SplitMix64(seed: 42)
        var outcomes: [String: Int] = [:]
        for method in Method.allCases.map(\.rawValue).sorted() {
            let readOnly = !["Add", "Update", "Delete", "Restore", "Import", "Apply", "SyncPeer", "Resolve"].contains(
                method.split(separator: ".").last.map(String.init) ?? "")
            for _ in 0..<cases {
                var params: [(String, JSON)] = []
                for _ in 0..<Int(rng.next() % 6) {
                    let name =
                        rng.next() % 8 == 0
                        ? "x\(rng.next() % 10)" : Self.knownNames[Int(rng.next() % UInt64(Self.knownNames.count))]
                    if !params.contains(where: { $0.0 == name }) { params.append((name, randomValue(&rng))) }
                }
                let before = readOnly ? try store.counts() : (0, 0, 0)
                var replies: [VarlinkReply] = []
                let call = VarlinkCall(method: method, parameters: .object(params), more: false)
                let context = CallContext(
                    caller: caller, call: call, send: { replies.append($0) }, clientHungUp: { true })
                do {
                    try service.handle(context)
                    #expect(replies.count == 1, "\(method) sent \(replies.count) replies")
                    outcomes["reply", default: 0] += 1
                } catch {
                    let wire = WireError(mapping: error)
                    #expect(Self.contractErrors.contains(wire.name), "\(method): \(wire.name) is not a contract error")
                    #expect(wire.name != "io.entryd.Entries.StorageFailed", "\(method) failed inside: \(error)")
                    outcomes[wire.shortName, default: 0] += 1
                }
                if readOnly { #expect(try store.counts() == before, "\(method) changed the store") }
            }
        }
        print(
            "parameter fuzz: \(cases) cases × \(Method.allCases.count) methods: \(outcomes.sorted { $0.key < $1.key })")
        #expect(try store.integrityCheck() == ["ok"])
    }
}
