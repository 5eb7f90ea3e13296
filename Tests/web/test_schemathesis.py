"""The API description matches the server, checked by an outside tool:
schemathesis runs every check against entryd-web as a write user and as an
admin, with a fixed seed and 50 examples per operation, and finds nothing.
What is configured and why: Tests/web/schemathesis.toml; logout is left out
(it would end the session the run uses)."""
import os
import re
import subprocess
import sys

import pytest

from conftest import Gateway

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMATHESIS = os.path.join(os.path.dirname(sys.executable), "schemathesis")


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    # The default max-batch: an Import the schema allows is not refused for size. Many
    # connections from one address: schemathesis hangs up each live feed after its first
    # event, and entryd-web notices at the next keep-alive (a second later).
    g = Gateway(str(tmp_path_factory.mktemp("entryd-schemathesis")), settings="",
                web_config="max-connections-per-address = 256\n")
    # Both sessions first: the runs try logins with made-up names and passwords, and
    # entryd-web then holds this address's logins back for a while (429).
    g.tokens = {user: g.login(user) for user in ("ada", "root-admin")}
    yield g
    g.stop()


@pytest.mark.parametrize("user", ["ada", "root-admin"])
def test_the_server_matches_its_openapi_document(api, user, tmp_path):
    token = api.tokens[user]
    env = dict(os.environ, SCHEMATHESIS_HOOKS="")
    run = subprocess.run(
        [SCHEMATHESIS, "--no-color", "--config-file", os.path.join(HERE, "schemathesis.toml"), "run",
         api.base + "/api/v1/openapi.json", "-H", "Authorization: Bearer " + token,
         "--seed", "1", "--max-examples", os.environ.get("SCHEMATHESIS_EXAMPLES", "50"),
         "--exclude-operation-id", "logout", "--workers", "1", "--generation-database", "none",
         "--phases", "examples,coverage,fuzzing"],
        capture_output=True, text=True, cwd=str(tmp_path), env=env, timeout=1800)
    assert run.returncode == 0, run.stdout[-20000:] + run.stderr[-5000:]
    # Every operation but logout was reached (a run that tested nothing also exits 0).
    tested = re.search(r"Tested: (\d+)", run.stdout)
    assert tested and int(tested.group(1)) >= 28, run.stdout[-5000:]


def test_a_number_beyond_a_double_is_refused_naming_its_parameter(api):
    """1e400 parses as infinity, which JSON cannot carry on to entryd (it would
    arrive as null, that is absent): 400 InvalidParameter naming the member."""
    import json
    import urllib.error
    import urllib.request
    for body, name in [(b'{"limit": 1e400}', "limit"), (b'{"filter": {"x": [-1e999]}}', "filter")]:
        req = urllib.request.Request(api.base + "/api/v1/io.entryd.Entries.List", data=body, method="POST")
        req.add_header("Content-Type", "application/json")
        req.add_header("Authorization", "Bearer " + api.tokens["ada"])
        try:
            urllib.request.urlopen(req, timeout=10)
            raise AssertionError("accepted " + body.decode())
        except urllib.error.HTTPError as e:
            assert e.code == 400, (body, e.code)
            assert json.loads(e.read()) == {"error": "org.varlink.service.InvalidParameter",
                                            "parameters": {"parameter": name}}
