"""Editing a stored entry in the browser (issue 33 item 1): from the list into
the form page (/?edit=ID, edit.js) by keyboard only, Update with the changed
fields and the version read, a version conflict resolved field by field,
delete and restore, the roles that may not edit, and bad input that changes
nothing. Every outcome is read back through the API (Get, History)."""
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser import active_id, axe, chord, chrome, describe, keys, login, ready, value, wait
from conftest import USERS

BASE_FIELDS = {"birthday": "1980-04-05", "country": "CN", "province": "440000", "city": "440100",
               "contact_method": "phone", "phone": "13800138000"}


@pytest.fixture(scope="module")
def driver(gateway, tmp_path_factory):
    d = chrome(tmp_path_factory.mktemp("cr"), "zh-CN")
    login(d, gateway.base, "ada", USERS["ada"][1])
    yield d
    d.quit()


@pytest.fixture(scope="module")
def admin(gateway):
    return gateway.login("root-admin")


def add(gateway, token, name, **extra):
    """A stored entry (as root-admin); returns its id."""
    status, body = gateway.call("io.entryd.Entries.Add", {"fields": {"name": name, **BASE_FIELDS, **extra}}, token=token)
    assert status == 200, body
    return body["entry"]["id"]


def get(gateway, token, entry_id):
    status, body = gateway.call("io.entryd.Entries.Get", {"id": entry_id}, token=token)
    assert status == 200, body
    return body["entry"]


def history(gateway, token, entry_id):
    status, body = gateway.call("io.entryd.Entries.History", {"id": entry_id}, token=token)
    assert status == 200, body
    return body["changes"]


def expanded(d, field):
    return d.find_element(By.ID, "in-" + field).get_attribute("aria-expanded") == "true"


def pick(d, field, query):
    """Types query into the focused list field and commits the highlighted row with Enter."""
    assert active_id(d) == "in-" + field, active_id(d)
    keys(d, query)
    wait(d, lambda: expanded(d, field) and d.execute_script(
        "const l = document.getElementById('ls-' + arguments[0]);"
        "return l.dataset.query === arguments[1] && !!l.querySelector('[role=option][aria-selected=true][data-value]');",
        field, query), f"{field} rows for {query}")
    chosen = d.execute_script("return document.querySelector('#ls-' + arguments[0] + ' [aria-selected=true]').dataset.value", field)
    keys(d, Keys.ENTER)
    wait(d, lambda: not expanded(d, field), f"{field} picker closed")
    return chosen


def problem(d, field):
    return d.find_element(By.ID, "pr-" + field).text


def status_text(d):
    return d.find_element(By.ID, "status").text


def click(d, id_):
    """Clicks an element once scrolled to the middle (clear of the fixed toolbar)."""
    el = d.find_element(By.ID, id_)
    d.execute_script("arguments[0].scrollIntoView({block: 'center'})", el)
    el.click()
    return el


RECORD_UPDATES = """
    window.sentUpdates = [];
    const real = window.fetch;
    window.fetch = (url, init) => {
      if (String(url).endsWith('io.entryd.Entries.Update')) window.sentUpdates.push(JSON.parse(init.body));
      return real(url, init);
    };"""


def open_edit(d, base, entry_id, lang="zh"):
    """The edit page of entry_id, filled (the name shows)."""
    ready(d, f"{base}/?edit={entry_id}&lang={lang}")
    wait(d, lambda: value(d, "in-name") != "" and d.find_element(By.ID, "edit-title").text != "", "the entry in the form")


