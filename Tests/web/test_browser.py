"""The form page in a real browser against a real entryd-web and entryd:
keyboard-only filling, the cascade, the problems in zh, cancel in a
drop-down, the actor, the offline outbox and the kiosk reset."""
import datetime
import json

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser import active_id, chrome, chord, keys, login, ready, storage_dump, value, wait
from conftest import USERS


@pytest.fixture(scope="module")
def driver(gateway, tmp_path_factory):
    d = chrome(tmp_path_factory.mktemp("cr"), "zh-CN")
    login(d, gateway.base, "ada", USERS["ada"][1])
    yield d
    d.quit()


def expanded(d, field):
    return d.find_element(By.ID, "in-" + field).get_attribute("aria-expanded") == "true"


def rows_ready(d, field):
    """The open list's rows are there (not the loading row) and one is highlighted."""
    return d.execute_script(
        "const l = document.getElementById('ls-' + arguments[0]);"
        "return !!l.querySelector('[role=option][aria-selected=true][data-value]');", field)


def highlighted(d, field):
    return d.execute_script(
        "const l = document.getElementById('ls-' + arguments[0]);"
        "const o = l.querySelector('[role=option][aria-selected=true]'); return o && o.dataset.value;", field)


def pick(d, field, query):
    """Types query into the focused list field (which opens its picker) and commits the first row with Enter."""
    assert active_id(d) == "in-" + field
    keys(d, query)
    wait(d, lambda: expanded(d, field) and rows_ready(d, field) and d.execute_script(
        "return document.getElementById('ls-' + arguments[0]).dataset.query", field) == query, f"{field} rows for {query}")
    chosen = highlighted(d, field)
    keys(d, Keys.ENTER)
    wait(d, lambda: not expanded(d, field), f"{field} picker closed")
    return chosen


def problem(d, field):
    return d.find_element(By.ID, "pr-" + field).text


def fresh_form(d, base, query=""):
    ready(d, base + "/" + query)
    wait(d, lambda: active_id(d) == "in-name", "focus on the first field")


