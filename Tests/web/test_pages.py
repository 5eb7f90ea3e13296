"""The pages' accessibility (axe-core, Tab order with a visible focus), the
login, list and conflicts pages, and the screenshots (shots.py), taken into the
test's temporary directory: scripts/screenshots writes doc/screenshots/."""
import collections, json, os, re

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser import active_id, attributes, axe, chrome, describe, keys, login, ready, texts, wait
from conftest import USERS
from shots import SIZES, add_entries, read_png, take


@pytest.fixture(scope="module")
def driver(gateway, tmp_path_factory):
    d = chrome(tmp_path_factory.mktemp("cr"), "en-US")
    yield d
    d.quit()


@pytest.fixture(scope="module")
def entries(gateway):
    """Three entries to list, stored through the API as ada."""
    return add_entries(gateway)


def focus_visible(d):
    """Whether the focused element draws a focus indicator (outline or box-shadow)."""
    return d.execute_script("""
        const el = document.activeElement, s = getComputedStyle(el);
        return (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2) || (s.boxShadow && s.boxShadow !== 'none');""")


def tab_through(d):
    """Presses Tab until the focus comes round; returns the ids/texts of what got the focus, checking each shows it."""
    seen = []
    # Tab from the top of the document
    d.execute_script("const r = document.documentElement; r.tabIndex = -1; r.focus(); r.removeAttribute('tabindex'); window.scrollTo(0, 0)")
    for _ in range(60):
        keys(d, Keys.TAB)
        key = d.execute_script("const e = document.activeElement; return e === document.body ? null : (e.id || e.getAttribute('href') || e.textContent.trim())")
        if key is None or (seen and key == seen[0]):
            break
        assert focus_visible(d), f"no visible focus on {key}"
        seen.append(key)
    return seen


def reachable_controls(d):
    """The visible, enabled controls of the page (what Tab must reach). A date
    field's picker button is for the pointer: Enter on the field opens its wheel."""
    return d.execute_script("""
        return [...document.querySelectorAll('a[href], button:not(.pick), input, select, [tabindex="0"]')]
          .filter(e => !e.disabled && e.offsetParent !== null && !e.closest('[hidden]') && !e.closest('dialog:not([open])'))
          .map(e => e.id || e.getAttribute('href') || e.textContent.trim());""")


def test_login_page(gateway, driver):
    d = driver
    d.get(gateway.base + "/login?next=/list")
    wait(d, lambda: active_id(d) == "user", "the login form")
    violations = axe(d)
    assert violations == [], describe(violations)
    controls = reachable_controls(d)
    seen = tab_through(d)
    assert [c for c in controls if c not in seen] == [], seen
    d.find_element(By.ID, "user").send_keys("rita")
    d.find_element(By.ID, "password").send_keys("wrong", Keys.ENTER)
    wait(d, lambda: "Wrong user name or password" in d.find_element(By.ID, "status").text, "the refusal")
    assert d.find_element(By.ID, "status").get_attribute("role") == "alert"
    d.find_element(By.ID, "password").send_keys(USERS["rita"][1], Keys.ENTER)
    wait(d, lambda: d.current_url.endswith("/list"), "back to next")
    # an outside next is never followed
    d.get(gateway.base + "/login?next=//example.com/")
    wait(d, lambda: active_id(d) == "user", "the login form")
    d.find_element(By.ID, "user").send_keys("rita")
    d.find_element(By.ID, "password").send_keys(USERS["rita"][1], Keys.ENTER)
    wait(d, lambda: d.current_url.rstrip("/") == gateway.base, "the form page")


# ?next= values (as they stand in the URL) that must never leave the site: control characters a URL
# parser drops (tab, CR, LF), two slashes, backslashes, schemes, other hosts, spaces and line separators.
HOSTILE_NEXT = [
    "/%09/evil.example/", "/%0a/evil.example/", "/%0d/evil.example/", "/%0d%0a/evil.example/", "/%09%09/evil.example/",
    "%09//evil.example/", "%0a//evil.example/", "/%00/evil.example/", "/%7f/evil.example/", "/%20/evil.example/",
    "%20//evil.example/", "/%E2%80%A8/evil.example/", "/%C2%85/evil.example/", "//evil.example/", "///evil.example/",
    "%2f%2fevil.example/", "/%2fevil.example/", "/\\evil.example/", "/%5cevil.example/", "%5c%5cevil.example/",
    "\\/evil.example/", "https://evil.example/", "http:evil.example", "HTTPS://evil.example", "//user@evil.example/",
    "javascript:alert(1)", "data:text/html,x", "evil.example", "./evil", "", "%2e%2e/%2e%2e//evil.example/",
]
SAFE_NEXT = {"/list": "/list", "/list?since=3%26x": "/list?since=3&x", "/conflicts#top": "/conflicts#top",
             "/a/%252f%252fevil.example": "/a/%2f%2fevil.example", "/?lang=zh": "/?lang=zh"}


