import EntryModel
import EntryProtocol

/// The form's data for offline use (issue 32), `GET /api/v1/offline`: what
/// the form page needs to start, search its pickers and check an entry with
/// entryd unreachable. Built from entryd's answers, again when the forms
/// changed (a reload of entryd's forms, SIGHUP) or the last build is older
/// than ``fresh`` (another reference table comes with a restart of entryd):
///
/// - `forms`: per locale, `ListForms`' forms by name, and `default`, the name
///   of the form `GetForm` gives without one;
/// - `options`: per locale, form and picker field, every row `Options` gives
///   (list order, all rows; cities with their province as `parent`);
/// - `keys`: per form, field and row value, the keys `Options` ranks the row
///   by (``OptionRows/searchKeys(type:value:names:reference:)``): `[text,
///   starts, initials]`, so the page ranks rows as `Options` does without ICU;
/// - `fold`: Traditional and variant Han characters with their Simplified
///   text (the page folds a query with it, as ``MatchKey`` does with ICU);
/// - `version`: a SHA-256 prefix of the rest, also the ETag.
///
/// The page (web/assets/offline.js) and the service worker (web/sw.js) keep
/// the last answer; it holds reference rows and form definitions, never an entry.
enum OfflineData {
    static let pickerTypes: Set<String> = ["country", "province", "city", "choice"]
    /// How long entryd-web serves one build of the data, while the forms stay the same.
    static let fresh: Duration = .seconds(300)

    /// The forms of every locale as `ListForms` gives them (`notBefore` unresolved):
    /// what a cached build is checked against.
    static func formsText(call: (String, [(String, JSON)]) throws -> JSON) throws -> String {
        try EntryLocale.allCases.map { locale in
            let listed = try call(Method.formsListForms.rawValue, [("locale", .string(locale.rawValue))])["forms"]
            return JSON.array((listed?.arrayValue ?? []).map(unresolvingNow)).text
        }.joined(separator: "\n")
    }

    /// The data as JSON text and its version, from `call` (entryd's methods, with the web user as actor).
    static func build(call: (String, [(String, JSON)]) throws -> JSON) throws -> (body: [UInt8], version: String) {
        let defaultForm = try call(Method.formsGetForm.rawValue, [])["form"]?["name"]?.stringValue ?? ""
        var forms: [(String, JSON)] = []
        var options: [(String, JSON)] = []
        // form → field → value → keys (the same keys in every locale)
        var keys: [String: [String: [String: JSON]]] = [:]
        var formOrder: [String] = []
        var fieldOrder: [String: [String]] = [:]
        for locale in EntryLocale.allCases {
            let listed =
                try call(Method.formsListForms.rawValue, [("locale", .string(locale.rawValue))])["forms"]?
                .arrayValue ?? []
            var byName: [(String, JSON)] = []
            var optionsByForm: [(String, JSON)] = []
            for form in listed {
                guard let name = form["name"]?.stringValue else { continue }
                byName.append((name, unresolvingNow(form)))
                if !formOrder.contains(name) { formOrder.append(name) }
                var byField: [(String, JSON)] = []
                for field in form["fields"]?.arrayValue ?? [] {
                    guard let fieldName = field["name"]?.stringValue, let typeName = field["type"]?.stringValue,
                        pickerTypes.contains(typeName), let type = FieldType(rawValue: typeName)
                    else { continue }
                    let rows =
                        try call(
                            Method.formsOptions.rawValue,
                            [
                                ("form", .string(name)), ("field", .string(fieldName)),
                                ("locale", .string(locale.rawValue)),
                            ])["options"]?.arrayValue ?? []
                    byField.append((fieldName, .array(rows)))
                    if !(fieldOrder[name] ?? []).contains(fieldName) { fieldOrder[name, default: []].append(fieldName) }
                    for row in rows {
                        guard let value = row["value"]?.stringValue else { continue }
                        let names =
                            [value, row["label"]?.stringValue ?? ""]
                            + (row["aliases"]?.arrayValue ?? []).compactMap(\.stringValue)
                        var known = keys[name, default: [:]][fieldName, default: [:]][value]?.arrayValue ?? []
                        for key in OptionRows.searchKeys(type: type, value: value, names: names) {
                            let json = JSON.array([
                                .string(key.text), .array(key.starts.map { .int(Int64($0)) }), .bool(key.initials),
                            ])
                            if !known.contains(json) { known.append(json) }
                        }
                        keys[name, default: [:]][fieldName, default: [:]][value] = .array(known)
                    }
                }
                optionsByForm.append((name, .object(byField)))
            }
            forms.append((locale.rawValue, .object(byName)))
            options.append((locale.rawValue, .object(optionsByForm)))
        }
        let keysJSON = JSON.object(
            formOrder.map { form in
                (
                    form,
                    .object(
                        (fieldOrder[form] ?? []).map { field in
                            let values = keys[form]?[field] ?? [:]
                            return (field, .object(values.keys.sorted().map { ($0, values[$0]!) }))
                        })
                )
            })
        let fold = JSON.object(OptionRows.simplifiedFolds.map { ($0.0, .string($0.1)) })
        let content: [(String, JSON)] = [
            ("default", .string(defaultForm)), ("forms", .object(forms)), ("options", .object(options)),
            ("keys", keysJSON), ("fold", fold),
        ]
        let version = Secret.digest(JSON.object(content).text).prefix(8).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
        return (JSON.object([("version", .string(version))] + content).encoded, version)
    }