def test_whole_form_by_keyboard(gateway, driver):
    d = driver
    fresh_form(d, gateway.base, "?lang=zh")
    assert d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "zh-CN"
    assert d.find_element(By.ID, "lb-name").text.startswith("姓名")
    assert "*" in d.find_element(By.ID, "lb-name").text  # required mark

    keys(d, "李雷", Keys.ENTER)  # Enter in a text field moves on
    assert active_id(d) == "in-birthday"

    # A bad date typed in: the daemon's zh problem shows next to the field.
    keys(d, "1990-02-30")
    wait(d, lambda: "没有这一天" in problem(d, "birthday"), "the zh problem of a bad date")
    assert d.find_element(By.ID, "in-birthday").get_attribute("aria-invalid") == "true"
    # Then the wheel: Enter opens it on a valid day without committing; digits type; Enter commits.
    chord(d, Keys.CONTROL, "a")
    keys(d, Keys.BACKSPACE, Keys.ENTER)
    wait(d, lambda: expanded(d, "birthday"), "the date wheel")
    assert value(d, "in-birthday") == ""  # opening highlights today, commits nothing
    assert d.execute_script("return document.activeElement.getAttribute('role')") == "spinbutton"
    keys(d, "19900517", Keys.ENTER)
    wait(d, lambda: value(d, "in-birthday") == "1990-05-17", "the picked birthday")
    assert active_id(d) == "in-country"
    wait(d, lambda: problem(d, "birthday") == "", "the birthday problem gone")

    # Country by pinyin initials, through the daemon's search; flags in the rows.
    assert pick(d, "country", "zg") == "CN"
    assert value(d, "in-country") == "🇨🇳 中国"
    assert active_id(d) == "in-province"  # shown for CN only

    # 广东 then a city; the city list is 广东's only.
    assert pick(d, "province", "gd") == "440000"
    assert active_id(d) == "in-city"
    keys(d, Keys.ENTER)  # Enter opens the picker: first row highlighted, not committed
    wait(d, lambda: expanded(d, "city") and rows_ready(d, "city"), "the city rows")
    codes = d.execute_script("return [...document.querySelectorAll('#ls-city [data-value]')].map(o => o.dataset.value)")
    assert codes and all(c.startswith("44") for c in codes), codes
    assert highlighted(d, "city") == codes[0]
    assert value(d, "in-city") == ""
    # an ARIA combobox: the input owns the listbox, the highlighted option is its active descendant
    city = d.find_element(By.ID, "in-city")
    assert city.get_attribute("role") == "combobox" and city.get_attribute("aria-controls") == "ls-city"
    assert d.find_element(By.ID, "ls-city").get_attribute("role") == "listbox"
    active = d.find_element(By.ID, city.get_attribute("aria-activedescendant"))
    assert active.get_attribute("role") == "option" and active.get_attribute("aria-selected") == "true"
    assert active.get_attribute("data-value") == codes[0]
    keys(d, "gz")
    wait(d, lambda: d.execute_script("return document.getElementById('ls-city').dataset.query") == "gz"
         and highlighted(d, "city") == "440100", "广州 highlighted")
    keys(d, Keys.ENTER)
    wait(d, lambda: value(d, "in-city") == "广州市", "广州市 chosen")
    assert active_id(d) == "in-contact_method"

    # Switch the province to 北京: the city is emptied, and lists 北京's districts.
    chord(d, Keys.SHIFT, Keys.TAB)
    chord(d, Keys.SHIFT, Keys.TAB)
    assert active_id(d) == "in-province"
    assert pick(d, "province", "bj") == "110000"
    assert value(d, "in-province") == "北京市"
    assert value(d, "in-city") == ""
    assert active_id(d) == "in-city"
    assert pick(d, "city", "hd") == "110108"
    assert value(d, "in-city") == "海淀区"

    # The contact-method drop-down shows the phone field; Escape restores the earlier choice.
    assert active_id(d) == "in-contact_method"
    assert not d.find_element(By.ID, "f-phone").is_displayed() and not d.find_element(By.ID, "f-email").is_displayed()
    keys(d, Keys.ENTER)
    wait(d, lambda: expanded(d, "contact_method") and rows_ready(d, "contact_method"), "the contact methods")
    assert highlighted(d, "contact_method") == "phone"
    keys(d, Keys.ENTER)
    wait(d, lambda: d.find_element(By.ID, "f-phone").is_displayed(), "the phone field")
    assert value(d, "in-contact_method") == "电话"
    assert active_id(d) == "in-phone"
    assert not d.find_element(By.ID, "f-email").is_displayed()
    chord(d, Keys.SHIFT, Keys.TAB)
    keys(d, Keys.ENTER)
    wait(d, lambda: expanded(d, "contact_method") and highlighted(d, "contact_method") == "phone", "the drop-down on 电话")
    keys(d, Keys.ARROW_DOWN)
    assert highlighted(d, "contact_method") == "email"
    keys(d, Keys.ESCAPE)
    assert not expanded(d, "contact_method")
    assert value(d, "in-contact_method") == "电话"
    assert d.find_element(By.ID, "f-phone").is_displayed() and not d.find_element(By.ID, "f-email").is_displayed()

    keys(d, Keys.TAB, "13800138000", Keys.ENTER)
    assert active_id(d) == "in-appointment"
    # checked, the number shows in its spaced display form (the value sent stays canonical)
    wait(d, lambda: value(d, "in-phone") == "+86 138 0013 8000", "the phone's display form")
    keys(d, Keys.ENTER)
    wait(d, lambda: expanded(d, "appointment"), "the date-time wheel")
    assert d.execute_script("return document.querySelectorAll('#dlg-appointment [role=spinbutton]').length") == 5
    keys(d, "203001151045", Keys.ENTER)  # minutes go down to the 30-minute step
    wait(d, lambda: value(d, "in-appointment") == "2030-01-15 10:30", "the appointment")
    assert active_id(d) == "in-appointment"  # the last field: Enter does not submit
    assert "已保存" not in d.find_element(By.ID, "status").text

    entry_id = d.execute_script("return window.entrydForm.draftId")
    chord(d, Keys.CONTROL, Keys.ENTER)  # Done
    wait(d, lambda: "已保存" in d.find_element(By.ID, "status").text, "stored")
    assert value(d, "in-name") == ""

    entry = json.loads(gateway.entryctl("get", entry_id, "--json"))["entry"]
    assert entry["fields"] == {"name": "李雷", "birthday": "1990-05-17", "country": "CN", "province": "110000",
                               "city": "110108", "contact_method": "phone", "phone": "+8613800138000",
                               "appointment": "2030-01-15 10:30"}
    listed = json.loads(gateway.entryctl("list", "--all", "--json"))["entries"]
    assert [e["id"] for e in listed].count(entry_id) == 1
    assert entry["createdBy"] == "web:ada"  # the gateway's actor (needs entryd's gateway role)