def test_login_next_stays_on_the_site(gateway, driver):
    """The whole class of open redirects after login: every hostile ?next= resolves to /, as the browser
    itself decodes and resolves it; same-origin paths are kept; and a real login follows the rule."""
    d = driver
    d.get(gateway.base + "/login")
    wait(d, lambda: active_id(d) == "user", "the login form")
    resolve = "return Entryd.localPath(new URLSearchParams(arguments[0]).get('next') || '/')"
    for raw in HOSTILE_NEXT:
        assert d.execute_script(resolve, "?next=" + raw) == "/", raw
    for raw, expected in SAFE_NEXT.items():
        assert d.execute_script(resolve, "?next=" + raw) == expected, raw
    for raw in ("/%09/evil.example/", "/%0a/evil.example/", "/%0d/evil.example/", "/%5cevil.example/"):
        d.get(gateway.base + "/login?next=" + raw)
        wait(d, lambda: active_id(d) == "user", "the login form")
        d.find_element(By.ID, "user").send_keys("rita")
        d.find_element(By.ID, "password").send_keys(USERS["rita"][1], Keys.ENTER)
        wait(d, lambda: d.current_url.rstrip("/") == gateway.base, f"the form page after next={raw}")


def test_connection_refusals_read_as_sentences(gateway, driver):
    """The pages say 431 HeaderTooLarge and 503 TooManyConnections in words, in zh and en (not an error name)."""
    d = driver
    d.get(gateway.base + "/login")
    wait(d, lambda: active_id(d) == "user", "the login form")
    said = d.execute_script("""
        const out = {};
        for (const lang of ["zh", "en"]) {
          Entryd.setLang(lang);
          out[lang] = [
            Entryd.describe(new Entryd.ApiError(431, "io.entryd.web.HeaderTooLarge", {limit: 32768, fields: 100})),
            Entryd.describe(new Entryd.ApiError(503, "io.entryd.web.TooManyConnections", {limit: "address", retryAfter: 7})),
            Entryd.describe(new Entryd.ApiError(503, "io.entryd.web.DaemonUnreachable", {})),
          ];
        }
        Entryd.setLang("en");
        return out;""")
    assert said["zh"] == ["请求头太大（多半是本站的 Cookie 太多），请清除本站的 Cookie 后再试。", "连接太多，请 7 秒后再试。",
                          "服务器暂时不可用，请稍后再试。"]
    assert said["en"][0].startswith("The request headers are too large")
    assert said["en"][1:] == ["Too many connections; try again in 7 s.", "The server is busy; try again later."]


def test_form_page_axe_and_focus(gateway, driver):
    d = driver
    login(d, gateway.base, "ada", USERS["ada"][1])
    for lang in ("zh", "en"):
        ready(d, gateway.base + "/?lang=" + lang)
        violations = axe(d)
        assert violations == [], describe(violations)
    # with problems showing and a picker open, still no violations
    d.find_element(By.ID, "done").click()
    wait(d, lambda: d.find_element(By.ID, "pr-name").text != "", "problems")
    d.find_element(By.ID, "in-country").click()
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, "#ls-country [data-value]"), "the country rows")
    violations = axe(d)
    assert violations == [], describe(violations)
    keys(d, Keys.ESCAPE)
    d.find_element(By.ID, "pk-birthday").click()
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, "#dlg-birthday [role=spinbutton]"), "the wheel")
    violations = axe(d)
    assert violations == [], describe(violations)
    keys(d, Keys.ESCAPE)

    ready(d, gateway.base + "/?lang=en")
    controls = reachable_controls(d)
    seen = tab_through(d)
    # previous / next are disabled at the ends: which one is enabled follows the field last focused
    missing = [c for c in controls if c not in seen and c not in ("prev", "next")]
    assert "prev" in seen or "next" in seen
    assert not missing, f"not reachable by Tab: {missing} (order: {seen})"
    assert seen.index("in-name") < seen.index("in-birthday") < seen.index("in-country") < seen.index("in-contact_method") < seen.index("done")


