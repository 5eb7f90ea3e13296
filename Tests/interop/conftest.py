"""Starts a real entryd (from $ENTRYD_BIN_DIR, else .build/debug) on a
temporary socket and database for the interoperability tests."""
import os, shutil, signal, socket, subprocess, tempfile, time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("ENTRYD_BIN_DIR") or os.path.join(ROOT, ".build", "debug")


@pytest.fixture(scope="session")
def daemon():
    d = tempfile.mkdtemp(prefix="entryd-interop-")
    sock = os.path.join(d, "entryd.sock")
    proc = subprocess.Popen([os.path.join(BIN, "entryd"), "--socket", sock, "--db", os.path.join(d, "entries.db")],
                            stderr=subprocess.PIPE)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(sock)
            s.close()
            break
        except OSError:
            time.sleep(0.05)
    else:
        proc.kill()
        raise RuntimeError("entryd did not start: " + proc.stderr.read().decode())
    yield sock
    proc.send_signal(signal.SIGTERM)
    status = proc.wait(timeout=15)
    left = os.path.exists(sock)
    shutil.rmtree(d, ignore_errors=True)
    assert status == 0, "entryd did not exit 0 on SIGTERM"
    assert not left, "entryd left its socket file behind"