def test_edit_from_the_list_by_keyboard(gateway, driver, admin):
    d = driver
    entry_id = add(gateway, admin, "键盘编辑")
    ready(d, gateway.base + "/list?lang=zh")
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, f"#rows a[data-edit='{entry_id}']"), "the row's edit link")
    link = d.find_element(By.CSS_SELECTOR, f"#rows a[data-edit='{entry_id}']")
    assert link.text == "编辑" and link.get_attribute("aria-label") == "编辑：键盘编辑"
    # Tab from the top of the page to the row's edit link, then Enter
    d.execute_script("const r = document.documentElement; r.tabIndex = -1; r.focus(); r.removeAttribute('tabindex')")
    for _ in range(80):
        keys(d, Keys.TAB)
        if d.execute_script("return document.activeElement.dataset.edit === arguments[0]", entry_id):
            break
    else:
        raise AssertionError("the edit link is not reachable by Tab")
    keys(d, Keys.ENTER)
    wait(d, lambda: "edit=" in d.current_url and d.execute_script("return document.body.dataset.ready === '1'"), "the edit page")

    # the same form, filled with the stored values; pickers show labels, not codes
    wait(d, lambda: value(d, "in-name") == "键盘编辑", "the stored name")
    assert value(d, "in-birthday") == "1980-04-05"
    assert value(d, "in-country") == "🇨🇳 中国"
    assert value(d, "in-province") == "广东省" and value(d, "in-city") == "广州市"
    assert value(d, "in-contact_method") == "电话"
    wait(d, lambda: value(d, "in-phone") == "+86 138 0013 8000", "the phone's display form")
    assert d.find_element(By.ID, "edit-title").text == "编辑条目：键盘编辑"
    assert d.title.startswith("编辑")
    assert active_id(d) == "in-name"
    d.execute_script(RECORD_UPDATES)
    violations = axe(d)
    assert violations == [], describe(violations)

    # the city by its pinyin, then the phone; Tab moves as on a new entry
    keys(d, Keys.TAB, Keys.TAB, Keys.TAB, Keys.TAB)
    assert pick(d, "city", "sz") == "440300"
    assert value(d, "in-city") == "深圳市"
    assert active_id(d) == "in-contact_method"
    keys(d, Keys.TAB)
    assert active_id(d) == "in-phone"
    chord(d, Keys.CONTROL, "a")
    keys(d, "13912345678")
    chord(d, Keys.CONTROL, Keys.ENTER)  # Done
    wait(d, lambda: "已保存" in status_text(d), "saved")
    saved = d.find_element(By.ID, "edit-saved")
    assert saved.is_displayed() and active_id(d) == "edit-saved-title"
    assert "深圳市" in saved.text and "+86 139 1234 5678" in saved.text
    assert d.find_element(By.ID, "edit-saved-back").get_attribute("href").endswith("/list")

    entry = get(gateway, admin, entry_id)
    assert entry["fields"]["phone"] == "+8613912345678" and entry["fields"]["city"] == "440300"
    assert entry["fields"]["province"] == "440000" and entry["fields"]["name"] == "键盘编辑"
    assert entry["updatedBy"] == "web:ada"
    # Update got the changed fields only, with the version read
    sent = d.execute_script("return window.sentUpdates")
    assert len(sent) == 1 and sent[0]["fields"] == {"city": "440300", "phone": "13912345678"}, sent
    assert sent[0]["id"] == entry_id and sent[0]["ifVersion"] == history(gateway, admin, entry_id)[0]["hlc"]
    changes = history(gateway, admin, entry_id)
    assert [c["op"] for c in changes] == ["create", "update"]
    assert changes[-1]["fields"]["city"] == "440300" and changes[-1]["fields"]["phone"] == "+8613912345678"
    assert changes[-1]["actor"] == "web:ada"

    # saving again without a change stores nothing
    chord(d, Keys.CONTROL, Keys.ENTER)
    wait(d, lambda: "没有修改" in status_text(d), "nothing to save")
    assert len(history(gateway, admin, entry_id)) == 2


