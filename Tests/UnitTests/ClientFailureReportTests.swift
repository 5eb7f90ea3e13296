@preconcurrency import Glibc
import Foundation
import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// The one mapping from errors to exit codes and stderr text (Client/FailureReport*.swift).
@Suite struct ClientFailureReportTests {
    static let usage = FailureReport.Usage(line: "entryctl get ID", helpCommand: "entryctl get --help")

    /// Every error name of doc/protocol.md and org.varlink.service, its parameters,
    /// the exit code and a piece of the first line.
    static let wireCases: [(WireError, ExitCode, String)] = [
        (
            WireError(
                mapping: EntryError.validationFailed([
                    Problem(field: "country", code: .notInList, message: "没有这个国家", suggestions: ["CN"])
                ])), .dataError, "not accepted (1 problem)"
        ),
        (WireError(mapping: EntryError.entryNotFound("e1")), .failure, "no entry with id 'e1'"),
        (WireError(mapping: EntryError.entryExists("e1")), .failure, "entry 'e1' already exists"),
        (
            WireError(mapping: EntryError.versionMismatch(id: "e1", version: "0000018f3a2b0001")), .failure,
            "its current version is 0000018f3a2b0001"
        ),
        (WireError(mapping: EntryError.formNotFound("survey")), .failure, "there is no form 'survey'"),
        (
            WireError(mapping: EntryError.formNotFound("survey"), interface: "io.entryd.Forms"), .failure,
            "there is no form 'survey'"
        ),
        (
            WireError(mapping: EntryError.fieldNotFound(form: "registration", field: "shoe")), .failure,
            "form 'registration' has no field 'shoe'"
        ),
        (
            WireError(mapping: EntryError.limitExceeded("max-message-size", maximum: 4_194_304)), .temporaryFailure,
            "limit 'max-message-size' (maximum 4194304)"
        ),
        (WireError(mapping: EntryError.storageFailed("disk full")), .temporaryFailure, "storage failed (disk full)"),
        (
            WireError(mapping: EntryError.permissionDenied(role: .write)), .failure,
            "permission denied: this needs the 'write' role"
        ),
        (.invalidParameter("limit"), .usage, "entryd refused parameter 'limit'"),
        (.invalidParameter("ifVersion"), .usage, "--if-version takes the entry's version: 16 hexadecimal digits"),
        (.methodNotFound("io.entryd.Entries.Frob"), .failure, "does not serve method 'io.entryd.Entries.Frob'"),
        (
            .methodNotImplemented("io.entryd.Entries.Import"), .failure,
            "does not serve method 'io.entryd.Entries.Import'"
        ),
        (.interfaceNotFound("io.example.X"), .failure, "does not serve interface 'io.example.X'"),
        (
            WireError(
                name: "io.entryd.Sync.ClockSkew",
                parameters: .object([("node", .string("n2")), ("aheadMs", .int(90000))])),
            .failure, "node 'n2' is 90000 ms ahead"
        ),
        (
            WireError(
                name: "io.entryd.Sync.PeerUnreachable",
                parameters: .object([("peer", .string("office")), ("reason", .string("timeout"))])),
            .temporaryFailure, "peer 'office' cannot be reached (timeout)"
        ),
        (
            WireError(name: "io.entryd.Sync.PeerNotFound", parameters: .object([("peer", .string("office"))])),
            .failure, "there is no peer 'office'"
        ),
        (
            WireError(name: "io.entryd.Sync.ConflictNotFound", parameters: .object([("id", .string("c9"))])), .failure,
            "there is no conflict 'c9'"
        ),
        (
            WireError(name: "io.example.Strange", parameters: .object([("x", .int(1))])), .failure,
            #"io.example.Strange {"x":1}"#
        ),
    ]

    @Test("maps every wire error name to its exit code", arguments: wireCases)
    func wire(error: WireError, code: ExitCode, fragment: String) {
        let report = FailureReport(for: error, usage: Self.usage)
        #expect(report.exitCode == code, "\(error.name)")
        #expect(report.lines.first?.contains(fragment) == true, "\(report.lines)")
    }

    @Test("every error of interfaces/*.varlink has its own words in zh and en, not the fallback for unknown names")
    func everyErrorHasWords() {
        for name in WireErrorName.allCases {
            for locale in [EntryLocale.zh, .en] {
                let report = FailureReport(
                    for: WireError(name, parameters: .object([])), usage: Self.usage, locale: locale)
                #expect(!report.lines.joined().contains(name.rawValue), "\(name.rawValue) \(locale)")
            }
        }
        #expect(ExitCode(wireError: nil) == .failure)
    }

