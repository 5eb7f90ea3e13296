"""A form file the page has never seen (Tests/web/forms/visit.conf) is filled
through ?form=visit with no code of its own; the page's language follows
navigator.language when nothing else says."""
import json, os, shutil

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser import active_id, axe, chrome, chord, describe, keys, login, ready, value, wait
from conftest import ROOT, USERS, Gateway

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    """entryd with the built-in registration form and visit.conf ($ENTRYD_FORMS)."""
    d = str(tmp_path_factory.mktemp("entryd-web-forms"))
    forms = os.path.join(d, "forms")
    os.mkdir(forms)
    shutil.copy(os.path.join(ROOT, "config", "forms", "registration.conf"), forms)
    shutil.copy(os.path.join(HERE, "forms", "visit.conf"), forms)
    old = os.environ.get("ENTRYD_FORMS")
    os.environ["ENTRYD_FORMS"] = forms
    try:
        g = Gateway(d)
    finally:
        if old is None:
            del os.environ["ENTRYD_FORMS"]
        else:
            os.environ["ENTRYD_FORMS"] = old
    yield g
    g.stop()


@pytest.fixture(scope="module")
def driver(gateway, tmp_path_factory):
    d = chrome(tmp_path_factory.mktemp("cr"), "de-DE")  # not zh: the page speaks English
    login(d, gateway.base, "ada", USERS["ada"][1], "/%3Fform%3Dvisit")
    yield d
    d.quit()


def test_another_form_file_needs_no_code(gateway, driver):
    d = driver
    wait(d, lambda: d.find_element(By.ID, "title").text == "Visit", "the visit form")
    assert d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en"  # from navigator.language
    labels = [e.text.rstrip("*") for e in d.find_elements(By.CSS_SELECTOR, ".field:not([hidden]) > label")]
    assert labels == ["Visitor", "Purpose", "Arrival"]  # company: only for a delivery
    violations = axe(d)
    assert violations == [], describe(violations)

    assert active_id(d) == "in-visitor"
    keys(d, "Zhang San", Keys.ENTER, Keys.ENTER)
    wait(d, lambda: d.find_element(By.CSS_SELECTOR, "#ls-purpose [data-value=meeting][aria-selected=true]"), "the purposes")
    keys(d, Keys.END, Keys.ENTER)  # Delivery: shows the company field
    wait(d, lambda: d.find_element(By.ID, "f-company").is_displayed(), "the company field")
    assert active_id(d) == "in-company"
    assert "*" in d.find_element(By.ID, "lb-company").text
    keys(d, "ACME", Keys.ENTER)
    assert active_id(d) == "in-arrival"
    keys(d, "2031-4-5 9:07")  # lenient: Check answers the canonical value, which replaces it on leaving
    wait(d, lambda: "15" in d.find_element(By.ID, "pr-arrival").text, "the interval problem")
    chord(d, Keys.CONTROL, "a")
    keys(d, "2031-4-5 9:15", Keys.TAB)
    wait(d, lambda: value(d, "in-arrival") == "2031-04-05 09:15", "the canonical date-time")
    entry_id = d.execute_script("return window.entrydForm.draftId")
    d.find_element(By.ID, "done").click()
    wait(d, lambda: "Stored" in d.find_element(By.ID, "status").text, "stored")
    entry = json.loads(gateway.entryctl("get", entry_id, "--json"))["entry"]
    assert entry["form"] == "visit"
    assert entry["fields"] == {"visitor": "Zhang San", "purpose": "delivery", "company": "ACME", "arrival": "2031-04-05 09:15"}
    assert entry["createdBy"] == "web:ada"


def test_unknown_form(gateway, driver):
    d = driver
    d.get(gateway.base + "/?form=nosuch")
    wait(d, lambda: "does not exist" in d.find_element(By.ID, "status").text, "the missing form said")
