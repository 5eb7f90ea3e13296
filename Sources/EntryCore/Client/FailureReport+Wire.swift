// MARK: - Wire errors (doc/protocol.md names; branch on names, never on text)

extension FailureReport {
    /// The report for an error reply, chosen by its fully qualified name.
    static func wire(_ error: WireError, usage: Usage?, locale: EntryLocale = .en) -> FailureReport {
        let p = error.parameters
        func s(_ key: String) -> String { p[key]?.stringValue ?? "?" }
        func refused(_ lines: String...) -> FailureReport { FailureReport(exitCode: .failure, lines: lines) }
        func later(_ lines: String...) -> FailureReport { FailureReport(exitCode: .temporaryFailure, lines: lines) }

        switch error.name {
        case "io.entryd.Entries.ValidationFailed":
            return validationFailed(p["problems"]?.arrayValue ?? [], locale: locale)
        case "io.entryd.Entries.EntryNotFound":
            return refused("no entry with id '\(s("id"))'")
        case "io.entryd.Entries.EntryExists":
            return refused("entry '\(s("id"))' already exists with other values, or is deleted",
                           "Change it with 'entryctl update \(s("id")) …' or bring it back with 'entryctl restore \(s("id"))'.")
        case "io.entryd.Entries.VersionMismatch":
            return refused("entry '\(s("id"))' was changed since you read it: its current version is \(s("version"))",
                           "Check it with 'entryctl get \(s("id"))', then retry with --if-version \(s("version")).")
        case "io.entryd.Entries.FormNotFound", "io.entryd.Forms.FormNotFound":
            return refused("there is no form '\(s("form"))'", "'entryctl forms' lists the forms.")
        case "io.entryd.Forms.FieldNotFound":
            return refused("form '\(s("form"))' has no field '\(s("field"))' with a picker list",
                           "'entryctl forms' lists the fields; options work on country, province, city and choice fields.")
        case "io.entryd.Entries.LimitExceeded":
            let maximum = p["maximum"]?.intValue.map(String.init) ?? "?"
            return later("entryd refused the call: limit '\(s("limit"))' (maximum \(maximum)) was reached; try again with less")
        case "io.entryd.Entries.StorageFailed":
            return later("entryd could not store the change (\(s("reason"))); nothing was stored, try again later")
        case "org.varlink.service.PermissionDenied":
            let role = p["role"]?.stringValue.map { ": this needs the '\($0)' role" } ?? ""
            return refused("permission denied\(role)", "Roles are given to users and groups in entryd.conf.")
        case "org.varlink.service.InvalidParameter":
            // The parameters a user types through an option get a hint in the option's terms.
            let hints = [
                "ifVersion": "--if-version takes the entry's version: 16 hexadecimal digits, as `entryctl get ID` shows under 'version'",
                "id": "an entry id is a UUID (8-4-4-4-12 hexadecimal digits), as `entryctl add` and `entryctl list` show it",
                "locale": "--locale takes zh or en",
            ]
            if let hint = hints[s("parameter")] { return .usage("entryd refused '\(s("parameter"))': \(hint)", usage) }
            return .usage("entryd refused parameter '\(s("parameter"))' (missing, of the wrong type or unusable)", usage)
        case "org.varlink.service.MethodNotFound", "org.varlink.service.MethodNotImplemented":
            return refused("entryd does not serve method '\(s("method"))'")
        case "org.varlink.service.InterfaceNotFound":
            return refused("entryd does not serve interface '\(s("interface"))'")
        case "io.entryd.Sync.PeerUnreachable":
            return later("peer '\(s("peer"))' cannot be reached (\(s("reason"))); try again later")
        case "io.entryd.Sync.PeerNotFound":
            if s("peer").hasPrefix("exec:") {
                return refused("entryd runs exec: addresses only for peers named in its configuration",
                               "Add a [peer NAME] section with this address to entryd.conf, then 'entryctl sync NAME'.")
            }
            return refused("there is no peer '\(s("peer"))'",
                           "Name a configured peer ([peer NAME] in entryd.conf, or entryd --peer NAME=ADDRESS; "
                           + "'entryctl status' lists them), or give unix:/path/to/entryd.sock.")
        case "io.entryd.Sync.ConflictNotFound":
            return refused("there is no conflict '\(s("id"))'")
        case "io.entryd.Sync.ClockSkew":
            let ahead = p["aheadMs"]?.intValue.map(String.init) ?? "?"
            return refused("the clock of node '\(s("node"))' is \(ahead) ms ahead; nothing was applied")
        default:
            return refused("entryd refused the call: \(error.name) \(p.text)")
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
