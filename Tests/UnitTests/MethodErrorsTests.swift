import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntryServer

/// `Method.errors` (the table the OpenAPI document lists each operation's
/// errors from) holds every error the handlers answer: each method is called
/// with a bag of bad and good parameters, and every error that comes back must
/// be in its list or in `WireErrorName.anyCall`.
@Suite struct MethodErrorsTests {
    @Test("every error a handler answers is listed in Method.errors (or anyCall)")
    func handlersThrowListedErrors() throws {
        let db = TestDatabase()
        let store = try EntryStore(path: db.path, readers: 1)
        defer { store.close() }
        let service = EntryService(store: store, forms: .builtIn)
        let caller = Caller(pid: 1, uid: 0, gid: 0, userName: "test", role: .admin)
        func call(_ method: Method, _ parameters: [(String, JSON)]) -> (JSON?, String?) {
            var reply: JSON?
            let context = CallContext(
                caller: caller, call: VarlinkCall(method, parameters: .object(parameters)),
                send: { reply = $0.parameters }, clientHungUp: { true })
            do {
                try service.handle(context)
                return (reply, nil)
            } catch {
                return (nil, WireError(mapping: error, interface: method.interface.rawValue).name)
            }
        }
        let good: [(String, JSON)] = [
            ("name", .string("张三")), ("birthday", .string("1990-05-17")), ("country", .string("CN")),
            ("province", .string("440000")), ("city", .string("440300")), ("contact_method", .string("phone")),
            ("phone", .string("13812345678")),
        ]
        let kept = try #require(call(.entriesAdd, [("fields", .object(good))]).0?["entry"])
        let keptID = try #require(kept["id"]?.stringValue)
        let gone = try #require(call(.entriesAdd, [("fields", .object(good))]).0?["entry"]?["id"]?.stringValue)
        #expect(call(.entriesErase, [("id", .string(gone)), ("reason", .string("asked"))]).1 == nil)
        let unknown = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c"

        var bag: [[(String, JSON)]] = [
            [], [("id", .string("x"))], [("id", .string(unknown))], [("id", .string(gone))],
            [("id", .string(keptID)), ("ifVersion", .string("0000000000000001"))],
            [
                ("id", .string(keptID)), ("ifVersion", .string("0000000000000001")),
                ("fields", .object([("name", .string("李四"))])),
            ],
            [("id", .string(keptID)), ("ifVersion", .string("x"))],
            [("id", .string(keptID)), ("fields", .object([("phone", .string("1"))]))],
            [("id", .string(gone)), ("fields", .object([("name", .string("x"))]))],
            [("fields", .object([("name", .string(""))]))], [("fields", .object(good)), ("id", .string(keptID))],
            [("fields", .object(good)), ("form", .string("nope"))], [("fields", .int(1))],
            [("form", .string("nope"))], [("name", .string("nope"))], [("field", .string("nope"))],
            [("field", .string("country")), ("form", .string("nope"))], [("locale", .string("fr"))],
            [("limit", .int(0))], [("since", .int(-1))], [("since", .int(0)), ("limit", .int(-1))],
            [("peer", .string("nope"))], [("changes", .array([.object([("x", .int(1))])]))],
            [("interface", .string("nope"))], [("phone", .string("1"))],
            [("name", .string("x")), ("birthday", .string("bad"))],
            [("email", .string("a@b.cn")), ("form", .string("nope"))],
            [("id", .string(keptID)), ("values", .array([]))],
            [("id", .string(unknown)), ("values", .array([.string("x")]))],
            [("id", .string(gone)), ("values", .array([.string("x")]))],
            [("id", .string(unknown)), ("reason", .string("r"))], [("id", .string(gone)), ("reason", .string("r"))],
            [("id", .string(keptID)), ("reason", .string(" "))], [("filter", .object([("city", .string("zz"))]))],
            [("cursor", .string("x"))], [("node", .string("x"))], [("entry", .string(unknown))],
            [("entries", .array([.object([("fields", .object([]))])])), ("form", .string("nope"))],
            [("entries", .string("x"))], [("useLost", .bool(true)), ("id", .string(unknown))],
            [("id", .string(keptID)), ("reason", .string("a\u{0}b"))],
            [("peer", .string("unix:/x\u{0}y"))],
        ]
        bag += bag.map { $0 + [("locale", .string("en"))] }
        var answered: [Method: Set<String>] = [:]
        for method in Method.allCases {
            let listed = Set((method.errors + WireErrorName.anyCall).map(\.rawValue))
            for parameters in bag {
                guard let error = call(method, parameters).1 else { continue }
                answered[method, default: []].insert(error)
                #expect(
                    listed.contains(error),
                    "\(method.rawValue) answered \(error) for \(JSON.object(parameters).text), not in Method.errors")
            }
        }
        // The bag reaches the errors that matter: a few of each kind were answered.
        #expect(answered[.entriesGet]?.contains(WireErrorName.entryErased.rawValue) == true, "\(answered)")
        #expect(answered[.entriesUpdate]?.contains(WireErrorName.versionMismatch.rawValue) == true, "\(answered)")
        #expect(answered[.formsOptions]?.contains(WireErrorName.fieldNotFound.rawValue) == true, "\(answered)")
        #expect(answered[.syncSyncPeer]?.contains(WireErrorName.peerNotFound.rawValue) == true, "\(answered)")
        #expect(answered[.entriesAdd]?.contains(WireErrorName.validationFailed.rawValue) == true, "\(answered)")
        #expect(answered[.entriesRestore]?.contains(WireErrorName.validationFailed.rawValue) == true, "\(answered)")
    }
}

/// The parameter rules the OpenAPI document states (ParameterRules) are the
/// server's: the locale pattern is EntryLocale's rule, a version is 16 hex digits.
@Suite struct ParameterRuleTests {
    @Test("a locale is zh or en in either case, then nothing or a non-letter; letters are taken by scalar")
    func localeTags() {
        for tag in ["zh", "EN", "zh-CN", "en_US.UTF-8", "zH-Hans", "en\u{1F3FB}", "ZH\u{0130}", "en\u{301}"] {
            #expect(EntryLocale(tag: tag) != nil, "\(tag)")
        }
        for tag in ["", "fr", "zhx", "eng", "z", " zh", "\u{0130}en", "ch"] {
            #expect(EntryLocale(tag: tag) == nil, "\(tag)")
        }
    }

    @Test("a version is exactly 16 hex digits: no sign, no spaces")
    func versions() {
        #expect(HLC("00000000000000aF") != nil)
        for text in ["+000000000000001", "-000000000000001", " 00000000000001", "00000000000000g0", "0"] {
            #expect(HLC(text) == nil, "\(text)")
        }
    }
}
