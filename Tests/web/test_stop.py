"""entryd-web's stop on SIGTERM (entryd-web(8), SIGNALS): requests in flight
are finished and answered, so what entryd stored is exactly what its clients
were told was stored; live feeds and idle keep-alive connections do not hold
the stop, and a stop with no traffic is quick."""
import http.client, json, signal, socket, threading, time

from conftest import Gateway

GOOD = {"birthday": "1990-05-17", "country": "CN", "province": "广东", "city": "广州", "contact_method": "phone"}
# How long a stop may take: the drain of the requests in flight and the end of the process.
STOP_SECONDS = 5


def _stop(gateway):
    """SIGTERM to entryd-web: (exit status, seconds it took to exit)."""
    started = time.monotonic()
    gateway.web.send_signal(signal.SIGTERM)
    try:
        code = gateway.web.wait(timeout=STOP_SECONDS + 10)
    except Exception:
        gateway.web.kill()
        raise
    return code, time.monotonic() - started


def test_adds_in_flight_at_sigterm_are_answered(tmp_path):
    """12 keep-alive clients add entries in a loop; SIGTERM comes at ~1.5 s. Every Add answered 200 is
    stored, and every stored Add was answered 200: none is stored with its client left without a reply
    (a client retrying without an id would store it twice). Requests after SIGTERM may be refused."""
    g = Gateway(str(tmp_path))
    try:
        token = g.login("ada")
        prefix = "停机"
        answered, refused, unanswered = set(), set(), set()
        lock = threading.Lock()
        first_answers = threading.Barrier(13, timeout=20)

        def client(k):
            conn, n, waited = None, 0, False
            while True:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", g.port, timeout=STOP_SECONDS + 5)
                    try:
                        conn.connect()
                    except OSError:
                        return  # no longer accepting: the stop has begun
                name = f"{prefix}{k:02d}{n:05d}"
                body = json.dumps({"fields": dict(GOOD, name=name, phone=f"139{k:02d}{n:06d}")})
                n += 1
                try:
                    conn.request("POST", "/api/v1/io.entryd.Entries.Add", body,
                                 {"Content-Type": "application/json", "Authorization": "Bearer " + token})
                    response = conn.getresponse()
                    response.read()
                    status = response.status
                except (OSError, http.client.HTTPException):
                    with lock:
                        unanswered.add(name)
                    conn.close()
                    conn = None
                    continue
                with lock:
                    (answered if status == 200 else refused).add(name)
                if not waited:
                    waited = True
                    first_answers.wait()
                if response.will_close:
                    conn.close()
                    conn = None

        threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(12)]
        for t in threads:
            t.start()
        first_answers.wait()  # every client has had an answer: all are adding now
        time.sleep(1.5)  # Adds go on for a while, many in flight at any moment
        code, took = _stop(g)
        for t in threads:
            t.join(timeout=STOP_SECONDS + 10)
        assert not any(t.is_alive() for t in threads)
        stored = {e["fields"]["name"] for e in json.loads(
            g.entryctl("list", "--all", "--limit", "1000", "--format", "json", "--name-contains", prefix))}
        print(f"\nstop: {took:.2f} s; answered 200: {len(answered)}, refused: {len(refused)}, "
              f"no answer: {len(unanswered)}, stored: {len(stored)}, stored without a 200: "
              f"{len(stored - answered)}")
        assert code == 0, g.web.stderr.read().decode()
        assert took < STOP_SECONDS
        assert answered, "no Add was answered before the stop"
        assert answered - stored == set(), "answered 200 but not stored"
        assert stored - answered == set(), "stored but not answered 200"
    finally:
        g.stop()


