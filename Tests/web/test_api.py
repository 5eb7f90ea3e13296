"""The HTTP API of entryd-web against a real entryd: every method exposed over
HTTP, each error with its status, sessions, roles, the actor entryd records,
the live feed, TLS and the refusal to listen beyond loopback in clear."""
import collections, json, os, signal, socket, ssl, subprocess, threading, time, urllib.request, uuid

import pytest

from conftest import BIN, Gateway, free_port, start_on_free_port

GOOD = {"name": "李雷", "birthday": "1990-05-17", "country": "CN", "province": "广东", "city": "广州",
        "contact_method": "phone", "phone": "13800138000"}


def uuid7():
    ms = int(time.time() * 1000)
    raw = bytearray(ms.to_bytes(6, "big") + os.urandom(10))
    raw[6] = 0x70 | (raw[6] & 0x0F)
    raw[8] = 0x80 | (raw[8] & 0x3F)
    return str(uuid.UUID(bytes=bytes(raw)))


@pytest.fixture(scope="module")
def tokens(gateway):
    return {name: gateway.login(name) for name in ("ada", "rita", "root-admin")}


def test_every_exposed_method_against_entryd(gateway, tokens):
    ada, admin = tokens["ada"], tokens["root-admin"]
    ok = lambda method, params, token=ada: _ok(gateway, method, params, token)
    assert "io.entryd.Entries" in ok("org.varlink.service.GetInfo", {})["interfaces"]
    assert "interface io.entryd.Forms" in ok("org.varlink.service.GetInterfaceDescription", {"interface": "io.entryd.Forms"})["description"]
    assert [f["name"] for f in ok("io.entryd.Forms.ListForms", {"locale": "en"})["forms"]] == ["registration"]
    form = ok("io.entryd.Forms.GetForm", {"locale": "zh"})["form"]
    assert "province" in [f["name"] for f in form["fields"]]
    cities = ok("io.entryd.Forms.Options", {"field": "city", "parent": "440000", "locale": "zh"})["options"]
    assert "广州市" in [o["label"] for o in cities]
    check = ok("io.entryd.Forms.Check", {"fields": {"birthday": "1990年5月17日", "country": "中国"}, "locale": "en"})
    assert check["fields"]["birthday"] == "1990-05-17" and check["fields"]["country"] == "CN"
    assert ok("io.entryd.Forms.CheckStored", {}, admin)["problems"] == []

    entry_id = uuid7()
    entry = ok("io.entryd.Entries.Add", {"id": entry_id, "fields": dict(GOOD, phone="13912345670"), "locale": "en"})["entry"]
    assert entry["id"] == entry_id and entry["fields"]["city"] == "440100"
    assert entry["createdBy"] == "web:ada"
    assert ok("io.entryd.Entries.Get", {"id": entry_id})["entry"]["version"] == entry["version"]
    listed = ok("io.entryd.Entries.List", {"filter": {"text": "李雷"}})
    assert entry_id in [e["id"] for e in listed["entries"]]
    updated = ok("io.entryd.Entries.Update", {"id": entry_id, "fields": {"city": "深圳"}, "ifVersion": entry["version"]})["entry"]
    assert updated["fields"]["city"] == "440300" and updated["updatedBy"] == "web:ada"
    assert ok("io.entryd.Entries.Delete", {"id": entry_id, "reason": "test"})["entry"]["deleted"] is True
    assert ok("io.entryd.Entries.Restore", {"id": entry_id})["entry"]["deleted"] is False
    history = ok("io.entryd.Entries.History", {"id": entry_id})["changes"]
    assert [c["op"] for c in history] == ["create", "update", "delete", "restore"]
    assert {c["actor"] for c in history} == {"web:ada"}
    imported = ok("io.entryd.Entries.Import", {"entries": [{"fields": dict(GOOD, name="韩梅梅")}]})
    assert imported["added"] == 1 and imported["rejected"] == []

    status = ok("io.entryd.Sync.Status", {}, tokens["rita"])
    assert status["node"]
    changes = ok("io.entryd.Sync.Changes", {"since": 0}, tokens["rita"])
    assert any(c["entry"] == entry_id for c in changes["changes"])
    assert ok("io.entryd.Sync.ListConflicts", {}, tokens["rita"])["conflicts"] == []

    found = ok("io.entryd.Entries.FindSubject", {"phone": "13912345670"}, admin)["entries"]
    assert entry_id in [e["id"] for e in found]
    erased = ok("io.entryd.Entries.Erase", {"id": entry_id, "reason": "subject asked"}, admin)
    assert erased["erasure"]["entry"] == entry_id and erased["erasure"]["actor"] == "web:root-admin"
    assert entry_id in [e["entry"] for e in ok("io.entryd.Entries.Erasures", {}, tokens["rita"])["erasures"]]
    proof = ok("io.entryd.Entries.VerifyErasure", {"id": entry_id, "values": ["+8613912345670", "13912345670"]}, admin)
    for _ in range(600):  # the purge after the erasure, while pending (VerifyErasure's purge)
        if proof.get("purge") is None:
            break
        time.sleep(0.1)
        proof = ok("io.entryd.Entries.VerifyErasure", {"id": entry_id, "values": ["+8613912345670", "13912345670"]}, admin)
    assert proof.get("purge") is None and proof["payloadRows"] == 0 and all(f["hits"] == 0 for f in proof["files"])
    assert ok("io.entryd.Sync.Compact", {}, admin)["removed"] >= 0
    # entryd itself records the actor: entryctl sees web:ada on the second entry
    stored = json.loads(gateway.entryctl("list", "--format", "json"))
    assert "web:ada" in {e["createdBy"] for e in stored}