    /// `form` with each field's `notBefore` (now in UTC−12, a new value every
    /// minute) sent as `"now"`, which the page resolves itself: the data, and
    /// so its version, stays the same from one minute to the next.
    static func unresolvingNow(_ form: JSON) -> JSON {
        guard case .object(var members) = form, let i = members.firstIndex(where: { $0.0 == "fields" }),
            case .array(let fields) = members[i].1
        else { return form }
        members[i].1 = .array(
            fields.map { field in
                guard case .object(let m) = field else { return field }
                return .object(m.map { $0.0 == "notBefore" ? ($0.0, .string("now")) : $0 })
            })
        return .object(members)
    }
}

extension Gateway {
    /// `GET /api/v1/offline`: ``OfflineData`` for a logged-in user who may
    /// call GetForm and Options (a kiosk's `submit` too: the data holds form
    /// definitions and reference rows, which those give, and no entry);
    /// `If-None-Match` with its version gives 304.
    func offlineData(_ r: HTTPRequest) throws -> HTTPResponse {
        guard r.method == "GET" || r.method == "HEAD" else { throw WebError.methodNotAllowed("GET, HEAD") }
        let (session, role) = try authenticate(r, csrfChecked: false)
        for method in [Method.formsGetForm, .formsOptions] {
            guard let needed = policy.roleOf(method) else { throw WebError.notFound }
            guard policy.allows(role, method) else { throw WebError.permissionDenied(needed) }
        }
        let call = { (method: String, parameters: [(String, JSON)]) throws -> JSON in
            try self.link.call(method, .object(parameters + [("actor", .string(session.user))]))
        }
        // Building takes about 0.14 s (every picker row, both locales). The forms
        // (two ListForms calls) say whether the last build still holds: a form
        // reloaded by SIGHUP shows at once; reference rows, which change only
        // with entryd's own restart, within `OfflineData.fresh`.
        let now = ContinuousClock.now
        let forms = try asGateway { try OfflineData.formsText(call: call) }
        let built: (body: [UInt8], version: String)
        if let kept = offlineCache.withLock({ $0 }), kept.forms == forms, now - kept.at < OfflineData.fresh {
            built = (kept.body, kept.version)
        } else {
            built = try asGateway { try OfflineData.build(call: call) }
            offlineCache.withLock { $0 = (built.body, built.version, forms, now) }
        }
        let etag = "\"\(built.version)\""
        let headers = [("Content-Type", "application/json"), ("Cache-Control", "no-cache"), ("ETag", etag)]
        if r.header("if-none-match") == etag { return HTTPResponse(status: 304, headers: headers) }
        return HTTPResponse(status: 200, headers: headers, body: r.method == "HEAD" ? [] : built.body)
    }
}
