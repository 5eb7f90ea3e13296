/// The reasons a value can be refused, each with a one-sentence message per
/// locale that names the field and says what to do (doc/protocol.md, `Problem.message`).
enum ProblemReason: Sendable, Equatable {
    case required
    case unknownField(form: String)
    case controlCharacters
    /// Only invisible characters (fillers, joiners, lone combining marks).
    case noVisibleCharacters
    case tooLong(maximum: Int)
    /// Within `characters` characters but over `codePoints` Unicode scalars:
    /// combining marks stacked on the letters.
    case tooManyCodePoints(characters: Int, codePoints: Int)
    /// Tag characters (U+E0000–U+E007F), invisible, in a text.
    case tagCharacters
    case dateFormat
    case noSuchDate
    case dateTimeFormat
    case noSuchTime
    case secondsNotZero
    case before(String)
    case after(String)
    /// A new date-time before now in UTC−12 (`not-before = now`); the bound.
    case inThePast(String)
    case offInterval(minutes: Int)
    case notACountry
    case notAProvince
    case notACity
    case notAnOption(labels: [String])
    case retired(name: String)
    case ambiguous(names: [String])
    case notInProvince(province: String)
    case provinceAsCity(province: String)
    case provinceHasNoCities(province: String)
    /// The province was cleared while the stored city (named) lies in it.
    case cityNeedsProvince(city: String)
    case phoneCharacters
    /// A number a spreadsheet turned into scientific notation (`1.38001E+10`).
    case phoneScientificNotation
    case phoneTooLong
    case phoneTooShort
    case unknownCallingCode
    /// Digits that make a number only with a `+` before them (`suggestion`, formatted).
    case phoneCallingCodeWithoutPlus(suggestion: String)
    /// Digits that start with the region's own calling code and make a number
    /// both with `+` before them and as a national number (both formatted).
    case phoneAmbiguous(international: String, national: String)
    /// Of no length or pattern that a number of the region (named) has.
    case phoneInvalid(region: String)
    /// No number of the entry's region (named), but a valid Chinese number
    /// (the `suggestion`, formatted): a Chinese number typed for an entry of another country.
    case phoneOfChina(region: String, suggestion: String)
    /// A valid number of a type (named) that the field does not take (`accepted`, named).
    case phoneWrongType(type: String, accepted: [String])
    case emailFormat
    case emailTooLong
    /// A label of the domain (as typed) that IDNA2008 does not allow.
    case emailDomainLabel(label: String)

    /// The message for a field labelled `label` (the field name for unknown fields).
    func message(label: String, locale: EntryLocale) -> String {
        switch locale {
        case .zh: return chinese(label)
        case .en: return english(label)
        }
    }

