import EntryModel
import EntryProtocol

/// The words of the interactive form itself (footer, prompts, hints), in the
/// form's locale. Labels, option names and problem messages come from the daemon.
package struct EditorWords: Sendable {
    /// Footer words of the form: previous / next field, open a picker, submit, discard, keep editing.
    package let previous: String, next: String, choose: String, done: String, discard: String, keepEditing: String
    /// Footer and panel words of the pickers.
    package let commit: String, cancel: String, search: String, columns: String, adjust: String
    /// Title suffixes, picker states, and the placeholder of an empty field.
    let newEntry: String, editing: String, loading: String, noRows: String, empty: String
    /// Status line texts ("N problems …" is the count, a space, then ``problems``).
    let discardPrompt: String, submitting: String, problems: String, tooSmall: String
    /// Date wheel column headings: year, month, day, hour, minute.
    let wheel: [String]

    /// Chinese.
    package static let zh = EditorWords(
        previous: "上一项", next: "下一项", choose: "选择", done: "完成", discard: "放弃", keepEditing: "继续填写",
        commit: "确定", cancel: "取消", search: "搜索", columns: "切换列", adjust: "调整",
        newEntry: "新建", editing: "编辑", loading: "加载中…", noRows: "没有匹配的选项", empty: "未填",
        discardPrompt: "放弃所做的修改？(y 放弃 / n 继续填写)", submitting: "正在提交…",
        problems: "个问题，请修改后再提交", tooSmall: "终端太小",
        wheel: ["年", "月", "日", "时", "分"])

    /// English.
    package static let en = EditorWords(
        previous: "Prev", next: "Next", choose: "Pick", done: "Done", discard: "Discard", keepEditing: "Keep editing",
        commit: "OK", cancel: "Cancel", search: "Search", columns: "Column", adjust: "Turn",
        newEntry: "new", editing: "edit", loading: "loading…", noRows: "no matching rows", empty: "empty",
        discardPrompt: "Discard your changes? (y discard / n keep editing)", submitting: "submitting…",
        problems: "problem(s): correct them, then submit", tooSmall: "terminal too small",
        wheel: ["Year", "Mon", "Day", "Hour", "Min"])

    /// The words for `locale`.
    package static func `for`(_ locale: EntryLocale) -> EditorWords { locale == .zh ? zh : en }
}
