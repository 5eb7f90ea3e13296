import EntryModel
import EntryLedger
import EntryProtocol
import EntryClient
import EntryServer

/// Wire objects shaped as doc/protocol.md defines them, for ``FakeDaemon`` replies.
enum Fixtures {
    static let id = "0193a5e2-7c4b-7def-8a12-3456789abcde"

    /// 李雷 of Guangzhou, contact by phone.
    static let entry = try! JSON.parse(
        #"""
        {"id":"0193a5e2-7c4b-7def-8a12-3456789abcde","form":"registration",
         "fields":{"name":"李雷","birthday":"1990-05-17","country":"CN","province":"440000","city":"440100",
                   "contact_method":"phone","phone":"+8613800138000"},
         "display":{"name":"李雷","birthday":"1990-05-17","country":"🇨🇳 中国","province":"广东省","city":"广州市",
                    "contact_method":"电话","phone":"+86 138 0013 8000","region":"广东省-广州市"},
         "version":"0000018f3a2b0001","deleted":false,"createdAt":"2026-11-30T08:15:02.123Z",
         "updatedAt":"2026-11-30T09:00:00.000Z","createdBy":"alice","updatedBy":"bob","syncedTo":["office"]}
        """#)

    /// Ann of the United States, contact by email, with a comma in her name.
    static let secondEntry = try! JSON.parse(
        #"""
        {"id":"0193a5e2-0000-7def-8a12-000000000002","form":"registration",
         "fields":{"name":"Lee, Ann","birthday":"1985-01-02","country":"US","contact_method":"email","email":"ann@example.com"},
         "display":{"name":"Lee, Ann","birthday":"1985-01-02","country":"🇺🇸 美国","contact_method":"邮箱","email":"ann@example.com"},
         "version":"0000018f3a2b0009","deleted":false,"createdAt":"2026-11-30T08:00:00.000Z",
         "updatedAt":"2026-11-30T08:00:00.000Z","createdBy":"alice","updatedBy":"alice","syncedTo":[]}
        """#)

    /// The registration form, labels in Chinese.
    static let form = try! JSON.parse(
        #"""
        {"name":"registration","title":"登记","fields":[
         {"name":"name","type":"text","label":"姓名","required":true,"maxLength":100},
         {"name":"birthday","type":"date","label":"生日","required":true,"min":"1900-01-01","max":"today"},
         {"name":"country","type":"country","label":"国家/地区","required":true},
         {"name":"province","type":"province","label":"省份","required":false,"requiredWhen":"country=CN"},
         {"name":"city","type":"city","label":"城市","required":false,"parent":"province"},
         {"name":"contact_method","type":"choice","label":"联系方式","required":true},
         {"name":"phone","type":"phone","label":"电话","required":false,"requiredWhen":"contact_method=phone"},
         {"name":"email","type":"email","label":"邮箱","required":false,"requiredWhen":"contact_method=email"}]}
        """#)

    static func object(_ members: (String, JSON)...) -> JSON { .object(members) }
}
