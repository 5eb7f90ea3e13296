"""The form offline (issue 32), in Chromium against a real entryd-web: the
browser reaches entryd-web through a TCP relay of the test's, and the network
is cut by closing the relay's port (DevTools' offline switch does not reach a
service worker). The service worker serves the pages, and the form's data
(/api/v1/offline) lets every picker search as Options does."""
import json, os, re, socket, subprocess, time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser import active_id, axe, chord, chrome, describe, keys, login, storage_dump, value, wait
from conftest import BIN, USERS, wait_for
from relay import Relay


@pytest.fixture(scope="module")
def relay(gateway):
    r = Relay(gateway.port)
    r.start()
    yield r
    r.stop()


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("crx")


@pytest.fixture(scope="module")
def driver(relay, home):
    d = chrome(home, "zh-CN", 768, 1024)
    base = f"http://127.0.0.1:{relay.port}"
    login(d, base, "ada", USERS["ada"][1])
    controlled(d)
    yield d
    d.quit()


def controlled(d):
    """Waits until the service worker controls the page and has the form's data."""
    wait(d, lambda: d.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "navigator.serviceWorker.ready.then(() => caches.keys()).then(async (names) => {"
        "  for (const n of names) { const c = await caches.open(n);"
        "    if (await c.match('/api/v1/offline') && await c.match('/assets/form.js')) return true; }"
        "  return false; }).then((ok) => done(ok && !!navigator.serviceWorker.controller), () => done(false));"),
        "the service worker with the form's data", timeout=30)


def assert_offline(d):
    """The browser cannot reach entryd-web (the relay's port is closed)."""
    reached = d.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch('/healthz', {cache: 'no-store'}).then(() => done(true), () => done(false));")
    assert reached is False


def problem(d, field):
    return d.find_element(By.ID, "pr-" + field).text


def form_ready(d, url):
    d.get(url)
    wait(d, lambda: d.execute_script("return document.body.dataset.ready === '1'"), url)
    wait(d, lambda: active_id(d) == "in-name", "focus on the first field")