def _refused(port):
    """Whether a connection to PORT is refused: entryd-web has stopped accepting. A connection the
    kernel had queued when the listening socket closed is reset instead: stopped too."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return False
    except (ConnectionRefusedError, ConnectionResetError):
        return True


def test_a_request_begun_before_sigterm_is_run_one_after_is_not(tmp_path):
    """An Add whose body is still coming at SIGTERM is run and answered 200, and its connection closed
    after it; an Add sent after SIGTERM on an idle keep-alive connection is not run: its connection is
    closed unanswered, so sending it again stores it once."""
    g = Gateway(str(tmp_path))
    try:
        token = g.login("ada")
        head = lambda length: (f"POST /api/v1/io.entryd.Entries.Add HTTP/1.1\r\nHost: x\r\n"
                               f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
                               f"Content-Length: {length}\r\n\r\n").encode()
        begun = json.dumps({"fields": dict(GOOD, name="停机前", phone="13900000001")}).encode()
        late = json.dumps({"fields": dict(GOOD, name="停机后", phone="13900000002")}).encode()
        slow = socket.create_connection(("127.0.0.1", g.port), timeout=STOP_SECONDS + 5)
        # With Expect: 100-continue, the interim 100 says entryd-web has read the request's header
        # (before the signal, then), not only that the kernel took the bytes.
        slow.sendall(head(len(begun)).replace(b"\r\n\r\n", b"\r\nExpect: 100-continue\r\n\r\n"))
        interim = b""
        while b"\r\n\r\n" not in interim:
            chunk = slow.recv(65536)
            assert chunk, "closed before the interim response"
            interim += chunk
        assert interim.startswith(b"HTTP/1.1 100"), interim
        slow.sendall(begun[:10])
        idle = http.client.HTTPConnection("127.0.0.1", g.port, timeout=STOP_SECONDS + 5)
        idle.request("GET", "/healthz")
        assert idle.getresponse().read() is not None
        g.web.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        while not _refused(g.port):  # the stop has begun: no more connections
            assert time.monotonic() < deadline, "still accepting after SIGTERM"
            time.sleep(0.02)
        idle.sock.sendall(head(len(late)) + late)
        assert idle.sock.recv(65536) == b"", "a request sent after SIGTERM was answered"
        slow.sendall(begun[10:])  # the stop waits for this request
        reply = b""
        while chunk := slow.recv(65536):
            reply += chunk
        status_line, _, rest = reply.partition(b"\r\n")
        assert b" 200 " in status_line, reply
        assert b"\r\nconnection: close\r\n" in rest.lower()
        assert g.web.wait(timeout=STOP_SECONDS) == 0
        stored = {e["fields"]["name"] for e in json.loads(
            g.entryctl("list", "--all", "--format", "json", "--name-contains", "停机"))}
        assert stored == {"停机前"}
    finally:
        g.stop()


def test_live_feeds_and_idle_connections_do_not_hold_the_stop(tmp_path):
    """Two live feeds and an idle keep-alive connection: SIGTERM ends them, the feeds' streams end
    (not cut off mid-event), and entryd-web exits 0 within the bound; with no traffic at all, at once."""
    g = Gateway(str(tmp_path))
    try:
        token = g.login("rita")
        feeds = []
        for _ in range(2):
            s = socket.create_connection(("127.0.0.1", g.port), timeout=STOP_SECONDS + 5)
            s.sendall((f"GET /api/v1/io.entryd.Sync.Changes?since=0 HTTP/1.1\r\nHost: x\r\n"
                       f"Authorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n").encode())
            buffer = b""
            while b"\r\n\r\n" not in buffer:
                buffer += s.recv(65536)
            assert b"200 OK" in buffer.split(b"\r\n")[0]
            feeds.append(s)
        idle = http.client.HTTPConnection("127.0.0.1", g.port, timeout=STOP_SECONDS + 5)
        idle.request("GET", "/healthz")
        assert idle.getresponse().read() is not None
        code, took = _stop(g)
        print(f"\nstop with two feeds and an idle connection: {took:.2f} s")
        assert code == 0, g.web.stderr.read().decode()
        assert took < 2
        for s in feeds:
            rest = b""
            while chunk := s.recv(65536):
                rest += chunk
            assert rest.endswith(b"\r\n0\r\n\r\n"), rest[-80:]  # the last chunk: the feed ended, not cut off
            s.close()
        idle.close()
    finally:
        g.stop()
    (tmp_path / "quiet").mkdir()
    g = Gateway(str(tmp_path / "quiet"))
    try:
        code, took = _stop(g)
        print(f"stop with no traffic: {took:.2f} s")
        assert code == 0 and took < 1
    finally:
        g.stop()


def test_a_stuck_entryd_does_not_hold_the_stop_past_its_bound(tmp_path):
    """entryd stops answering (SIGSTOP) with an Add and a List waiting on it: SIGTERM to entryd-web
    still ends it within the drain (15 s) and a little, not after entryd-web's 60 s reply timeout, and
    within entryd-web.service's TimeoutStopSec=20; the clients get an answer or a closed connection."""
    g = Gateway(str(tmp_path))
    try:
        token = g.login("ada")
        g.entryd.send_signal(signal.SIGSTOP)
        outcomes = []

        def waiting(method, body):
            conn = http.client.HTTPConnection("127.0.0.1", g.port, timeout=40)
            try:
                conn.request("POST", "/api/v1/" + method, json.dumps(body),
                             {"Authorization": "Bearer " + token, "Content-Type": "application/json"})
                outcomes.append(conn.getresponse().status)
            except (OSError, http.client.HTTPException) as e:
                outcomes.append(type(e).__name__)

        threads = [threading.Thread(target=waiting, args=a) for a in (
            ("io.entryd.Entries.Add", {"fields": dict(GOOD, name="卡住", phone="13900000009")}),
            ("io.entryd.Entries.List", {}))]
        for t in threads:
            t.start()
        time.sleep(0.5)  # both requests reach entryd-web and wait on entryd (nothing to wait on instead)
        started = time.monotonic()
        g.web.send_signal(signal.SIGTERM)
        code = g.web.wait(timeout=40)
        took = time.monotonic() - started
        print(f"\nstop with entryd stopped: {took:.1f} s")
        assert code == 0
        assert took < 18, took
        for t in threads:
            t.join(timeout=10)
        assert len(outcomes) == 2 and all(o != 200 for o in outcomes), outcomes
    finally:
        if g.entryd.poll() is None:
            g.entryd.send_signal(signal.SIGCONT)
        g.stop()