def _ok(gateway, method, params, token):
    status, body = gateway.call(method, params, token)
    assert status == 200, (method, status, body)
    return body


@pytest.mark.parametrize("method", ["io.entryd.Sync.Apply", "io.entryd.Sync.SyncPeer", "io.entryd.Sync.HeldFrom",
                                    "io.entryd.Entries.Backup", "io.entryd.Sync.Metrics", "io.entryd.Nothing.Here"])
def test_socket_only_and_unknown_methods_are_404(gateway, tokens, method):
    status, body = gateway.call(method, {"changes": [], "peer": "x", "node": "x"}, tokens["root-admin"])
    assert status == 404
    assert body["error"] == "org.varlink.service.MethodNotFound"


def test_each_error_with_its_status(gateway, tokens):
    ada = tokens["ada"]
    cases = [
        ("io.entryd.Entries.Add", {"fields": dict(GOOD, birthday="1990-02-30"), "locale": "zh"}, 400, "io.entryd.Entries.ValidationFailed"),
        ("io.entryd.Entries.Get", {"id": 5}, 400, "org.varlink.service.InvalidParameter"),
        ("io.entryd.Entries.Get", {"id": uuid7()}, 404, "io.entryd.Entries.EntryNotFound"),
        ("io.entryd.Forms.GetForm", {"name": "nope"}, 404, "io.entryd.Forms.FormNotFound"),
        ("io.entryd.Entries.Add", {"form": "nope", "fields": {}}, 404, "io.entryd.Entries.FormNotFound"),
        ("io.entryd.Entries.Import", {"entries": [{"fields": GOOD}] * 6}, 413, "io.entryd.Entries.LimitExceeded"),
    ]
    for method, params, status, name in cases:
        got, body = gateway.call(method, params, ada)
        assert (got, body["error"]) == (status, name), (method, body)
    problems = gateway.call(cases[0][0], cases[0][1], ada)[1]["parameters"]["problems"]
    assert problems[0]["field"] == "birthday" and not problems[0]["message"].isascii()  # in zh, as asked

    entry_id = uuid7()
    first = _ok(gateway, "io.entryd.Entries.Add", {"id": entry_id, "fields": GOOD}, ada)["entry"]
    stored = _ok(gateway, "io.entryd.Entries.Update", {"id": entry_id, "fields": {"city": "深圳"}}, ada)["entry"]
    status, body = gateway.call("io.entryd.Entries.Add", {"id": entry_id, "fields": dict(GOOD, name="别人")}, ada)
    assert (status, body["error"]) == (409, "io.entryd.Entries.EntryExists")
    status, body = gateway.call("io.entryd.Entries.Update", {"id": entry_id, "fields": {"city": "珠海"}, "ifVersion": first["version"]}, ada)
    assert (status, body["error"]) == (409, "io.entryd.Entries.VersionMismatch")
    # nothing stored was changed by the refusals
    assert _ok(gateway, "io.entryd.Entries.Get", {"id": entry_id}, ada)["entry"] == stored