def test_manifest_and_worker_are_served(gateway):
    status, body, headers = gateway.request("GET", "/manifest.webmanifest")
    assert status == 200 and headers["Content-Type"] == "application/manifest+json"
    assert body["start_url"] == "/" and body["display"] == "standalone"
    assert any(i["src"] == "/assets/icon.svg" for i in body["icons"])
    status, body, headers = gateway.request("GET", "/sw.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    text = body.decode()
    assert "@ENTRYD_BUILD@" not in text and "@ENTRYD_PRECACHE@" not in text
    assert '"/assets/form.js"' in text and '"/assets/offline.js"' in text and '"/manifest.webmanifest"' in text


def test_offline_data_needs_a_login_and_has_a_version(gateway):
    status, body, _ = gateway.request("GET", "/api/v1/offline")
    assert status == 401, body
    token = gateway.login("rita")
    status, body, headers = gateway.request("GET", "/api/v1/offline", token=token)
    assert status == 200
    assert headers["ETag"] == f'"{body["version"]}"'
    assert body["default"] in body["forms"]["zh"]
    opts = body["options"]["zh"][body["default"]]
    assert {"country", "province", "city", "contact_method"} <= set(opts)
    assert len(opts["country"]) >= 240 and len(opts["city"]) >= 300
    assert body["fold"]["廣"] == "广"
    # not-before = now goes unresolved ("now"): the data and its version do not change every minute
    fields = {f["name"]: f for f in body["forms"]["zh"][body["default"]]["fields"]}
    assert fields["appointment"]["notBefore"] == "now" and "notBefore" not in fields["birthday"]
    status, _, _ = gateway.request("GET", "/api/v1/offline", token=token, headers={"If-None-Match": headers["ETag"]})
    assert status == 304
    # a kiosk's submit role may have it too: forms and reference rows, no entry
    status, kiosk, _ = gateway.request("GET", "/api/v1/offline", token=gateway.login("kiosk"))
    assert status == 200 and kiosk["version"] == body["version"]


# Picker queries compared online and offline: codes, names in both languages,
# pinyin, initials, word starts, insides, Traditional spellings, full-width
# and mixed case, aliases, and queries that match nothing.
COUNTRY = ["", "c", "cn", "CN", "chn", "156", "zg", "zhongguo", "中国", "中", "中國", "china", "Chi", "ch", "us", "usa",
           "united", "kingdom", "States", "mei", "meiguo", "美国", "美", "de", "deu", "germany", "德国", "deguo", "ri",
           "riben", "日本", "japan", "jp", "fr", "france", "法", "korea", "韩国", "hanguo", "朝鲜", "kr", "kp", "Côte",
           "cote", "ivoire", "türkiye", "turkey", "土耳其", "xianggang", "香港", "hong kong", "HK", "澳門", "taiwan", "臺灣",
           "台湾", "ｃｎ", "ＵＳＡ", "e", "ea", "eg", "egypt", "an", "land", "island", "isl", "guinea", "new", "ni", "zz",
           "qqq", "刚果（布）", "刚果", "congo", "bu", "x", "xi", "sa", "saudi", "st", "saint", "san", "0", "00", "4"]
PROVINCE = ["", "g", "gd", "guangdong", "广东", "廣東", "粤", "yue", "44", "440000", "CN-GD", "gx", "guangxi", "广西",
            "shanxi", "陕西", "山西", "sx", "shaanxi", "nei", "内蒙古", "內蒙古", "nmg", "xj", "新疆", "xinjiang", "zizhiqu",
            "自治区", "bj", "beijing", "北京", "京", "sh", "shanghai", "上海", "hu", "hunan", "hubei", "he", "hei", "hlj",
            "heilongjiang", "jiang", "sheng", "省", "tw", "台湾", "臺灣", "hk", "香港", "mo", "澳门", "xz", "tibet",
            "xizang", "yn", "云南", "sc", "四川", "cq", "zz", "zzz", "1", "11", "2", "65", "Guangdong Province", "an"]
CITY = [("", ""), ("", "gz"), ("", "guangzhou"), ("", "广州"), ("", "廣州"), ("", "zhou"), ("", "州"), ("", "sz"),
        ("", "shenzhen"), ("", "深圳"), ("", "4401"), ("", "440100"), ("", "xian"), ("", "西安"), ("", "xa"),
        ("", "xi'an"), ("", "dl"), ("", "dalian"), ("", "大连"), ("", "cs"), ("", "changsha"), ("", "长沙"), ("", "長沙"),
        ("", "wh"), ("", "wuhan"), ("", "su"), ("", "suzhou"), ("", "苏州"), ("", "蘇州"), ("", "hz"), ("", "杭州"),
        ("", "nj"), ("", "nanjing"), ("", "nan"), ("", "市"), ("", "shi"), ("", "zzz"), ("", "qd"), ("", "青岛"),
        ("", "zizhizhou"), ("", "自治州"), ("", "meng"), ("", "盟"), ("", "diqu"), ("", "地区"), ("", "襄樊"),
        ("", "xiangyang"), ("", "ch"), ("", "cha"), ("", "chan"),
        ("440000", ""), ("440000", "g"), ("440000", "gz"), ("440000", "zhou"), ("440000", "sz"), ("440000", "shen"),
        ("440000", "深"), ("440000", "foshan"), ("440000", "fs"), ("440000", "dg"), ("440000", "东莞"), ("440000", "zh"),
        ("440000", "zhuhai"), ("440000", "shantou"), ("440000", "st"), ("440000", "汕"), ("440000", "4406"),
        ("440000", "q"), ("440000", "qqq"), ("440000", "廣州"),
        ("110000", ""), ("110000", "d"), ("110000", "dc"), ("110000", "dongcheng"), ("110000", "朝阳"),
        ("110000", "cy"), ("110000", "qu"), ("110000", "区"), ("110000", "haidian"), ("110000", "hd"),
        ("650000", ""), ("650000", "wlmq"), ("650000", "urumqi"), ("650000", "乌鲁木齐"), ("650000", "烏魯木齊"),
        ("650000", "ks"), ("650000", "kashi"), ("650000", "kashgar"), ("650000", "diqu"), ("650000", "zhou")]
CHOICE = ["", "p", "phone", "电话", "電話", "手机", "mobile", "tel", "e", "email", "邮件", "mail", "x", "zzz", "dianhua",
          "ph", "Email", "ＰＨＯＮＥ"]


def queries():
    out = [("country", "", q) for q in COUNTRY] + [("province", "", q) for q in PROVINCE]
    out += [("city", p, q) for p, q in CITY] + [("contact_method", "", q) for q in CHOICE]
    return out


SEARCH = ("const done = arguments[arguments.length - 1];"
          "(async () => { const out = [];"
          "  for (const [f, p, q] of arguments[0]) {"
          "    try { out.push((await window.entrydForm.search(f, p || null, q)).map(r => [r.value, r.label, r.flag || '', r.parent || ''])); }"
          "    catch (e) { out.push('error: ' + e.name + ' ' + e.status); } }"
          "  return out; })().then(r => done(JSON.stringify(r)), e => done(JSON.stringify(String(e))));")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_pickers_search_offline_as_online(relay, driver, lang):
    d = driver
    qs = queries()
    assert len(qs) >= 200, len(qs)
    form_ready(d, f"http://127.0.0.1:{relay.port}/?lang={lang}")
    d.set_script_timeout(120)
    online = json.loads(d.execute_async_script(SEARCH, qs))
    assert not any(isinstance(r, str) for r in online), [r for r in online if isinstance(r, str)][:3]
    assert sum(1 for r in online if r) > 150  # most queries find rows
    relay.stop()
    try:
        assert_offline(d)
        offline = json.loads(d.execute_async_script(SEARCH, qs))
    finally:
        relay.start()
    differ = [(q, a[:5], b if isinstance(b, str) else b[:5]) for q, a, b in zip(qs, online, offline) if a != b]
    assert not differ, f"{len(differ)} of {len(qs)} differ, e.g. {differ[:3]}"


def test_reload_offline_shows_the_form(relay, driver):
    d = driver
    base = f"http://127.0.0.1:{relay.port}"
    form_ready(d, base + "/?lang=zh")
    relay.stop()
    try:
        for path in ("/?lang=zh", "/?kiosk=1", "/"):
            form_ready(d, base + path)
            assert_offline(d)
            assert d.find_element(By.ID, "lb-name").text.startswith("姓名")
        wait(d, lambda: d.find_element(By.ID, "offline-note").text.startswith("离线"), "the offline note")
        # every picker works: the country by its initials, then 广东 and 广州
        keys(d, "离线", Keys.ENTER, "1990-05-17", Keys.TAB)
        assert active_id(d) == "in-country"
        for field, query, chosen in (("country", "zg", "🇨🇳 中国"), ("province", "gd", "广东省"), ("city", "gz", "广州市")):
            assert active_id(d) == "in-" + field, active_id(d)
            keys(d, query)
            wait(d, lambda: d.execute_script(
                "const l = document.getElementById('ls-' + arguments[0]);"
                "return l.dataset.query === arguments[1] && !!l.querySelector('[aria-selected=true][data-value]')",
                field, query), f"{field} rows offline")
            keys(d, Keys.ENTER)
            wait(d, lambda: value(d, "in-" + field) == chosen, f"{field} chosen offline")
        violations = axe(d)
        assert not violations, describe(violations)
    finally:
        relay.start()


def idb(d):
    return json.loads(storage_dump(d))["idb"]


def entries_with(gateway, entry_id):
    """How many entries entryd holds with this id (0 or 1)."""
    listed = json.loads(gateway.entryctl("list", "--all", "--json"))["entries"]
    return [e["id"] for e in listed].count(entry_id)


def put_items(d, items):
    """Puts items into the page's outbox (as the form page would have queued them)."""
    d.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "(async () => { for (const i of arguments[0]) await Outbox.put(i); })().then(() => done(true));", items)


