"""The screenshots of the pages: the form with the city picker open and the
list at 1280×800, 768×1024 and 390×844, and the login page and the edit form
(a stored entry opened from the list) at 1280×800, in zh and en.

test_pages.py::test_screenshots takes them into its temporary directory and
checks them (read_png); scripts/screenshots runs this file to write
doc/screenshots/ on demand:

    python Tests/web/shots.py DIR    starts entryd and entryd-web (from
                                     $ENTRYD_BIN_DIR, else .build/debug) in a
                                     temporary directory, as the tests do, and
                                     writes DIR/NAME.png; removes the rest.
    python Tests/web/shots.py --offline DIR
                                     the offline form instead (issue 32):
                                     entryd-web reached through a relay that
                                     is then closed, the page reloaded from
                                     the service worker, the city picker open;
                                     DIR/offline-LANG-{tablet,mobile}.png."""
import os, shutil, struct, sys, tempfile, zlib

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser import active_id, chrome, keys, login, ready, screenshot, wait
from conftest import USERS, Gateway
from relay import Relay

SIZES = {"desktop": (1280, 800), "tablet": (768, 1024), "mobile": (390, 844)}
# The entries the list shows: (name, birthday, country, more fields).
ENTRIES = (("王芳", "1988-08-08", "CN", {"province": "广东", "city": "深圳"}),
           ("Alice Smith", "1975-01-02", "US", {}),
           ("陈伟", "1999-12-31", "CN", {"province": "北京", "city": "朝阳"}))


def add_entries(gateway):
    """Stores ENTRIES through the API as ada; returns their ids."""
    token = gateway.login("ada")
    ids = []
    for name, born, country, extra in ENTRIES:
        fields = {"name": name, "birthday": born, "country": country, "contact_method": "email",
                  "email": f"user{len(ids)}@example.com", **extra}
        status, body = gateway.call("io.entryd.Entries.Add", {"fields": fields}, token=token)
        assert status == 200, body
        ids.append(body["entry"]["id"])
    return ids


def fill_to_city_picker(d, lang):
    """Types a name, a birthday, CN and 广东 into the form page just loaded, by
    keyboard, and leaves the city picker open on its rows."""
    d.find_element(By.ID, "in-name").send_keys("李雷" if lang == "zh" else "Li Lei", Keys.ENTER)
    keys(d, "1990-05-17", Keys.TAB, "cn")
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, "#ls-country [data-value=CN][aria-selected=true]"), "CN")
    keys(d, Keys.ENTER, "gd")
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, "#ls-province [data-value='440000'][aria-selected=true]"), "广东")
    keys(d, Keys.ENTER, Keys.ENTER)
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, "#ls-city [data-value][aria-selected=true]"), "the city rows")


def take(driver, base, lang, directory):
    """Logs in as root-admin and writes DIRECTORY/{form,list}-LANG-SIZE.png,
    edit-LANG-desktop.png (王芳's entry in the edit form) and
    login-LANG-desktop.png; returns {path: (width, height)} of what it wrote.
    The list needs at least three entries (add_entries)."""
    d = driver
    shots = {}
    login(d, base, "root-admin", USERS["root-admin"][1])
    for size, (width, height) in SIZES.items():
        ready(d, base + "/?lang=" + lang)
        fill_to_city_picker(d, lang)
        shots[screenshot(d, directory, f"form-{lang}-{size}", width, height)] = (width, height)
        keys(d, Keys.ESCAPE)
        ready(d, base + "/list?lang=" + lang)
        wait(d, lambda: len(d.find_elements(By.CSS_SELECTOR, "#rows tr")) >= 3, "rows")
        shots[screenshot(d, directory, f"list-{lang}-{size}", width, height)] = (width, height)
    # the edit form: 王芳's row's edit link, the entry loaded
    href = d.execute_script(
        "const r = [...document.querySelectorAll('#rows tr')].find(r => r.textContent.includes('王芳'));"
        "return r && r.querySelector('a[data-edit]').getAttribute('href');")
    ready(d, base + href + "&lang=" + lang)
    wait(d, lambda: d.find_element(By.ID, "in-name").get_attribute("value") == "王芳"
         and d.find_element(By.ID, "in-city").get_attribute("value") != "", "the entry in the edit form")
    shots[screenshot(d, directory, f"edit-{lang}-desktop", 1280, 800)] = (1280, 800)
    d.get(base + "/login?lang=" + lang)
    wait(d, lambda: active_id(d) == "user", "login")
    shots[screenshot(d, directory, f"login-{lang}-desktop", 1280, 800)] = (1280, 800)
    return shots


def take_offline(driver, relay, lang, directory):
    """The form reloaded with entryd-web unreachable (the relay closed), filled
    from the offline data up to the open city picker, at 768×1024 and 390×844:
    DIRECTORY/offline-LANG-{tablet,mobile}.png; returns {path: (width, height)}."""
    d = driver
    base = f"http://127.0.0.1:{relay.port}"
    shots = {}
    login(d, base, "ada", USERS["ada"][1])
    wait(d, lambda: d.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "navigator.serviceWorker.ready.then(() => caches.keys()).then(async (names) => {"
        "  for (const n of names) if (await (await caches.open(n)).match('/api/v1/offline')) return true;"
        "  return false; }).then(done, () => done(false));"), "the service worker with the form's data", timeout=30)
    relay.stop()
    try:
        for size in ("tablet", "mobile"):
            width, height = SIZES[size]
            ready(d, base + "/?lang=" + lang)
            fill_to_city_picker(d, lang)
            shots[screenshot(d, directory, f"offline-{lang}-{size}", width, height)] = (width, height)
            keys(d, Keys.ESCAPE)
    finally:
        relay.start()
    return shots


def read_png(path):
    """(width, height, rows): the pixels of an 8-bit RGB or RGBA PNG (what
    chromium writes), one bytes object a row, 3 or 4 bytes a pixel."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, f"{path}: not 8-bit RGB(A), non-interlaced: {header}"
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    assert len(raw) == height * (stride + 1), f"{path}: {len(raw)} bytes of pixels for {width}×{height}"
    prev, rows = bytearray(stride), []
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 1:  # Sub
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif kind == 2:  # Up
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif kind == 3:  # Average
            for i in range(stride):
                line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
        elif kind == 4:  # Paeth
            for i in range(stride):
                a, b, c = (line[i - bpp] if i >= bpp else 0), prev[i], (prev[i - bpp] if i >= bpp else 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def main(argv):
    offline = len(argv) == 3 and argv[1] == "--offline"
    if len(argv) != 2 and not offline:
        sys.exit("usage: shots.py [--offline] DIR")
    out = os.path.abspath(argv[-1])
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="entryd-shots-")
    gateway = driver = relay = None
    try:
        gateway = Gateway(work)
        add_entries(gateway)
        driver = chrome(os.path.join(work, "chromium"), "en-US")
        if offline:
            relay = Relay(gateway.port)
            relay.start()
        for lang in ("zh", "en"):
            shots = take_offline(driver, relay, lang, out) if offline else take(driver, gateway.base, lang, out)
            for path, (width, height) in shots.items():
                shown = os.path.relpath(path)
                print(f"{path if shown.startswith('..') else shown}: {width}×{height}")
    finally:
        if driver:
            driver.quit()
        if relay:
            relay.stop()
        if gateway:
            gateway.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv)
