import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// The form state machine (Interactive/FormEditor*.swift), driven by keys with no terminal.
@Suite struct InteractiveEditorTests {
    /// The registration form as GetForm sends it (zh labels, `today` resolved).
    static let form = EditorForm(
        name: "registration", title: "登记",
        fields: [
            .init(name: "name", type: .text, label: "姓名", required: true, maxLength: 100),
            .init(name: "birthday", type: .date, label: "生日", required: true, min: "1900-01-01", max: "2026-12-01"),
            .init(name: "country", type: .country, label: "国家", required: true),
            .init(
                name: "province", type: .province, label: "省份",
                requiredWhen: FieldCondition(field: "country", value: "CN")),
            .init(name: "city", type: .city, label: "城市", parent: "province"),
            .init(name: "contact_method", type: .choice, label: "联系方式", required: true),
            .init(
                name: "phone", type: .phone, label: "手机号码",
                requiredWhen: FieldCondition(field: "contact_method", value: "phone")),
            .init(
                name: "email", type: .email, label: "邮箱",
                requiredWhen: FieldCondition(field: "contact_method", value: "email")),
            .init(name: "appointment", type: .datetime, label: "预约时间", minuteInterval: 30),
        ])
    static let now = PickerDate(year: 2026, month: 11, day: 30, hour: 9, minute: 47)

    static let provinces = [OptionRow(value: "110000", label: "北京市"), OptionRow(value: "440000", label: "广东省")]
    static let gdCities = [
        OptionRow(value: "440100", label: "广州市", parent: "440000"),
        OptionRow(value: "440300", label: "深圳市", parent: "440000"),
    ]

    func editor(_ values: [String: String] = [:], editing: Bool = false) -> FormEditor {
        FormEditor(form: Self.form, values: values, editing: editing, now: Self.now)
    }

    /// Focuses the field named `name` with Tab/Shift-Tab.
    func focus(_ e: inout FormEditor, _ name: String) {
        let target = Self.form.fields.firstIndex { $0.name == name }!
        while e.focus < target { _ = e.handle(.tab) }
        while e.focus > target { _ = e.handle(.backTab) }
        #expect(e.focusedField.name == name)
    }

    /// The request of the open list picker.
    func request(_ e: FormEditor) -> OptionRequest? {
        if case .list(let p) = e.mode { return p.request } else { return nil }
    }

    @Test("edit marks a filled city required when its province has cities, as add -i does once Check says so")
    func editMarksCityRequired() {
        let city = Self.form.fields.first { $0.name == "city" }!
        let filled = editor(["name": "李雷", "country": "CN", "province": "440000", "city": "440100"], editing: true)
        #expect(filled.isRequired(city))
        // A province without cities (none in the reference data for 710000, Taiwan) and no province: not required.
        #expect(!editor(["country": "CN", "province": "710000"], editing: true).isRequired(city))
        #expect(!editor(["country": "US"], editing: true).isRequired(city))
    }

    @Test("previous does nothing on the first field, next nothing on the last")
    func navigationBounds() {
        var e = editor(["contact_method": "phone"])
        #expect(!e.canGoPrevious && e.canGoNext)
        #expect(e.handle(.backTab).isEmpty && e.handle(.up).isEmpty)
        #expect(e.focus == 0)
        for _ in 0..<20 { _ = e.handle(.tab) }
        #expect(e.focusedField.name == "appointment")
        #expect(e.canGoPrevious && !e.canGoNext)
        _ = e.handle(.down)
        #expect(e.focusedField.name == "appointment")
        _ = e.handle(.up)
        #expect(e.focusedField.name == "phone", "email is hidden and skipped")
    }

