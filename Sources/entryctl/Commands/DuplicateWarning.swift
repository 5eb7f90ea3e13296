import EntryModel
import EntryProtocol
import EntryClient

/// Possible duplicates in entryctl's words (doc/protocol.md "Possible
/// duplicates"): a warning on stderr after an Add, a question before the
/// interactive form's Add, a count in an import's summary.
enum DuplicateWarning {
    /// The `Duplicate`s of a reply's `duplicates` member (none when absent).
    static func list(_ reply: JSON?) -> [JSON] {
        reply?["duplicates"]?.arrayValue ?? []
    }

    /// What matched, in words: `姓名和生日相同、电话相同` / `same name and birthday, same phone`.
    static func matched(_ duplicate: JSON, locale: EntryLocale) -> String {
        let codes = (duplicate["matched"]?.arrayValue ?? []).compactMap(\.stringValue)
        let words = codes.map { code in
            switch code {
            case "name-birthday": locale == .zh ? "姓名和生日相同" : "same name and birthday"
            case "phone": locale == .zh ? "电话相同" : "same phone"
            case "email": locale == .zh ? "邮箱相同" : "same e-mail"
            default: code
            }
        }
        return words.joined(separator: locale == .zh ? "、" : ", ")
    }

    /// One line per duplicate: `可能重复：李雷（ID，registration）：电话相同；查看：entryctl get ID`.
    static func lines(_ duplicates: [JSON], locale: EntryLocale) -> [String] {
        duplicates.map { d in
            let id = d["id"]?.stringValue ?? ""
            let name = DisplayWidth.sanitized(d["name"]?.stringValue ?? "")
            let form = DisplayWidth.sanitized(d["form"]?.stringValue ?? "")
            return locale == .zh
                ? "可能重复：\(name)（\(id)，表单 \(form)）：\(matched(d, locale: locale))；查看：entryctl get \(id)"
                : "possible duplicate: \(name) (\(id), form \(form)): \(matched(d, locale: locale)); see: entryctl get \(id)"
        }
    }

    /// After an Add was stored: each possible duplicate as a warning on stderr.
    static func warn(_ reply: JSON, locale: EntryLocale) {
        let duplicates = list(reply)
        guard !duplicates.isEmpty else { return }
        for line in lines(duplicates, locale: locale) { Terminal.message(line) }
        Terminal.message(
            locale == .zh
                ? "条目已存储；如确是同一人，可合并后删除其中一条（entryctl delete ID）"
                : "the entry is stored; if it is the same person, keep one and delete the other (entryctl delete ID)")
    }
}
