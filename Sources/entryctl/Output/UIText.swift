import EntryModel
import EntryProtocol
import EntryClient

/// The words entryctl itself prints next to the daemon's data (headers, keys),
/// in the locale chosen with `--locale`. Field labels come from the daemon.
struct UIText: Sendable {
    let id: String
    let version: String
    let form: String
    let deleted: String
    let yes: String
    let no: String
    let region: String
    let created: String
    let updated: String
    let syncedTo: String
    let name: String
    let birthday: String
    let country: String
    let contact: String
    let appointment: String
    let value: String
    let label: String
    let parent: String
    let aliases: String
    /// After the name of a field this node's form does not define (schema drift).
    let notInForm: String
    /// After a value that is no row of this node's picker lists.
    let notInList: String
    /// "N of TOTAL entries".
    let entriesFooter: @Sendable (Int, Int) -> String

    static let zh = UIText(
        id: "ID", version: "版本", form: "表单", deleted: "已删除", yes: "是", no: "否",
        region: "省市", created: "创建", updated: "更新", syncedTo: "已同步到",
        name: "姓名", birthday: "生日", country: "国家/地区", contact: "联系方式",
        appointment: "预约时间",
        value: "值", label: "名称", parent: "上级", aliases: "别名",
        notInForm: "（本表单没有此字段）", notInList: "（不在本表单的选项中）",
        entriesFooter: { shown, total in "共 \(total) 条，显示 \(shown) 条" })

    // Capitalised like the form's labels (Name, Birthday) they stand beside.
    static let en = UIText(
        id: "ID", version: "Version", form: "Form", deleted: "Deleted", yes: "yes", no: "no",
        region: "Region", created: "Created", updated: "Updated", syncedTo: "Synced to",
        name: "Name", birthday: "Birthday", country: "Country", contact: "Contact",
        appointment: "Appointment",
        value: "Value", label: "Label", parent: "Parent", aliases: "Aliases",
        notInForm: " (not in this form)", notInList: " (not in this form's lists)",
        entriesFooter: { shown, total in "\(shown) of \(total) entries" })

    static func `for`(_ locale: EntryLocale) -> UIText {
        switch locale {
        case .zh: return zh
        case .en: return en
        }
    }
}
