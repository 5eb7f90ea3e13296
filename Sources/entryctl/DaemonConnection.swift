import CSystem
import EntryModel
import EntryProtocol
import EntryClient

/// A command's link to the daemon, opened on the first call, plus the global choices.
final class DaemonConnection {
    /// Longest wait for one reply or send, in milliseconds (`--timeout`, default
    /// 60 s; 0: no limit). `watch` waits for changes without bound.
    var replyTimeoutMilliseconds: Int { globals.timeoutSeconds * 1000 }

    let globals: GlobalOptions
    let locator: SocketLocator
    private var connection: VarlinkConnection?

    init(globals: GlobalOptions, environment: [String: String]) {
        self.globals = globals
        self.locator = SocketLocator(explicitPath: globals.socket, environment: environment)
    }

    /// The locale as a wire parameter.
    var locale: JSON { .string(globals.locale.rawValue) }
    /// Table headers and labels of this client, in the chosen locale.
    var text: UIText { UIText.for(globals.locale) }

    /// The open connection, connecting on first use.
    /// - Throws: ``DaemonUnreachable`` when no socket exists or `connect` fails.
    func open() throws -> VarlinkConnection {
        if let connection { return connection }
        let candidate = try locator.locate()
        do {
            let opened = try VarlinkConnection(path: candidate.path)
            _ = csystem_set_timeouts(opened.fd, replyTimeoutMilliseconds, replyTimeoutMilliseconds)
            connection = opened
            return opened
        } catch {
            throw DaemonUnreachable(attempts: [.init(candidate: candidate, error: error)])
        }
    }

    /// Calls `method` and returns the reply parameters.
    /// - Throws: ``DaemonUnreachable``, ``WireError`` for an error reply, or the
    ///   connection's errors (`SystemError`, `ConnectionClosed`, `JSONParseError`).
    func call(_ method: Method, _ parameters: JSON = .object([])) throws -> JSON {
        try call(method.rawValue, parameters)
    }

    /// Calls `method` given by its name (`entryctl call`, which may name one
    /// this build does not declare); otherwise as the overload that takes a ``Method``.
    func call(_ method: String, _ parameters: JSON = .object([])) throws -> JSON {
        try open().call(method, parameters)
    }

    /// Calls `method` with `more` and hands every reply to `body`, with no reply
    /// timeout, until the daemon sends the last reply or `body` returns false.
    /// - Throws: as ``call(_:_:)``.
    func stream(_ method: Method, _ parameters: JSON, _ body: (JSON) throws -> Bool) throws {
        try stream(method.rawValue, parameters, body)
    }

    /// Streams `method` given by its name (`entryctl call --more`); otherwise as
    /// the overload that takes a ``Method``.
    func stream(_ method: String, _ parameters: JSON, _ body: (JSON) throws -> Bool) throws {
        let connection = try open()
        _ = csystem_set_timeouts(connection.fd, 0, replyTimeoutMilliseconds)
        try connection.stream(method, parameters, body)
    }

    /// The form's fields in navigation order, as (name, label) pairs, from
    /// `io.entryd.Forms.GetForm`; `nil` for the default form. Empty when the form
    /// cannot be read (an older daemon, a missing form): callers then show names.
    func fieldLabels(form: String?) -> [(name: String, label: String)] {
        fieldNames(form: form, choiceLabels: false).labels
    }

    /// The form's labels and field types (`GetForm`) and, with `choiceLabels`,
    /// the labels of each choice field's options (`Options`, read as export reads
    /// them: ``DataColumns/valueLabels(options:)``), for showing stored values;
    /// empty parts when the daemon cannot answer, so callers fall back to names and codes.
    func fieldNames(form: String?, choiceLabels: Bool = true) -> FieldDisplay {
        var names = FieldDisplay()
        guard let reply = try? call(.formsGetForm, params(("name", form.json), ("locale", locale))),
            let fields = reply["form"]?["fields"]?.arrayValue
        else { return names }
        for field in fields {
            guard let name = field["name"]?.stringValue else { continue }
            names.labels.append((name, field["label"]?.stringValue ?? name))
            let type = field["type"]?.stringValue ?? "text"
            names.types[name] = type
            guard choiceLabels, type == "choice",
                let options = try? call(
                    .formsOptions, params(("form", form.json), ("field", .string(name)), ("locale", locale)))
            else { continue }
            names.choices[name] = DataColumns.valueLabels(options: options["options"]?.arrayValue ?? [])
        }
        return names
    }
}
