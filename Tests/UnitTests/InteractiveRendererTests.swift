import Testing
@testable import EntryModel
@testable import EntryLedger
@testable import EntryProtocol
@testable import EntrySync
@testable import EntryServer
@testable import EntryClient

/// Layout of the interactive form (Interactive/FormRenderer*.swift, ScreenLine.swift), with no terminal.
@Suite struct InteractiveRendererTests {
    typealias Fixture = InteractiveEditorTests

    func editor(_ values: [String: String] = [:]) -> FormEditor {
        FormEditor(form: Fixture.form, values: values, display: ["country": "🇨🇳 中国"], now: Fixture.now)
    }

    /// Every line exactly `width` columns, `height` lines.
    func expectFits(_ screen: Screen, _ width: Int, _ height: Int) {
        #expect(screen.lines.count == height)
        for line in screen.lines { #expect(line.width == width, "\(line.plain)") }
    }

    @Test(
        "fits 80×24 with Chinese labels, flags and an open picker", arguments: [(80, 24), (60, 15), (30, 8), (132, 50)])
    func fits(width: Int, height: Int) {
        var e = editor(["name": "李雷韩梅梅李雷韩梅梅李雷韩梅梅李雷韩梅梅李雷韩梅梅李雷韩梅梅", "country": "CN", "contact_method": "phone"])
        let r = FormRenderer(width: width, height: height)
        expectFits(r.screen(e), width, height)
        _ = e.handle(.tab)
        _ = e.handle(.tab)
        _ = e.handle(.enter)
        let rows = (0..<250).map { OptionRow(value: "C\($0)", label: "中华人民共和国\($0)", flag: "🇨🇳") }
        e.receive(rows, for: OptionRequest(field: "country"))
        e.pageSize = r.listRows(for: e)
        _ = e.handle(.pageDown)
        expectFits(r.screen(e), width, height)
        _ = e.handle(.escape)
        _ = e.handle(.backTab)
        _ = e.handle(.enter)
        expectFits(r.screen(e), width, height)
    }

    @Test("80×24 shows every field, markers, and the disabled previous key")
    func content() {
        let screen = FormRenderer(width: 80, height: 24).screen(editor(["country": "CN", "contact_method": "phone"]))
        let text = screen.lines.map(\.plain)
        #expect(text[0].contains("登记"))
        #expect(text[1].hasPrefix(">*  姓名"))
        #expect(text.contains { $0.hasPrefix(" *  国家") && $0.contains("🇨🇳 中国") })
        #expect(text.contains { $0.hasPrefix(" *  省份") }, "required when country=CN")
        #expect(text.contains { $0.contains("手机号码") } && !text.contains { $0.contains("邮箱") })
        #expect(text[23].contains("(↑/S-Tab 上一项)"))
        #expect(text[23].contains("↓/Tab 下一项") && !text[23].contains("(↓/Tab"))
        #expect(screen.cursor?.row == 1 && screen.cursor?.column == 4 + 8 + 2)
    }

    @Test("the open list shows the highlighted row and keeps it in view")
    func listScrolls() {
        var e = editor()
        _ = e.handle(.tab)
        _ = e.handle(.tab)
        _ = e.handle(.enter)
        let r = FormRenderer(width: 80, height: 24)
        e.pageSize = r.listRows(for: e)
        let rows = (0..<100).map { OptionRow(value: String(format: "%03d", $0), label: "行\($0)") }
        e.receive(rows, for: OptionRequest(field: "country"))
        #expect(r.screen(e).lines.contains { $0.plain.hasPrefix(" > 000") })
        _ = e.handle(.end)
        let text = r.screen(e).lines.map(\.plain)
        #expect(text.contains { $0.hasPrefix(" > 099") })
        #expect(text.contains { $0.contains("(100/100)") })
    }

    @Test("the date wheel shows neighbours and the selected column")
    func dateWheel() {
        var e = editor()
        _ = e.handle(.tab)
        _ = e.handle(.enter)
        let text = FormRenderer(width: 80, height: 24).screen(e).lines.map(\.plain)
        #expect(text.contains { $0.contains("[2026]") && $0.contains("11") && $0.contains("30") })
        #expect(text.contains { $0.contains("2025") })
    }

    @Test("without colour nothing but text is written; with colour SGR wraps styled runs")
    func colour() {
        let screen = FormRenderer(width: 80, height: 24).screen(editor())
        for line in screen.lines { #expect(!line.rendered(colour: false).contains("\u{1B}")) }
        #expect(screen.lines[0].rendered(colour: true).hasPrefix("\u{1B}[1;7m"))
    }

    @Test("the title names the form and, when editing, the entry")
    func title() {
        let edit = FormEditor(
            form: Fixture.form, values: ["name": "李雷"], editing: true, entryID: "0193a5e2", now: Fixture.now)
        #expect(FormRenderer(width: 80, height: 24).screen(edit).lines[0].plain.hasPrefix(" 登记 · 编辑 0193a5e2"))
        #expect(FormRenderer(width: 80, height: 24).screen(editor()).lines[0].plain.hasPrefix(" 登记 · 新建"))
    }

    @Test("a screen too small says so")
    func tooSmall() {
        let screen = FormRenderer(width: 20, height: 5).screen(editor())
        expectFits(screen, 20, 5)
        #expect(screen.lines[0].plain.hasPrefix("终端太小"))
    }

    @Test("fitting cuts at character boundaries and pads")
    func fitting() {
        var line = ScreenLine("李雷", .bold)
        line.append("韩梅梅")
        #expect(line.fitted(to: 7).plain == "李雷韩…")
        #expect(line.fitted(to: 7).width == 7)
        #expect(line.fitted(to: 12).plain == "李雷韩梅梅  ")
        #expect(ScreenLine("a\u{1B}[2Jb").plain == "a\u{FFFD}[2Jb")
    }
}
