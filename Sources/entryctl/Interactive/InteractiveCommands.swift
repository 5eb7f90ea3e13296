import EntryModel
import EntryProtocol
import EntryClient

/// The `-i` forms of `add` and the `edit` command (the full-screen form, ``InteractiveForm``).
enum InteractiveCommands {
    /// `-i` / `--interactive`.
    static let interactiveOption = OptionSpec(["--interactive", "-i"], help: "Fill the form on screen, with pickers (needs a terminal).")

    /// The keys of the form, for help texts.
    static let keyHelp = [
        "Keys: Tab/↓ next field, Shift-Tab/↑ previous; Enter or Space opens a picker (country, province, city,",
        "choice, date); in a picker ↑/↓ PgUp/PgDn Home/End move, typing searches (code, name, pinyin), Enter",
        "commits, Esc restores the earlier value; date pickers: ←/→ column, ↑/↓ turn, digits type.",
        "Enter on the last field or Ctrl-S submits; Esc asks before discarding. NO_COLOR=1 draws without colour.",
        "Exit: 0 stored (the id is printed on stdout; the form is drawn on stdout, or stderr when stdout is",
        "not a terminal), 1 discarded, 64 when stdin is not a terminal, 69 when entryd cannot be reached.",
    ]

    /// `entryctl add -i [--form NAME]`.
    static func prepareAdd(_ input: CommandInput) throws -> Command.Action {
        guard input.scanned.positionals.isEmpty else { throw UsageError("add -i takes no FIELD=VALUE arguments") }
        guard input.value("--id") == nil else { throw UsageError("add -i does not take --id") }
        let form = input.value("--form")
        return { session in try InteractiveForm.run(session: session, form: form, editID: nil) }
    }

    /// `entryctl edit -i ID`.
    static let edit = Command(
        name: "edit", summary: "Change an entry in the full-screen form (-i is implied).", arguments: "ID",
        options: [interactiveOption],
        details: ["Opens the entry's form filled with its values; Done stores the changed fields with Update and",
                  "the version read (refused if someone changed the entry meanwhile). -i may be given or left out;",
                  "to change fields from the command line use 'entryctl update ID FIELD=VALUE...'."] + keyHelp,
        examples: ["entryctl edit -i 0193a5e2-7c4b-7def-8a12-3456789abcde"],
        prepare: { input in
            let id = try input.exactly("ID")[0]
            return { session in try InteractiveForm.run(session: session, form: nil, editID: id) }
        })
}