    private func chinese(_ label: String) -> String {
        switch self {
        case .required: return "请填写\(label)。"
        case .unknownField(let form): return "表单“\(form)”没有字段“\(label)”，请删去它。"
        case .controlCharacters: return "\(label)不能包含换行、制表符等控制字符，请删去。"
        case .noVisibleCharacters: return "\(label)只有不可见的字符，请填写可见的内容。"
        case .tooLong(let maximum): return "\(label)最多 \(maximum) 个字符，请缩短。"
        case .tooManyCodePoints(let characters, let codePoints):
            return
                "\(label)的附加符号太多：最多 \(characters) 个字符，连同声调、重音等附加符号共不超过 \(codePoints) 个 Unicode 码位，请删去多余的符号。"
        case .tagCharacters: return "\(label)含有不可见的标签字符（U+E0000–U+E007F），请删去。"
        case .dateFormat: return "\(label)不是可识别的日期，请按 YYYY-MM-DD 填写，例如 1990-05-17。"
        case .noSuchDate: return "\(label)：没有这一天，请检查月份和日期。"
        case .dateTimeFormat: return "\(label)不是可识别的日期时间，请按 YYYY-MM-DD HH:mm 填写，例如 2025-03-09 14:30。"
        case .noSuchTime: return "\(label)：时间无效，小时为 0–23，分钟为 0–59。"
        case .secondsNotZero: return "\(label)只精确到分钟，请去掉秒数。"
        case .before(let bound): return "\(label)不能早于 \(bound)。"
        case .after(let bound): return "\(label)不能晚于 \(bound)。"
        case .inThePast(let bound): return "\(label)已经过去，请选择 \(bound) 之后的时间。"
        case .offInterval(let minutes): return "\(label)的分钟数须是 \(minutes) 的倍数，请选择整 \(minutes) 分钟的时间。"
        case .notACountry: return "\(label)不在国家列表中，请从列表中选择，或填写 ISO 代码（如 CN）。"
        case .notAProvince: return "\(label)不在省份列表中，请从列表中选择（如 广东 或 440000）。"
        case .notACity: return "\(label)不在城市列表中，请从所选省份的城市中选择。"
        case .notAnOption(let labels): return "\(label)只能是以下之一：\(labels.joined(separator: "、"))。"
        case .retired(let name): return "\(label)“\(name)”是已撤销的区划，请选择现行的城市。"
        case .ambiguous(let names): return "\(label)有多个匹配：\(names.joined(separator: "、"))，请选择其一。"
        case .notInProvince(let province): return "\(label)不属于所选省份“\(province)”，请选择该省份的城市或更改省份。"
        case .provinceAsCity(let province): return "\(province)是省级单位，\(label)请选择它下辖的城市或区县，例如下面的建议。"
        case .provinceHasNoCities(let province): return "“\(province)”没有下级城市，请将\(label)留空。"
        case .cityNeedsProvince(let city): return "不能只清空\(label)：已存的城市“\(city)”属于它；请同时清空城市，或同时改选省份和城市。"
        case .phoneCharacters: return "\(label)只能包含数字、空格、连字符、点、括号和开头的 +，例如 +86 138 0013 8000。"
        case .phoneScientificNotation: return "\(label)是科学计数法（如 1.38001E+10）：表格软件把号码当成了数字，末尾几位已经丢失；请把该列设为文本格式后重新导出。"
        case .phoneTooLong: return "\(label)位数太多，请检查号码。"
        case .phoneTooShort: return "\(label)位数太少，请填写完整号码（座机连同区号）。"
        case .unknownCallingCode: return "\(label)的国家代码无法识别，请检查 + 或 00 后面的数字，或写成 + 加国家代码的形式，例如 +86 138 0013 8000。"
        case .phoneCallingCodeWithoutPlus(let suggestion): return "\(label)似乎以国家代码开头但缺少 +，请写成 \(suggestion)。"
        case .phoneAmbiguous(let international, let national):
            return "\(label)有两种读法：带国家代码的 \(international)，或本国号码 \(national)；若指前者请加上 +，或从建议中选择。"
        case .phoneInvalid(let region): return "\(label)不是有效的\(region)号码，请检查位数和开头的数字。"
        case .phoneOfChina(let region, let suggestion):
            return "\(label)不是有效的\(region)号码；如果是中国的号码，请连同国家代码写成 \(suggestion)。"
        case .phoneWrongType(let type, let accepted):
            return
                "\(label)：填写的是\(type)号码，此处只接受\(accepted.joined(separator: "、"))号码；请换一个\(accepted.joined(separator: "或"))号码。"
        case .emailFormat: return "\(label)不是有效的邮箱地址，请按 name@example.com 的格式填写。"
        case .emailTooLong: return "\(label)过长：@ 前最多 64 字节，域名最多 255 字节，整个地址（国际化域名按 xn-- 形式计）最多 254 字节。"
        case .emailDomainLabel(let part):
            return "\(label)的域名部分“\(part)”不是有效的（国际化）域名：只能用字母、数字和不在首尾的连字符，每段最多 63 字节；请检查拼写。"
        }
    }