def item(entry_id, name, form="registration", user="ada"):
    return {"id": entry_id, "user": user, "form": form, "locale": "en", "queuedAt": "2026-12-07T10:00:00.000Z",
            "fields": {"name": name, "birthday": "1980-01-02", "country": "DE", "contact_method": "email",
                       "email": "x@example.com"}}


def new_id(d):
    return d.execute_script("return uuidv7()")


def test_incomplete_entry_refused_offline(relay, driver):
    d = driver
    form_ready(d, f"http://127.0.0.1:{relay.port}/?lang=en")
    relay.stop()
    try:
        assert_offline(d)
        keys(d, "Half Done", Keys.ENTER, "1990-02-30", Keys.TAB)  # no such day
        assert active_id(d) == "in-country"
        keys(d, "cn")
        wait(d, lambda: d.execute_script("return document.getElementById('ls-country').dataset.query === 'cn'"), "cn rows")
        keys(d, Keys.ENTER)  # China: the province is required now, and its city
        d.find_element(By.ID, "done").click()
        wait(d, lambda: "fix the marked problems" in d.find_element(By.ID, "status").text, "the refusal")
        assert "not a day of the calendar" in problem(d, "birthday")
        assert "is required" in problem(d, "province")
        assert "is required" in problem(d, "contact_method")
        assert d.find_element(By.ID, "in-birthday").get_attribute("aria-invalid") == "true"
        assert idb(d) == []  # nothing queued
        assert value(d, "in-name") == "Half Done"  # the values stay
        # a city of another province is refused by the page too
        d.execute_script("document.getElementById('in-province').focus()")
        keys(d, "gd")
        wait(d, lambda: d.execute_script("return document.getElementById('ls-province').dataset.query === 'gd'"), "gd")
        keys(d, Keys.ENTER)
        wait(d, lambda: "is required" in problem(d, "city"), "the city required once 广东 is chosen")
    finally:
        relay.start()


