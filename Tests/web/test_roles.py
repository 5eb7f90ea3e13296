"""Roles over HTTP against a real entryd-web and entryd: a `submit` web user
(a kiosk, an intake tablet) may call Add, Check, GetForm, Options and the
service calls, and every other method of interfaces/*.varlink is refused
(403 PermissionDenied naming the least of read, write and admin that allows
it; 404 for the methods never served over HTTP), the live feed too; Status
hides the database and the peers' addresses from web users below admin."""
import glob, os, re

import pytest

from conftest import ROOT, Gateway

GOOD = {"name": "韩梅梅", "birthday": "2001-02-03", "country": "US", "contact_method": "email",
        "email": "meimei@example.com"}

SUBMIT = {"org.varlink.service.GetInfo", "org.varlink.service.GetInterfaceDescription", "io.entryd.Entries.Add",
          "io.entryd.Forms.Check", "io.entryd.Forms.GetForm", "io.entryd.Forms.Options"}
# Not served through /api/v1: the peers' methods, and Metrics (its HTTP door is GET /metrics).
SOCKET_ONLY = {"io.entryd.Sync.Apply", "io.entryd.Sync.SyncPeer", "io.entryd.Sync.HeldFrom", "io.entryd.Entries.Backup",
               "io.entryd.Sync.Metrics"}
# The least of read, write and admin that allows each method (doc/design.md "Security and limits").
LEAST = {
    "org.varlink.service.GetInfo": "read", "org.varlink.service.GetInterfaceDescription": "read",
    "io.entryd.Entries.Add": "write", "io.entryd.Entries.Get": "read", "io.entryd.Entries.List": "read",
    "io.entryd.Entries.Update": "write", "io.entryd.Entries.Delete": "write", "io.entryd.Entries.Restore": "write",
    "io.entryd.Entries.History": "read", "io.entryd.Entries.Import": "write", "io.entryd.Entries.Backup": "admin",
    "io.entryd.Entries.Erase": "admin", "io.entryd.Entries.FindSubject": "admin", "io.entryd.Entries.Erasures": "read",
    "io.entryd.Entries.VerifyErasure": "admin", "io.entryd.Forms.ListForms": "read", "io.entryd.Forms.GetForm": "read",
    "io.entryd.Forms.Options": "read", "io.entryd.Forms.Check": "read", "io.entryd.Forms.CheckStored": "read",
    "io.entryd.Sync.Status": "read", "io.entryd.Sync.Changes": "read", "io.entryd.Sync.Apply": "admin",
    "io.entryd.Sync.SyncPeer": "admin", "io.entryd.Sync.ListConflicts": "read", "io.entryd.Sync.Resolve": "admin",
    "io.entryd.Sync.HeldFrom": "read", "io.entryd.Sync.Compact": "admin", "io.entryd.Sync.Metrics": "read",
}
PEER = "[peer office]\naddress = exec:ssh office entryctl bridge\ninterval = 0\n"


def declared_methods():
    """Every method of every served interface (what entryd's generated Method enum holds)."""
    methods = set()
    for path in glob.glob(os.path.join(ROOT, "interfaces", "*.varlink")):
        text = open(path, encoding="utf-8").read()
        interface = re.search(r"^interface (\S+)", text, re.M).group(1)
        methods |= {f"{interface}.{m}" for m in re.findall(r"^method (\w+)", text, re.M)}
    return methods


@pytest.fixture(scope="module")
def peered(tmp_path_factory):
    """entryd with a configured peer (its address an exec: command) behind entryd-web."""
    g = Gateway(str(tmp_path_factory.mktemp("entryd-web-roles")), entryd_config=PEER)
    yield g
    g.stop()


def test_submit_user_is_refused_every_method_but_its_own(peered):
    methods = declared_methods()
    assert methods == set(LEAST) and len(methods) >= 28
    kiosk = peered.login("kiosk")
    allowed = set()
    for method in sorted(methods):
        status, body = peered.call(method, {}, kiosk)
        if method in SOCKET_ONLY:
            assert (status, body["error"]) == (404, "org.varlink.service.MethodNotFound"), (method, body)
        elif status == 403:
            assert body["error"] == "org.varlink.service.PermissionDenied", (method, body)
            assert body["parameters"] == {"role": LEAST[method]}, (method, body)
        else:
            assert status in (200, 400), (method, status, body)  # its own: answered, or its parameters refused
            allowed.add(method)
    assert allowed == SUBMIT
    # the live feed too
    status, body, _ = peered.request("GET", "/api/v1/io.entryd.Sync.Changes?since=0", token=kiosk)
    assert (status, body["parameters"]["role"]) == (403, "read")

    # What it may do works: a form, its pickers, a check, an Add it cannot read back.
    assert peered.call("io.entryd.Forms.GetForm", {"locale": "zh"}, kiosk)[1]["form"]["fields"]
    status, body = peered.call("io.entryd.Forms.Options", {"field": "country", "query": "us"}, kiosk)
    assert status == 200 and any(o["value"] == "US" for o in body["options"]), body
    status, body = peered.call("io.entryd.Forms.Check", {"fields": GOOD}, kiosk)
    assert (status, body["problems"]) == (200, [])
    status, body = peered.call("io.entryd.Entries.Add", {"fields": GOOD}, kiosk)
    assert status == 200, body
    entry_id = body["entry"]["id"]
    for method, params in [("io.entryd.Entries.Get", {"id": entry_id}), ("io.entryd.Entries.History", {"id": entry_id}),
                           ("io.entryd.Entries.List", {}), ("io.entryd.Entries.Update", {"id": entry_id, "fields": {"name": "x"}})]:
        status, body = peered.call(method, params, kiosk)
        assert (status, body["error"]) == (403, "org.varlink.service.PermissionDenied"), (method, body)
    status, body = peered.call("io.entryd.Entries.Get", {"id": entry_id}, peered.login("root-admin"))
    assert status == 200 and body["entry"]["createdBy"] == "web:kiosk"
    # the session says which role the page has
    status, body, _ = peered.request("GET", "/api/v1/session", token=kiosk)
    assert (status, body["role"]) == (200, "submit")


def test_status_hides_the_database_and_peer_addresses_below_admin(peered):
    status, full = peered.call("io.entryd.Sync.Status", {}, peered.login("root-admin"))
    assert status == 200 and full["database"].endswith("entries.db")
    assert [(p["name"], p["address"]) for p in full["peers"]] == [("office", "exec:ssh office entryctl bridge")]
    for user in ("rita", "ada"):
        status, shown = peered.call("io.entryd.Sync.Status", {}, peered.login(user))
        assert status == 200, shown
        assert shown["database"] == "" and [(p["name"], p["address"]) for p in shown["peers"]] == [("office", "")]
        assert list(shown) == list(full)  # every member stays
        assert shown["node"] == full["node"] and shown["forms"] == full["forms"]
