"""An independent client (the PyPI `varlink` package) against a live entryd:
the served interfaces against interfaces/*.varlink and the contract in
doc/protocol.md, then calls as another client would make them."""
import datetime
import os, re, subprocess, sys, time, uuid

import varlink

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INTERFACES = os.path.join(ROOT, "interfaces")
PROTOCOL = os.path.join(ROOT, "doc", "protocol.md")
# An outside checker that may sit beside the checkout; it runs in addition to ours, never instead.
SHARED_CHECK = os.path.join(ROOT, "..", "shared", "tools", "check-contract.py")

LI_LEI = {"name": "李雷", "birthday": "1990年5月17日", "country": "中国", "province": "广东",
          "city": "广州", "contact_method": "phone", "phone": "13800138000"}


def test_served_descriptions_are_the_interface_files(daemon):
    """Each interface is served byte for byte as interfaces/NAME.varlink, and
    the PyPI varlink parser reads both to the same members and shapes."""
    with varlink.Client(address=f"unix:{daemon}") as client:
        with client.open("org.varlink.service") as svc:
            served = svc.GetInfo()["interfaces"]
            files = sorted(f[:-len(".varlink")] for f in os.listdir(INTERFACES) if f.endswith(".varlink"))
            assert sorted(served) == files
            for name in files:
                text = open(os.path.join(INTERFACES, name + ".varlink"), encoding="utf-8").read()
                desc = svc.GetInterfaceDescription(name)["description"]
                assert desc == text, f"{name}: served text differs from interfaces/{name}.varlink"
                want, got = varlink.Interface(text), varlink.Interface(desc)
                assert want.name == got.name == name
                assert {k: shape(m) for k, m in got.members.items()} == {k: shape(m) for k, m in want.members.items()}


def test_contract_of_doc_protocol_md_is_served(daemon):
    """Every type, method and error of doc/protocol.md (the contract) is served
    with the same shape; additions may only add members, optional parameters and
    fields, reply fields, and enum values after the contract's. When the shared contract checker sits beside the
    checkout (../shared/tools/check-contract.py), it runs as well."""
    contract = [varlink.Interface(b) for b in re.findall(r"```\n(.*?)```", open(PROTOCOL, encoding="utf-8").read(), re.S)
                if "\ninterface " in "\n" + b]
    assert [c.name for c in contract] == ["io.entryd.Entries", "io.entryd.Forms", "io.entryd.Sync"]
    checked = 0
    with varlink.Client(address=f"unix:{daemon}") as client:
        with client.open("org.varlink.service") as svc:
            for want in contract:
                got = varlink.Interface(svc.GetInterfaceDescription(want.name)["description"])
                for name, member in want.members.items():
                    assert name in got.members, f"{want.name}.{name}: not served"
                    kind, fields = shape(member)
                    got_kind, got_fields = shape(got.members[name])
                    assert got_kind == kind, f"{want.name}.{name}: served as {got_kind}, contract says {kind}"
                    for field, t in fields.items():
                        assert compatible(got_fields.get(field), t), \
                            f"{want.name}.{name}.{field}: served {got_fields.get(field)}, contract {t}"
                    # What the project adds inside a contract member must not break a client
                    # written to the contract: a parameter it does not send, a type field it
                    # does not fill (Change is sent back in Apply), an error field it ignores.
                    for field, t in got_fields.items():
                        if field not in fields and not field.startswith("out."):
                            assert t.startswith("?"), f"{want.name}.{name}.{field}: added as {t}; additions must be optional"
                    checked += 1
    assert checked >= 40, f"only {checked} contract members parsed from doc/protocol.md"
    if os.path.exists(SHARED_CHECK):
        r = subprocess.run([sys.executable, SHARED_CHECK, daemon, PROTOCOL], capture_output=True, text=True, timeout=60)
        print(r.stdout)
        assert r.returncode == 0 and " 0 failed" in r.stdout, r.stdout + r.stderr


def render(t):
    """A canonical text for a varlink type as the PyPI parser models it."""
    for py, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "string")):
        if isinstance(t, py):
            return name
    kind = type(t).__name__
    if kind == "_Maybe":
        return "?" + render(t.element_type)
    if kind == "_Array":
        return "[]" + render(t.element_type)
    if kind == "_Dict":
        return "[string]" + render(t.element_type)
    if kind == "_Enum":
        return "(" + ", ".join(t.fields) + ")"
    if kind == "_Struct":
        return "(" + ", ".join(f"{k}: {render(v)}" for k, v in t.fields.items()) + ")"
    if kind == "_CustomType":
        return t.name
    return {"_Object": "object"}.get(kind, kind)