def fill_complete(d, name):
    keys(d, name, Keys.ENTER, "1985-03-04", Keys.TAB)
    for field, query in (("country", "cn"), ("province", "gd"), ("city", "sz"), ("contact_method", "phone")):
        assert active_id(d) == "in-" + field, active_id(d)
        keys(d, query)
        wait(d, lambda: d.execute_script(
            "const l = document.getElementById('ls-' + arguments[0]);"
            "return l.dataset.query === arguments[1] && !!l.querySelector('[aria-selected=true][data-value]')",
            field, query), f"{field} rows for {query}")
        keys(d, Keys.ENTER)
    wait(d, lambda: active_id(d) == "in-phone", "the phone field")
    keys(d, "13800138000")


def test_queue_sent_once_when_the_network_returns(gateway, relay, driver):
    d = driver
    form_ready(d, f"http://127.0.0.1:{relay.port}/?lang=en")
    relay.stop()
    try:
        assert_offline(d)
        fill_complete(d, "Back Online")
        entry_id = d.execute_script("return window.entrydForm.draftId")
        d.find_element(By.ID, "done").click()
        wait(d, lambda: d.find_element(By.ID, "queue").text.startswith("1 submission waiting"), "1 waiting")
        assert [i["id"] for i in idb(d)] == [entry_id]
        # a send whose reply is lost: the same id goes again, and is stored once
        d.execute_script("window.entrydForm.flush()")
    finally:
        relay.start()
    d.execute_script("window.dispatchEvent(new Event('online'))")
    wait(d, lambda: idb(d) == [], "the outbox sent")
    wait(d, lambda: d.find_element(By.ID, "queue").text == "", "no count left")
    assert entries_with(gateway, entry_id) == 1
    entry = json.loads(gateway.entryctl("get", entry_id, "--json"))["entry"]
    assert entry["fields"]["city"] == "440300" and entry["createdBy"] == "web:ada"
    put_items(d, [item(entry_id, "Back Online")])  # a resend after a lost reply
    d.execute_async_script("window.entrydForm.flush().then(arguments[arguments.length - 1])")
    wait(d, lambda: idb(d) == [], "the resend taken as stored")
    assert entries_with(gateway, entry_id) == 1


