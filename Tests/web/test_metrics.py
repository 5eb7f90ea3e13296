"""GET /metrics on entryd-web (issue 35): entryd's Metrics call in
Prometheus's text format, read with the PyPI prometheus-client parser; the
counters move with an Add, a refused Add and a sync; who may read it."""
import os, socket, subprocess, time, urllib.request, urllib.error

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import BIN, Gateway, wait_for

ADD = "io.entryd.Entries.Add"
GOOD = {"name": "指标甲", "birthday": "1990-05-17", "country": "CN", "province": "440000", "city": "440100",
        "contact_method": "phone", "phone": "13800138000"}


def samples(text):
    """{(name, frozenset(labels)): value} of every sample of the exposition TEXT."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(found, name, **labels):
    return found.get((name, frozenset(labels.items())), 0.0)


def scrape(g, headers=None):
    req = urllib.request.Request(g.base + "/metrics", headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


class Office:
    """The configured peer 'office': a second entryd, started when the test says."""

    def __init__(self, directory):
        self.dir = directory
        self.socket = os.path.join(directory, "entryd.sock")
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([os.path.join(BIN, "entryd"), "--socket", self.socket,
                                      "--db", os.path.join(self.dir, "entries.db")], stderr=subprocess.PIPE)
        wait_for(lambda: socket.socket(socket.AF_UNIX).connect(self.socket) is None, "entryd (office)", self.proc)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=15)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """entryd-web over an entryd whose configured peer 'office' (synced by the
    scheduler every second and after each write) is not up until the test starts it."""
    office = Office(str(tmp_path_factory.mktemp("office")))
    g = Gateway(str(tmp_path_factory.mktemp("metrics")),
                entryd_config=f"[peer office]\naddress = unix:{office.socket}\ninterval = 1\n")
    g.office = office
    yield g
    g.stop()
    office.stop()


def scrape_until(g, done, what, timeout=30):
    """Scrapes until done(samples) holds; returns the samples and the text."""
    deadline = time.time() + timeout
    while True:
        _, _, text = scrape(g)
        found = samples(text)
        if done(found):
            return found, text
        assert time.time() < deadline, f"{what}: not within {timeout} s:\n{text}"
        time.sleep(0.2)


def test_metrics_move_with_an_add_a_refusal_and_a_sync(pair):
    status, headers, before_text = scrape(pair)
    assert status == 200, before_text
    assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    before = samples(before_text)
    assert ("entryd_storage_failures_total", frozenset()) in before, "served at 0 from the start"
    info = [(dict(ls), v) for (n, ls), v in before.items() if n == "entryd_info"]
    assert len(info) == 1 and info[0][1] == 1
    assert info[0][0]["version"] and len(info[0][0]["incarnation"]) == 36
    ada = pair.login("ada")
    status, body = pair.call(ADD, {"fields": GOOD}, token=ada)
    assert status == 200, body
    status, body = pair.call(ADD, {"fields": {"name": "指标乙", "birthday": "1990-02-30", "bogus": "x"}}, token=ada)
    assert status == 400 and body["error"] == "io.entryd.Entries.ValidationFailed", body
    status, _, mid_text = scrape(pair)
    mid = samples(mid_text)
    assert value(mid, "entryd_calls_total", method=ADD, outcome="ok") == value(before, "entryd_calls_total", method=ADD, outcome="ok") + 1
    refused = "io.entryd.Entries.ValidationFailed"
    assert value(mid, "entryd_calls_total", method=ADD, outcome=refused) == value(before, "entryd_calls_total", method=ADD, outcome=refused) + 1
    # The refused Add's problems, by field and code; a field the form lacks is "" (no series per typo).
    assert value(mid, "entryd_validation_problems_total", field="birthday", code="invalid-format") == \
        value(before, "entryd_validation_problems_total", field="birthday", code="invalid-format") + 1
    assert value(mid, "entryd_validation_problems_total", field="", code="unknown-field") == \
        value(before, "entryd_validation_problems_total", field="", code="unknown-field") + 1
    assert not any(dict(ls).get("field") == "bogus" for (n, ls) in mid)
    assert value(mid, "entryd_write_rounds_total") >= value(before, "entryd_write_rounds_total") + 1
    assert value(mid, "entryd_commit_duration_seconds_count") == value(mid, "entryd_write_rounds_total")
    assert value(mid, "entryd_entries") == value(before, "entryd_entries") + 1
    # office is down: the scheduler's syncs fail, and the new entry waits for it.
    mid, _ = scrape_until(pair, lambda f: value(f, "entryd_peer_sync_runs_total", peer="office", outcome="failed") >= 1,
                          "a failed sync with office")
    assert value(mid, "entryd_peer_pending_changes", peer="office") >= 1
    assert value(mid, "entryd_peer_sync_runs_total", peer="office", outcome="ok") == 0
    assert ("entryd_peer_last_success_timestamp_seconds", frozenset({("peer", "office")})) not in mid

    pair.office.start()
    after, after_text = scrape_until(
        pair, lambda f: value(f, "entryd_peer_sync_runs_total", peer="office", outcome="ok") >= 1, "a good sync with office")
    assert value(after, "entryd_peer_pending_changes", peer="office") == 0
    started = value(after, "entryd_start_time_seconds")
    assert value(after, "entryd_peer_last_success_timestamp_seconds", peer="office") >= started > 0
    # No address or path anywhere in the text.
    assert "unix:" not in after_text and pair.dir not in after_text and ".sock" not in after_text


def test_entryctl_metrics_prints_the_same_families(pair):
    text = pair.entryctl("metrics")
    _, _, web = scrape(pair)
    names = lambda t: {f.name for f in text_string_to_metric_families(t)}
    assert names(text) == names(web)
    assert "entryd_calls" in names(text)


def test_the_api_does_not_serve_metrics_to_web_users(pair):
    """GET /metrics is the metrics' one HTTP door: a web user's session (read, even admin) does not
    get them through POST /api/v1/io.entryd.Sync.Metrics, and the OpenAPI document has no such path."""
    for user in ("rita", "root-admin"):
        status, body = pair.call("io.entryd.Sync.Metrics", {}, token=pair.login(user))
        assert status == 404 and body["error"] == "org.varlink.service.MethodNotFound", body
    status, doc, _ = pair.request("GET", "/api/v1/openapi.json")
    assert status == 200 and "/api/v1/io.entryd.Sync.Metrics" not in doc["paths"]
    assert "/api/v1/io.entryd.Sync.Status" in doc["paths"]


def test_metrics_is_get_only_and_needs_no_session_from_loopback(pair):
    status, _, _ = scrape(pair)
    assert status == 200
    req = urllib.request.Request(pair.base + "/metrics", data=b"", method="POST")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 405


@pytest.fixture(scope="module")
def proxied(tmp_path_factory):
    """entryd-web behind a proxy: every request comes from loopback, so loopback lets nothing in."""
    d = str(tmp_path_factory.mktemp("metrics-proxied"))
    token_file = os.path.join(d, "metrics.token")
    with open(token_file, "w") as f:
        f.write("s3cret-metrics-token-0123456789\n")
    g = Gateway(d, web_config=f"behind-proxy = yes\nmetrics-token-file = {token_file}\n")
    yield g
    g.stop()


def test_behind_a_proxy_only_the_metrics_token_lets_in(proxied):
    status, headers, body = scrape(proxied)
    assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer"), body
    status, _, _ = scrape(proxied, {"Authorization": "Bearer wrong-token-0123456789"})
    assert status == 401
    # A web user's token, even an admin's, is not the metrics token.
    admin = proxied.login("root-admin")
    status, _, _ = scrape(proxied, {"Authorization": "Bearer " + admin})
    assert status == 401
    status, _, text = scrape(proxied, {"Authorization": "Bearer s3cret-metrics-token-0123456789"})
    assert status == 200
    assert [v for (n, _), v in samples(text).items() if n == "entryd_info"] == [1]
    # The metrics token opens nothing else.
    status, body, _ = proxied.request("POST", "/api/v1/io.entryd.Entries.List", {},
                                      headers={"Authorization": "Bearer s3cret-metrics-token-0123456789"})
    assert status == 401, body


def test_a_relative_metrics_token_file_stops_the_start(tmp_path):
    conf = tmp_path / "entryd-web.conf"
    conf.write_text("[web]\nmetrics-token-file = metrics.token\n")
    out = subprocess.run([os.path.join(BIN, "entryd-web"), "--config", str(conf), "--socket", str(tmp_path / "s")],
                         capture_output=True, timeout=30)
    assert out.returncode == 78
    assert b"metrics-token-file" in out.stderr and b"absolute path" in out.stderr


def test_a_token_file_that_gives_no_token_is_logged(tmp_path):
    """A metrics-token-file whose token is too short: entryd-web says so at start (every remote
    scrape would otherwise get 401 without a word), and the short token opens nothing."""
    token_file = tmp_path / "metrics.token"
    token_file.write_text("\n  short-token  \n")
    g = Gateway(str(tmp_path), web_config=f"behind-proxy = yes\nmetrics-token-file = {token_file}\n")
    try:
        status, _, _ = scrape(g, {"Authorization": "Bearer short-token"})
        assert status == 401
    finally:
        g.stop()
    log = g.web.stderr.read().decode()
    assert f"metrics-token-file {token_file}: the token is 11 characters, fewer than 16" in log, log
