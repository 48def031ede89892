"""Issue 20, item 16: a pytest-recording suite that sets vcrpy's own keys migrates by
renaming alone.

The suite's ``vcr_config`` is written the way popular projects write theirs
(``filter_headers`` with names and ``(name, replacement)`` tuples,
``filter_query_parameters``, ``filter_post_data_parameters``,
``decode_compressed_response``, a ``before_record_response`` stripping a header,
marker keywords with a ``before_record_request``); its tests call a loopback server
through requests, httpx, httpx2 and the anthropic SDK with secrets in headers, query
strings and bodies. pytest-recording records it; then, with the server gone, it is
replayed by pytest-recording and by this plugin after the renames of
docs/migrating.md, and their pass counts compared. Last, this plugin records it
afresh and replays its own recording: no filtered value is ever on disk.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agentreplay import Reply
from tests.migration._web import WebServer
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

SECRETS = ("bearer-secret-1", "apikey-secret-2", "qkey-secret-3", "client-secret-4")

CONFTEST = """
import pytest


def strip_cookies(response):
    response["headers"].pop("Set-Cookie", None)
    response["headers"].pop("set-cookie", None)
    return response


@pytest.fixture(scope="module")
def vcr_config():
    return {
        "filter_headers": ["authorization", ("x-api-key", "DUMMY"), "cookie"],
        "filter_query_parameters": ["key", ("api_key", "XXX")],
        "filter_post_data_parameters": ["client_secret"],
        "decode_compressed_response": True,
        "before_record_response": strip_cookies,
    }
"""

SUITE = """
import os, time
import anthropic, httpx, httpx2, pytest, requests

URL = os.environ["WEB"]
AUTH = {"Authorization": "Bearer bearer-secret-1", "x-api-key": "apikey-secret-2"}


def drop_timestamp(request):
    request.uri = request.uri.split("&ts=")[0]
    return request


@pytest.mark.vcr
def test_requests_headers_and_query():
    got = requests.get(URL + "/items", params={"key": "qkey-secret-3", "q": "x"}, headers=AUTH)
    assert got.json()["path"] == "/items"


@pytest.mark.vcr
def test_requests_form_secret():
    form = {"client_id": "app", "client_secret": "client-secret-4"}
    got = requests.post(URL + "/token", data=form)
    assert got.json()["got"] > 0


@pytest.mark.vcr
def test_requests_gzip():
    assert requests.get(URL + "/gzip/data", headers=AUTH).json()["path"] == "/gzip/data"


@pytest.mark.vcr
def test_httpx_json_secret():
    with httpx.Client() as client:
        got = client.post(URL + "/login", json={"user": "ann", "client_secret": "client-secret-4"},
                          headers=AUTH)
    assert got.json()["path"] == "/login"


@pytest.mark.vcr
def test_httpx2_api_key_query():
    got = httpx2.get(URL + "/search", params={"api_key": "qkey-secret-3", "q": "cats"})
    assert got.json()["path"] == "/search"


@pytest.mark.vcr
def test_cookie_header():
    got = requests.get(URL + "/me", headers={"Cookie": "sid=bearer-secret-1"})
    assert got.json()["path"] == "/me"


@pytest.mark.vcr(before_record_request=drop_timestamp)
def test_marker_before_record_request():
    got = requests.get(URL + f"/feed?page=1&ts={time.time()}")
    assert got.json()["path"] == "/feed"


@pytest.mark.vcr(filter_headers=["x-session"])
def test_marker_filter_headers():
    got = requests.get(URL + "/session", headers={"x-session": "bearer-secret-1"})
    assert got.status_code == 200


@pytest.mark.vcr
def test_anthropic_sdk():
    client = anthropic.Anthropic(api_key="apikey-secret-2", base_url=os.environ["AR_SERVER"],
                                 max_retries=0)
    message = client.messages.create(model="claude-test", max_tokens=32,
                                     messages=[{"role": "user", "content": "hi"}])
    assert message.content[0].text == "Hello from the model."
"""

RENAMES = [  # docs/migrating.md, "Option mapping"
    ("@pytest.mark.vcr", "@pytest.mark.agentreplay"),
    ("def vcr_config(", "def agentreplay_config("),
]
TESTS = 9


def _run(pytester: pytest.Pytester, plugin: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", plugin, "-p", "no:cacheprovider", *args)


def _passed(result: pytest.RunResult) -> int:
    return result.parseoutcomes().get("passed", 0)


def _on_disk(folder: Path) -> str:
    return "\n".join(p.read_text("utf-8") for p in sorted(folder.rglob("*.yaml")))


def _no_secrets(text: str) -> None:
    assert text
    for secret in (*SECRETS, "cookie-secret-5"):
        assert secret not in text, secret


def test_a_suite_with_vcrpy_options_passes_after_the_renames_alone(
    pytester: pytest.Pytester, server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    web = WebServer()
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("WEB", web.url)
    monkeypatch.setenv("AR_SERVER", server.url)
    for _ in range(2):
        server.add(Reply.text("Hello from the model."))
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_api=SUITE)
    cassettes = pytester.path / "cassettes"

    recorded = _run(pytester, "pytest_recording.plugin", "--record-mode=once")
    recorded.assert_outcomes(passed=TESTS)
    _no_secrets(_on_disk(cassettes))  # vcrpy filtered them
    web.stop()  # every replay is offline: a request that went out would fail
    theirs = _run(pytester, "pytest_recording.plugin", "--record-mode=none")
    for old, new in RENAMES:
        for path in (pytester.path / "test_api.py", pytester.path / "conftest.py"):
            path.write_text(path.read_text().replace(old, new))
    ours = _run(pytester, "pytest_agentreplay.plugin", "--agentreplay-record-mode=none")
    assert _passed(theirs) == TESTS, theirs.stdout.str()[-3000:]
    assert _passed(ours) == TESTS, ours.stdout.str()[-3000:]

    # Recorded afresh by this plugin, with the same configuration: nothing filtered is
    # written, and its own recording replays offline.
    for path in cassettes.rglob("*.yaml"):
        path.unlink()
    web = WebServer()
    monkeypatch.setenv("WEB", web.url)
    ours_recorded = _run(pytester, "pytest_agentreplay.plugin", "--agentreplay-record-mode=once")
    assert _passed(ours_recorded) == TESTS, ours_recorded.stdout.str()[-3000:]
    _no_secrets(_on_disk(cassettes))
    web.stop()
    replayed = _run(pytester, "pytest_agentreplay.plugin", "--agentreplay-record-mode=none")
    assert _passed(replayed) == TESTS, replayed.stdout.str()[-3000:]
    assert len(server.requests) == 2, "a replay reached the model server"