    private func english(_ label: String) -> String {
        switch self {
        case .required: return "\(label) is required; please fill it in."
        case .unknownField(let form): return "Form '\(form)' has no field '\(label)'; remove it."
        case .controlCharacters:
            return "\(label) must not contain control characters such as line breaks or tabs; remove them."
        case .noVisibleCharacters: return "\(label) has only invisible characters; enter something visible."
        case .tooLong(let maximum): return "\(label) may have at most \(maximum) characters; shorten it."
        case .tooManyCodePoints(let characters, let codePoints):
            return
                "\(label) has too many combining marks: at most \(characters) characters, and at most \(codePoints) Unicode code points counting the accents and other marks on them; remove the surplus marks."
        case .tagCharacters:
            return "\(label) contains invisible tag characters (U+E0000–U+E007F); remove them."
        case .dateFormat: return "\(label) is not a date; write it as YYYY-MM-DD, e.g. 1990-05-17."
        case .noSuchDate: return "\(label) is not a day of the calendar; check the month and day."
        case .dateTimeFormat:
            return "\(label) is not a date and time; write it as YYYY-MM-DD HH:mm, e.g. 2025-03-09 14:30."
        case .noSuchTime: return "\(label) has no such time of day; hours go from 0 to 23 and minutes from 0 to 59."
        case .secondsNotZero: return "\(label) is kept in whole minutes; leave out the seconds."
        case .before(let bound): return "\(label) must not be before \(bound)."
        case .after(let bound): return "\(label) must not be after \(bound)."
        case .inThePast(let bound): return "\(label) is in the past; choose a time from \(bound) on."
        case .offInterval(let minutes):
            return "The minutes of \(label) must be a multiple of \(minutes); pick a time on a \(minutes)-minute step."
        case .notACountry: return "\(label) is not a country of the list; pick one, or give its ISO code (e.g. CN)."
        case .notAProvince: return "\(label) is not a province of the list; pick one (e.g. Guangdong or 440000)."
        case .notACity: return "\(label) is not a city of the list; pick one of the chosen province's cities."
        case .notAnOption(let labels): return "\(label) must be one of: \(labels.joined(separator: ", "))."
        case .retired(let name): return "\(label) '\(name)' is a retired division; pick a current city."
        case .ambiguous(let names): return "\(label) matches several rows (\(names.joined(separator: "; "))); pick one."
        case .notInProvince(let province):
            return
                "\(label) is not in the chosen province (\(province)); pick one of its cities or change the province."
        case .provinceAsCity(let province):
            return
                "\(province) is a province-level unit; for \(label) choose one of its cities, districts or counties, such as those suggested."
        case .provinceHasNoCities(let province): return "\(province) has no cities in the list; leave \(label) empty."
        case .cityNeedsProvince(let city):
            return
                "\(label) cannot be cleared alone: the stored city \(city) lies in it; clear the city too, or change the province and city together."
        case .phoneCharacters:
            return
                "\(label) may contain only digits, spaces, hyphens, dots, parentheses and a leading +, e.g. +86 138 0013 8000."
        case .phoneScientificNotation:
            return
                "\(label) is in scientific notation (like 1.38001E+10): a spreadsheet took the number for a quantity and its last digits are lost; format the column as text and export it again."
        case .phoneTooLong: return "\(label) has too many digits; check the number."
        case .phoneTooShort: return "\(label) is too short; give the full number (with the area code for a landline)."
        case .unknownCallingCode:
            return
                "\(label) does not start with a known country calling code; check the digits after + or 00, or write it with + and the country code, e.g. +86 138 0013 8000."
        case .phoneCallingCodeWithoutPlus(let suggestion):
            return "\(label) seems to start with its country code but has no +; write it as \(suggestion)."
        case .phoneAmbiguous(let international, let national):
            return
                "\(label) reads two ways: \(international) with its country code, or the national number \(national); add the + if you mean the first, or pick one of the suggestions."
        case .phoneInvalid(let region):
            return "\(label) is not a valid number in \(region); check the number of digits and how it starts."
        case .phoneOfChina(let region, let suggestion):
            return
                "\(label) is not a valid number in \(region); if it is a Chinese number, write it with its country code: \(suggestion)."
        case .phoneWrongType(let type, let accepted):
            return
                "\(label): this is a \(type) number, and this field takes \(accepted.joined(separator: " or ")) numbers only; give a \(accepted.joined(separator: " or ")) number."
        case .emailFormat: return "\(label) is not a valid e-mail address; write it like name@example.com."
        case .emailTooLong:
            return
                "\(label) is too long: at most 64 bytes before the @, 255 in the domain and 254 in all (an internationalised domain counted in its xn-- form)."
        case .emailDomainLabel(let part):
            return
                "\(label) has a domain part '\(part)' that is not a valid (internationalised) domain name: letters, digits and inner hyphens only, at most 63 bytes a label; check the spelling."
        }
    }
}