def test_version_conflict_choose_per_field(gateway, driver, admin):
    d = driver
    entry_id = add(gateway, admin, "冲突测试")
    open_edit(d, gateway.base, entry_id)
    wait(d, lambda: value(d, "in-phone") == "+86 138 0013 8000", "the stored phone")
    d.execute_script(RECORD_UPDATES)
    # meanwhile, another user changes the phone
    status, body = gateway.call("io.entryd.Entries.Update", {"id": entry_id, "fields": {"phone": "13700000001"}}, token=admin)
    assert status == 200, body
    # here: the phone and the city
    click(d, "in-city")
    keys(d, "sz")
    wait(d, lambda: d.execute_script("return document.getElementById('ls-city').dataset.query") == "sz"
         and d.find_element(By.CSS_SELECTOR, "#ls-city [data-value='440300'][aria-selected=true]"), "深圳")
    keys(d, Keys.ENTER)
    wait(d, lambda: value(d, "in-city") == "深圳市", "深圳市 chosen")
    click(d, "in-phone")
    chord(d, Keys.CONTROL, "a")
    keys(d, "13900000002")
    d.find_element(By.ID, "done").click()

    panel = wait(d, lambda: d.find_element(By.ID, "edit-conflict").is_displayed() and d.find_element(By.ID, "edit-conflict"),
                 "the conflict panel")
    assert active_id(d) == "edit-conflict-title"
    sets = d.find_elements(By.CSS_SELECTOR, "#edit-conflict fieldset")
    assert [s.get_attribute("data-field") for s in sets] == ["phone"]  # the city was changed here only
    text = panel.text
    assert "手机号码" in text and "你的：+86 139 0000 0002" in text and "对方的：+86 137 0000 0001" in text
    assert "web:root-admin" in text
    violations = axe(d)
    assert violations == [], describe(violations)
    # saving before choosing is refused, and nothing is stored
    d.find_element(By.ID, "edit-conflict-save").click()
    wait(d, lambda: "请为每个冲突字段选择" in status_text(d), "choose first")
    assert get(gateway, admin, entry_id)["fields"]["phone"] == "+8613700000001"

    d.find_element(By.CSS_SELECTOR, "#edit-conflict input[name=cf-phone][value=theirs]").click()
    wait(d, lambda: value(d, "in-phone") == "+86 137 0000 0001", "their phone in the form")
    assert value(d, "in-city") == "深圳市"  # only mine: kept
    d.find_element(By.ID, "edit-conflict-save").click()
    wait(d, lambda: "已保存" in status_text(d), "saved with the choices")
    assert not d.find_element(By.ID, "edit-conflict").is_displayed()
    entry = get(gateway, admin, entry_id)
    assert entry["fields"]["phone"] == "+8613700000001" and entry["fields"]["city"] == "440300"
    changes = history(gateway, admin, entry_id)
    assert [c["op"] for c in changes] == ["create", "update", "update"]
    assert changes[-1]["fields"]["city"] == "440300" and changes[-1]["actor"] == "web:ada"
    sent = d.execute_script("return window.sentUpdates")
    assert [u["fields"] for u in sent] == [{"city": "440300", "phone": "13900000002"}, {"city": "440300"}], sent
    assert sent[1]["ifVersion"] == changes[1]["hlc"]  # the version read after the conflict


def test_version_conflict_keeps_mine_and_switches_language(gateway, driver, admin):
    """Choosing "yours" (by keyboard) stores this user's value over the other's;
    a change of a field this user left alone is taken without asking; the
    panel follows a language switch (labels and values)."""
    d = driver
    entry_id = add(gateway, admin, "Conflict Mine")
    open_edit(d, gateway.base, entry_id, "en")
    wait(d, lambda: value(d, "in-phone") == "+86 138 0013 8000", "the stored phone")
    assert value(d, "in-country") == "🇨🇳 China" and value(d, "in-city") == "Guangzhou"
    assert d.find_element(By.ID, "done").text == "Save"
    status, body = gateway.call("io.entryd.Entries.Update", {"id": entry_id, "fields": {
        "phone": "13700000003", "birthday": "1981-01-01", "city": "440300"}}, token=admin)
    assert status == 200, body
    click(d, "in-phone")
    chord(d, Keys.CONTROL, "a")
    keys(d, "13900000004")
    chord(d, Keys.SHIFT, Keys.TAB)
    chord(d, Keys.SHIFT, Keys.TAB)
    assert pick(d, "city", "dg") == "441900"
    chord(d, Keys.CONTROL, Keys.ENTER)
    wait(d, lambda: d.find_element(By.ID, "edit-conflict").is_displayed(), "the conflict panel")
    panel = d.find_element(By.ID, "edit-conflict")
    assert [s.get_attribute("data-field") for s in panel.find_elements(By.TAG_NAME, "fieldset")] == ["city", "phone"]
    assert "Yours: +86 139 0000 0004" in panel.text and "Theirs: Shenzhen" in panel.text and "Yours: Dongguan" in panel.text
    assert value(d, "in-birthday") == "1981-01-01"  # theirs only: shown

    d.find_element(By.CSS_SELECTOR, "[data-lang=zh]").click()
    wait(d, lambda: "对方的：深圳市" in panel.text and "你的：东莞市" in panel.text and "城市" in panel.text, "the zh panel")
    assert d.find_element(By.ID, "edit-conflict-title").text == "保存前，条目已被他人修改"
    assert d.find_element(By.ID, "done").text == "保存"

    # by keyboard: Space on a radio chooses it
    radio = d.find_element(By.CSS_SELECTOR, "#edit-conflict input[name=cf-phone][value=yours]")
    radio.send_keys(Keys.SPACE)
    wait(d, lambda: radio.is_selected(), "yours chosen")
    city = d.find_element(By.CSS_SELECTOR, "#edit-conflict input[name=cf-city][value=theirs]")
    city.send_keys(Keys.SPACE)
    wait(d, lambda: city.is_selected() and value(d, "in-city") == "深圳市", "theirs chosen for the city")
    chord(d, Keys.CONTROL, Keys.ENTER)
    wait(d, lambda: "已保存" in status_text(d), "saved")
    fields = get(gateway, admin, entry_id)["fields"]
    assert fields["phone"] == "+8613900000004" and fields["birthday"] == "1981-01-01" and fields["city"] == "440300"


