"""Issue 20, item 16: a pytest-recording suite passes after the renames alone.

The suite below is written for pytest-recording and recorded by pytest-recording
itself against a loopback server (requests and httpx; JSON bodies carrying a
timestamp, query strings, repeated calls answered in order, an upload, the ``vcr``
fixture, a ``vcr_config``, a leftover ``pytest_recording_configure``, a cassette
without ``version: 1``). It is then replayed with the server gone: once by
pytest-recording, once by this plugin after the renames docs/migrating.md lists,
and the pass counts are compared.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = """
import pytest

def pytest_recording_configure(config, vcr):
    vcr.register_matcher("always", lambda r1, r2: True)

@pytest.fixture(scope="module")
def vcr_config():
    return {"match_on": ["method", "scheme", "host", "port", "path", "query"]}
"""

SUITE = """
import json, os, time
import httpx, pytest, requests

URL = os.environ["API_URL"]


@pytest.mark.vcr
def test_get_json():
    assert requests.get(URL + "/items/1").json()["path"] == "/items/1"


@pytest.mark.vcr
def test_query():
    got = requests.get(URL + "/search", params={"q": "cats", "page": 2}).json()
    assert got["path"] == "/search?q=cats&page=2"


@pytest.mark.vcr
def test_post_with_a_timestamp_httpx():
    with httpx.Client() as client:
        got = client.post(URL + "/chat", json={"prompt": "hi", "at": time.time()})
    assert got.json()["n"] >= 1


@pytest.mark.vcr
def test_post_with_a_timestamp_requests():
    got = requests.post(URL + "/chat", json={"prompt": "hi", "at": time.time()})
    assert got.status_code == 200


@pytest.mark.vcr
def test_repeated_calls_in_order():
    first = requests.get(URL + "/counter").json()["n"]
    second = requests.get(URL + "/counter").json()["n"]
    assert second == first + 1


@pytest.mark.vcr
def test_upload():
    files = {"file": ("data.csv", b"a,b\\n1,2\\n")}
    got = requests.post(URL + "/upload", files=files, data={"kind": "csv"})
    assert got.json()["received"] > 0


@pytest.mark.vcr
def test_vcr_fixture_counts(vcr):
    requests.get(URL + "/items/2")
    requests.get(URL + "/items/3")
    replaying = vcr.record_mode == "none"
    assert vcr.play_count == (2 if replaying else 0)
    assert len(vcr.requests) == 2
    assert vcr.requests[1].path == "/items/3"


@pytest.mark.vcr
def test_vcr_fixture_body(vcr):
    with httpx.Client() as client:
        client.post(URL + "/chat", json={"prompt": "body", "at": time.time()})
    assert json.loads(vcr.requests[0].body)["prompt"] == "body"
    assert vcr.all_played or vcr.record_mode != "none"


@pytest.mark.vcr
def test_without_version():
    assert requests.get(URL + "/old").json()["path"] == "/old"


@pytest.mark.vcr(match_on=["method", "path", "body"])
def test_body_matched_on_request():
    got = requests.post(URL + "/exact", json={"fixed": True})
    assert got.status_code == 200


@pytest.mark.vcr
def test_http_error():
    assert requests.get(URL + "/missing").status_code == 404
"""

RENAMES = [  # docs/migrating.md, "Option mapping"
    ("@pytest.mark.vcr", "@pytest.mark.agentreplay"),
    ("def vcr_config(", "def agentreplay_config("),
]


class _Handler(http.server.BaseHTTPRequestHandler):
    counter = 0

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self, body: dict[str, object]) -> None:
        status = 404 if self.path.startswith("/missing") else 200
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        type(self).counter += 1
        self._answer({"path": self.path, "n": type(self).counter})

    def do_POST(self) -> None:
        size = int(self.headers.get("content-length") or 0)
        received = len(self.rfile.read(size))
        type(self).counter += 1
        self._answer({"path": self.path, "n": type(self).counter, "received": received})


@pytest.fixture
def server() -> Iterator[http.server.ThreadingHTTPServer]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()  # a no-op once the test stopped it
        httpd.server_close()


def _run(pytester: pytest.Pytester, plugin: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", plugin, "-p", "no:cacheprovider", *args)


def _counts(result: pytest.RunResult) -> tuple[int, int]:
    """Tests passed, and tests run (warnings are not tests)."""
    outcomes = result.parseoutcomes()
    ran = ("passed", "failed", "errors", "error", "skipped", "xfailed", "xpassed")
    return outcomes.get("passed", 0), sum(outcomes.get(kind, 0) for kind in ran)


def _drop_version(path: Path) -> None:
    text = path.read_text()
    assert text.endswith("version: 1\n")
    path.write_text(re.sub(r"version: 1\n\Z", "", text))


def test_the_renames_alone_reach_pytest_recordings_pass_count(
    pytester: pytest.Pytester,
    server: http.server.ThreadingHTTPServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("API_URL", f"http://127.0.0.1:{server.server_address[1]}")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_api=SUITE)
    recorded = _run(pytester, "pytest_recording.plugin", "--record-mode=once")
    recorded.assert_outcomes(passed=11)
    _drop_version(pytester.path / "cassettes" / "test_api" / "test_without_version.yaml")
    server.shutdown()  # both replays are offline: a request that went out would fail
    server.server_close()
    theirs = _counts(_run(pytester, "pytest_recording.plugin", "--record-mode=none"))
    for old, new in RENAMES:
        for path in (pytester.path / "test_api.py", pytester.path / "conftest.py"):
            path.write_text(path.read_text().replace(old, new))
    ours = _run(pytester, "pytest_agentreplay.plugin", "--agentreplay-record-mode=none")
    assert theirs == (11, 11)
    assert _counts(ours) == theirs, ours.stdout.str()[-3000:]