def test_list_page(gateway, driver, entries):
    d = driver
    login(d, gateway.base, "rita", USERS["rita"][1], "/list")
    d.get(gateway.base + "/list?lang=zh")
    wait(d, lambda: len(d.find_elements(By.CSS_SELECTOR, "#rows tr")) >= 3, "rows")
    assert "王芳" in d.find_element(By.ID, "rows").text and "🇨🇳 中国" in d.find_element(By.ID, "rows").text
    violations = axe(d)
    assert violations == [], describe(violations)
    d.find_element(By.ID, "q-text").send_keys("王")
    d.find_element(By.ID, "q-province").send_keys("广东", Keys.ENTER)
    wait(d, lambda: attributes(d, "#rows tr", "data-id") == [entries[0]], "the filtered row")
    assert "共 1 条" in d.find_element(By.ID, "caption").text
    d.find_element(By.CSS_SELECTOR, "#rows tr button").click()
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, "#history-list li[data-op=create]"), "the history")
    assert "深圳市" in d.find_element(By.ID, "history-list").text  # 440300 as people read it
    assert d.find_element(By.CSS_SELECTOR, "#history-list .actor").text == "web:ada"
    violations = axe(d)
    assert violations == [], describe(violations)
    d.find_element(By.ID, "history-close").click()
    # a bad filter shows the daemon's problem
    d.find_element(By.ID, "q-text").clear()
    d.find_element(By.ID, "q-province").clear()
    d.find_element(By.ID, "q-from").send_keys("1990-02-30", Keys.ENTER)
    wait(d, lambda: "出生不早于" in d.find_element(By.ID, "status").text, "the filter problem")
    d.find_element(By.ID, "q-from").clear()
    tab = tab_through(d)
    assert "q-text" in tab and "q-order" in tab


def test_list_refused_filter(gateway, driver, entries):
    """A refused filter is named by its label, and the table no longer shows the
    previous result; lenient dates are taken as the daemon takes them."""
    d = driver
    login(d, gateway.base, "rita", USERS["rita"][1], "/list")
    for lang, label in (("zh", "出生不早于"), ("en", "Born from")):
        d.get(gateway.base + "/list?lang=" + lang)
        wait(d, lambda: len(d.find_elements(By.CSS_SELECTOR, "#rows tr")) >= 3, "rows")
        for id_ in ("q-from", "q-to"):
            assert "yyyy" not in d.find_element(By.ID, id_).get_attribute("placeholder").lower()
            assert d.find_element(By.ID, id_).get_attribute("inputmode") is None  # 年月日 can be typed
        d.find_element(By.ID, "q-from").send_keys("1990-02-30", Keys.ENTER)
        wait(d, lambda: label in d.find_element(By.ID, "status").text, f"the problem naming {label}")
        status = d.find_element(By.ID, "status").text
        assert "bornFrom" not in status, status
        wait(d, lambda: d.find_elements(By.CSS_SELECTOR, "#rows tr") == [], "the earlier rows gone")
        assert not re.search(r"\d", d.find_element(By.ID, "caption").text)  # no earlier count
        assert d.find_element(By.ID, "q-from").get_attribute("aria-invalid") == "true"
        assert not d.find_element(By.ID, "next-page").is_enabled()
        # the lenient form the daemon reads (as the form's fields): 1990年5月17日
        d.find_element(By.ID, "q-from").clear()
        d.find_element(By.ID, "q-from").send_keys("1990年5月17日", Keys.ENTER)
        wait(d, lambda: d.find_element(By.ID, "status").text == "" and d.find_elements(By.CSS_SELECTOR, "#rows tr"), "the filtered rows")
        ids = attributes(d, "#rows tr", "data-id")
        assert entries[2] in ids and entries[0] not in ids and entries[1] not in ids, ids  # born 1999; not 1988, 1975
        assert d.find_element(By.ID, "q-from").get_attribute("aria-invalid") == "false"