def shape(member):
    """(kind, {field: type}) of a method, type or error."""
    kind = type(member).__name__[1:].lower()
    if kind == "method":
        return kind, {"in." + k: render(v) for k, v in member.in_type.fields.items()} | \
                     {"out." + k: render(v) for k, v in member.out_type.fields.items()}
    t = member.type
    if type(t).__name__ == "_Struct":
        return kind, {k: render(v) for k, v in t.fields.items()}
    return kind, {"": render(t)}


def compatible(served, contract):
    """Same type; an enum may be served with values added after the contract's."""
    if served == contract:
        return True
    enum = lambda t: t is not None and t.startswith("(") and ":" not in t
    if enum(served) and enum(contract):
        got = [v.strip() for v in served[1:-1].split(",")]
        want = [v.strip() for v in contract[1:-1].split(",")]
        return got[:len(want)] == want
    return False


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
            assert entry["display"]["phone"] == "+86 138 0013 8000"
            assert entry["display"]["region"] == "广东省-广州市"
            assert len(entry["version"]) == 16 and entry["deleted"] is False
            page = entries.List(filter={"country": "china"}, limit=10)
            assert entry["id"] in [e["id"] for e in page["entries"]]
            assert page["total"] >= 1


def test_form_fields_say_which_phone_types_and_headers_they_take(daemon):
    """GetForm tells a picker in advance that the registration form's phone
    takes mobile numbers, and which spreadsheet headers name each field."""
    with varlink.Client(address=f"unix:{daemon}") as client:
        with client.open("io.entryd.Forms") as forms:
            fields = {f["name"]: f for f in forms.GetForm(name="registration", locale="en")["form"]["fields"]}
            assert fields["phone"]["phoneTypes"] == ["mobile"]
            assert "手机" in fields["phone"]["headerAliases"] and "tel" in fields["phone"]["headerAliases"]
            assert "phoneTypes" not in fields["email"] and "phoneTypes" not in fields["name"]
            # not-before = now, resolved: now in UTC-12, minutes
            earliest = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=12)
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", fields["appointment"]["notBefore"])
            assert abs((datetime.datetime.strptime(fields["appointment"]["notBefore"], "%Y-%m-%d %H:%M")
                        - earliest.replace(tzinfo=None)).total_seconds()) < 120
            assert "notBefore" not in fields["birthday"] and "notBefore" not in fields["name"]
        with client.open("io.entryd.Entries") as entries:
            try:
                entries.Add(fields={**LI_LEI, "phone": "020 8888 8888"}, locale="en")
                raise AssertionError("a landline was stored in a mobile-only field")
            except varlink.VarlinkError as e:
                problems = e.parameters()["problems"]
                assert [(p["field"], p["code"]) for p in problems] == [("phone", "out-of-range")]
                assert "mobile" in problems[0]["message"]


def test_status_reports_library_versions(daemon):
    """Status declares and serves the versions of the libraries that shape
    stored values; libphonenumber's is the one the phone golden list pins."""
    import phonenumbers
    with varlink.Client(address=f"unix:{daemon}") as client:
        with client.open("io.entryd.Sync") as sync:
            libraries = sync.Status()["libraries"]
            assert libraries["phonenumber"] == phonenumbers.__version__ == "8.12.57"
            assert re.fullmatch(r"\d+\.\d+\.\d+", libraries["idn2"])
    out = subprocess.run([os.path.join(os.environ.get("ENTRYD_BIN_DIR") or os.path.join(ROOT, ".build", "debug"), "entryd"),
                          "--version"], capture_output=True, text=True, check=True).stdout
    assert "\nlibphonenumber 8.12.57\n" in out and f"\nlibidn2 {libraries['idn2']}" in out