def test_refused_item_set_aside_and_the_next_sent(gateway, relay, driver):
    d = driver
    base = f"http://127.0.0.1:{relay.port}"
    form_ready(d, base + "/?lang=zh&kiosk=1")
    refused, erased, good, bad = new_id(d), new_id(d), new_id(d), new_id(d)
    # erased: stored once (a reply lost), then its person erased
    status, body = gateway.call("io.entryd.Entries.Add", {"id": erased, "fields": item(erased, "Erased Person")["fields"]},
                                token=gateway.login("ada"))
    assert status == 200, body
    status, body = gateway.call("io.entryd.Entries.Erase", {"id": erased, "reason": "asked"},
                                token=gateway.login("root-admin"))
    assert status == 200, body
    # oldest first: a form entryd does not have (404), the erased one (409), a good one, one with no such day (400)
    invalid = item(bad, "Bad Day")
    invalid["fields"]["birthday"] = "1990-02-30"
    put_items(d, [item(refused, "Wrong Form", form="nosuchform"), item(erased, "Erased Person"), item(good, "Good One"),
                  invalid])
    d.execute_async_script("window.entrydForm.flush().then(arguments[arguments.length - 1])")
    wait(d, lambda: entries_with(gateway, good) == 1, "the good one sent after the refused one")
    wait(d, lambda: len(idb(d)) == 2 and all(i.get("rejected") for i in idb(d)), "two set aside")
    kept = sorted(idb(d), key=lambda i: i["id"])
    assert [i["id"] for i in kept] == [refused, bad], kept  # the erased person's values are gone at once
    assert [i["rejected"]["status"] for i in kept] == [404, 400]
    assert entries_with(gateway, refused) == 0
    # the kiosk never shows it to the public, not even counted
    wait(d, lambda: d.find_element(By.ID, "queue").text == "", "the kiosk count")
    assert "拒绝" not in d.find_element(By.TAG_NAME, "body").text and "Wrong Form" not in d.page_source
    # staff on that device: the count links to /outbox, which shows it
    form_ready(d, base + "/?lang=zh")
    wait(d, lambda: d.find_element(By.ID, "queue-rejected").text == "2 份离线提交被拒绝，请工作人员处理", "the staff count")
    d.get(base + "/outbox?lang=zh")
    wait(d, lambda: d.execute_script("return document.body.dataset.ready === '1'"), "the outbox page")
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, f"tr[data-id='{refused}']"), "the refused row")
    assert "Wrong Form" in d.find_element(By.ID, "rows").text
    violations = axe(d)
    assert not violations, describe(violations)
    # fixed in the form: the same id, stored once, gone from the outbox
    d.find_element(By.CSS_SELECTOR, f"tr[data-id='{bad}'] a").click()
    wait(d, lambda: d.execute_script("return document.body.dataset.ready === '1' && window.entrydForm.draftId") == bad,
         "the refused item in the form")
    assert value(d, "in-name") == "Bad Day"
    wait(d, lambda: "没有这一天" in problem(d, "birthday"), "its problem beside the field")
    d.execute_script("document.getElementById('in-birthday').focus()")
    chord(d, Keys.CONTROL, "a")
    keys(d, "1990-02-28", Keys.TAB)
    wait(d, lambda: problem(d, "birthday") == "", "the problem gone")
    d.find_element(By.ID, "done").click()
    wait(d, lambda: entries_with(gateway, bad) == 1, "the fixed entry stored")
    wait(d, lambda: [i["id"] for i in idb(d)] == [refused], "only the 404 one left")
    d.get(base + "/outbox?lang=zh")
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, f"tr[data-id='{refused}']"), "the refused row")
    d.find_element(By.CSS_SELECTOR, f"tr[data-id='{refused}'] [data-act=remove]").click()
    d.switch_to.alert.accept()
    wait(d, lambda: idb(d) == [], "the refused item deleted by staff")


def test_logged_out_outbox_keeps_its_items_and_asks_for_a_login(relay, driver):
    d = driver
    base = f"http://127.0.0.1:{relay.port}"
    form_ready(d, base + "/?lang=en")
    entry_id = new_id(d)
    d.delete_cookie("entryd_session")  # the session ended: Add answers 401
    d.execute_script("window.entrydForm.reset()")
    put_items(d, [item(entry_id, "After Login")])
    d.execute_async_script("window.entrydForm.flush().then(arguments[arguments.length - 1])")
    kept = idb(d)
    assert [i["id"] for i in kept] == [entry_id] and "rejected" not in kept[0]  # kept, not set aside
    assert "Log in to send" in d.find_element(By.ID, "status").text
    login(d, base, "ada", USERS["ada"][1])  # the login sends it
    wait(d, lambda: idb(d) == [], "sent after the login")