def test_list_search_by_traditional_name_and_phone(gateway, driver, entries):
    """The Find box (Filter.search): a Traditional name finds the Simplified
    one, a phone in other formats finds its entry; the count follows; a blank
    box is no search."""
    token = gateway.login("ada")
    status, body = gateway.call("io.entryd.Entries.Add", {"fields": {
        "name": "黄志明", "birthday": "1990-05-17", "country": "CN", "province": "440000", "city": "440100",
        "contact_method": "phone", "phone": "+86 136 1234 5678"}}, token=token)
    assert status == 200, body
    wanted = body["entry"]["id"]
    d = driver
    login(d, gateway.base, "rita", USERS["rita"][1], "/list")
    d.get(gateway.base + "/list?lang=zh")
    wait(d, lambda: len(d.find_elements(By.CSS_SELECTOR, "#rows tr")) >= 3, "rows")
    box = d.find_element(By.ID, "q-search")
    assert box.get_attribute("placeholder") == "姓名、拼音、电话或邮箱"
    assert box.find_element(By.XPATH, "..").text.startswith("查找")
    for query in ("黃志明", "136-1234-5678", "+86 13612345678"):
        box.clear()
        box.send_keys(query, Keys.ENTER)
        wait(d, lambda: attributes(d, "#rows tr", "data-id") == [wanted],
             f"the row found by {query}")
        assert "共 1 条" in d.find_element(By.ID, "caption").text
    # a blank box (the ideographic space is trimmed) is no search
    box.clear()
    box.send_keys("\u3000", Keys.ENTER)
    wait(d, lambda: len(d.find_elements(By.CSS_SELECTOR, "#rows tr")) >= 3, "the whole list again")
    violations = axe(d)
    assert violations == [], describe(violations)


def test_history_speaks_the_page_language(gateway, driver, entries):
    d = driver
    token = gateway.login("ada")
    status, body = gateway.call("io.entryd.Entries.Update", {"id": entries[1], "fields": {"country": "FR"}}, token=token)
    assert status == 200, body
    login(d, gateway.base, "rita", USERS["rita"][1], "/list")
    d.get(gateway.base + "/list?lang=zh")
    row = wait(d, lambda: d.find_element(By.CSS_SELECTOR, f"#rows tr[data-id='{entries[1]}']"), "Alice's row")
    row.find_element(By.TAG_NAME, "button").click()
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, "#history-list li[data-op=update]"), "the history")
    terms = [e.text for e in d.find_elements(By.CSS_SELECTOR, "#history-list dt[data-field]")]
    assert "生日" in terms and "国家" in terms and "联系方式" in terms, terms
    assert not {"birthday", "country", "contact_method"} & set(terms), terms
    values = {(e.find_element(By.XPATH, "ancestor::li").get_attribute("data-op"), e.get_attribute("data-field")): e.text
              for e in d.find_elements(By.CSS_SELECTOR, "#history-list dd[data-field]")}
    assert "法国" in values[("update", "country")] and "美国" in values[("create", "country")], values
    assert values[("create", "contact_method")] == "邮箱", values
    d.find_element(By.ID, "history-close").click()
    d.find_element(By.CSS_SELECTOR, "[data-lang=en]").click()
    wait(d, lambda: d.find_element(By.ID, "caption").text.endswith("entries"), "English")
    d.find_element(By.CSS_SELECTOR, f"#rows tr[data-id='{entries[1]}'] button").click()
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, "#history-list dt[data-field=country]").text == "Country", "English labels")
    assert "France" in d.find_element(By.CSS_SELECTOR, "#history-list li[data-op=update] dd[data-field=country]").text
    d.find_element(By.ID, "history-close").click()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_order_options_fit(gateway, driver, entries, lang):
    d = driver
    login(d, gateway.base, "rita", USERS["rita"][1], "/list")
    d.get(gateway.base + "/list?lang=" + lang)
    wait(d, lambda: len(d.find_elements(By.CSS_SELECTOR, "#rows tr")) >= 3, "rows")
    for size, (width, height) in SIZES.items():
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
        try:
            room = d.execute_script("""
                const s = document.getElementById('q-order'), cs = getComputedStyle(s);
                const c = document.createElement('canvas').getContext('2d');
                c.font = cs.fontWeight + ' ' + cs.fontSize + ' ' + cs.fontFamily;
                const text = Math.max(...[...s.options].map(o => c.measureText(o.textContent).width));
                // the space left for the text: the box less its padding, border and the drop-down arrow (20 px)
                return s.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 20 - text;""")
            assert room >= 0, f"{size}: the longest order option is {-room:.0f} px too wide"
        finally:
            d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_list_paging(gateway, driver, entries):
    d = driver
    login(d, gateway.base, "rita", USERS["rita"][1], "/list")
    d.get(gateway.base + "/list?lang=en&limit=1")
    wait(d, lambda: len(d.find_elements(By.CSS_SELECTOR, "#rows tr")) == 1, "one row a page")
    first = d.find_element(By.CSS_SELECTOR, "#rows tr").get_attribute("data-id")
    assert not d.find_element(By.ID, "prev-page").is_enabled()
    d.find_element(By.ID, "next-page").click()
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, "#rows tr").get_attribute("data-id") != first, "page 2")
    assert d.find_element(By.ID, "page-info").text == "Page 2"
    d.find_element(By.ID, "prev-page").click()
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, "#rows tr").get_attribute("data-id") == first, "page 1 again")
    # live: an entry added elsewhere shows on page 1 through the change feed (Server-Sent Events)
    token = gateway.login("ada")
    status, body = gateway.call("io.entryd.Entries.Add", {"fields": {
        "name": "Live Entry", "birthday": "2000-01-01", "country": "FR", "contact_method": "email", "email": "live@example.com"}}, token=token)
    assert status == 200, body
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, "#rows tr").get_attribute("data-id") == body["entry"]["id"], "the live row")
    total = json.loads(gateway.entryctl("list", "--json"))["total"]
    wait(d, lambda: d.find_element(By.ID, "caption").text == f"{total} entries", "the new total")