def test_delete_and_restore(gateway, driver, admin):
    d = driver
    entry_id = add(gateway, admin, "删除恢复")
    open_edit(d, gateway.base, entry_id)
    assert not d.find_element(By.ID, "edit-restore").is_displayed()
    d.find_element(By.ID, "edit-delete").click()
    dialog = wait(d, lambda: d.find_element(By.ID, "edit-delete-dlg").is_displayed() and d.find_element(By.ID, "edit-delete-dlg"),
                  "the confirmation")
    assert active_id(d) == "edit-reason"
    violations = axe(d)
    assert violations == [], describe(violations)
    # Cancel deletes nothing
    d.find_element(By.ID, "edit-delete-cancel").click()
    wait(d, lambda: not dialog.is_displayed(), "closed")
    assert get(gateway, admin, entry_id)["deleted"] is False
    d.find_element(By.ID, "edit-delete").click()
    wait(d, lambda: dialog.is_displayed(), "the confirmation again")
    keys(d, "重复登记")
    d.find_element(By.ID, "edit-delete-confirm").click()
    wait(d, lambda: d.find_element(By.ID, "edit-deleted").is_displayed(), "the deleted state")
    assert "已删除" in d.find_element(By.ID, "edit-deleted").text
    assert active_id(d) == "edit-deleted"
    assert not d.find_element(By.ID, "edit-delete").is_displayed() and not d.find_element(By.ID, "done").is_displayed()
    assert d.execute_script("return document.getElementById('form').inert") is True
    entry = get(gateway, admin, entry_id)
    assert entry["deleted"] is True
    last = history(gateway, admin, entry_id)[-1]
    assert last["op"] == "delete" and last["reason"] == "重复登记" and last["actor"] == "web:ada"

    # the list with deleted entries links to it; the page opened anew offers Restore
    ready(d, gateway.base + "/list?lang=zh")
    d.find_element(By.ID, "q-deleted").click()
    d.find_element(By.ID, "q-text").send_keys("删除恢复", Keys.ENTER)
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, f"#rows a[data-edit='{entry_id}']"), "the deleted row's link")
    d.find_element(By.CSS_SELECTOR, f"#rows a[data-edit='{entry_id}']").click()
    wait(d, lambda: d.find_element(By.ID, "edit-restore").is_displayed(), "Restore offered")
    violations = axe(d)
    assert violations == [], describe(violations)
    d.find_element(By.ID, "edit-restore").click()
    wait(d, lambda: "已恢复" in status_text(d), "restored")
    assert d.find_element(By.ID, "edit-delete").is_displayed() and d.find_element(By.ID, "done").is_displayed()
    assert get(gateway, admin, entry_id)["deleted"] is False
    assert history(gateway, admin, entry_id)[-1]["op"] == "restore"


def test_bad_input_changes_nothing(gateway, driver, admin):
    d = driver
    entry_id = add(gateway, admin, "Bad Input")
    before = get(gateway, admin, entry_id)
    open_edit(d, gateway.base, entry_id)
    click(d, "in-phone")
    chord(d, Keys.CONTROL, "a")
    keys(d, "12")
    wait(d, lambda: problem(d, "phone") != "", "Check's problem as one types")
    chord(d, Keys.CONTROL, Keys.ENTER)
    wait(d, lambda: "请修正" in status_text(d), "the refusal")
    assert problem(d, "phone") != "" and d.find_element(By.ID, "in-phone").get_attribute("aria-invalid") == "true"
    assert active_id(d) == "in-phone"
    assert get(gateway, admin, entry_id) == before
    assert [c["op"] for c in history(gateway, admin, entry_id)] == ["create"]


