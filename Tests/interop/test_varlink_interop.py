"""An independent client (the PyPI `varlink` package) against a live entryd,
and the contract check of ../shared/tools/check-contract.py."""
import os, subprocess, sys, uuid

import varlink

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(ROOT, "..", "shared", "tools", "check-contract.py")

LI_LEI = {"name": "李雷", "birthday": "1990年5月17日", "country": "中国", "province": "广东",
          "city": "广州", "contact_method": "phone", "phone": "13800138000"}


def test_contract_matches_protocol_md(daemon):
    """Every type, method and error of PROTOCOL.md is served with the same shape."""
    assert os.path.exists(CHECK), f"contract checker missing at {CHECK}"
    r = subprocess.run([sys.executable, CHECK, daemon], capture_output=True, text=True, timeout=60)
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " 0 failed" in r.stdout


def test_get_info_and_descriptions(daemon):
    with varlink.Client(address=f"unix:{daemon}") as client:
        with client.open("org.varlink.service") as svc:
            info = svc.GetInfo()
            assert info["product"] == "entryd"
            for name in ("io.entryd.Entries", "io.entryd.Forms", "io.entryd.Sync", "org.varlink.service"):
                assert name in info["interfaces"]
                desc = svc.GetInterfaceDescription(name)["description"]
                assert f"interface {name}\n" in desc and "\r" not in desc


def test_add_and_list_roundtrip(daemon):
    with varlink.Client(address=f"unix:{daemon}") as client:
        with client.open("io.entryd.Entries") as entries:
            entry = entries.Add(fields=LI_LEI, locale="zh")["entry"]
            assert entry["fields"] == {"name": "李雷", "birthday": "1990-05-17", "country": "CN",
                                       "province": "440000", "city": "440100", "contact_method": "phone",
                                       "phone": "+8613800138000"}
            assert entry["display"]["country"] == "🇨🇳 中国"
            assert entry["display"]["region"] == "广东省-广州市"
            assert len(entry["version"]) == 16 and entry["deleted"] is False
            page = entries.List(filter={"country": "china"}, limit=10)
            assert entry["id"] in [e["id"] for e in page["entries"]]
            assert page["total"] >= 1


def test_add_with_id_is_idempotent(daemon):
    eid = str(uuid.uuid4())
    with varlink.Client(address=f"unix:{daemon}") as client:
        with client.open("io.entryd.Entries") as entries:
            a = entries.Add(id=eid, fields=LI_LEI)["entry"]
            b = entries.Add(id=eid, fields=LI_LEI)["entry"]
            assert a == b


def test_validation_error_is_typed(daemon):
    with varlink.Client(address=f"unix:{daemon}") as client:
        with client.open("io.entryd.Entries") as entries:
            try:
                entries.Add(fields={"name": "x", "birthday": "1990-02-30"}, locale="en")
            except varlink.VarlinkError as e:
                assert e.error() == "io.entryd.Entries.ValidationFailed"
                codes = {(p["field"], p["code"]) for p in e.parameters()["problems"]}
                assert ("birthday", "invalid-format") in codes
                assert ("country", "required") in codes
            else:
                raise AssertionError("an impossible date was accepted")
