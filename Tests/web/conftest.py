"""Fixtures for the entryd-web tests: a real entryd (from $ENTRYD_BIN_DIR, else
.build/debug) whose entryd.conf names the test's user as the gateway, web users
made with `entryctl web-user add`, and a real entryd-web on a free loopback port.
Everything they write is in pytest's temporary directories (tmp_path,
tmp_path_factory), never in the tree or the home directory."""
import json, os, pwd, signal, socket, subprocess, time, urllib.request, urllib.error

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("ENTRYD_BIN_DIR") or os.path.join(ROOT, ".build", "debug")
USERS = {"ada": ("write", "correct horse 1"), "rita": ("read", "battery staple 2"), "root-admin": ("admin", "admin pass 3"),
         "kiosk": ("submit", "front desk 4")}


def wait_for(check, what, proc, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited {proc.returncode}: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{what} did not start")


def free_port(host="127.0.0.1"):
    """A port the kernel finds free on HOST now (another program may take it
    before it is used: start_on_free_port tries again then)."""
    s = socket.socket()
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_on_free_port(argv, ready, what, host="127.0.0.1", attempts=10):
    """Starts argv(port) on a free port of HOST and waits until ready(port);
    when the program exits 69 (entryd-web: cannot listen, the port was taken
    since free_port), tries another port. Returns (process, port)."""
    for attempt in range(attempts):
        port = free_port(host)
        proc = subprocess.Popen(argv(port), stderr=subprocess.PIPE)
        try:
            wait_for(lambda: ready(port), what, proc)
            return proc, port
        except RuntimeError:
            if proc.returncode == 69 and attempt + 1 < attempts:
                continue
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            raise


class Gateway:
    """A running entryd and entryd-web pair."""

    def __init__(self, workdir, web_config="", entryd_config="", settings="max-batch = 5\n"):
        self.dir = workdir
        self.socket = os.path.join(workdir, "entryd.sock")
        self.users = os.path.join(workdir, "web-users")
        self.entryd = self.web = None
        me = pwd.getpwuid(os.getuid()).pw_name
        conf = os.path.join(workdir, "entryd.conf")
        with open(conf, "w") as f:
            # settings: entryd.conf's top-level keys; entryd_config: lines after [roles].
            f.write(f"{settings}[roles]\ngateway = {me}\n" + entryd_config)
        try:
            self.entryd = subprocess.Popen([os.path.join(BIN, "entryd"), "--config", conf, "--socket", self.socket,
                                            "--db", os.path.join(workdir, "entries.db")], stderr=subprocess.PIPE)
            wait_for(lambda: socket.socket(socket.AF_UNIX).connect(self.socket) is None, "entryd", self.entryd)
            for name, (role, password) in USERS.items():
                subprocess.run([os.path.join(BIN, "entryctl"), "web-user", "add", name, "--role", role, "--users", self.users],
                               input=password.encode(), check=True, capture_output=True)
            web_conf = os.path.join(workdir, "entryd-web.conf")
            with open(web_conf, "w") as f:
                f.write("[web]\nidle-timeout = 3\n" + web_config)
            self.web, self.port = start_on_free_port(
                lambda port: [os.path.join(BIN, "entryd-web"), "--config", web_conf, "--socket", self.socket,
                              "--users", self.users, "--listen", f"127.0.0.1:{port}"],
                lambda port: urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).status == 200,
                "entryd-web")
        except BaseException:
            self.stop()  # nothing left running when the start fails
            raise
        self.base = f"http://127.0.0.1:{self.port}"

    def entryctl(self, *args):
        """Runs entryctl against this entryd; returns its standard output."""
        out = subprocess.run([os.path.join(BIN, "entryctl"), "--socket", self.socket, "--locale", "en", *args],
                             capture_output=True, check=True)
        return out.stdout.decode()

    def login(self, user):
        """A bearer token for one of USERS."""
        status, body, _ = self.request("POST", "/api/v1/login", {"user": user, "password": USERS[user][1]})
        assert status == 200, body
        return body["token"]

    def request(self, method, path, body=None, token=None, headers=None):
        """(status, decoded JSON or bytes, headers) of one request."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if token:
            req.add_header("Authorization", "Bearer " + token)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                status, raw, hdrs = r.status, r.read(), r.headers
        except urllib.error.HTTPError as e:
            status, raw, hdrs = e.code, e.read(), e.headers
        try:
            return status, json.loads(raw), hdrs
        except ValueError:
            return status, raw, hdrs

    def call(self, method, params=None, token=None):
        """POST /api/v1/METHOD: (status, JSON)."""
        status, body, _ = self.request("POST", "/api/v1/" + method, params or {}, token=token)
        return status, body

    def stop(self):
        for proc in (self.web, self.entryd):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    g = Gateway(str(tmp_path_factory.mktemp("entryd-web")))
    yield g
    g.stop()