def restart_entryd(gateway):
    """Starts entryd again on the same database and socket (after it was stopped)."""
    gateway.entryd = subprocess.Popen([os.path.join(BIN, "entryd"), "--config", os.path.join(gateway.dir, "entryd.conf"),
                                       "--socket", gateway.socket, "--db", os.path.join(gateway.dir, "entries.db")],
                                      stderr=subprocess.PIPE)
    wait_for(lambda: socket.socket(socket.AF_UNIX).connect(gateway.socket) is None, "entryd", gateway.entryd)


def test_unavailable_server_keeps_the_item_and_retry_sends_it(gateway, relay, driver):
    """503 (entryd stopped behind entryd-web): the item stays, not set aside,
    and the sending pauses; Retry now sends it once entryd is back."""
    d = driver
    form_ready(d, f"http://127.0.0.1:{relay.port}/?lang=en")
    entry_id = new_id(d)
    gateway.entryd.terminate()
    gateway.entryd.wait(timeout=15)
    try:
        put_items(d, [item(entry_id, "Busy Server")])
        d.execute_async_script("window.entrydForm.flush().then(arguments[arguments.length - 1])")
        kept = idb(d)
        assert [i["id"] for i in kept] == [entry_id] and "rejected" not in kept[0]
    finally:
        restart_entryd(gateway)
    d.execute_async_script("window.entrydForm.flush().then(arguments[arguments.length - 1])")
    assert [i["id"] for i in idb(d)] == [entry_id]  # still pausing after the 503
    retry = wait(d, lambda: d.find_element(By.CSS_SELECTOR, "#queue button"), "Retry now")
    retry.click()
    wait(d, lambda: idb(d) == [], "sent by Retry now")
    assert entries_with(gateway, entry_id) == 1


def test_two_tabs_one_count(relay, driver):
    d = driver
    base = f"http://127.0.0.1:{relay.port}"
    form_ready(d, base + "/?lang=en")
    first = d.current_window_handle
    d.switch_to.new_window("tab")
    form_ready(d, base + "/?lang=en")
    second = d.current_window_handle
    relay.stop()
    try:
        put_items(d, [item(new_id(d), "Tab One"), item(new_id(d), "Tab Two")])
        wait(d, lambda: d.find_element(By.ID, "queue").text.startswith("2 submissions waiting"), "2 in this tab")
        d.switch_to.window(first)
        wait(d, lambda: d.find_element(By.ID, "queue").text.startswith("2 submissions waiting"), "2 in the other tab")
    finally:
        relay.start()
    d.execute_script("window.dispatchEvent(new Event('online'))")
    wait(d, lambda: d.find_element(By.ID, "queue").text == "", "sent: no count in this tab")
    d.switch_to.window(second)
    wait(d, lambda: d.find_element(By.ID, "queue").text == "", "no count in the other tab either")
    d.close()
    d.switch_to.window(first)


# Entries whose problems the page judges as the daemon does (field, code, message).
BASE = {"name": "Check Me", "birthday": "1990-05-17", "country": "DE", "contact_method": "email", "email": "a@example.com"}
CHECKS = [
    {}, {"name": ""}, {"birthday": ""}, {"birthday": "1990-02-30"}, {"birthday": "1990-13-01"}, {"birthday": "yesterday"},
    {"birthday": "1990/5/17"}, {"birthday": "19900517"}, {"country": "XX"}, {"country": "CN"},
    {"country": "CN", "province": "440000"}, {"country": "CN", "province": "440000", "city": "440300"},
    {"country": "CN", "province": "440000", "city": "110105"}, {"country": "CN", "province": "999999"},
    {"country": "CN", "province": "810000"}, {"contact_method": ""}, {"contact_method": "fax"},
    {"contact_method": "phone"}, {"contact_method": "phone", "phone": "12ab34"}, {"email": ""}, {"email": "no-at-sign"},
    {"email": "two@@example.com"}, {"email": "a b@example.com"}, {"name": "line\nbreak"},
]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_offline_check_agrees_with_check(gateway, relay, driver, lang):
    d = driver
    form_ready(d, f"http://127.0.0.1:{relay.port}/?lang={lang}")
    d.execute_async_script("Offline.load().then(arguments[arguments.length - 1])")
    token = gateway.login("rita")
    for case in CHECKS:
        fields = {k: v for k, v in {**BASE, **case}.items() if v}
        status, body = gateway.call("io.entryd.Forms.Check", {"fields": fields, "locale": lang}, token=token)
        assert status == 200, body
        online = sorted((p["field"], p["code"], p["message"]) for p in body["problems"])
        local = d.execute_script("return Offline.check(Offline.form(null, arguments[1]), arguments[0], arguments[1])",
                                 fields, lang)
        offline = sorted((p["field"], p["code"], p["message"]) for p in local)
        assert offline == online, (case, offline, online)


