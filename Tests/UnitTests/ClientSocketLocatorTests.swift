import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// The socket lookup order of doc/design.md "Running" (Client/SocketLocator.swift).
@Suite struct ClientSocketLocatorTests {
    static let environment = ["ENTRYD_SOCKET": "/tmp/env.sock", "XDG_RUNTIME_DIR": "/run/user/1000"]

    static func locator(
        _ explicit: String? = nil, environment: [String: String] = environment,
        existing: Set<String>
    ) -> SocketLocator {
        SocketLocator(explicitPath: explicit, environment: environment, fileExists: { existing.contains($0) })
    }

    @Test("lists the candidates in order")
    func order() {
        let paths = Self.locator(existing: []).candidates.map(\.path)
        #expect(paths == ["/tmp/env.sock", "/run/entryd/entryd.sock", "/run/user/1000/entryd.sock", "./entryd.sock"])
    }

    @Test(
        "takes the first candidate that exists",
        arguments: [
            (Set(["/tmp/env.sock", "/run/entryd/entryd.sock", "./entryd.sock"]), "/tmp/env.sock"),
            (Set(["/run/entryd/entryd.sock", "/run/user/1000/entryd.sock"]), "/run/entryd/entryd.sock"),
            (Set(["/run/user/1000/entryd.sock", "./entryd.sock"]), "/run/user/1000/entryd.sock"),
            (Set(["./entryd.sock"]), "./entryd.sock"),
        ])
    func first(existing: Set<String>, expected: String) throws {
        #expect(try Self.locator(existing: existing).locate().path == expected)
    }

    @Test("--socket is the only candidate, even when others exist")
    func explicit() throws {
        let all: Set = ["/tmp/env.sock", "/run/entryd/entryd.sock", "./entryd.sock"]
        let locator = Self.locator("/srv/x.sock", existing: all)
        #expect(locator.candidates == [SocketCandidate(path: "/srv/x.sock", origin: "--socket")])
        #expect(
            throws: DaemonUnreachable(attempts: [
                .init(
                    candidate: .init(path: "/srv/x.sock", origin: "--socket"), reason: "no such file", reasonZh: "文件不存在"
                )
            ])
        ) {
            try locator.locate()
        }
        #expect(try Self.locator("/srv/x.sock", existing: ["/srv/x.sock"]).locate().origin == "--socket")
    }

    @Test("skips unset, empty and relative variables")
    func skips() {
        #expect(
            Self.locator(environment: [:], existing: []).candidates.map(\.path) == [
                "/run/entryd/entryd.sock", "./entryd.sock",
            ])
        let odd = ["ENTRYD_SOCKET": "", "XDG_RUNTIME_DIR": "relative/dir"]
        #expect(
            Self.locator(environment: odd, existing: []).candidates.map(\.path) == [
                "/run/entryd/entryd.sock", "./entryd.sock",
            ])
        #expect(
            Self.locator(environment: ["XDG_RUNTIME_DIR": "/run/user/7/"], existing: []).candidates.map(\.path)
                == ["/run/entryd/entryd.sock", "/run/user/7/entryd.sock", "./entryd.sock"])
    }

    @Test("reports every path tried when none exists")
    func noneExists() {
        #expect {
            try Self.locator(existing: []).locate()
        } throws: { error in
            let attempts = (error as? DaemonUnreachable)?.attempts ?? []
            return attempts.map(\.candidate.path) == Self.locator(existing: []).candidates.map(\.path)
                && attempts.allSatisfy { $0.reason == "no such file" }
        }
    }

    @Test("the default file check sees real files and misses absent ones")
    func realFiles() {
        #expect(SocketLocator.pathMayExist("/"))
        #expect(!SocketLocator.pathMayExist("/nonexistent/x.sock"))
    }
}