def test_previous_next_buttons_and_language_switch(gateway, driver):
    d = driver
    fresh_form(d, gateway.base, "?lang=zh")
    prev, nxt = d.find_element(By.ID, "prev"), d.find_element(By.ID, "next")
    assert not prev.is_enabled() and nxt.is_enabled()  # previous disabled on the first field
    nxt.click()
    assert active_id(d) == "in-birthday"
    d.find_element(By.ID, "prev").click()
    assert active_id(d) == "in-name"
    keys(d, "Ann")
    d.find_element(By.CSS_SELECTOR, "[data-lang=en]").click()
    wait(d, lambda: d.find_element(By.ID, "lb-name").text.startswith("Name"), "English labels")
    assert d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en"
    assert value(d, "in-name") == "Ann"  # kept across the switch
    assert d.find_element(By.ID, "done").text == "Done"
    d.find_element(By.ID, "in-birthday").click()
    d.find_element(By.ID, "in-birthday").send_keys(Keys.ESCAPE)
    keys(d, "1990-13-01")
    wait(d, lambda: "day" in problem(d, "birthday").lower() or "month" in problem(d, "birthday").lower(), "an English problem")
    d.find_element(By.CSS_SELECTOR, "[data-lang=zh]").click()
    wait(d, lambda: d.find_element(By.ID, "lb-name").text.startswith("姓名"), "Chinese labels again")


def test_suggestion_is_clickable_and_done_shows_every_problem(gateway, driver):
    d = driver
    fresh_form(d, gateway.base, "?lang=en")
    d.find_element(By.ID, "done").click()  # Done on an empty form: every problem shows, the first field gets the focus
    wait(d, lambda: "required" in problem(d, "name").lower(), "required problems after Done")
    assert d.find_element(By.ID, "in-name").get_attribute("aria-invalid") == "true"
    assert active_id(d) == "in-name"
    assert "required" in problem(d, "country").lower()
    d.find_element(By.ID, "in-contact_method").click()
    wait(d, lambda: rows_ready(d, "contact_method"), "contact methods")
    keys(d, Keys.ENTER)
    wait(d, lambda: active_id(d) == "in-phone", "the phone field")
    keys(d, "447911123456")  # a country code without +: the daemon suggests the + form
    button = wait(d, lambda: d.find_element(By.CSS_SELECTOR, "#pr-phone button"), "a suggestion")
    assert button.text == "+447911123456"
    button.click()
    wait(d, lambda: problem(d, "phone") == "", "the suggestion taken")
    keys(d, Keys.TAB)  # once the focus leaves it, the checked number shows in its display form
    wait(d, lambda: value(d, "in-phone") == "+44 7911 123456", "the phone's display form")


