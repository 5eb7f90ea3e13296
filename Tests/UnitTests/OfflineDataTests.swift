import Foundation
import Testing
@testable import EntryModel
@testable import EntryProtocol
@testable import EntryWeb

/// The form's data for offline use (issue 32): the search keys entryd-web
/// sends the page, the Traditional folds, and `GET /api/v1/offline`.
@Suite struct OfflineDataTests {
    @Test("a row's search keys are the ones Options ranks it by: codes, names, pinyin with its syllables, initials")
    func searchKeys() {
        let keys = OptionRows.searchKeys(type: .country, value: "CN", names: [])
        #expect(keys.contains(SearchKey(text: "cn", starts: [0], initials: false)))
        #expect(keys.contains(SearchKey(text: "中国", starts: [0], initials: false)))
        #expect(keys.contains(SearchKey(text: "zhongguo", starts: [0, 5], initials: false)))
        #expect(keys.contains(SearchKey(text: "zg", starts: [0], initials: true)))
        let city = OptionRows.searchKeys(type: .city, value: "440100", names: [])
        #expect(city.contains(SearchKey(text: "guangzhou", starts: [0, 5], initials: false)))
        #expect(OptionRows.searchKeys(type: .city, value: "999999", names: []).isEmpty)
        let choice = OptionRows.searchKeys(type: .choice, value: "phone", names: ["phone", "Mobile phone", "电话"])
        #expect(choice.contains(SearchKey(text: "mobilephone", starts: [0, 6], initials: false)))
    }

    @Test("the folds take Traditional characters to the Simplified ones MatchKey gives")
    func folds() {
        let folds = Dictionary(OptionRows.simplifiedFolds, uniquingKeysWith: { a, _ in a })
        #expect(folds["廣"] == "广" && folds["灣"] == "湾" && folds["內"] == "内")
        #expect(folds["广"] == nil && folds["中"] == nil)
        for (from, to) in OptionRows.simplifiedFolds.prefix(500) { #expect(MatchKey(from).text == MatchKey(to).text) }
    }

    static func daemon(title: String) -> WebGatewayTests.FakeLink {
        let link = WebGatewayTests.FakeLink()
        let form = JSON.object([
            ("name", .string("registration")), ("title", .string(title)),
            (
                "fields",
                .array([
                    .object([("name", .string("country")), ("type", .string("country"))]),
                    .object([("name", .string("name")), ("type", .string("text"))]),
                ])
            ),
        ])
        link.answer = { method, _ in
            switch method {
            case "io.entryd.Forms.GetForm": return .object([("form", form)])
            case "io.entryd.Forms.ListForms": return .object([("forms", .array([form]))])
            case "io.entryd.Forms.Options":
                return .object([
                    (
                        "options",
                        .array([
                            .object([
                                ("value", .string("CN")), ("label", .string("中国")), ("aliases", .array([])),
                            ])
                        ])
                    )
                ])
            default: throw WireError(name: WireErrorName.methodNotFound.rawValue, parameters: .object([]))
            }
        }
        return link
    }

    static func gateway(_ link: WebGatewayTests.FakeLink) -> Gateway {
        Gateway(
            link: link, users: WebGatewayTests.FakeUsers(users: ["rita": (.read, "pw-rita-123")]), policy: .entryd,
            sessions: SessionStore(idleSeconds: 60, clock: { 1000 }), limiter: LoginLimiter(limit: 3, clock: { 1000 }),
            settings: .init(secure: false, behindProxy: false, maxBody: 1024),
            openAPI: { .object([]) }, log: Log(threshold: .error, environment: [:]))
    }

    @Test(
        "GET /api/v1/offline: logged in only; forms, rows, keys and folds; the version is the ETag and follows the forms"
    )
    func endpoint() throws {
        let link = Self.daemon(title: "Registration")
        let g = Self.gateway(link)
        #expect(g.handle(HTTPRequest(method: "GET", path: "/api/v1/offline")).status == 401)
        let (token, _) = try WebGatewayTests.login(g, "rita", "pw-rita-123")
        let auth = ["Authorization": "Bearer \(token)"]
        let r = g.handle(HTTPRequest(method: "GET", path: "/api/v1/offline", headers: auth))
        #expect(r.status == 200)
        let body = try JSON.parse(r.bytes)
        let version = try #require(body["version"]?.stringValue)
        #expect(r.header("ETag") == "\"\(version)\"")
        #expect(body["default"]?.stringValue == "registration")
        #expect(body["forms"]?["en"]?["registration"]?["title"]?.stringValue == "Registration")
        #expect(body["options"]?["zh"]?["registration"]?["country"]?.arrayValue?.count == 1)
        #expect(body["options"]?["zh"]?["registration"]?["name"] == nil)
        let keys = try #require(body["keys"]?["registration"]?["country"]?["CN"]?.arrayValue)
        #expect(keys.contains(.array([.string("zg"), .array([.int(0)]), .bool(true)])))
        #expect(body["fold"]?["廣"]?.stringValue == "广")
        #expect(link.calls.allSatisfy { $0.1["actor"]?.stringValue == "rita" })
        let again = g.handle(
            HTTPRequest(
                method: "GET", path: "/api/v1/offline",
                headers: auth.merging(["If-None-Match": "\"\(version)\""]) { $1 }))
        #expect(again.status == 304)
        #expect(g.handle(HTTPRequest(method: "POST", path: "/api/v1/offline", headers: auth)).status == 405)
        // a reloaded form (SIGHUP) gives another version
        let changed = Self.daemon(title: "Registration 2")
        link.answer = changed.answer
        let next = try JSON.parse(g.handle(HTTPRequest(method: "GET", path: "/api/v1/offline", headers: auth)).bytes)
        #expect(next["version"]?.stringValue != version)
    }
}