    @Test("lists every problem with its field, code and suggestions")
    func problems() {
        let error = WireError(
            mapping: EntryError.validationFailed([
                Problem(field: "country", code: .notInList, message: "没有找到“Chna”。", suggestions: ["CN", "CL"]),
                Problem(field: "phone", code: .required, message: "请填写电话。"),
                Problem(field: "", code: .ambiguous, message: "whole entry"),
            ]))
        let report = FailureReport(for: error)
        #expect(report.exitCode == .dataError)
        #expect(
            report.lines == [
                "the values were not accepted (3 problems):",
                "  country: [not-in-list] 没有找到“Chna”。 (did you mean: CN 🇨🇳 China, CL 🇨🇱 Chile?)",
                "  phone: [required] 请填写电话。",
                "  (entry): [ambiguous] whole entry",
            ])
    }

    @Test("suggested codes are named in the report's locale")
    func suggestionsInLocale() {
        #expect(FailureReport.describe("CN", locale: .zh) == "CN 🇨🇳 中国")
        #expect(FailureReport.describe("440100", locale: .zh) == "440100 广东省 广州市")
        #expect(FailureReport.describe("440100", locale: .en) == "440100 Guangzhou, Guangdong")
        #expect(FailureReport.describe("440000", locale: .en) == "440000 Guangdong")
        #expect(FailureReport.describe("phone", locale: .en) == "phone")
    }

    @Test("a problem code this client does not know is still shown")
    func unknownProblemCode() {
        let problem = JSON.object([
            ("field", .string("x")), ("code", .string("brand-new")), ("message", .string("m")),
            ("suggestions", .array([])),
        ])
        let report = FailureReport(
            for: WireError(
                name: "io.entryd.Entries.ValidationFailed", parameters: .object([("problems", .array([problem]))])))
        #expect(report.lines.last == "  x: [brand-new] m")
    }

    @Test("usage errors get the usage line and the help command")
    func usageError() {
        let report = FailureReport(for: UsageError(zh: "缺少 ID", en: "missing ID"), usage: Self.usage)
        #expect(
            report
                == FailureReport(
                    exitCode: .usage, lines: ["missing ID", "Usage: entryctl get ID", "See 'entryctl get --help'."]))
        #expect(
            FailureReport(for: WireError.invalidParameter("id"), usage: Self.usage).lines.suffix(2) == [
                "Usage: entryctl get ID", "See 'entryctl get --help'.",
            ])
    }

    @Test(
        "a socket this user may not open names the group its file system gives (the socket's, or the directory's that stops the way) and no daemon to start"
    )
    func permissionDenied() throws {
        let dir = NSTemporaryDirectory() + "entryd-perm-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let socket = dir + "/entryd.sock"
        FileManager.default.createFile(atPath: socket, contents: nil)
        let group = try #require(getgrgid(getgid()).flatMap { String(validatingCString: $0.pointee.gr_name) })
        let report = FailureReport(
            for: DaemonUnreachable(attempts: [
                .init(candidate: .init(path: socket, origin: "--socket"), reason: "Permission denied")
            ]))
        let text = report.lines.joined(separator: "\n")
        #expect(text.contains("\(socket) is for members of group '\(group)'"), "\(text)")
        #expect(text.contains("usermod -aG \(group)"))
        #expect(!text.contains("Start the daemon"), "a daemon is there: it is the permission that stops the way")
        // Not there (a directory this user may not search hides it): the nearest directory that is.
        #expect(FailureReport.owningGroup(of: dir + "/missing/entryd.sock") == (dir, group))
    }

    @Test("an unreachable daemon names every path and how to start entryd")
    func unreachable() {
        let error = DaemonUnreachable(attempts: [
            .init(candidate: .init(path: "/run/entryd/entryd.sock", origin: "entryd.socket"), reason: "no such file"),
            .init(candidate: .init(path: "./entryd.sock", origin: "current directory"), reason: "Connection refused"),
        ])
        let report = FailureReport(for: error)
        #expect(report.exitCode == .unavailable)
        let text = report.lines.joined(separator: "\n")
        #expect(text.contains("/run/entryd/entryd.sock (entryd.socket): no such file"))
        #expect(text.contains("./entryd.sock (current directory): Connection refused"))
        #expect(text.contains("entryd --socket PATH") && text.contains("systemctl start entryd.socket"))
        // In zh, the reasons entryctl has words for and the current directory are Chinese.
        let zh = FailureReport(
            for: DaemonUnreachable(attempts: [
                .init(
                    candidate: .init(path: "/tmp/none.sock", origin: "--socket"), reason: "no such file",
                    reasonZh: "文件不存在"),
                .init(
                    candidate: .init(path: "./entryd.sock", origin: "current directory"),
                    error: SystemError("connect", errno: ECONNREFUSED, detail: "./entryd.sock")),
            ]), locale: .zh
        ).lines.joined(separator: "\n")
        #expect(zh.contains("/tmp/none.sock（--socket）：文件不存在"), "\(zh)")
        #expect(zh.contains("./entryd.sock（当前目录）：连接被拒绝（没有守护进程在监听）"), "\(zh)")
    }

    @Test(
        "connection failures: refused is 69, reset and timeouts are 75",
        arguments: [
            (SystemError("connect", errno: ECONNREFUSED, detail: "/tmp/e.sock"), ExitCode.unavailable),
            (SystemError("recv", errno: ECONNRESET), .temporaryFailure),
            (SystemError("send", errno: EPIPE), .temporaryFailure),
            (SystemError("recv", errno: EAGAIN), .temporaryFailure),
            (SystemError("open", errno: EACCES), .failure),
        ])
    func system(error: SystemError, code: ExitCode) {
        #expect(FailureReport(for: error).exitCode == code)
    }

    @Test("a closed connection is temporary; other errors are plain failures")
    func others() {
        #expect(FailureReport(for: ConnectionClosed()).exitCode == .temporaryFailure)
        #expect(FailureReport(for: JSONParseError(offset: 3, reason: "x")).exitCode == .failure)
        struct Odd: Error {}
        #expect(FailureReport(for: Odd()).exitCode == .failure)
        #expect(
            FailureReport(for: SystemError("recv", errno: EAGAIN)).lines
                == [
                    "entryd did not reply within the time allowed (--timeout, default 60 s): it may be busy or stuck; check 'entryctl status' or the daemon's log, raise --timeout for long work; try again"
                ])
    }
}