def test_check_stored_lists_values_the_rules_refuse(daemon):
    """A value stored under older rules (here brought by a peer's change) that
    libphonenumber refuses stays as it is and is listed by Forms.CheckStored."""
    import time
    entry, node = str(uuid.uuid4()), str(uuid.uuid4())
    hlc = format((int(time.time() * 1000) << 16), "016x")
    fields = {"name": "Old", "birthday": "1990-05-17", "country": "CN", "contact_method": "phone",
              "phone": "+868613800138000"}
    change = {"seq": 1, "node": node, "hlc": hlc, "entry": entry, "form": "registration", "op": "create",
              "fields": fields, "base": {k: "" for k in fields}, "actor": "old-node", "at": "2025-01-01T00:00:00.000Z"}
    with varlink.Client(address=f"unix:{daemon}") as client:
        with client.open("io.entryd.Sync") as sync:
            assert sync.Apply(changes=[change])["applied"] == 1
        with client.open("io.entryd.Forms") as forms:
            problems = [p for p in forms.CheckStored(locale="en")["problems"] if p["id"] == entry]
            assert problems == [{"id": entry, "field": "phone", "value": "+868613800138000", "code": "too-long",
                                 "message": "Phone has too many digits; check the number."}]
        with client.open("io.entryd.Entries") as entries:
            assert entries.Get(id=entry)["entry"]["fields"]["phone"] == "+868613800138000"


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


def test_reason_with_a_control_character_is_refused_and_nothing_changes(daemon):
    """doc/protocol.md "Free text": a reason holding U+0000 was stored cut off at
    the NUL ("before\\0after" kept as "before"). Update, Delete and Restore now
    refuse a reason with a control character or U+2028/U+2029 with
    ValidationFailed naming reason (message in the locale), and the entry, its
    history and the change log are as before; a plain reason is kept whole. An
    applied change whose value holds U+2028 is refused as a malformed change."""
    eid = str(uuid.uuid4())
    with varlink.Client(address=f"unix:{daemon}") as client:
        with client.open("io.entryd.Entries") as entries, client.open("io.entryd.Sync") as sync:
            entries.Add(id=eid, fields=LI_LEI)
            before = (entries.Get(id=eid)["entry"], entries.History(id=eid)["changes"], sync.Status()["seq"])
            for reason in ("before\0after", "a\nb", "a\tb", "a\x7fb", "a\x85b", "a\u2028b", "a\u2029b"):
                for method, kwargs in (("Update", {"fields": {"name": "韩梅梅"}}), ("Delete", {}), ("Restore", {})):
                    for locale, words in (("zh", "原因"), ("en", "The reason")):
                        try:
                            getattr(entries, method)(id=eid, reason=reason, locale=locale, **kwargs)
                        except varlink.VarlinkError as e:
                            assert e.error() == "io.entryd.Entries.ValidationFailed", (method, reason, e.error())
                            [problem] = e.parameters()["problems"]
                            assert (problem["field"], problem["code"]) == ("reason", "invalid-format")
                            assert words in problem["message"], problem
                        else:
                            raise AssertionError(f"{method} took the reason {reason!r}")
            assert (entries.Get(id=eid)["entry"], entries.History(id=eid)["changes"], sync.Status()["seq"]) == before
            entries.Update(id=eid, fields={"name": "韩梅梅"}, reason="客户来电更正 (ticket 42)")
            assert entries.History(id=eid)["changes"][-1]["reason"] == "客户来电更正 (ticket 42)"

            forged = {"seq": 1, "node": str(uuid.uuid4()), "hlc": "01a22c9745290000", "entry": str(uuid.uuid4()),
                      "form": "registration", "op": "create", "fields": {"name": "李\u2028雷"},
                      "base": {"name": ""}, "actor": "a", "at": "2026-11-30T08:15:02.123Z"}
            seq = sync.Status()["seq"]
            for change in (forged, dict(forged, fields={"name": "李雷"}, reason="before\0after")):
                try:
                    sync.Apply(changes=[change])
                except varlink.VarlinkError as e:
                    assert e.error() == "org.varlink.service.InvalidParameter"
                    assert e.parameters()["parameter"] == "changes"
                else:
                    raise AssertionError(f"Apply took {change}")
                try:
                    entries.Get(id=change["entry"])
                except varlink.VarlinkError as e:
                    assert e.error() == "io.entryd.Entries.EntryNotFound"
                else:
                    raise AssertionError("a refused change was stored")
            assert sync.Status()["seq"] == seq