def test_a_reason_the_openapi_pattern_refuses_is_refused_as_over_varlink(gateway, tokens):
    """doc/protocol.md "Free text": the document states reason's rule as a pattern
    (Update, Delete, Restore); a reason it refuses gets 400 ValidationFailed naming
    reason, the same reply entryd gives over varlink, and nothing stored changes."""
    import re
    ada = tokens["ada"]
    status, doc, _ = gateway.request("GET", "/api/v1/openapi.json", None, token=ada)
    assert status == 200
    schemas = doc["components"]["schemas"]
    entry_id = uuid7()
    _ok(gateway, "io.entryd.Entries.Add", {"id": entry_id, "fields": GOOD}, ada)
    before = (_ok(gateway, "io.entryd.Entries.Get", {"id": entry_id}, ada),
              _ok(gateway, "io.entryd.Entries.History", {"id": entry_id}, ada))
    for method, extra in (("Update", {"fields": {"city": "深圳"}}), ("Delete", {}), ("Restore", {})):
        pattern = schemas[f"io.entryd.Entries.{method}.Parameters"]["properties"]["reason"]["pattern"]
        # ECMA 262's $ is the end of the input: Python's \Z.
        rule = re.compile(pattern[:-1] + r"\Z")
        assert rule.search("客户来电更正 (ticket 42)")
        for reason in ("before\0after", "a\nb", "a\x7fb", "a\x9fb", "a\u2028b", "a\u2029b", "ends\n"):
            assert not rule.search(reason), (method, reason)
            status, body = gateway.call(f"io.entryd.Entries.{method}", dict(extra, id=entry_id, reason=reason, locale="en"), ada)
            assert (status, body["error"]) == (400, "io.entryd.Entries.ValidationFailed"), (method, reason, body)
            [problem] = body["parameters"]["problems"]
            assert (problem["field"], problem["code"]) == ("reason", "invalid-format")
            assert problem["message"].startswith("The reason")
    assert (_ok(gateway, "io.entryd.Entries.Get", {"id": entry_id}, ada),
            _ok(gateway, "io.entryd.Entries.History", {"id": entry_id}, ada)) == before


def test_concurrent_adds_each_get_their_own_reply(gateway, tokens):
    """entryd-web carries Adds from many requests on a few shared connections to entryd, many at a time
    on each; every request must get the reply to its own call: its own entry, recorded for its own web
    user, and a refusal only for the calls that were refused."""
    kiosk = gateway.login("kiosk")
    who = [("ada", tokens["ada"]), ("root-admin", tokens["root-admin"]), ("kiosk", kiosk)]
    calls = []
    for n in range(60):
        user, token = who[n % len(who)]
        bad = n % 7 == 3
        fields = dict(GOOD, name=f"并发{n}", phone=f"139{n:08d}", birthday="1990-02-30" if bad else GOOD["birthday"])
        calls.append((uuid7(), user, token, fields, bad))
    results = [None] * len(calls)
    start = threading.Barrier(20)

    def worker(k):
        start.wait()
        for i in range(k, len(calls), 20):
            entry_id, _, token, fields, _ = calls[i]
            results[i] = gateway.call("io.entryd.Entries.Add", {"id": entry_id, "fields": fields}, token)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (entry_id, user, _, fields, bad), (status, body) in zip(calls, results):
        if bad:
            assert (status, body["error"]) == (400, "io.entryd.Entries.ValidationFailed"), body
            continue
        assert status == 200, body
        entry = body["entry"]
        assert (entry["id"], entry["createdBy"], entry["fields"]["name"]) == (entry_id, "web:" + user, fields["name"])
    stored = gateway.call("io.entryd.Entries.Get", {"id": calls[0][0]}, tokens["ada"])
    assert stored[0] == 200 and stored[1]["entry"]["fields"]["name"] == calls[0][3]["name"]