def test_roles_that_may_not_edit(gateway, admin, tmp_path_factory):
    entry_id = add(gateway, admin, "只读测试")
    d = chrome(tmp_path_factory.mktemp("ro"), "zh-CN")
    try:
        # read: the list without edit links; the edit page says why, with no form and no buttons
        login(d, gateway.base, "rita", USERS["rita"][1], "/list")
        wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "#rows tr button"), "the rows")
        assert d.find_elements(By.CSS_SELECTOR, "#rows a[data-edit]") == []
        ready(d, f"{gateway.base}/?edit={entry_id}&lang=zh")
        refused = wait(d, lambda: d.find_element(By.ID, "edit-refused"), "the refusal")
        assert "只能查看条目，不能修改" in refused.text and refused.get_attribute("role") == "alert"
        assert not d.find_element(By.ID, "form").is_displayed() and not d.find_element(By.ID, "done").is_displayed()
        assert not d.find_element(By.ID, "edit-delete").is_displayed() and not d.find_element(By.ID, "edit-restore").is_displayed()
        violations = axe(d)
        assert violations == [], describe(violations)

        # submit (a kiosk): never reads the entry; the page says so in words
        d.delete_all_cookies()
        login(d, gateway.base, "kiosk", USERS["kiosk"][1], f"/%3Fedit%3D{entry_id}%26lang%3Den")
        refused = wait(d, lambda: d.find_element(By.ID, "edit-refused"), "the refusal")
        assert "cannot open or change stored entries" in refused.text
        assert "只读测试" not in d.page_source
        assert not d.find_element(By.ID, "form").is_displayed()
        assert d.find_element(By.ID, "edit-back").get_attribute("href").rstrip("/") == gateway.base
        violations = axe(d)
        assert violations == [], describe(violations)
    finally:
        d.quit()


def test_clearing_an_optional_field(gateway, driver, admin):
    """An optional field emptied in the form is sent as "" and cleared; the saved panel says so."""
    d = driver
    entry_id = add(gateway, admin, "Clear Appointment", appointment="2031-02-03 09:30")
    open_edit(d, gateway.base, entry_id, "en")
    wait(d, lambda: value(d, "in-appointment") == "2031-02-03 09:30", "the stored appointment")
    d.execute_script(RECORD_UPDATES)
    click(d, "in-appointment")
    chord(d, Keys.CONTROL, "a")
    keys(d, Keys.BACKSPACE)
    d.find_element(By.ID, "done").click()
    wait(d, lambda: "Saved" in status_text(d), "saved")
    assert d.execute_script("return window.sentUpdates")[0]["fields"] == {"appointment": ""}
    assert "(cleared)" in d.find_element(By.ID, "edit-saved").text
    assert "appointment" not in get(gateway, admin, entry_id)["fields"]


RECORD_CHECKS = """
    window.checks = [];
    const real = window.fetch;
    window.fetch = (url, init) => {
      const p = real(url, init);
      if (!String(url).endsWith('io.entryd.Forms.Check')) return p;
      return p.then((r) => { r.clone().json().then((j) => window.checks.push({ sent: JSON.parse(init.body), reply: j })); return r; });
    };"""


def test_edit_warns_of_others_not_itself(gateway, driver, admin):
    """Editing sends Check the entry's id: another entry with the phone typed
    is a possible duplicate, the edited entry never is."""
    d = driver
    other = add(gateway, admin, "别人甲", phone="13600000001")
    mine = add(gateway, admin, "自己乙", phone="13600000002")
    open_edit(d, gateway.base, mine)
    d.execute_script(RECORD_CHECKS)
    d.execute_script("document.getElementById('in-phone').focus()")
    chord(d, Keys.CONTROL, "a")
    keys(d, "13600000001", Keys.TAB)
    wait(d, lambda: any(c["sent"]["fields"].get("phone") == "13600000001" for c in d.execute_script("return window.checks")),
         "Check of the other's phone")
    check = [c for c in d.execute_script("return window.checks") if c["sent"]["fields"].get("phone") == "13600000001"][-1]
    assert check["sent"]["id"] == mine
    assert [x["id"] for x in check["reply"]["duplicates"]] == [other] and check["reply"]["duplicates"][0]["matched"] == ["phone"]
    wait(d, lambda: d.find_elements(By.CSS_SELECTOR, f"#duplicates li[data-id='{other}']"), "the other named")
    assert not d.find_elements(By.CSS_SELECTOR, f"#duplicates li[data-id='{mine}']")
    # its own stored phone again: nobody else holds it, and it is not its own duplicate
    d.execute_script("document.getElementById('in-phone').focus()")
    chord(d, Keys.CONTROL, "a")
    keys(d, "13600000002", Keys.TAB)
    wait(d, lambda: any(c["sent"]["fields"].get("phone") == "13600000002" for c in d.execute_script("return window.checks")),
         "Check of its own phone")
    check = [c for c in d.execute_script("return window.checks") if c["sent"]["fields"].get("phone") == "13600000002"][-1]
    assert "duplicates" not in check["reply"], check
    wait(d, lambda: not d.find_elements(By.CSS_SELECTOR, "#duplicates li"), "no one named")
