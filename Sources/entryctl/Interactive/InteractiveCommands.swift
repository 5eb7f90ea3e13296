import EntryModel
import EntryProtocol
import EntryClient

/// The `-i` forms of `add` and the `edit` command (the full-screen form, ``InteractiveForm``).
enum InteractiveCommands {
    /// `-i` / `--interactive`.
    static let interactiveOption = OptionSpec(
        ["--interactive", "-i"],
        help: Localized(zh: "在屏幕上用选择器填写表单（需要终端）。", en: "Fill the form on screen, with pickers (needs a terminal)."))

    /// The keys of the form, for help texts.
    static let keyHelp = [
        Localized(
            zh: "按键：Tab/↓ 下一个字段，Shift-Tab/↑ 上一个；Enter 或空格打开选择器（国家、省份、城市、",
            en: "Keys: Tab/↓ next field, Shift-Tab/↑ previous; Enter or Space opens a picker (country, province, city,"),
        Localized(
            zh: "选项、日期）；在选择器中 ↑/↓ PgUp/PgDn Home/End 移动，输入即搜索（代码、名称、拼音），Enter",
            en: "choice, date); in a picker ↑/↓ PgUp/PgDn Home/End move, typing searches (code, name, pinyin), Enter"),
        Localized(
            zh: "确认，Esc 恢复原来的值；日期选择器：←/→ 切换列，↑/↓ 滚动，可直接输入数字。",
            en: "commits, Esc restores the earlier value; date pickers: ←/→ column, ↑/↓ turn, digits type."),
        Localized(
            zh: "在最后一个字段按 Enter 或按 Ctrl-S 提交；Esc 放弃前会询问。NO_COLOR=1 不使用颜色。",
            en:
                "Enter on the last field or Ctrl-S submits; Esc asks before discarding. NO_COLOR=1 draws without colour."
        ),
        Localized(
            zh: "退出码：0 已存储（id 输出到标准输出；表单画在标准输出上，标准输出不是终端时",
            en: "Exit: 0 stored (the id is printed on stdout; the form is drawn on stdout, or stderr when stdout is"),
        Localized(
            zh: "画在标准错误上），1 已放弃，64 标准输入不是终端，69 无法连接 entryd。",
            en: "not a terminal), 1 discarded, 64 when stdin is not a terminal, 69 when entryd cannot be reached."),
    ]

    /// `entryctl add -i [--form NAME]`.
    static func prepareAdd(_ input: CommandInput) throws -> Command.Action {
        guard input.scanned.positionals.isEmpty else {
            throw UsageError(zh: "add -i 不接受 FIELD=VALUE 参数", en: "add -i takes no FIELD=VALUE arguments")
        }
        guard input.value("--id") == nil else {
            throw UsageError(zh: "add -i 不接受 --id", en: "add -i does not take --id")
        }
        let form = input.value("--form")
        return { session in try InteractiveForm.run(session: session, form: form, editID: nil) }
    }

    /// `entryctl edit -i ID`.
    static let edit = Command(
        name: "edit",
        summary: Localized(zh: "在全屏表单中修改条目（隐含 -i）。", en: "Change an entry in the full-screen form (-i is implied)."),
        arguments: "ID",
        options: [interactiveOption],
        details: [
            Localized(
                zh: "打开填好条目值的表单；“完成”用 Update 和读取时的版本存储修改过的字段",
                en: "Opens the entry's form filled with its values; Done stores the changed fields with Update and"),
            Localized(
                zh: "（如果期间有人修改了条目则被拒绝）。-i 可给可不给；",
                en: "the version read (refused if someone changed the entry meanwhile). -i may be given or left out;"),
            Localized(
                zh: "要在命令行修改字段请用 'entryctl update ID FIELD=VALUE...'。",
                en: "to change fields from the command line use 'entryctl update ID FIELD=VALUE...'."),
        ] + keyHelp,
        examples: ["entryctl edit -i 0193a5e2-7c4b-7def-8a12-3456789abcde"],
        prepare: { input in
            let id = try input.exactly("ID")[0]
            return { session in try InteractiveForm.run(session: session, form: nil, editID: id) }
        })
}