def test_authentication_and_roles(gateway, tokens):
    assert gateway.call("io.entryd.Entries.List", {})[0] == 401
    assert gateway.call("io.entryd.Entries.List", {}, "f" * 64)[0] == 401
    status, body = gateway.call("io.entryd.Entries.Add", {"fields": GOOD}, tokens["rita"])
    assert (status, body["error"], body["parameters"]["role"]) == (403, "org.varlink.service.PermissionDenied", "write")
    status, body = gateway.call("io.entryd.Entries.Erase", {"id": uuid7()}, tokens["ada"])
    assert (status, body["parameters"]["role"]) == (403, "admin")
    status, body, _ = gateway.request("POST", "/api/v1/login", {"user": "ada", "password": "wrong password"})
    assert (status, body["error"]) == (401, "io.entryd.web.LoginFailed")


def test_cookie_session_needs_the_csrf_token(gateway):
    status, body, headers = gateway.request("POST", "/api/v1/login", {"user": "ada", "password": "correct horse 1"})
    cookie = headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Secure" not in cookie
    jar = {"Cookie": cookie.split(";")[0]}
    status, body, _ = gateway.request("POST", "/api/v1/io.entryd.Entries.List", {}, headers=jar)
    assert (status, body["error"]) == (403, "io.entryd.web.CSRFRejected")
    status, body, _ = gateway.request("POST", "/api/v1/io.entryd.Entries.List", {}, headers=dict(jar, **{"X-CSRF-Token": body and "x"}))
    assert status == 403
    status, session, _ = gateway.request("GET", "/api/v1/session", headers=jar)
    assert status == 200 and session["user"] == "ada" and session["role"] == "write"
    status, body, _ = gateway.request("POST", "/api/v1/io.entryd.Entries.List", {}, headers=dict(jar, **{"X-CSRF-Token": session["csrf"]}))
    assert status == 200 and "entries" in body


def test_sse_delivers_another_clients_add(gateway, tokens):
    """The live feed: rita watches, ada adds; the event must come within 5 s (the delay is printed)."""
    since = _ok(gateway, "io.entryd.Sync.Changes", {"since": 0, "limit": 1}, tokens["rita"])
    status_all = _ok(gateway, "io.entryd.Sync.Status", {}, tokens["rita"])
    s = socket.create_connection(("127.0.0.1", gateway.port), timeout=10)
    s.sendall((f"GET /api/v1/io.entryd.Sync.Changes?since={status_all.get('seq', 0)} HTTP/1.1\r\nHost: x\r\n"
               f"Authorization: Bearer {tokens['rita']}\r\nAccept: text/event-stream\r\n\r\n").encode())
    buffer = b""
    while b"event: changes" not in buffer:  # the backlog reply comes at once
        buffer += s.recv(65536)
    assert b"200 OK" in buffer.split(b"\r\n")[0] and b"text/event-stream" in buffer
    entry_id = uuid7()
    started = time.monotonic()
    _ok(gateway, "io.entryd.Entries.Add", {"id": entry_id, "fields": dict(GOOD, name="王五")}, tokens["ada"])
    while entry_id.encode() not in buffer:
        chunk = s.recv(65536)
        assert chunk, "stream closed"
        buffer += chunk
        assert time.monotonic() - started < 5, "no event within 5 s"
    delay = time.monotonic() - started
    print(f"\nSSE: another client's Add arrived {delay * 1000:.1f} ms after it was answered")
    # idle past the connection idle-timeout (3 s): keep-alives hold the feed open
    buffer = b""
    idle_until = time.monotonic() + 4.5
    while time.monotonic() < idle_until:
        s.settimeout(max(0.1, idle_until - time.monotonic()))
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        assert chunk, "the feed was closed while idle"
        buffer += chunk
    assert b": keep-alive" in buffer
    later = uuid7()
    _ok(gateway, "io.entryd.Entries.Add", {"id": later, "fields": dict(GOOD, name="赵六")}, tokens["ada"])
    s.settimeout(5)
    while later.encode() not in buffer:
        chunk = s.recv(65536)
        assert chunk, "stream closed"
        buffer += chunk
    s.close()


