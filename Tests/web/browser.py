"""Helpers for the page tests: a headless Debian chromium driven by Selenium
(chromium-driver), keyboard input to the focused element, waits, and axe-core
(from the PyPI package axe-core-python, injected from its file: no network)."""
import json, os, time

from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

import axe_core_python

AXE_JS = open(os.path.join(os.path.dirname(axe_core_python.__file__), "axe.min.js"), encoding="utf-8").read()


def chrome(home, lang="zh-CN", width=1280, height=800):
    """A headless chromium with the given UI language and window size, whose
    every file is under HOME (a temporary directory of the caller's): its
    profile, and as its home and temporary directory what it writes beside
    (crash report settings in ~/.config/chromium, dconf's cache, the
    org.chromium.Chromium.* directory of its singleton socket, left in $TMPDIR)."""
    home = os.path.abspath(home)
    # Chromium's singleton socket goes to $TMPDIR/org.chromium.Chromium.XXXXXX/SingletonSocket;
    # a Unix socket path holds at most 107 bytes, past which chromium exits at start.
    socket_path = len(os.path.join(home, "tmp", "org.chromium.Chromium.XXXXXX", "SingletonSocket").encode())
    assert socket_path <= 107, f"{home}: too long for chromium's socket ({socket_path} > 107 bytes); use a shorter name"
    env = dict(os.environ, HOME=home, TMPDIR=os.path.join(home, "tmp"), XDG_CONFIG_HOME=os.path.join(home, ".config"),
               XDG_CACHE_HOME=os.path.join(home, ".cache"), XDG_DATA_HOME=os.path.join(home, ".local", "share"))
    for d in ("tmp", "profile"):
        os.makedirs(os.path.join(home, d), exist_ok=True)
    opts = webdriver.ChromeOptions()
    opts.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}", f"--lang={lang}", "--hide-scrollbars", "--force-device-scale-factor=1",
                "--user-data-dir=" + os.path.join(home, "profile")):
        opts.add_argument(arg)
    opts.add_experimental_option("prefs", {"intl.accept_languages": lang})
    service = webdriver.ChromeService(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"), env=env)
    return webdriver.Chrome(options=opts, service=service)


def wait(driver, check, what, timeout=20):
    """Polls check() until it is truthy; fails naming what was awaited."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = check()
            if last:
                return last
        except Exception as e:  # element not there yet, stale
            last = e
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def texts(driver, css):
    """The rendered text of every element CSS selects, read in one script run.
    The list page redraws its table when the live feed reports a change, so
    elements found one call and read the next can be gone (stale) in between."""
    return driver.execute_script("return Array.from(document.querySelectorAll(arguments[0]), (e) => e.innerText);", css)


def attributes(driver, css, name):
    """The attribute NAME of every element CSS selects, read in one script run (see texts)."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]), (e) => e.getAttribute(arguments[1]));", css, name)


def keys(driver, *k):
    """Sends keys to whatever has the focus (keyboard only, as a person would)."""
    ActionChains(driver).send_keys(*k).perform()


def chord(driver, modifier, key):
    ActionChains(driver).key_down(modifier).send_keys(key).key_up(modifier).perform()


def active_id(driver):
    return driver.execute_script("return document.activeElement && document.activeElement.id")


def value(driver, id_):
    return driver.find_element(By.ID, id_).get_attribute("value")


def login(driver, base, user, password, next_path="/"):
    driver.get(base + "/login?next=" + next_path)
    wait(driver, lambda: driver.find_element(By.ID, "user"), "the login form")
    driver.find_element(By.ID, "user").send_keys(user)
    driver.find_element(By.ID, "password").send_keys(password, Keys.ENTER)
    wait(driver, lambda: driver.execute_script("return document.body.dataset.ready === '1'"), "the page after login")


def ready(driver, url):
    driver.get(url)
    wait(driver, lambda: driver.execute_script("return document.body.dataset.ready === '1'"), url)


def axe(driver):
    """axe-core's violations on the current page (all rules but the experimental ones)."""
    driver.execute_script(AXE_JS)
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document).then(r => done(JSON.stringify(r.violations)), e => done(JSON.stringify([{id: 'axe-error', help: String(e)}])));")
    return json.loads(result)


def describe(violations):
    return "\n".join(f"{v['id']} ({v.get('impact')}): {v.get('help')}\n  " +
                     "\n  ".join(n["target"][0] if isinstance(n["target"][0], str) else str(n["target"]) for n in v.get("nodes", []))
                     for v in violations)


def storage_dump(driver):
    """Everything the page keeps in localStorage, sessionStorage, cookies it can read and IndexedDB."""
    return driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const out = {local: {...localStorage}, session: {...sessionStorage}, cookie: document.cookie, idb: []};
        indexedDB.databases().then(dbs => {
        if (!dbs.some(d => d.name === 'entryd')) { done(JSON.stringify(out)); return; }
        const req = indexedDB.open('entryd', 1);
        req.onupgradeneeded = () => req.result.createObjectStore('outbox', {keyPath: 'id'});
        req.onsuccess = () => {
          const t = req.result.transaction('outbox', 'readonly').objectStore('outbox').getAll();
          t.onsuccess = () => { out.idb = t.result; req.result.close(); done(JSON.stringify(out)); };
          t.onerror = () => done(JSON.stringify(out));
        };
        req.onerror = () => done(JSON.stringify(out));
        });
    """)


def screenshot(driver, directory, name, width, height):
    """Writes DIRECTORY/NAME.png of the page at width×height (the viewport, not
    the window); returns its path. The tests give their tmp_path, never the
    tree: doc/screenshots/ is written by scripts/screenshots (shots.py)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
    time.sleep(0.3)
    path = os.path.join(directory, name + ".png")
    with open(path, "wb") as f:
        f.write(driver.get_screenshot_as_png())
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    return path