def test_offline_outbox(gateway, driver):
    d = driver
    before = len(json.loads(gateway.entryctl("list", "--all", "--json"))["entries"])
    fresh_form(d, gateway.base, "?lang=en")
    wait(d, lambda: d.execute_script("return window.entrydForm.prefetched"), "the pickers' rows")
    d.execute_cdp_cmd("Network.enable", {})
    d.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/api/v1/*"]})
    ids = []
    try:
        for name in ("Offline One", "Offline Two"):
            wait(d, lambda: active_id(d) == "in-name", "the first field")
            keys(d, name, Keys.ENTER, "1985-03-04", Keys.TAB)
            # the country picker works from the rows the page already has (no search offline)
            keys(d, Keys.ENTER)
            wait(d, lambda: rows_ready(d, "country"), "cached country rows")
            keys(d, Keys.ARROW_DOWN, Keys.ENTER)  # the second row: not CN, so no province
            assert active_id(d) == "in-contact_method", active_id(d)
            keys(d, Keys.ENTER)
            wait(d, lambda: rows_ready(d, "contact_method"), "cached contact methods")
            keys(d, Keys.ARROW_DOWN, Keys.ENTER)
            wait(d, lambda: active_id(d) == "in-email", "the e-mail field")
            keys(d, name.replace(" ", ".").lower() + "@example.com")
            ids.append(d.execute_script("return window.entrydForm.draftId"))
            d.find_element(By.ID, "done").click()
            wait(d, lambda: value(d, "in-name") == "", "the form emptied after queueing")
        wait(d, lambda: d.find_element(By.ID, "queue").text.startswith("2 submissions waiting"), "2 waiting")
        assert "Offline" not in d.find_element(By.TAG_NAME, "body").text  # a count, never contents
        stored = json.loads(storage_dump(d))["idb"]
        assert sorted(i["id"] for i in stored) == sorted(ids)
        assert len(json.loads(gateway.entryctl("list", "--all", "--json"))["entries"]) == before
    finally:
        d.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    d.execute_script("window.dispatchEvent(new Event('online'))")
    wait(d, lambda: d.find_element(By.ID, "queue").text == "", "the outbox sent", timeout=20)
    assert json.loads(storage_dump(d))["idb"] == []
    entries = json.loads(gateway.entryctl("list", "--all", "--json"))["entries"]
    assert len(entries) == before + 2
    for i in ids:
        assert [e["id"] for e in entries].count(i) == 1
    # a second flush (a resend of the same ids) changes nothing
    d.execute_script("window.dispatchEvent(new Event('online'))")
    assert len(json.loads(gateway.entryctl("list", "--all", "--json"))["entries"]) == before + 2


@pytest.fixture(scope="module")
def kiosk_driver(gateway, tmp_path_factory):
    """A browser logged in as the submit user, as a kiosk or an intake tablet is."""
    d = chrome(tmp_path_factory.mktemp("kiosk"), "zh-CN")
    login(d, gateway.base, "kiosk", USERS["kiosk"][1], "/%3Fkiosk%3D1")
    yield d
    d.quit()


def api_status(d, method, params):
    """The HTTP status of a call made by the page itself (its session cookie and CSRF token)."""
    return d.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "Entryd.call(arguments[0], arguments[1], {redirect: false}).then(() => done(200), e => done(e.status));",
        method, params)


def test_kiosk_keeps_no_personal_data(gateway, kiosk_driver):
    d = kiosk_driver
    fresh_form(d, gateway.base, "?lang=zh&kiosk=1&idle=2")
    assert not d.find_element(By.ID, "nav").is_displayed()
    keys(d, "韩梅梅", Keys.ENTER, "2001-02-03", Keys.TAB)
    assert pick(d, "country", "us") == "US"
    keys(d, Keys.ENTER)
    wait(d, lambda: rows_ready(d, "contact_method"), "contact methods")
    keys(d, Keys.ARROW_DOWN, Keys.ENTER)
    wait(d, lambda: active_id(d) == "in-email", "e-mail")
    keys(d, "meimei@example.com")
    chord(d, Keys.CONTROL, Keys.ENTER)
    wait(d, lambda: "谢谢" in d.find_element(By.ID, "status").text, "thanks")
    html = d.page_source
    dump = storage_dump(d)
    for secret in ("韩梅梅", "meimei", "2001-02-03"):
        assert secret not in html and secret not in dump, secret
    assert all(value(d, "in-" + f) == "" for f in ("name", "birthday", "country", "email"))
    listed = json.loads(gateway.entryctl("list", "--search", "韩梅梅", "--json"))
    assert listed["total"] == 1 and listed["entries"][0]["createdBy"] == "web:kiosk"

    # The kiosk's user adds and never reads: what it sent cannot come back to the next person.
    entry_id = listed["entries"][0]["id"]
    assert api_status(d, "io.entryd.Entries.List", {}) == 403
    assert api_status(d, "io.entryd.Entries.Get", {"id": entry_id}) == 403
    assert api_status(d, "io.entryd.Entries.History", {"id": entry_id}) == 403
    assert api_status(d, "io.entryd.Forms.GetForm", {}) == 200

    # 2 s without input (idle=2 here, 60 s by default) empties a half-filled form.
    keys(d, "李四")
    wait(d, lambda: value(d, "in-name") == "", "the idle reset", timeout=6)
    assert "李四" not in d.page_source and "李四" not in storage_dump(d)

    # A visitor who switched to English leaves: the pause brings the kiosk's own language back (?lang=zh).
    d.find_element(By.CSS_SELECTOR, "button[data-lang=en]").click()
    wait(d, lambda: d.find_element(By.ID, "lb-name").text.startswith("Name"), "the English form")
    d.find_element(By.ID, "in-name").click()
    keys(d, "Visitor")
    wait(d, lambda: d.find_element(By.ID, "lb-name").text.startswith("姓名"), "the language reset", timeout=8)
    assert d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "zh-CN"
    wait(d, lambda: value(d, "in-name") == "" and active_id(d) == "in-name", "an empty form, focus on the first field")
    assert "Visitor" not in d.page_source
    assert "表单已清空" in d.find_element(By.ID, "status").text
    # A kiosk page opened again starts in its language too (here the browser's, zh-CN), not in the
    # choice the last visitor saved.
    d.find_element(By.CSS_SELECTOR, "button[data-lang=en]").click()
    wait(d, lambda: d.find_element(By.ID, "lb-name").text.startswith("Name"), "the English form")
    assert d.execute_script("return localStorage.getItem('entryd.lang')") == "en"
    fresh_form(d, gateway.base, "?kiosk=1&idle=60")
    assert d.find_element(By.ID, "lb-name").text.startswith("姓名")


def test_logged_out_submission_waits_for_the_login(gateway, driver):
    d = driver
    fresh_form(d, gateway.base, "?lang=en")
    keys(d, "Late Login", Keys.ENTER, "1970-07-07", Keys.TAB)
    assert pick(d, "country", "de") == "DE"
    keys(d, Keys.ENTER)
    wait(d, lambda: rows_ready(d, "contact_method"), "contact methods")
    keys(d, Keys.ARROW_DOWN, Keys.ENTER)
    wait(d, lambda: active_id(d) == "in-email", "e-mail")
    keys(d, "late@example.com")
    entry_id = d.execute_script("return window.entrydForm.draftId")
    d.delete_cookie("entryd_session")  # the session is gone (expired, logged out elsewhere)
    d.find_element(By.ID, "done").click()
    wait(d, lambda: "/login?next=" in d.current_url, "the login page")
    d.find_element(By.ID, "user").send_keys("ada")
    d.find_element(By.ID, "password").send_keys(USERS["ada"][1], Keys.ENTER)
    wait(d, lambda: d.execute_script("return document.body.dataset.ready === '1'"), "the form again")
    wait(d, lambda: json.loads(storage_dump(d))["idb"] == [], "the outbox sent after the login")
    entry = json.loads(gateway.entryctl("get", entry_id, "--json"))["entry"]
    assert entry["fields"]["name"] == "Late Login" and entry["createdBy"] == "web:ada"


def log_in_on_page(d, user):
    """The login page as a person uses it, then the form page ready."""
    wait(d, lambda: "/login" in d.current_url and d.find_element(By.ID, "user"), "the login page")
    d.find_element(By.ID, "user").send_keys(user)
    d.find_element(By.ID, "password").send_keys(USERS[user][1], Keys.ENTER)
    wait(d, lambda: "/login" not in d.current_url and d.execute_script("return document.body.dataset.ready === '1'"),
         f"the form after {user}'s login")


def flushed(d):
    """Waits for the page's flush under way, then runs one more to its end."""
    wait(d, lambda: d.execute_script("return !window.entrydForm.flushing"), "the flush under way")
    d.execute_async_script("window.entrydForm.flush().then(arguments[arguments.length - 1])")


def test_queued_submission_waits_for_its_own_user(gateway, driver):
    """A shared device: what ada queued offline is never sent under root-admin's
    session (nor shown to them, only counted); ada's next login sends it, once,
    as web:ada."""
    d = driver
    fresh_form(d, gateway.base, "?lang=en")
    # the pickers' rows are cached before the network goes (a loaded machine may
    # still be fetching them when the form is shown)
    wait(d, lambda: d.execute_script("return window.entrydForm.prefetched"), "the pickers' rows")
    d.execute_cdp_cmd("Network.enable", {})
    d.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/api/v1/*"]})
    try:
        keys(d, "Shared Device", Keys.ENTER, "1977-07-17", Keys.TAB, Keys.ENTER)
        wait(d, lambda: rows_ready(d, "country"), "cached country rows")
        keys(d, Keys.ARROW_DOWN, Keys.ENTER)  # not CN: no province
        keys(d, Keys.ENTER)
        wait(d, lambda: rows_ready(d, "contact_method"), "cached contact methods")
        keys(d, Keys.ARROW_DOWN, Keys.ENTER)
        wait(d, lambda: active_id(d) == "in-email", "the e-mail field")
        keys(d, "shared@example.com")
        entry_id = d.execute_script("return window.entrydForm.draftId")
        d.find_element(By.ID, "done").click()
        wait(d, lambda: d.find_element(By.ID, "queue").text.startswith("1 submission waiting to be sent"), "1 waiting")
        queued = json.loads(storage_dump(d))["idb"]
        assert [(i["id"], i["user"]) for i in queued] == [(entry_id, "ada")]
        # ada logs out: only Add stays blocked, so the logout reaches the gateway
        d.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/api/v1/io.entryd.Entries.Add*"]})
        d.find_element(By.ID, "logout").click()
        wait(d, lambda: "/login" in d.current_url, "the login page after the logout")
        assert "entryd.user" not in json.loads(storage_dump(d))["local"]
        log_in_on_page(d, "root-admin")
    finally:
        d.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    # root-admin (who may write too) is online: ada's submission is not sent, only counted
    d.execute_script("window.dispatchEvent(new Event('online'))")
    flushed(d)
    other = wait(d, lambda: d.find_element(By.ID, "queue-other"), "the count for another user")
    assert other.text == "1 submission waiting for another user to log in"
    assert not d.find_elements(By.ID, "queue-count")
    assert "Shared" not in d.find_element(By.TAG_NAME, "body").text and "shared@" not in d.page_source
    assert [i["id"] for i in json.loads(storage_dump(d))["idb"]] == [entry_id]
    status, body = gateway.call("io.entryd.Entries.Get", {"id": entry_id}, token=gateway.login("root-admin"))
    assert status != 200, body
    assert json.loads(gateway.entryctl("list", "--search", "Shared Device", "--json"))["total"] == 0
    ready(d, gateway.base + "/?lang=zh")  # a page load flushes too; the zh count
    flushed(d)
    wait(d, lambda: d.find_element(By.ID, "queue-other").text == "1 份提交等待另一位用户登录后发送", "the zh count")
    assert json.loads(gateway.entryctl("list", "--search", "Shared Device", "--json"))["total"] == 0

    # ada logs in again: the submission is sent, once, as web:ada
    d.find_element(By.ID, "logout").click()
    log_in_on_page(d, "ada")
    wait(d, lambda: json.loads(storage_dump(d))["idb"] == [], "the outbox sent after ada's login")
    wait(d, lambda: d.find_element(By.ID, "queue").text == "", "no count left")
    entry = json.loads(gateway.entryctl("get", entry_id, "--json"))["entry"]
    assert entry["fields"]["name"] == "Shared Device" and entry["createdBy"] == "web:ada"
    found = json.loads(gateway.entryctl("list", "--search", "Shared Device", "--all", "--json"))
    assert found["total"] == 1 and [e["id"] for e in found["entries"]] == [entry_id]


def test_a_refused_queued_submission_comes_back_to_the_form(gateway, driver):
    d = driver
    fresh_form(d, gateway.base, "?lang=en")
    # a submission queued offline that the daemon refuses once back (no birthday, an unknown country)
    item_id = d.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const id = uuidv7();
        Outbox.put({id, user: 'ada', form: 'registration', fields: {name: 'Queued Q', country: 'Atlantis', contact_method: 'phone',
                    phone: '13800138000'}, locale: 'en', queuedAt: new Date().toISOString()})
          .then(() => window.entrydForm.flush()).then(() => done(id));""")
    wait(d, lambda: "refused" in d.find_element(By.ID, "status").text, "the refusal said")
    assert value(d, "in-name") == "Queued Q"
    assert problem(d, "birthday") and problem(d, "country")
    assert json.loads(storage_dump(d))["idb"] == []
    assert d.execute_script("return window.entrydForm.draftId") == item_id  # fixed and sent again: still that id


def wheel_values(d, field):
    """The open wheel's columns (year, month, day[, hour, minute]) as numbers."""
    return d.execute_script(
        "return [...document.querySelectorAll('#dlg-' + arguments[0] + ' [role=spinbutton]')].map(c => Number(c.getAttribute('aria-valuenow')))",
        field)


def test_typed_date_counts_on_enter(gateway, driver):
    """Typed (lenient) text is canonicalised by Check on Enter and the wheel opens on it;
    a second Enter commits it. Text Check cannot read shows its problem, the wheel opens
    on today without committing, and neither Escape nor Done puts today in its place."""
    d = driver
    fresh_form(d, gateway.base, "?lang=zh")
    keys(d, "韩梅", Keys.TAB, "1990-5-17", Keys.ENTER)
    wait(d, lambda: expanded(d, "birthday"), "the wheel after Enter on typed text")
    assert value(d, "in-birthday") == "1990-05-17"  # Check's canonical value
    assert wheel_values(d, "birthday") == [1990, 5, 17]
    keys(d, Keys.ENTER)
    wait(d, lambda: not expanded(d, "birthday"), "the wheel closed")
    assert value(d, "in-birthday") == "1990-05-17"
    assert active_id(d) == "in-country"

    # the Chinese form: the daemon reads it too
    chord(d, Keys.SHIFT, Keys.TAB)
    chord(d, Keys.CONTROL, "a")
    keys(d, "1988年8月8日", Keys.ENTER)
    wait(d, lambda: expanded(d, "birthday"), "the wheel on 1988年8月8日")
    assert value(d, "in-birthday") == "1988-08-08" and wheel_values(d, "birthday") == [1988, 8, 8]
    keys(d, Keys.ESCAPE)
    wait(d, lambda: not expanded(d, "birthday"), "closed")
    assert value(d, "in-birthday") == "1988-08-08"  # Escape keeps the typed date (canonical)

    # unreadable: the problem shows, the wheel opens on today, nothing committed
    chord(d, Keys.CONTROL, "a")
    keys(d, "1990-02-30", Keys.ENTER)
    wait(d, lambda: expanded(d, "birthday"), "the wheel on an unreadable date")
    wait(d, lambda: "没有这一天" in problem(d, "birthday"), "Check's problem shown")
    assert value(d, "in-birthday") == "1990-02-30"
    keys(d, Keys.ESCAPE)
    assert value(d, "in-birthday") == "1990-02-30"
    # Done with that wheel open (on today, untouched) sends the typed text, not today
    keys(d, Keys.ENTER)
    wait(d, lambda: expanded(d, "birthday"), "the wheel again")
    chord(d, Keys.CONTROL, Keys.ENTER)
    wait(d, lambda: "请修正" in d.find_element(By.ID, "status").text, "the refusal")
    assert value(d, "in-birthday") == "1990-02-30"
    assert "没有这一天" in problem(d, "birthday")

    # out of range: the wheel shows the nearest day it may (not what was typed); Done sends the typed date
    d.find_element(By.ID, "in-birthday").click()
    chord(d, Keys.CONTROL, "a")
    keys(d, "2999-1-1", Keys.ENTER)
    wait(d, lambda: expanded(d, "birthday"), "the wheel on a date out of range")
    assert value(d, "in-birthday") in ("2999-1-1", "2999-01-01") and wheel_values(d, "birthday") != [2999, 1, 1]
    wait(d, lambda: problem(d, "birthday") != "", "Check's range problem")
    chord(d, Keys.CONTROL, Keys.ENTER)
    wait(d, lambda: not expanded(d, "birthday"), "the wheel closed by Done")
    wait(d, lambda: "请修正" in d.find_element(By.ID, "status").text and problem(d, "birthday") != "", "refused again")
    assert value(d, "in-birthday") in ("2999-1-1", "2999-01-01")  # the typed date, never the wheel's

    # a date-time field the same way (the 30-minute appointment)
    d.find_element(By.ID, "in-appointment").click()
    keys(d, "2030-1-15 10:30", Keys.ENTER)
    wait(d, lambda: expanded(d, "appointment"), "the date-time wheel")
    assert value(d, "in-appointment") == "2030-01-15 10:30"
    assert wheel_values(d, "appointment") == [2030, 1, 15, 10, 30]
    keys(d, Keys.ENTER)
    wait(d, lambda: not expanded(d, "appointment"), "closed")
    assert value(d, "in-appointment") == "2030-01-15 10:30"

    # a past appointment (not-before = now): the wheel starts at now in UTC−12, not at the typed past
    d.find_element(By.ID, "in-appointment").click()
    chord(d, Keys.CONTROL, "a")
    keys(d, "2020-1-15 10:30", Keys.ENTER)
    wait(d, lambda: expanded(d, "appointment"), "the wheel on a past appointment")
    earliest = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=12)
    shown = wheel_values(d, "appointment")
    assert shown[:3] >= [earliest.year, earliest.month, earliest.day], shown


def test_click_on_a_date_field_is_for_typing(gateway, driver):
    """A click puts the caret in the field (no wheel); typing then Tab keeps the
    typed value, canonical. The picker button next to it opens the wheel."""
    d = driver
    fresh_form(d, gateway.base, "?lang=zh")
    d.find_element(By.ID, "in-birthday").click()
    assert active_id(d) == "in-birthday"
    assert not expanded(d, "birthday")
    keys(d, "19900517", Keys.TAB)
    wait(d, lambda: value(d, "in-birthday") == "1990-05-17", "the typed date, canonical")
    assert active_id(d) == "in-country"
    button = d.find_element(By.ID, "pk-birthday")
    assert button.is_displayed() and "生日" in button.get_attribute("aria-label")
    assert button.get_attribute("aria-controls") == "dlg-birthday"
    button.click()
    wait(d, lambda: expanded(d, "birthday"), "the wheel from the button")
    assert wheel_values(d, "birthday") == [1990, 5, 17]
    button.click()  # closes it again, nothing changed
    wait(d, lambda: not expanded(d, "birthday"), "closed by the button")
    assert value(d, "in-birthday") == "1990-05-17"


def test_key_hints_are_apart(gateway, driver):
    d = driver
    fresh_form(d, gateway.base, "?lang=en")
    items = d.find_elements(By.CSS_SELECTOR, "#keys li")
    assert [i.text for i in items] == ["Enter: open a picker / next field", "Tab, Shift+Tab: move",
                                       "Esc: cancel a picker", "Ctrl+Enter: submit"]
    assert d.execute_script("const k = document.getElementById('keys'); return k.tagName === 'UL' && k.getAttribute('role') === 'list'")
    rects = [i.rect for i in items]
    for a, b in zip(rects, rects[1:]):
        if abs(a["y"] - b["y"]) < 2:  # on one line: a visible gap between them
            assert b["x"] - (a["x"] + a["width"]) >= 12, rects


def test_form_cache_key_is_clean(gateway, driver):
    d = driver
    fresh_form(d, gateway.base, "?lang=en")
    stored = json.loads(storage_dump(d))["local"]
    assert "entryd.form.en" in stored
    assert json.loads(stored["entryd.form.en"])["name"] == "registration"
    assert not [k for k in stored if ".." in k or k.endswith(".")], list(stored)