def _open_feed(gateway, token, query, last_event_id=None):
    """A raw SSE connection to GET Changes; returns (socket, what came up to and including the first event)."""
    s = socket.create_connection(("127.0.0.1", gateway.port), timeout=10)
    extra = f"Last-Event-ID: {last_event_id}\r\n" if last_event_id is not None else ""
    s.sendall((f"GET /api/v1/io.entryd.Sync.Changes?{query} HTTP/1.1\r\nHost: x\r\n"
               f"Authorization: Bearer {token}\r\nAccept: text/event-stream\r\n{extra}\r\n").encode())
    buffer = b""
    while b"\n\n" not in buffer.partition(b"\r\n\r\n")[2]:
        chunk = s.recv(65536)
        assert chunk, buffer
        buffer += chunk
    return s, buffer


def _events(raw):
    """The (event, data) pairs of an SSE body (chunked framing is dropped line by line)."""
    body = raw.partition(b"\r\n\r\n")[2].decode("utf-8", "replace")
    found, event = [], None
    for line in body.split("\n"):
        if line.startswith("event: "):
            event = line[7:].strip()
        elif line.startswith("data: ") and event:
            found.append((event, json.loads(line[6:])))
            event = None
    return found


@pytest.mark.parametrize("ending", ["logout", "password", "removal"])
def test_feed_sends_nothing_after_its_session_ends(gateway, tokens, ending):
    """A feed waiting for the next batch when its session ends (logout, a new password, the user removed)
    sends the error event and nothing of the batch committed after."""
    name = "watcher-" + ending
    add = [os.path.join(BIN, "entryctl"), "web-user", "add", name, "--role", "read", "--users", gateway.users]
    subprocess.run(add, input=b"watch pass 4", check=True, capture_output=True)
    time.sleep(1.1)  # the users file is checked at most once a second for a login
    status, login, headers = gateway.request("POST", "/api/v1/login", {"user": name, "password": "watch pass 4"})
    assert status == 200, login
    seq = _ok(gateway, "io.entryd.Sync.Status", {}, tokens["rita"]).get("seq", 0)
    s, buffer = _open_feed(gateway, login["token"], f"since={seq}")
    assert [e for e, _ in _events(buffer)] == ["changes"]
    if ending == "logout":
        status, _, _ = gateway.request("POST", "/api/v1/logout", {}, token=login["token"],
                                       headers={"X-CSRF-Token": login["csrf"]})
        assert status == 200
    elif ending == "password":
        subprocess.run(add + ["--replace"], input=b"a new pass 5", check=True, capture_output=True)
    else:
        subprocess.run([os.path.join(BIN, "entryctl"), "web-user", "remove", name, "--users", gateway.users],
                       check=True, capture_output=True)
    entry_id = uuid7()
    _ok(gateway, "io.entryd.Entries.Add", {"id": entry_id, "fields": dict(GOOD, name="赵六")}, tokens["ada"])
    s.settimeout(10)
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        buffer += chunk
    s.close()
    assert entry_id.encode() not in buffer
    events = _events(buffer)
    assert [e for e, _ in events] == ["changes", "error"], events
    assert events[-1][1]["error"] == "io.entryd.web.AuthenticationRequired"


def test_feed_resumes_after_last_event_id_not_since(gateway, tokens):
    """A browser reconnects to the URL it opened (?since=0) with Last-Event-ID: the id wins, nothing is sent again."""
    for name in ("甲", "乙", "丙"):
        _ok(gateway, "io.entryd.Entries.Add", {"fields": dict(GOOD, name=name)}, tokens["ada"])
    seq = _ok(gateway, "io.entryd.Sync.Status", {}, tokens["rita"])["seq"]
    resume = seq - 2
    s, buffer = _open_feed(gateway, tokens["rita"], "since=0", last_event_id=resume)
    s.close()
    (event, data), = _events(buffer)
    assert event == "changes"
    assert [c["seq"] for c in data["changes"]] == [resume + 1, resume + 2]
    # without Last-Event-ID, since counts
    s, buffer = _open_feed(gateway, tokens["rita"], f"since={seq - 1}")
    s.close()
    assert [c["seq"] for c in _events(buffer)[0][1]["changes"]] == [seq]
    status, body, _ = gateway.request("GET", "/api/v1/io.entryd.Sync.Changes?since=0", token=tokens["rita"],
                                      headers={"Last-Event-ID": "three"})
    assert (status, body["error"]) == (400, "io.entryd.web.BadRequest")