def test_conflicts_page(gateway, driver):
    d = driver
    login(d, gateway.base, "rita", USERS["rita"][1], "/conflicts")
    d.get(gateway.base + "/conflicts?lang=en")
    wait(d, lambda: "administrators" in d.find_element(By.ID, "status").text, "admins only")
    assert not d.find_element(By.ID, "resolved").is_displayed()  # nothing of the list for others
    assert not d.find_element(By.TAG_NAME, "table").is_displayed()
    violations = axe(d)
    assert violations == [], describe(violations)
    assert not d.find_element(By.CSS_SELECTOR, "nav a[href='/conflicts']").is_displayed()
    login(d, gateway.base, "root-admin", USERS["root-admin"][1], "/conflicts")
    d.get(gateway.base + "/conflicts?lang=en")
    wait(d, lambda: d.find_element(By.ID, "caption").text == "0 conflicts", "the (empty) conflict list")
    assert "No conflicts" in d.find_element(By.ID, "status").text
    violations = axe(d)
    assert violations == [], describe(violations)


@pytest.fixture(scope="module")
def conflicts(tmp_path_factory):
    """An entryd-web whose entryd holds two conflicts: a phone changed on two
    nodes, and a delete against an edit it did not see. Made before the gateway
    starts, by an entryd on the same database that may sync (a gateway may not)."""
    import socket as sockets
    import subprocess
    from conftest import BIN, Gateway, wait_for
    work = str(tmp_path_factory.mktemp("conflicts"))
    here, there = os.path.join(work, "setup.sock"), os.path.join(work, "peer.sock")
    procs = [subprocess.Popen([os.path.join(BIN, "entryd"), "--socket", sock, "--db", db], stderr=subprocess.DEVNULL)
             for sock, db in ((here, os.path.join(work, "entries.db")), (there, os.path.join(work, "peer.db")))]
    try:
        for sock, proc in zip((here, there), procs):
            wait_for(lambda: sockets.socket(sockets.AF_UNIX).connect(sock) is None, "entryd", proc)

        def ctl(sock, *args):
            r = subprocess.run([os.path.join(BIN, "entryctl"), "--socket", sock, "--locale", "en", *args],
                               capture_output=True)
            assert r.returncode == 0, r.stderr.decode()
            return r.stdout.decode()
        person = ["birthday=1990-05-17", "country=CN", "province=广东", "city=广州", "contact_method=phone",
                  "phone=13800138000"]
        edited = json.loads(ctl(here, "--json", "add", "name=冲突甲", *person))["entry"]["id"]
        deleted = json.loads(ctl(here, "--json", "add", "name=冲突乙", *person))["entry"]["id"]
        ctl(there, "sync", "unix:" + here)
        ctl(here, "update", edited, "phone=13900139000")
        ctl(there, "update", edited, "phone=13700137000")
        ctl(here, "delete", deleted)
        ctl(there, "update", deleted, "name=冲突丙")
        ctl(here, "sync", "unix:" + there)
        node = json.loads(ctl(there, "--json", "status"))["node"]
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)
    g = Gateway(work)
    yield {"gateway": g, "edited": edited, "deleted": deleted, "peer": node}
    g.stop()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_conflicts_name_people(driver, conflicts, lang):
    """The conflicts page names the entry, the field by its label, the values
    as shown (a deleted register: 已删除 / 未删除), each side's time and node."""
    d, base = driver, conflicts["gateway"].base
    login(d, base, "root-admin", USERS["root-admin"][1], "/conflicts")
    d.get(base + "/conflicts?lang=" + lang)
    wait(d, lambda: len(d.find_elements(By.CSS_SELECTOR, "#rows tr")) >= 2, "the conflict rows")
    rows = dict(zip(attributes(d, "#rows tr", "data-id"), texts(d, "#rows tr")))
    text = "\n".join(rows.values())
    words = {
        "zh": ["冲突甲", "生日 1990-05-17", "登记", "手机号码", "删除状态", "已删除", "未删除", "+86 139 0013 9000",
               "+86 137 0013 7000", "写入", "节点 …" + conflicts["peer"][-8:], "当前已删除"],
        "en": ["冲突甲", "born 1990-05-17", "Registration", "Phone", "Deleted", "not deleted", "+86 139 0013 9000",
               "written", "node …" + conflicts["peer"][-8:], "now deleted"],
    }[lang]
    for word in words:
        assert word in text, f"{word} not in {text}"
    assert "true" not in text and "false" not in text and "+8613900139000" not in text
    assert conflicts["edited"] in text and conflicts["deleted"] in text  # the ids stay, below the names
    violations = axe(d)
    assert violations == [], describe(violations)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_screenshots(gateway, driver, entries, lang, tmp_path):
    """The screenshots scripts/screenshots takes, here into tmp_path: each a PNG
    of the size asked for, showing a page (not one colour: a blank or unstyled
    capture has few colours, or one covering almost all of it)."""
    shots = take(driver, gateway.base, lang, str(tmp_path))
    names = sorted(os.path.basename(p) for p in shots)
    assert names == sorted([f"{page}-{lang}-{size}.png" for page in ("form", "list") for size in SIZES] +
                           [f"login-{lang}-desktop.png", f"edit-{lang}-desktop.png"])
    assert sorted(p.name for p in tmp_path.iterdir()) == names  # nothing else written
    for path, (width, height) in shots.items():
        w, h, rows = read_png(path)
        assert (w, h) == (width, height), path
        bpp = len(rows[0]) // w
        colours = collections.Counter(row[i:i + 3] for row in rows for i in range(0, len(row), bpp))
        dominant = colours.most_common(1)[0][1] / (w * h)
        assert len(colours) >= 100 and dominant < 0.9, f"{path}: {len(colours)} colours, {dominant:.0%} of one"
        assert len(set(rows)) >= 50, f"{path}: {len(set(rows))} different rows of pixels"