def test_erase_and_find_subject_over_the_wire(daemon):
    """Issue 17: FindSubject with lenient input finds the entry; Erase leaves
    the id, form, stamp, actor and reason; every call on the id then answers
    the typed EntryErased(id, at); bad input is refused and changes nothing."""
    eid = str(uuid.uuid4())
    person = dict(LI_LEI, name="Qwzinterop", phone="13900171234")
    with varlink.Client(address=f"unix:{daemon}") as client:
        with client.open("io.entryd.Entries") as entries, client.open("io.entryd.Sync") as sync:
            entries.Add(id=eid, fields=person)
            found = entries.FindSubject(phone="139 0017 1234")["entries"]
            assert {"id": eid, "form": "registration"} in found
            assert entries.FindSubject(name="qwzinterop", birthday="1990-05-17")["entries"] == [{"id": eid, "form": "registration"}]

            def error_of(call, **kwargs):
                try:
                    call(**kwargs)
                except varlink.VarlinkError as e:
                    return e.error(), e.parameters()
                raise AssertionError(f"{call} succeeded")

            name, params = error_of(entries.Erase, id=eid)
            assert name == "org.varlink.service.InvalidParameter" and params["parameter"] == "reason"
            name, _ = error_of(entries.Erase, id=str(uuid.uuid4()), reason="r")
            assert name == "io.entryd.Entries.EntryNotFound"
            assert entries.Get(id=eid)["entry"]["fields"]["name"] == "Qwzinterop", "a refused Erase changed nothing"

            reply = entries.Erase(id=eid, reason="interop request")
            erasure = reply["erasure"]
            assert erasure["entry"] == eid and erasure["form"] == "registration" and erasure["reason"] == "interop request"
            assert re.fullmatch(r"[0-9a-f]{16}", erasure["hlc"]) and isinstance(reply["walTruncated"], bool)
            for call, kwargs in ((entries.Get, {"id": eid}), (entries.Update, {"id": eid, "fields": {"name": "x"}}),
                                 (entries.Delete, {"id": eid}), (entries.Restore, {"id": eid}),
                                 (entries.Add, {"id": eid, "fields": person})):
                name, params = error_of(call, **kwargs)
                assert name == "io.entryd.Entries.EntryErased" and params == {"id": eid, "at": erasure["at"]}, (call, name, params)
            history = entries.History(id=eid)["changes"]
            assert [c["op"] for c in history] == ["erase"] and history[0]["fields"] == {} and history[0]["base"] == {}
            assert all(e["id"] != eid for e in entries.List(includeDeleted=True, limit=1000)["entries"])
            assert entries.FindSubject(phone="+8613900171234")["entries"] == []
            assert any(e["entry"] == eid for e in entries.Erasures()["erasures"])
            verified = entries.VerifyErasure(id=eid, values=["+8613900171234", "Qwzinterop"])
            for _ in range(600):  # the purge after the erasure, while pending (VerifyErasure's purge)
                if verified.get("purge") is None:
                    break
                assert set(verified["purge"]) <= {"pagesDone", "pages", "secondsLeft"}, verified
                time.sleep(0.1)
                verified = entries.VerifyErasure(id=eid, values=["+8613900171234", "Qwzinterop"])
            assert verified.get("purge") is None and verified["payloadRows"] == 0 and all(f["hits"] == 0 for f in verified["files"]), verified
            status = sync.Status()
            assert status["erasures"] >= 1 and status["refusedErased"] >= 0
            change = sync.Changes(since=0)["changes"]
            assert [c["op"] for c in change if c["entry"] == eid] == ["erase"]


def test_compact_status_and_history_over_the_wire(daemon):
    """Issue 17 item 5: Compact answers its figures; Status.compaction and
    History.compactedThrough say what it did; Changes serves what is left, with
    seq gaps, and the superseded mark on the kept create."""
    eid = str(uuid.uuid4())
    with varlink.Client(address=f"unix:{daemon}") as client:
        with client.open("io.entryd.Entries") as entries, client.open("io.entryd.Sync") as sync:
            entries.Add(id=eid, fields=dict(LI_LEI, name="Qwzcompact"))
            for i in range(3):
                entries.Update(id=eid, fields={"name": f"Qwzcompact{i}"})
            reply = sync.Compact()
            assert reply["removed"] >= 2 and isinstance(reply["bytesFreed"], int) and reply["expired"] == []
            seq = sync.Status()["seq"]
            assert reply["horizon"] == seq, "no peers: the whole log"
            status = sync.Status()["compaction"]
            assert status["removed"] == reply["removed"] and status["horizon"] == seq and "at" in status
            history = entries.History(id=eid)
            assert history["compactedThrough"] == seq
            mine = [c for c in history["changes"]]
            assert [c["op"] for c in mine] == ["create", "update"] and mine[-1]["fields"]["name"] == "Qwzcompact2"
            assert "name" in mine[0]["superseded"], "the create stands for its other fields and is marked for name"
            changes = sync.Changes(since=0)
            assert changes["last"] == seq and [c["seq"] for c in changes["changes"] if c["entry"] == eid] == [c["seq"] for c in mine]
