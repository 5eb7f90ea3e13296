@preconcurrency import Glibc
import Foundation
import EntryModel
import EntryProtocol
import EntryClient

/// `entryctl add -i` and `entryctl edit -i ID`: the full-screen form.
///
/// The shell only moves bytes and calls: it reads stdin, feeds ``KeyDecoder``,
/// hands keys to ``FormEditor``, carries out its actions against the daemon
/// (Check, Options, Add/Update), and draws ``FormRenderer``'s screen. It is
/// single-threaded: a call to the daemon finishes before the next key is
/// read, so answers always match the state that asked.
enum InteractiveForm {
    /// How long a lone ESC waits for the rest of a sequence, in milliseconds.
    static let escapeDelayMilliseconds: Int32 = 40

    /// What the form ended with.
    private enum Outcome {
        case stored(JSON)
        case unchanged
        case discarded
        case interrupted(Int32)
    }

    /// Runs the form for a new entry of `form` (`nil`: the default form), or
    /// for the entry `editID`; prints the stored entry's id on stdout.
    ///
    /// - Throws: ``UsageError`` (exit 64) when stdin is not a terminal;
    ///   ``Refusal`` (exit 1) when the person discards; the daemon's errors
    ///   from reading the form or the entry (before the screen is taken).
    static func run(session: DaemonConnection, form formName: String?, editID: String?) throws {
        let terminal: TerminalDevice
        do { terminal = try TerminalDevice() } catch {
            let command = editID == nil ? "add" : "edit"
            throw UsageError(
                zh: "\(command) -i 需要终端：标准输入和标准输出（或标准错误）都必须是终端；"
                    + "脚本中请用 'entryctl add FIELD=VALUE...' 或 'entryctl update'",
                en: "\(command) -i needs a terminal: stdin and stdout (or stderr) "
                    + "must be terminals; in scripts use 'entryctl add FIELD=VALUE...' or 'entryctl update'")
        }
        var values: [String: String] = [:]
        var display: [String: String] = [:]
        var version: String?
        var name = formName
        if let editID {
            let entry = try session.call(.entriesGet, params(("id", .string(editID)), ("locale", session.locale)))[
                "entry"]
            values = EntryView.stringMap(entry?["fields"])
            display = EntryView.stringMap(entry?["display"])
            version = entry?["version"]?.stringValue
            name = entry?["form"]?.stringValue
        }
        let reply = try session.call(.formsGetForm, params(("name", name.json), ("locale", session.locale)))
        guard let form = EditorForm(json: reply["form"] ?? .null), !form.fields.isEmpty else {
            throw Refusal(
                zh: "entryd 发来的表单没有字段，或本客户端无法读取",
                en: "entryd sent a form without fields, or one this client cannot read")
        }
        var editor = FormEditor(
            form: form, values: values, display: display, editing: editID != nil, entryID: editID,
            locale: session.globals.locale, now: localNow())
        let colour =
            (ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty
            && ProcessInfo.processInfo.environment["TERM"] != "dumb"

        let formOfEditor = editor.form.name
        try terminal.enter()
        let outcome = loop(
            &editor, terminal: terminal, session: session, colour: colour,
            store: { fields in
                if editID == nil {
                    try askAboutDuplicates(fields, session: session, form: formOfEditor, terminal: terminal)
                }
                return try store(fields, session: session, form: name, editID: editID, version: version)
            })
        terminal.restore()
        switch outcome {
        case .stored(let entry):
            if session.globals.json { return Terminal.out(lines: [JSON.object([("entry", entry)]).text]) }
            Terminal.out(lines: [entry["id"]?.stringValue ?? ""])
        case .unchanged:
            Terminal.message(
                Localized(zh: "没有修改，未存储任何内容", en: "no changes; nothing was stored")(session.globals.locale))
            Terminal.out(lines: [editID ?? ""])
        case .discarded:
            throw Refusal(zh: "已放弃，未存储任何内容", en: "discarded; nothing was stored")
        case .interrupted(let signal):
            throw Refusal(zh: "被信号 \(signal) 中止，未存储任何内容", en: "stopped by signal \(signal); nothing was stored")
        }
    }

    /// The person chose not to add an entry that may be a duplicate: back to the form.
    private struct NotAdded: Error {}

    /// Before the form's Add: when Check names stored entries that may be the
    /// same person (doc/protocol.md "Possible duplicates"), leaves the screen,
    /// lists them and asks for one key: `a` adds anyway, `s` shows the
    /// existing entries and asks again, any other (Enter: the default) adds
    /// nothing and goes back to the form. Nothing is asked when there are none, or when
    /// the caller may not be told (a submit role gets no duplicates).
    /// - Throws: ``NotAdded`` when the person does not add; the daemon's errors.
    private static func askAboutDuplicates(
        _ fields: [String: String], session: DaemonConnection, form: String, terminal: TerminalDevice
    ) throws {
        let reply = try session.call(
            .formsCheck, params(("form", .string(form)), ("fields", .stringMap(fields)), ("locale", session.locale)))
        let duplicates = DuplicateWarning.list(reply)
        guard !duplicates.isEmpty else { return }
        let locale = session.globals.locale
        // On the form's own (alternate, raw) screen, cleared; the form is drawn whole again after.
        defer { terminal.clear() }
        var text = "\u{1B}[2J\u{1B}[H\u{1B}[?25h"
        text +=
            Localized(zh: "这份登记可能与已有条目是同一人：", en: "This entry may be the same person as a stored one:")(locale) + "\n"
        for line in DuplicateWarning.lines(duplicates, locale: locale) { text += "  " + line + "\n" }
        terminal.write(text)
        while true {
            terminal.write(
                Localized(
                    zh: "\na = 仍然添加，s = 显示已有条目，其他键（回车）= 不添加，回到表单：",
                    en:
                        "\na = add anyway, s = show the existing entries, any other key (Enter) = do not add, back to the form: "
                )(locale))
            switch String(decoding: terminal.read().prefix(1), as: UTF8.self) {
            case "a", "A":
                return
            case "s", "S":
                for d in duplicates {
                    guard let id = d["id"]?.stringValue else { continue }
                    let entry = try session.call(.entriesGet, params(("id", .string(id)), ("locale", session.locale)))[
                        "entry"]
                    let labels = session.fieldLabels(form: entry?["form"]?.stringValue)
                    terminal.write(
                        "\n"
                            + EntryView.lines(entry ?? .object([]), labels: labels, text: session.text)
                            .joined(separator: "\n") + "\n")
                }
            default:
                throw NotAdded()
            }
        }
    }

    /// Add or Update; `nil` when editing changed nothing.
    private static func store(
        _ fields: [String: String], session: DaemonConnection, form: String?, editID: String?,
        version: String?
    ) throws -> JSON? {
        guard let editID else {
            return try session.call(
                .entriesAdd,
                params(
                    ("form", form.json), ("fields", .stringMap(fields)), ("locale", session.locale)))["entry"]
        }
        if fields.isEmpty { return nil }
        return try session.call(
            .entriesUpdate,
            params(
                ("id", .string(editID)), ("fields", .stringMap(fields)), ("ifVersion", version.json),
                ("locale", session.locale)))["entry"]
    }

    /// The event loop: draw, wait for bytes or a signal, handle keys, carry out actions.
    private static func loop(
        _ editor: inout FormEditor, terminal: TerminalDevice, session: DaemonConnection, colour: Bool,
        store: ([String: String]) throws -> JSON?
    ) -> Outcome {
        var decoder = KeyDecoder()
        var previous: Screen?
        var pending = editor.start()
        while true {
            for action in coalesced(pending) {
                if let outcome = perform(action, &editor, session: session, store: store) { return outcome }
            }
            pending = []
            let size = terminal.size()
            let renderer = FormRenderer(width: size.width, height: size.height)
            editor.pageSize = renderer.listRows(for: editor)
            let screen = renderer.screen(editor)
            terminal.draw(screen, previous: previous, colour: colour)
            previous = screen

            var fds = [
                pollfd(fd: terminal.input, events: Int16(POLLIN), revents: 0),
                pollfd(fd: terminal.signalFD, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, decoder.hasPending ? escapeDelayMilliseconds : -1)
            if ready < 0 { continue }
            if fds[1].revents != 0 {
                var byte: UInt8 = 0
                while Glibc.read(terminal.signalFD, &byte, 1) == 1 {
                    if Int32(byte) == SIGWINCH {
                        previous = nil
                        terminal.clear()
                    } else {
                        return .interrupted(Int32(byte))
                    }
                }
            }
            var keys: [Key] = []
            if fds[0].revents != 0 {
                let bytes = terminal.read()
                if bytes.isEmpty { return .interrupted(SIGHUP) }
                keys = decoder.feed(bytes)
            } else if ready == 0 {
                keys = decoder.flush()
            }
            for key in keys {
                if key == .control("l") {
                    previous = nil
                    terminal.clear()
                }
                pending += editor.handle(key)
                // A submit or quit is carried out before later keys are read.
                if pending.contains(where: { if case .submit = $0 { true } else { $0 == .quit } }) {
                    for action in coalesced(pending) {
                        if let outcome = perform(action, &editor, session: session, store: store) { return outcome }
                    }
                    pending = []
                    // A submit may have left the screen (the duplicates question): draw it whole.
                    previous = nil
                }
            }
        }
    }

    /// The actions with every Check but the last dropped (only the latest values matter).
    private static func coalesced(_ actions: [FormEditor.Action]) -> [FormEditor.Action] {
        guard let last = actions.lastIndex(where: { if case .check = $0 { true } else { false } }) else {
            return actions
        }
        return actions.enumerated().compactMap { index, action in
            if case .check = action, index != last { return nil }
            return action
        }
    }

    /// Carries out one action; returns an outcome when the form is finished.
    private static func perform(
        _ action: FormEditor.Action, _ editor: inout FormEditor, session: DaemonConnection,
        store: ([String: String]) throws -> JSON?
    ) -> Outcome? {
        switch action {
        case .quit:
            return .discarded
        case .check(let fields):
            do {
                let reply = try session.call(
                    .formsCheck,
                    params(
                        ("form", .string(editor.form.name)), ("fields", .stringMap(fields)), ("locale", session.locale))
                )
                editor.receiveCheck(
                    display: EntryView.stringMap(reply["display"]),
                    problems: (reply["problems"]?.arrayValue ?? []).compactMap(Problem.init(json:)))
            } catch {
                editor.show(message: FailureReport(for: error).lines.joined(separator: " "))
            }
        case .fetchOptions(let request):
            do {
                let reply = try session.call(
                    .formsOptions,
                    params(
                        ("form", .string(editor.form.name)), ("field", .string(request.field)),
                        ("parent", request.parent.json),
                        ("query", request.query.isEmpty ? nil : .string(request.query)), ("locale", session.locale)))
                editor.receive((reply["options"]?.arrayValue ?? []).compactMap(OptionRow.init(json:)), for: request)
            } catch {
                editor.receive([], for: request)
                editor.show(message: FailureReport(for: error).lines.joined(separator: " "))
            }
        case .submit(let fields):
            do {
                guard let entry = try store(fields) else { return .unchanged }
                return .stored(entry)
            } catch is NotAdded {
                editor.submitFailed(
                    message: Localized(
                        zh: "未添加：可能与已有条目重复；修改后再按“完成”，或再按一次并选 a 仍然添加",
                        en:
                            "not added: it may duplicate a stored entry; change it and press Done, or press Done and choose a"
                    )(session.globals.locale))
            } catch let error as WireError where error.known == .validationFailed {
                editor.submitFailed(
                    problems: (error.parameters["problems"]?.arrayValue ?? []).compactMap(Problem.init(json:)))
            } catch {
                editor.submitFailed(message: FailureReport(for: error).lines.joined(separator: " "))
            }
        }
        return nil
    }

    /// The local wall-clock date and time now (for empty date pickers).
    static func localNow() -> PickerDate {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: Date())
        return PickerDate(
            year: c.year ?? 2000, month: c.month ?? 1, day: c.day ?? 1, hour: c.hour ?? 0, minute: c.minute ?? 0)
    }
}
