import EntryModel
import EntryProtocol

// MARK: - Wire errors (doc/protocol.md names; branch on names, never on text)

extension FailureReport {
    /// The report for an error reply, chosen by its fully qualified name.
    static func wire(_ error: WireError, usage: Usage?, locale: EntryLocale = .en) -> FailureReport {
        let p = error.parameters
        func s(_ key: String) -> String { p[key]?.stringValue ?? "?" }
        // The exit code comes from the one mapping of wire errors (ExitCode(wireError:)); this chooses the words.
        func say(_ lines: String...) -> FailureReport { FailureReport(exitCode: ExitCode(wireError: error.name), lines: lines) }

        switch error.name {
        case WireErrorName.validationFailed:
            return validationFailed(p["problems"]?.arrayValue ?? [], locale: locale)
        case WireErrorName.entryNotFound:
            return say("no entry with id '\(s("id"))'")
        case WireErrorName.entryExists:
            return say("entry '\(s("id"))' already exists with other values, or is deleted",
                           "Change it with 'entryctl update \(s("id")) …' or bring it back with 'entryctl restore \(s("id"))'.")
        case WireErrorName.versionMismatch:
            return say("entry '\(s("id"))' was changed since you read it: its current version is \(s("version"))",
                           "Check it with 'entryctl get \(s("id"))', then retry with --if-version \(s("version")).")
        case WireErrorName.entriesFormNotFound, WireErrorName.formsFormNotFound:
            return say("there is no form '\(s("form"))'", "'entryctl forms' lists the forms.")
        case WireErrorName.fieldNotFound:
            return say("form '\(s("form"))' has no field '\(s("field"))' with a picker list",
                           "'entryctl forms' lists the fields; options work on country, province, city and choice fields.")
        case WireErrorName.limitExceeded:
            let maximum = p["maximum"]?.intValue.map(String.init) ?? "?"
            return say("entryd refused the call: limit '\(s("limit"))' (maximum \(maximum)) was reached; try again with less")
        case WireErrorName.storageFailed:
            return say("entryd could not store the change (\(s("reason"))); nothing was stored, try again later")
        case WireErrorName.permissionDenied:
            let role = p["role"]?.stringValue.map { ": this needs the '\($0)' role" } ?? ""
            return say("permission denied\(role)", "Roles are given to users and groups in entryd.conf.")
        case WireErrorName.invalidParameter:
            // The parameters a user types through an option get a hint in the option's terms.
            let hints = [
                "ifVersion": "--if-version takes the entry's version: 16 hexadecimal digits, as `entryctl get ID` shows under 'version'",
                "id": "an entry id is a UUID (8-4-4-4-12 hexadecimal digits), as `entryctl add` and `entryctl list` show it",
                "locale": "--locale takes zh or en",
            ]
            if let hint = hints[s("parameter")] { return .usage("entryd refused '\(s("parameter"))': \(hint)", usage) }
            return .usage("entryd refused parameter '\(s("parameter"))' (missing, of the wrong type or unusable)", usage)
        case WireErrorName.methodNotFound, WireErrorName.methodNotImplemented:
            return say("entryd does not serve method '\(s("method"))'")
        case WireErrorName.interfaceNotFound:
            return say("entryd does not serve interface '\(s("interface"))'")
        case WireErrorName.peerUnreachable:
            return say("peer '\(s("peer"))' cannot be reached (\(s("reason"))); try again later")
        case WireErrorName.peerNotFound:
            if s("peer").hasPrefix("exec:") {
                return say("entryd runs exec: addresses only for peers named in its configuration",
                               "Add a [peer NAME] section with this address to entryd.conf, then 'entryctl sync NAME'.")
            }
            return say("there is no peer '\(s("peer"))'",
                           "Name a configured peer ([peer NAME] in entryd.conf, or entryd --peer NAME=ADDRESS; "
                           + "'entryctl status' lists them), or give unix:/path/to/entryd.sock.")
        case WireErrorName.conflictNotFound:
            return say("there is no conflict '\(s("id"))'")
        case WireErrorName.clockSkew:
            let ahead = p["aheadMs"]?.intValue.map(String.init) ?? "?"
            return say("the clock of node '\(s("node"))' is \(ahead) ms ahead; nothing was applied")
        default:
            return say("entryd refused the call: \(error.name) \(p.text)")
        }
    }

    /// Exit 65 and one line per problem: `  FIELD: [CODE] MESSAGE (did you mean: A, B?)`.
    /// Problems are read from raw JSON so that a code this client does not know is still shown.
    static func validationFailed(_ problems: [JSON], locale: EntryLocale = .en) -> FailureReport {
        let header: String, meant: String
        switch locale {
        case .zh:
            header = "提交的值未被接受（\(problems.count) 个问题）："
            meant = "是否指"
        case .en:
            header = "the values were not accepted (\(problems.count == 1 ? "1 problem" : "\(problems.count) problems")):"
            meant = "did you mean"
        }
        var lines = [header]
        for problem in problems {
            let field = problem["field"]?.stringValue ?? ""
            let code = problem["code"]?.stringValue ?? "?"
            let message = problem["message"]?.stringValue ?? ""
            let suggestions = problem["suggestions"]?.arrayValue?.compactMap(\.stringValue) ?? []
            var line = "  \(field.isEmpty ? "(entry)" : field): [\(code)] \(message)"
            if !suggestions.isEmpty { line += " (\(meant): \(suggestions.map { describe($0, locale: locale) }.joined(separator: ", "))?)" }
            lines.append(DisplayWidth.sanitized(line))
        }
        return FailureReport(exitCode: .dataError, lines: lines)
    }

    /// A suggested canonical value with its name in `locale`, from the reference
    /// data this client carries: zh `CN 🇨🇳 中国`, `440100 广东省 广州市`; en
    /// `CN 🇨🇳 China`, `440100 Guangzhou, Guangdong`; other values as they are.
    public static func describe(_ value: String, locale: EntryLocale = .zh) -> String {
        let reference = ReferenceData.shared
        if let label = reference.countryLabel(alpha2: value, locale: locale) { return "\(value) \(label)" }
        if let division = reference.division(code: value) {
            let province = division.parentCode.flatMap(reference.division(code:))
            switch (locale, province) {
            case (.zh, let p?): return "\(value) \(p.nameZH) \(division.nameZH)"
            case (.en, let p?): return "\(value) \(division.nameEN), \(p.nameEN)"
            case (_, nil): return "\(value) \(division.name(in: locale))"
            }
        }
        return value
    }
}