def test_openapi_describes_the_exposed_methods(gateway):
    status, doc, _ = gateway.request("GET", "/api/v1/openapi.json")
    assert status == 200 and doc["openapi"].startswith("3.")
    paths = doc["paths"]
    assert "/api/v1/io.entryd.Entries.Add" in paths and "/api/v1/io.entryd.Forms.Check" in paths
    assert not any(p.endswith(("Sync.Apply", "Sync.SyncPeer", "Entries.Backup")) for p in paths)


def test_healthz_says_nothing_else(gateway):
    status, body, headers = gateway.request("GET", "/healthz")
    assert status == 200 and body == b"ok\n"


def _openssl_pair(d):
    key, cert = os.path.join(d, "key.pem"), os.path.join(d, "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    return key, cert


def test_tls_serves_https_with_secure_cookies(gateway, tmp_path):
    key, cert = _openssl_pair(str(tmp_path))
    context = ssl.create_default_context(cafile=cert)

    def healthy(port):
        with urllib.request.urlopen(f"https://127.0.0.1:{port}/healthz", context=context, timeout=2) as r:
            return r.status == 200

    web, port = start_on_free_port(
        lambda port: [os.path.join(BIN, "entryd-web"), "--socket", gateway.socket, "--users", gateway.users,
                      "--listen", f"0.0.0.0:{port}", "--tls-certificate", cert, "--tls-key", key],
        healthy, "entryd-web with TLS", host="0.0.0.0")
    try:
        req = urllib.request.Request(f"https://127.0.0.1:{port}/api/v1/login", method="POST",
                                     data=json.dumps({"user": "ada", "password": "correct horse 1"}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, context=context, timeout=10) as r:
            assert "; Secure" in r.headers["Set-Cookie"]
            assert r.headers["Strict-Transport-Security"]
        # plain HTTP to the TLS port gets no answer in clear
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        try:
            reply = s.recv(100)
        except OSError:
            reply = b""
        assert not reply.startswith(b"HTTP/1.1 200")
        s.close()
    finally:
        web.terminate()
        assert web.wait(timeout=15) == 0


def test_refuses_to_listen_beyond_loopback_in_clear(gateway):
    r = subprocess.run([os.path.join(BIN, "entryd-web"), "--socket", gateway.socket, "--users", gateway.users,
                        "--listen", f"0.0.0.0:{free_port('0.0.0.0')}"], capture_output=True, timeout=20)
    assert r.returncode == 78
    assert b"without TLS" in r.stderr and b"--behind-proxy" in r.stderr


def test_entryd_down_is_503_and_back_is_200(tmp_path):
    d = str(tmp_path)
    g = Gateway(d)
    try:
        token = g.login("ada")
        # An Add first: it opens the shared connections Adds travel on, which must notice entryd going.
        assert g.call("io.entryd.Entries.Add", {"fields": GOOD}, token)[0] == 200
        g.entryd.terminate()
        assert g.entryd.wait(timeout=15) == 0
        status, body = g.call("io.entryd.Entries.List", {}, token)
        assert (status, body["error"]) == (503, "io.entryd.web.DaemonUnreachable")
        status, body = g.call("io.entryd.Entries.Add", {"fields": dict(GOOD, name="韩梅梅")}, token)
        assert (status, body["error"]) == (503, "io.entryd.web.DaemonUnreachable")
        g.entryd = subprocess.Popen([os.path.join(BIN, "entryd"), "--config", os.path.join(d, "entryd.conf"),
                                     "--socket", g.socket, "--db", os.path.join(d, "entries.db")], stderr=subprocess.PIPE)
        deadline = time.time() + 20
        while True:
            status, body = g.call("io.entryd.Entries.List", {}, token)
            if status == 200:
                break
            assert time.time() < deadline, body
            time.sleep(0.1)
        assert "entries" in body
        status, body = g.call("io.entryd.Entries.Add", {"fields": dict(GOOD, name="韩梅梅")}, token)
        assert status == 200 and body["entry"]["createdBy"] == "web:ada", body
    finally:
        g.stop()


def test_an_oversized_call_fails_alone(tmp_path):
    """entryd closes a connection after a message over its max-message-size. An Add too big
    for it answers 413 every time, and the other requests beside it never meet the closed
    connection (a 503 DaemonUnreachable while entryd is up)."""
    g = Gateway(str(tmp_path), settings="max-batch = 5\nmax-message-size = 4096\n")
    try:
        token = g.login("ada")
        outcomes, lock = [], threading.Lock()
        deadline = time.time() + 3

        def hammer(method, params):
            while time.time() < deadline:
                status, body = g.call(method, params, token)
                with lock:
                    outcomes.append((method, status, body.get("error")))

        big = ("io.entryd.Entries.Add", {"fields": dict(GOOD, name="李" * 3000)})
        small = ("io.entryd.Forms.GetForm", {"name": "registration"})
        threads = [threading.Thread(target=hammer, args=big if i % 2 else small) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        adds = [o for o in outcomes if o[0] == big[0]]
        forms = [o for o in outcomes if o[0] == small[0]]
        assert adds and forms
        assert {(s, e) for _, s, e in adds} == {(413, "io.entryd.Entries.LimitExceeded")}, collections.Counter(adds)
        assert {s for _, s, _ in forms} == {200}, collections.Counter(forms)
    finally:
        g.stop()


def test_entryd_without_the_gateway_role_is_503_gateway_not_configured(tmp_path):
    """entryd.conf stops naming entryd-web's user as gateway (reload): the pooled connections lose
    the standing at once, calls answer 503 GatewayNotConfigured (not a PermissionDenied that blames the
    web user's role); named again (reload), the same pooled connections serve."""
    d = str(tmp_path)
    g = Gateway(d)
    conf = os.path.join(d, "entryd.conf")
    original = open(conf).read()
    try:
        token = g.login("ada")
        assert g.call("io.entryd.Entries.List", {}, token)[0] == 200
        with open(conf, "w") as f:
            f.write("max-batch = 5\n[roles]\n")
        g.entryd.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        while True:
            status, body = g.call("io.entryd.Entries.Add", {"fields": GOOD}, token)
            if status != 200:
                break
            assert time.time() < deadline, "the reload did not take the gateway role away"
            time.sleep(0.1)
        assert (status, body["error"]) == (503, "io.entryd.web.GatewayNotConfigured")
        assert body["parameters"]["user"]
        with open(conf, "w") as f:
            f.write(original)
        g.entryd.send_signal(signal.SIGHUP)
        while True:
            status, body = g.call("io.entryd.Entries.Add", {"fields": GOOD}, token)
            if status == 200:
                break
            assert time.time() < deadline + 10, body
            time.sleep(0.1)
        assert body["entry"]["createdBy"] == "web:ada"
    finally:
        g.stop()


def test_a_dropped_feed_frees_its_slot_within_seconds(tmp_path):
    """A feed whose client went away is noticed when a keep-alive (every 5 s
    at most, whatever idle-timeout) fails to go out: the first write after a
    plain close may still be taken by the kernel, the second fails, so the
    connection slots of its address (max-connections-per-address) come back
    within two keep-alives, not the 15-30 s of keep-alives every 15 s."""
    g = Gateway(str(tmp_path), web_config="idle-timeout = 30\nmax-connections-per-address = 2\n")
    try:
        token = g.login("rita")
        feeds = []
        for _ in range(2):
            s = socket.create_connection(("127.0.0.1", g.port), timeout=10)
            s.sendall((f"GET /api/v1/io.entryd.Sync.Changes?since=0 HTTP/1.1\r\nHost: x\r\n"
                       f"Authorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n").encode())
            buffer = b""
            while b"\r\n\r\n" not in buffer:  # the response header: the feed is open
                buffer += s.recv(65536)
            assert buffer.startswith(b"HTTP/1.1 200"), buffer
            feeds.append(s)
        closed = time.monotonic()
        for s in feeds:
            s.close()
        while True:
            try:
                status, _, _ = g.request("GET", "/healthz")
            except OSError:
                status = 0
            if status == 200:
                break
            assert time.monotonic() - closed < 12.5, f"the dropped feeds still hold their slots (last answer {status})"
            time.sleep(0.25)
    finally:
        g.stop()