def test_list_appointment_filter(gateway, driver, entries):
    """Issue 33 item 2: the appointment column and filter. Today and tomorrow are the browser's
    days (sent as dates), a range of dates, each in time order; a bad date is named by its label."""
    from selenium.webdriver.support.ui import Select
    d = driver
    login(d, gateway.base, "rita", USERS["rita"][1], "/list")
    d.get(gateway.base + "/list?lang=zh")
    wait(d, lambda: len(d.find_elements(By.CSS_SELECTOR, "#rows tr")) >= 3, "rows")
    day = "const t = new Date(); t.setDate(t.getDate() + arguments[0]); const p = (n) => String(n).padStart(2, '0');" \
          "return `${t.getFullYear()}-${p(t.getMonth() + 1)}-${p(t.getDate())}`;"
    today, tomorrow = d.execute_script(day, 0), d.execute_script(day, 1)
    # late in the day, so no time is past (the form's not-before = now) wherever the test runs
    token = gateway.login("ada")
    ids = {}
    for name, at in (("预约乙", f"{today} 23:30"), ("预约甲", f"{today} 23:00"), ("预约丙", f"{tomorrow} 10:00")):
        status, body = gateway.call("io.entryd.Entries.Add", {"fields": {
            "name": name, "birthday": "1980-01-01", "country": "FR", "contact_method": "email",
            "email": f"appt{len(ids)}@example.com", "appointment": at}}, token=token)
        assert status == 200, body
        ids[name] = body["entry"]["id"]
    rows = lambda: attributes(d, "#rows tr", "data-id")
    search = lambda: d.find_element(By.CSS_SELECTOR, "#filters button[type=submit]").click()
    assert not d.find_element(By.ID, "q-appt-from").is_displayed()
    Select(d.find_element(By.ID, "q-appt")).select_by_value("today")
    assert d.find_element(By.ID, "q-order").get_attribute("value") == "appointment"
    search()
    wait(d, lambda: rows() == [ids["预约甲"], ids["预约乙"]], "today's appointments in time order")
    assert "共 2 条" in d.find_element(By.ID, "caption").text
    cells = texts(d, "#rows td.appointment")
    assert cells == [f"{today} 23:00", f"{today} 23:30"], cells
    headers = texts(d, "#table thead th")
    assert headers[1] == "预约时间", headers
    violations = axe(d)
    assert violations == [], describe(violations)
    Select(d.find_element(By.ID, "q-appt")).select_by_value("tomorrow")
    search()
    wait(d, lambda: rows() == [ids["预约丙"]], "tomorrow's appointment")
    # a range of dates: the two fields show, lenient dates as Add takes them
    Select(d.find_element(By.ID, "q-appt")).select_by_value("range")
    wait(d, lambda: d.find_element(By.ID, "q-appt-from").is_displayed(), "the range's fields")
    d.find_element(By.ID, "q-appt-from").send_keys(today)
    d.find_element(By.ID, "q-appt-to").send_keys(tomorrow.replace("-", "/"), Keys.ENTER)
    wait(d, lambda: rows() == [ids["预约甲"], ids["预约乙"], ids["预约丙"]], "the range in time order")
    violations = axe(d)
    assert violations == [], describe(violations)
    # a bad date is refused, named by its label, and the table emptied
    d.find_element(By.ID, "q-appt-from").clear()
    d.find_element(By.ID, "q-appt-from").send_keys("2099-02-30", Keys.ENTER)
    wait(d, lambda: "预约不早于" in d.find_element(By.ID, "status").text, "the problem naming the field")
    assert "appointmentFrom" not in d.find_element(By.ID, "status").text
    assert d.find_element(By.ID, "q-appt-from").get_attribute("aria-invalid") == "true"
    wait(d, lambda: rows() == [], "the earlier rows gone")
    # English: the column and the filter read in the page's language
    d.find_element(By.CSS_SELECTOR, "[data-lang=en]").click()
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, "#table thead th:nth-child(2)").text == "Appointment", "English")
    Select(d.find_element(By.ID, "q-appt")).select_by_value("")
    search()
    wait(d, lambda: len(rows()) >= 6, "every entry again")


def test_list_pages_left_behind_free_their_feed(gateway, driver, entries):
    """Each /list opens a live feed (Server-Sent Events). Pages left for
    another stay in Chromium's back/forward cache; a feed kept open there
    holds one of the browser's 6 connections to the site, and the 6th such
    page waited forever. The feed closes on pagehide, so a dozen loads (and
    going back) all answer."""
    d = driver
    login(d, gateway.base, "ada", USERS["ada"][1], "/list")
    d.set_script_timeout(30)
    for i in range(12):
        if i % 4 == 3:
            d.back()
        else:
            d.get(gateway.base + f"/list?lang={'zh' if i % 2 else 'en'}&n={i}")
        wait(d, lambda: d.execute_script("return document.body.dataset.ready === '1'"), f"load {i}")
        answer = d.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "const t = setTimeout(() => done('hung'), 10000);"
            "Entryd.call('io.entryd.Entries.List', {limit: 1}).then(r => { clearTimeout(t); done('total ' + r.total); },"
            " e => { clearTimeout(t); done('error ' + e); });")
        assert answer.startswith("total "), f"load {i}: {answer}"
