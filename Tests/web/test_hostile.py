"""Hostile HTTP against entryd-web: oversized headers and bodies, slow clients,
malformed chunked bodies, conflicting Content-Length / Transfer-Encoding, path
traversal. Each is refused with its status (or the connection is closed), and
the gateway keeps serving everyone else."""
import json, os, socket, threading, time, urllib.request

import pytest

from conftest import Gateway


def raw(gateway, data, timeout=10, until_close=False):
    """Sends bytes on a fresh connection; returns what comes back until the server closes or goes
    quiet (or, unless until_close, until the first whole response)."""
    s = socket.create_connection(("127.0.0.1", gateway.port), timeout=timeout)
    try:
        s.sendall(data)
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                break
            if not chunk:
                break
            out += chunk
            if not until_close and b"\r\n\r\n" in out and (b"Content-Length: " in out or b"content-length: " in out):
                head, _, body = out.partition(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                if len(body) >= length:
                    break
        return out
    finally:
        s.close()


def status_of(reply):
    assert reply.startswith(b"HTTP/1.1 "), reply[:200]
    return int(reply[9:12])


def still_serving(gateway):
    with urllib.request.urlopen(gateway.base + "/healthz", timeout=5) as r:
        return r.status == 200


def test_oversized_headers_are_refused(gateway):
    """Over 32 KiB of head or 100 header fields: 431 HeaderTooLarge in JSON like every other error. A
    head beyond what libmicrohttpd holds for a connection (64 KiB with its buffers, or about 900 fields)
    is refused by libmicrohttpd itself, with its own HTML body (0.9.75 cannot be given another)."""
    for request in (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 40_000 + b"\r\n\r\n",
                    b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(150)) + b"\r\n"):
        reply = raw(gateway, request)
        assert status_of(reply) == 431, reply[:300]
        head, _, body = reply.partition(b"\r\n\r\n")
        assert b"Content-Type: application/json" in head
        assert json.loads(body) == {"error": "io.entryd.web.HeaderTooLarge", "parameters": {"limit": 32768, "fields": 100}}
    reply = raw(gateway, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n")
    assert status_of(reply) in (413, 431)
    many = b"".join(b"X-H%d: v\r\n" % i for i in range(20_000))
    assert status_of(raw(gateway, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n")) in (413, 431)
    assert still_serving(gateway)


def test_oversized_body_is_413_by_length_and_by_chunks(gateway):
    token = gateway.login("ada")
    body = b"{" + b" " * (2 << 20) + b"}"
    reply = raw(gateway, b"POST /api/v1/io.entryd.Entries.List HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + b"Authorization: Bearer " + token.encode() + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    assert status_of(reply) == 413 and b"io.entryd.web.PayloadTooLarge" in reply
    chunk = b" " * 65536
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(20)) + b"0\r\n\r\n"
    reply = raw(gateway, b"POST /api/v1/io.entryd.Entries.List HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + b"Transfer-Encoding: chunked\r\n\r\n" + chunks)
    assert status_of(reply) == 413
    assert still_serving(gateway)


@pytest.mark.parametrize("request_bytes", [
    b"POST /api/v1/login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
    b"POST /api/v1/login HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcdef\r\n0\r\n\r\n",
    b"POST /api/v1/login HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
    b"POST /api/v1/login HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 30\r\n\r\n{}"
    b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
    b"POST /api/v1/login HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
    b"GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n",
], ids=["bad-chunk-size", "chunk-longer-than-said", "length-and-chunked", "two-lengths", "negative-length",
        "header-without-colon", "unknown-version"])
def test_malformed_framing_is_refused(gateway, request_bytes):
    reply = raw(gateway, request_bytes, timeout=4, until_close=True)
    # refused with a 4xx/505 status, or the connection closed without an answer; never served
    assert reply == b"" or 400 <= status_of(reply) < 600
    assert not reply.startswith(b"HTTP/1.1 200") and not reply.startswith(b"HTTP/1.1 401")
    # nothing smuggled behind it on the same connection is answered (the smuggled request is a GET /healthz)
    assert b"200 OK" not in reply
    assert still_serving(gateway)


def test_line_ends_are_read_as_the_shim_says(gateway):
    """libmicrohttpd 0.9.75 ends a header line at a bare LF (RFC 9112 2.2 lets it) and the shim cannot
    tell it from CRLF (its comment says why): a bare LF request is read as with CRLF, and framing hidden
    behind bare LFs is seen and refused like any other conflict. A bare CR stays inside the value, where
    the shim finds it: 400. Nothing behind a refused request is answered."""
    assert status_of(raw(gateway, b"GET /healthz HTTP/1.1\nHost: x\n\n")) == 200
    for bad, reason in (
        (b"POST /api/v1/login HTTP/1.1\nHost: x\nContent-Length: 5\nTransfer-Encoding: chunked\n\n0\n\n"
         b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", b"conflicting"),
        (b"POST /api/v1/login HTTP/1.1\r\nHost: x\r\nContent-Length: 2\nContent-Length: 40\r\n\r\n{}"
         b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", b"conflicting"),
        (b"POST /api/v1/login HTTP/1.1\r\nHost: x\r\nX-A: b\rContent-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n"
         b"0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", b"control character"),
        (b"GET /healthz HTTP/1.1\r\nHost: x\rX-A: b\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", b"control character"),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: b\x7f\r\n\r\n", b"control character"),
    ):
        reply = raw(gateway, bad, timeout=4, until_close=True)
        assert status_of(reply) == 400, reply
        assert b"io.entryd.web.BadRequest" in reply and reason in reply and b"200 OK" not in reply, reply
    assert status_of(raw(gateway, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\tb\r\n\r\n")) == 200  # tab is fine
    assert still_serving(gateway)


@pytest.mark.parametrize("path", [b"/../../etc/passwd", b"/assets/../../etc/passwd", b"/%2e%2e/%2e%2e/etc/passwd",
                                  b"/assets/..%2f..%2fetc%2fpasswd", b"/assets/%2e%2e%5c%2e%2e%5cetc", b"//etc/passwd",
                                  b"/index.html%00.js"])
def test_path_traversal_is_refused(gateway, path):
    reply = raw(gateway, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status_of(reply) in (400, 404)
    assert b"root:" not in reply


def _is_closed(s, wait=2):
    try:
        s.sendall(b"a")
        s.settimeout(wait)
        return s.recv(100) == b""
    except OSError:
        return True


def test_slow_clients_are_cut_off_and_others_served(gateway):
    """Slowloris from one address (127.0.0.2): 50 connections hold a header open; past
    max-connections-per-address (32) they get 2 s to send a header (for their 503) and are closed,
    clients at other addresses are served meanwhile, and the slow ones are closed after
    idle-timeout (3 s in the fixture)."""
    slow = []
    for _ in range(50):
        s = socket.create_connection(("127.0.0.1", gateway.port), timeout=10, source_address=("127.0.0.2", 0))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        slow.append(s)
    time.sleep(0.5)
    started = time.monotonic()
    for _ in range(20):
        assert still_serving(gateway)
    assert time.monotonic() - started < 5
    refused = sum(_is_closed(s, wait=3) for s in slow[32:])
    assert refused == 18
    time.sleep(3)
    assert sum(_is_closed(s) for s in slow[:32]) == 32
    for s in slow:
        s.close()
    assert still_serving(gateway)


def test_body_sent_slower_than_the_timeout_is_dropped(gateway):
    s = socket.create_connection(("127.0.0.1", gateway.port), timeout=10)
    s.sendall(b"POST /api/v1/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
    time.sleep(4.5)
    try:
        got = s.recv(100)
    except OSError:
        got = b""
    assert got == b"" or not got.startswith(b"HTTP/1.1 200")
    s.close()
    assert still_serving(gateway)


def test_many_parallel_logins_and_calls_keep_working(gateway):
    """30 clients at once log in and list; a burst of wrong passwords from one address gets 429, not a stall."""
    token = gateway.login("rita")
    errors = []

    def client():
        try:
            status, body = gateway.call("io.entryd.Entries.List", {"limit": 1}, token)
            assert status == 200, body
        except Exception as e:  # noqa: BLE001 — collected and asserted below
            errors.append(e)

    threads = [threading.Thread(target=client) for _ in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    statuses = [gateway.request("POST", "/api/v1/login", {"user": "root-admin", "password": "wrong"})[0] for _ in range(8)]
    assert statuses[:5] == [401] * 5 and set(statuses[5:]) == {429}


@pytest.fixture(scope="module")
def tight(tmp_path_factory):
    """A gateway with small limits so that they are reached fast: each header within 2 s, 8 connections
    at once that have not logged in, 4 per address."""
    g = Gateway(str(tmp_path_factory.mktemp("entryd-web-tight")),
                web_config="header-timeout = 2\nmax-unauthenticated-connections = 8\nmax-connections-per-address = 4\n")
    yield g
    g.stop()


def _slow(gateway, address):
    """A connection from ADDRESS that has sent the start of a header and no more."""
    s = socket.create_connection(("127.0.0.1", gateway.port), timeout=10, source_address=(address, 0))
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
    return s


def _closed_within(s, seconds):
    """Whether the server closes S within SECONDS (nothing is read from it but the end)."""
    s.settimeout(seconds)
    try:
        return s.recv(100) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


def _wait_idle(gateway):
    """Until the slow connections of an earlier test are gone (the header deadline is 2 s)."""
    time.sleep(2.5)


def test_a_header_sent_a_byte_at_a_time_is_cut_at_the_header_deadline(tight):
    """One byte a second never lets the idle timeout (3 s) pass, but the whole header must be in within
    header-timeout (2 s): the connection is closed then, unanswered."""
    _wait_idle(tight)
    s = socket.create_connection(("127.0.0.1", tight.port), timeout=10, source_address=("127.0.0.3", 0))
    started = time.monotonic()
    s.sendall(b"G")
    closed = False
    for byte in b"ET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: abcdefghijklmnop":
        if _closed_within(s, 1):
            closed = True
            break
        try:
            s.sendall(bytes([byte]))
        except OSError:
            closed = True
            break
    took = time.monotonic() - started
    s.close()
    assert closed and 1.5 <= took < 4, took
    assert still_serving(tight)
    # a logged-in connection is held to the idle timeout only: a pause of 2.5 s between its requests is fine
    token = tight.login("ada")
    s = socket.create_connection(("127.0.0.1", tight.port), timeout=10)
    ask = ("GET /api/v1/session HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token + "\r\n\r\n").encode()
    s.sendall(ask)
    assert status_of(s.recv(65536)) == 200
    time.sleep(2.5)
    s.sendall(ask)
    assert status_of(s.recv(65536)) == 200
    s.close()


def test_connections_without_a_session_are_bounded(tight):
    """8 slow connections from 4 addresses fill the limit on connections that have not logged in: a new
    one without a session gets 503 TooManyConnections (JSON, Retry-After), one with a session is served;
    once the slow ones have waited a second, a newcomer closes the oldest and is served."""
    _wait_idle(tight)
    token = tight.login("ada")
    slow = [_slow(tight, f"127.0.0.{10 + i // 2}") for i in range(8)]
    try:
        reply = raw(tight, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status_of(reply) == 503, reply
        head, _, body = reply.partition(b"\r\n\r\n")
        assert b"Retry-After: 2" in head and b"application/json" in head
        error = json.loads(body)
        assert error["error"] == "io.entryd.web.TooManyConnections" and error["parameters"]["limit"] == "unauthenticated"
        reply = raw(tight, b"GET /api/v1/session HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token.encode() + b"\r\n\r\n")
        assert status_of(reply) == 200, reply
        # A scraper that may read /metrics (here: loopback, no proxy) is not blinded either.
        reply = raw(tight, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status_of(reply) == 200, reply
        time.sleep(1.1)
        assert status_of(raw(tight, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")) == 200
        assert _closed_within(slow[0], 1)
    finally:
        for s in slow:
            s.close()


def test_over_the_address_limit_is_503_with_retry_after(tight):
    """The 5th connection from one address (limit 4) is answered 503 TooManyConnections in JSON with
    Retry-After and closed; another address is served meanwhile."""
    _wait_idle(tight)
    held = [_slow(tight, "127.0.0.20") for _ in range(4)]
    try:
        s = socket.create_connection(("127.0.0.1", tight.port), timeout=10, source_address=("127.0.0.20", 0))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        reply = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            reply += chunk
        s.close()
        assert status_of(reply) == 503, reply
        head, _, body = reply.partition(b"\r\n\r\n")
        assert b"Retry-After: 2" in head and b"Connection: close" in head and b"application/json" in head
        error = json.loads(body)
        assert error == {"error": "io.entryd.web.TooManyConnections", "parameters": {"limit": "address", "retryAfter": 2}}
        assert still_serving(tight)
    finally:
        for s in held:
            s.close()