def caches_now(d):
    return d.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "caches.keys().then(async (names) => { const out = {};"
        "  for (const n of names) out[n] = (await (await caches.open(n)).keys()).map(r => new URL(r.url).pathname).sort();"
        "  return out; }).then(done);")


def update_worker(d):
    d.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "navigator.serviceWorker.getRegistration().then(r => r.update()).then(() => done(true), e => done(String(e)));")


def test_an_upgrade_replaces_the_cache(gateway, relay, driver):
    """Another build's sw.js (the relay rewrites its version and ETag, as an
    upgraded entryd-web would serve it) is installed, caches the pages under
    its name, keeps the form's data and deletes the old build's cache."""
    d = driver
    form_ready(d, f"http://127.0.0.1:{relay.port}/?lang=en")
    status, body, headers = gateway.request("GET", "/sw.js")
    version = re.search(r'const VERSION = "([0-9a-f]{16})"', body.decode()).group(1)
    etag = headers["ETag"].strip('"')
    assert list(caches_now(d)) == ["entryd-" + version]
    upgraded = version[::-1] if version[::-1] != version else "0" * 16
    relay.rewrite = [(version.encode(), upgraded.encode()), (etag.encode(), etag[::-1].encode())]
    try:
        update_worker(d)
        wait(d, lambda: list(caches_now(d)) == ["entryd-" + upgraded], "only the upgraded build's cache")
        cached = caches_now(d)["entryd-" + upgraded]
        assert {"/", "/login", "/outbox", "/assets/form.js", "/assets/offline.js", "/manifest.webmanifest",
                "/api/v1/offline"} <= set(cached), cached
    finally:
        relay.rewrite = []
    update_worker(d)  # back to this build's worker
    wait(d, lambda: list(caches_now(d)) == ["entryd-" + version], "this build's cache again")
    controlled(d)


def test_a_network_that_answers_nothing(relay, driver):
    """Packets dropped instead of refused: the page comes from the cache after
    a few seconds, and the form works from its own data without waiting for
    the network at every field."""
    d = driver
    base = f"http://127.0.0.1:{relay.port}"
    form_ready(d, base + "/?lang=en")
    relay.stop()
    relay.hang = True
    relay.start()
    try:
        started = time.time()
        form_ready(d, base + "/?lang=en")
        assert time.time() - started < 25
        keys(d, "No Answer", Keys.ENTER, "1990-05-17", Keys.TAB, "de")
        started = time.time()
        wait(d, lambda: d.execute_script("return document.getElementById('ls-country').dataset.query === 'de'"),
             "country rows without an answer", timeout=10)
        assert time.time() - started < 4  # held offline: no wait for the network (5 s)
        keys(d, Keys.ENTER)
        wait(d, lambda: value(d, "in-country") == "🇩🇪 Germany", "Germany chosen")
    finally:
        relay.stop()
        relay.hang = False
        relay.start()


def test_browser_restart_offline(relay, driver, home):
    base = f"http://127.0.0.1:{relay.port}"
    form_ready(driver, base + "/?lang=en")
    driver.quit()
    relay.stop()
    d = chrome(home, "zh-CN", 390, 844)
    try:
        form_ready(d, base + "/?kiosk=1&lang=en")
        assert d.find_element(By.ID, "lb-name").text.startswith("Name")
        keys(d, "Restarted", Keys.ENTER, "1990-05-17", Keys.TAB, "de")
        wait(d, lambda: d.execute_script("return document.getElementById('ls-country').dataset.query === 'de'"),
             "country rows offline after a restart")
        keys(d, Keys.ENTER)
        wait(d, lambda: value(d, "in-country") == "🇩🇪 Germany", "Germany chosen")
    finally:
        relay.start()
        d.quit()