    @Test("Ctrl-S submits the shown values; Enter on the last field opens its picker, never submits")
    func submit() {
        var e = editor(["name": "李雷", "contact_method": "phone", "phone": "13800138000", "email": "x@example.com"])
        #expect(
            e.handle(.control("s")) == [.submit(["name": "李雷", "contact_method": "phone", "phone": "13800138000"])])
        #expect(e.mode == .submitting)
        e.submitFailed(problems: [Problem(field: "birthday", code: .required, message: "请填写生日。")])
        #expect(e.mode == .form)
        #expect(e.focusedField.name == "birthday")
        #expect(e.shownProblems(Self.form.fields[1]).count == 1)
        focus(&e, "appointment")
        #expect(!e.handle(.enter).contains { if case .submit = $0 { return true } else { return false } })
        guard case .date = e.mode else {
            Issue.record("Enter on the last field (a date-time) opens its wheel: \(e.mode)")
            return
        }
        _ = e.handle(.escape)
        #expect(e.mode == .form)
    }

    @Test("opening an empty list field highlights the first row without committing; Esc restores")
    func firstRowAndCancel() {
        var e = editor(["country": "CN"])
        focus(&e, "province")
        let actions = e.handle(.enter)
        #expect(actions == [.fetchOptions(OptionRequest(field: "province"))])
        e.receive(Self.provinces, for: OptionRequest(field: "province"))
        guard case .list(let picker) = e.mode else {
            Issue.record("picker open")
            return
        }
        #expect(picker.highlightedRow?.value == "110000")
        #expect(e.value("province") == "")
        _ = e.handle(.down)
        _ = e.handle(.escape)
        #expect(e.mode == .form)
        #expect(e.value("province") == "")

        var filled = editor(["country": "CN", "province": "440000"])
        focus(&filled, "province")
        _ = filled.handle(.text(" "))
        filled.receive(Self.provinces, for: OptionRequest(field: "province"))
        if case .list(let p) = filled.mode {
            #expect(p.highlightedRow?.value == "440000", "the current value is highlighted")
        }
        _ = filled.handle(.home)
        _ = filled.handle(.escape)
        #expect(filled.value("province") == "440000", "Esc restores the earlier value")
    }

    @Test("Enter commits the highlighted row, checks and moves on")
    func commit() {
        var e = editor(["country": "CN"])
        focus(&e, "province")
        _ = e.handle(.enter)
        e.receive(Self.provinces, for: OptionRequest(field: "province"))
        _ = e.handle(.end)
        let actions = e.handle(.enter)
        #expect(e.value("province") == "440000")
        #expect(e.display["province"] == "广东省")
        #expect(actions == [.check(["country": "CN", "province": "440000"])])
        #expect(e.focusedField.name == "city")
    }

    @Test("the city list is asked with the province; changing the province resets the city")
    func cascading() {
        var e = editor(["country": "CN", "province": "440000"])
        focus(&e, "city")
        #expect(e.handle(.enter) == [.fetchOptions(OptionRequest(field: "city", parent: "440000"))])
        _ = e.handle(.text("广"))
        #expect(request(e) == OptionRequest(field: "city", parent: "440000", query: "广"))
        _ = e.handle(.text("州"))
        let query = OptionRequest(field: "city", parent: "440000", query: "广州")
        #expect(request(e) == query)
        e.receive(Array(Self.gdCities.prefix(1)), for: query)
        _ = e.handle(.enter)
        #expect(e.value("city") == "440100")

        focus(&e, "province")
        _ = e.handle(.enter)
        e.receive(Self.provinces, for: OptionRequest(field: "province"))
        _ = e.handle(.home)
        _ = e.handle(.enter)
        #expect(e.value("province") == "110000")
        #expect(e.value("city") == "", "a city of another province is never kept")
    }

    @Test("a city picked from the whole list fills an empty province")
    func cityFillsProvince() {
        var e = editor(["country": "CN"])
        focus(&e, "city")
        #expect(e.handle(.enter) == [.fetchOptions(OptionRequest(field: "city"))])
        e.receive(Self.gdCities, for: OptionRequest(field: "city"))
        _ = e.handle(.enter)
        #expect(e.value("city") == "440100" && e.value("province") == "440000")
    }

    @Test("rows for an older query are ignored")
    func staleRows() {
        var e = editor()
        focus(&e, "country")
        _ = e.handle(.text("c"))
        _ = e.handle(.text("n"))
        e.receive([OptionRow(value: "CA", label: "加拿大")], for: OptionRequest(field: "country", query: "c"))
        if case .list(let p) = e.mode { #expect(p.loading && p.rows.isEmpty) }
    }

    @Test("the choice shows and requires phone or email")
    func choiceToggles() {
        var e = editor()
        let phone = Self.form.fields[6]
        let email = Self.form.fields[7]
        #expect(!e.isShown(phone) && !e.isShown(email))
        focus(&e, "contact_method")
        _ = e.handle(.enter)
        e.receive(
            [OptionRow(value: "phone", label: "电话"), OptionRow(value: "email", label: "邮箱")],
            for: OptionRequest(field: "contact_method"))
        _ = e.handle(.enter)
        #expect(e.isShown(phone) && e.isRequired(phone) && !e.isShown(email) && !e.isRequired(email))
        #expect(e.focusedField.name == "phone")
        focus(&e, "contact_method")
        _ = e.handle(.enter)
        e.receive(
            [OptionRow(value: "phone", label: "电话"), OptionRow(value: "email", label: "邮箱")],
            for: OptionRequest(field: "contact_method"))
        _ = e.handle(.down)
        _ = e.handle(.enter)
        #expect(!e.isShown(phone) && e.isShown(email) && e.isRequired(email))
        #expect(e.focusedField.name == "email")
        // Province is shown (and required) only when country=CN; no country yet: hidden.
        let province = Self.form.fields[3]
        #expect(!e.isShown(province) && !e.isRequired(province))
    }

    @Test("省份 and 城市 are shown for China only; leaving China hides both and saving clears them")
    func provinceOnlyForChina() {
        let province = Self.form.fields[3]
        let city = Self.form.fields[4]
        let china = editor(["country": "CN", "province": "440000", "city": "440100"])
        #expect(china.isShown(province) && china.isShown(city))
        #expect(china.shownIndices.contains(3) && china.shownIndices.contains(4))
        let abroad = editor(["country": "US"])
        #expect(!abroad.isShown(province) && !abroad.isShown(city))
        #expect(!abroad.shownIndices.contains(3) && !abroad.shownIndices.contains(4))
        // Editing an entry that moves abroad: the hidden province and city go as cleared ("").
        var moved = editor(
            [
                "name": "李雷", "country": "CN", "province": "440000", "city": "440100",
                "contact_method": "phone", "phone": "+8613800138000",
            ], editing: true)
        focus(&moved, "country")
        _ = moved.handle(.enter)
        moved.receive([OptionRow(value: "US", label: "美国")], for: OptionRequest(field: "country"))
        _ = moved.handle(.enter)
        #expect(!moved.isShown(province) && !moved.isShown(city))
        #expect(moved.handle(.control("s")) == [.submit(["country": "US", "province": "", "city": ""])])
    }

    @Test("editing sends changed fields and clears a field the choice hid")
    func editSubmission() {
        var e = editor(["name": "李雷", "contact_method": "phone", "phone": "+8613800138000"], editing: true)
        #expect(!e.hasChanges)
        #expect(e.handle(.control("s")) == [.submit([:])])
        var f = editor(["name": "李雷", "contact_method": "phone", "phone": "+8613800138000"], editing: true)
        focus(&f, "contact_method")
        _ = f.handle(.enter)
        f.receive(
            [OptionRow(value: "phone", label: "电话"), OptionRow(value: "email", label: "邮箱")],
            for: OptionRequest(field: "contact_method"))
        _ = f.handle(.end)
        _ = f.handle(.enter)
        for ch in "li@example.com" { _ = f.handle(.text(String(ch))) }
        #expect(f.submission == ["contact_method": "email", "email": "li@example.com", "phone": ""])
    }

    @Test("the date picker opens on today, commits on Enter only, clamped to max")
    func datePicker() {
        var e = editor()
        focus(&e, "birthday")
        _ = e.handle(.enter)
        guard case .date(let wheel, _) = e.mode else {
            Issue.record("date wheel open")
            return
        }
        #expect(wheel.canonical == "2026-11-30")
        #expect(e.value("birthday") == "")
        _ = e.handle(.escape)
        #expect(e.value("birthday") == "")
        _ = e.handle(.text("1"))
        for d in "9900131" { _ = e.handle(.text(String(d))) }
        _ = e.handle(.right)
        let actions = e.handle(.enter)
        #expect(e.value("birthday") == "1990-01-31")
        #expect(actions == [.check(["birthday": "1990-01-31"])])
        focus(&e, "appointment")
        _ = e.handle(.text(" "))
        if case .date(let w, _) = e.mode { #expect(w.canonical == "2026-11-30 09:30") }
    }

    @Test("text fields take typing, paste and editing keys; Esc asks before discarding")
    func textAndDiscard() {
        var e = editor()
        #expect(e.handle(.escape) == [.quit], "nothing to lose: leave at once")
        #expect(e.handle(.text("李")) == [.check(["name": "李"])])
        _ = e.handle(.paste("雷\n"))
        _ = e.handle(.left)
        _ = e.handle(.backspace)
        #expect(e.value("name") == "李 ")
        _ = e.handle(.control("u"))
        _ = e.handle(.text("韩"))
        #expect(e.value("name") == "韩 ")
        #expect(e.handle(.escape).isEmpty)
        #expect(e.mode == .confirmDiscard)
        #expect(e.handle(.text("n")).isEmpty)
        #expect(e.mode == .form)
        _ = e.handle(.escape)
        #expect(e.handle(.text("y")) == [.quit])
    }

    @Test("required problems show once a field is left; Check teaches the city requirement")
    func problemsAndLearnedRequired() {
        var e = editor(["country": "CN", "province": "440000"])
        let name = Self.form.fields[0]
        let city = Self.form.fields[4]
        e.receiveCheck(
            display: ["country": "🇨🇳 中国"],
            problems: [
                Problem(field: "name", code: .required, message: "请填写姓名。"),
                Problem(field: "city", code: .required, message: "请填写城市。"),
            ])
        #expect(e.display["country"] == "🇨🇳 中国")
        #expect(e.shownProblems(name).isEmpty)
        #expect(e.isRequired(city))
        _ = e.handle(.tab)
        #expect(e.shownProblems(name).count == 1)
        e.values["city"] = "440100"
        e.receiveCheck(display: [:], problems: [])
        #expect(e.isRequired(city), "the marker stays once the city is filled")
        e.learnedRequired = []
        e.values["province"] = "810000"
        e.values["city"] = ""
        e.receiveCheck(display: [:], problems: [])
        #expect(!e.isRequired(city), "an empty city the daemon does not ask for is optional (Hong Kong)")
    }
}
