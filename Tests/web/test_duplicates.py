"""Possible duplicates on the form page (issue 33 item 4) in a real browser:
the same person added twice shows a polite panel (while typing, from Check;
after Done, from Add) naming the stored entry with a link to open it, and
the entry is stored all the same; a submit (kiosk) session sees none, and
its Add and Check replies carry no duplicates member at all."""
import json

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser import active_id, axe, chord, chrome, describe, keys, login, ready, storage_dump, wait
from conftest import USERS
from test_browser import pick, rows_ready

PERSON = {"name": "欧阳娜娜", "birthday": "2001-02-03", "country": "US", "contact_method": "email", "email": "nana@example.com"}


def fill_and_submit(d, base, query, email):
    """Fills PERSON (with email) by keyboard on a fresh form page and presses Ctrl+Enter."""
    ready(d, base + "/" + query)
    wait(d, lambda: active_id(d) == "in-name", "focus on the first field")
    keys(d, PERSON["name"], Keys.ENTER, PERSON["birthday"], Keys.TAB)
    assert pick(d, "country", "us") == "US"
    keys(d, Keys.ENTER)
    wait(d, lambda: rows_ready(d, "contact_method"), "contact methods")
    keys(d, Keys.ARROW_DOWN, Keys.ENTER)
    wait(d, lambda: active_id(d) == "in-email", "e-mail")
    keys(d, email)


def panel(d):
    return d.find_element(By.ID, "duplicates")


def panel_links(d):
    return d.execute_script("return [...document.querySelectorAll('#duplicates a')].map(a => a.getAttribute('href'))")


def listed(gateway):
    return json.loads(gateway.entryctl("list", "--search", PERSON["name"], "--all", "--json"))


@pytest.fixture(scope="module")
def writer(gateway, tmp_path_factory):
    d = chrome(tmp_path_factory.mktemp("cw"), "zh-CN")
    login(d, gateway.base, "ada", USERS["ada"][1])
    yield d
    d.quit()


@pytest.fixture(scope="module")
def kiosk(gateway, tmp_path_factory):
    d = chrome(tmp_path_factory.mktemp("ck"), "zh-CN")
    login(d, gateway.base, "kiosk", USERS["kiosk"][1])
    yield d
    d.quit()


def test_same_person_twice_warns_and_still_saves(gateway, writer):
    d = writer
    before = listed(gateway)["total"]
    fill_and_submit(d, gateway.base, "?lang=zh", PERSON["email"])
    chord(d, Keys.CONTROL, Keys.ENTER)
    wait(d, lambda: "已保存" in d.find_element(By.ID, "status").text, "stored")
    first = listed(gateway)
    assert first["total"] == before + 1
    first_id = next(e["id"] for e in first["entries"] if e["fields"].get("email") == PERSON["email"])
    assert panel(d).text == "" and not panel(d).is_displayed()

    # The same person again: Check, as the person types, names the stored entry (a polite status).
    fill_and_submit(d, gateway.base, "?lang=zh", "NANA@example.com")
    wait(d, lambda: "邮箱相同" in panel(d).text, "the duplicates panel while typing")
    assert panel(d).get_attribute("role") == "status" and panel(d).is_displayed()
    assert "可能重复的登记" in panel(d).text and f"{PERSON['name']}（表单 registration）：姓名和生日相同、邮箱相同" in panel(d).text, panel(d).text
    assert "仍可点“完成”保存" in panel(d).text
    assert panel_links(d) == [f"/?edit={first_id}&form=registration"]
    # Nothing is refused: no problem beside any field.
    assert all(not p.text for p in d.find_elements(By.CSS_SELECTOR, "[id^=pr-]"))
    # The panel follows the page's language.
    d.find_element(By.CSS_SELECTOR, "button[data-lang=en]").click()
    wait(d, lambda: "same name and birthday, same e-mail" in panel(d).text, "the panel in English")
    d.find_element(By.CSS_SELECTOR, "button[data-lang=zh]").click()
    wait(d, lambda: "邮箱相同" in panel(d).text, "the panel in Chinese")
    violations = [v for v in axe(d) if v["impact"] in ("serious", "critical")]
    assert not violations, describe(violations)

    # Done still saves; the reply's duplicates stay on screen as an alert after the form is emptied.
    d.find_element(By.ID, "in-email").click()
    chord(d, Keys.CONTROL, Keys.ENTER)
    wait(d, lambda: "已保存" in d.find_element(By.ID, "status").text, "stored again")
    wait(d, lambda: panel(d).get_attribute("role") == "alert", "the panel after Add")
    assert "已保存。已有条目看起来是同一人" in panel(d).text and PERSON["name"] in panel(d).text
    assert panel_links(d) == [f"/?edit={first_id}&form=registration"]
    assert listed(gateway)["total"] == before + 2

    # The link opens the stored entry's page (the form in edit mode).
    d.find_element(By.CSS_SELECTOR, "#duplicates a").click()
    wait(d, lambda: d.execute_script("return document.body.dataset.ready === '1'"), "the linked page")
    assert d.current_url.endswith(f"/?edit={first_id}&form=registration")
    wait(d, lambda: d.find_element(By.ID, "in-name").get_attribute("value") == PERSON["name"], "the entry in the form")
    # Its page names the other entry (the one just stored) and never itself: Check gets its id.
    wait(d, lambda: len(panel_links(d)) == 1, "the other entry named")
    (link,) = panel_links(d)
    assert link.startswith("/?edit=") and f"edit={first_id}&" not in link, link


def test_kiosk_session_sees_no_duplicates(gateway, kiosk):
    d = kiosk
    before = listed(gateway)["total"]
    assert before >= 1, "the person is stored already (by the test before, or here)"
    fill_and_submit(d, gateway.base, "?lang=zh", PERSON["email"])
    chord(d, Keys.CONTROL, Keys.ENTER)
    wait(d, lambda: "已保存" in d.find_element(By.ID, "status").text, "stored by the kiosk user")
    assert listed(gateway)["total"] == before + 1
    assert panel(d).text == "" and panel_links(d) == []
    assert PERSON["name"] not in d.page_source and PERSON["name"] not in storage_dump(d)
    # The replies themselves: no duplicates member, for Check and for Add.
    fields = dict(PERSON)
    for method in ("io.entryd.Forms.Check", "io.entryd.Entries.Add"):
        reply = d.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "Entryd.call(arguments[0], {fields: arguments[1]}, {redirect: false}).then(r => done(JSON.stringify(r)), e => done(String(e.status)));",
            method, fields)
        members = json.loads(reply)
        assert "duplicates" not in members, (method, reply)
        assert ("problems" in members) if method.endswith("Check") else ("entry" in members), reply
    # The same calls by a reader are told (through the same gateway).
    token = gateway.login("rita")
    status, told = gateway.call("io.entryd.Forms.Check", {"fields": fields}, token=token)
    assert status == 200, told
    assert len(told["duplicates"]) >= 3 and told["duplicates"][0]["matched"] == ["name-birthday", "email"], told
