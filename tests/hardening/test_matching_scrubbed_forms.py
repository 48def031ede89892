"""Issue 18, item 14: both sides of a match are in the same (scrubbed) form.

* ``requests``, ``urllib3`` and ``aiohttp`` (through vcrpy) replay their own recording
  of a request with a secret in its query (``?key=``) and JSON body (``api_key``):
  vcrpy used to match the raw request against the scrubbed recording, and the miss
  said "it matched, but it was consumed ... recorded 0 time". A call vcrpy answers
  now counts as played (summary, strict mode).
* A cassette holding an unscrubbed value under a secret-named key (a vcrpy file with
  a JSON ``authorization`` and a ``?key=`` query, or one of ours recorded before a
  rule was added) matches: the live request was scrubbed, the loaded one was not.
* A miss report compares scrubbed with scrubbed, so it shows what really differs,
  never the same masked value on both sides.
"""

from __future__ import annotations

import json

import aiohttp  # noqa: F401 - imported once here: in-process runs reuse it
import pytest
import requests  # noqa: F401
import urllib3  # noqa: F401
import yaml

from pytest_agentreplay import Reply
from pytest_agentreplay.cassettes.cassette import Cassette, RecordedRequest
from pytest_agentreplay.cassettes.io import loads, save
from tests.cassettes._plugin_runs import cassette, interactions, run
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

SECRET = "hunter2-" + "q7" * 12
CLIENTS = {
    "requests": "requests.post(url, json=BODY, timeout=5).json()",
    "urllib3": "urllib3.PoolManager().request('POST', url, json=BODY).json()",
    "aiohttp": "asyncio.run(_aiohttp(url))",
}
USER_TEST = """
import asyncio, os
import aiohttp, pytest, requests, urllib3

URL = os.environ.get("AR_SERVER", "http://127.0.0.1:9")
BODY = {{"model": "m", "max_tokens": 9, "api_key": "{secret}",
        "messages": [{{"role": "user", "content": os.environ.get("AR_PROMPT", "hello")}}]}}


async def _aiohttp(url):
    async with aiohttp.ClientSession() as session:
        async with session.post(url, json=BODY) as response:
            return await response.json()


@pytest.mark.agentreplay
def test_call(agentreplay):
    url = URL + "/v1/messages?key={secret}&page=2"
    answer = {call}
    assert answer["content"][0]["text"] == "recorded"
    if os.environ.get("AR_SERVER") is None:  # replaying: the call counts as played
        assert [c.source for c in agentreplay.calls] == ["cassette"]
"""


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_a_client_vcrpy_serves_replays_its_own_recording_of_a_secret(
    pytester: pytest.Pytester, server: ProviderServer, client: str
) -> None:
    pytester.makepyfile(test_user=USER_TEST.format(secret=SECRET, call=CLIENTS[client]))
    server.add(Reply.text("recorded"))
    record = "--agentreplay-record-mode=once"
    run(pytester, record, AR_SERVER=server.url).assert_outcomes(passed=1)
    path = cassette(pytester, "test_call")
    text = path.read_text()
    assert SECRET not in text
    [stored] = interactions(path)
    assert stored["request"]["url"].endswith("/v1/messages?key=REDACTED&page=2")
    assert stored["request"]["json"]["api_key"] == "REDACTED"

    replayed = run(pytester, "--agentreplay-strict")
    replayed.assert_outcomes(passed=1)
    replayed.stdout.fnmatch_lines(["cassettes used: 1, interactions replayed: 1"])
    assert "unplayed" not in replayed.stdout.str()
    assert len(server.requests) == 1, "the replay went live"

    changed = run(pytester, AR_PROMPT="something else")
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(
        [
            "*differs in body:",
            "*messages[[]0[]].content: recorded 'hello', now 'something else'",
        ]
    )
    assert "consumed" not in changed.stdout.str()


def _vcr_cassette(secret: str) -> str:
    """A vcrpy-format cassette as vcrpy writes it, secrets left in (a JSON
    ``authorization`` and a ``?key=`` query)."""
    request = {"model": "m", "authorization": f"Bearer {secret}", "messages": [HI]}
    response = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "recorded"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    json_type = {"Content-Type": ["application/json"]}
    interaction = {
        "request": {
            "body": json.dumps(request),
            "headers": json_type,
            "method": "POST",
            "uri": f"https://api.anthropic.com/v1/messages?key={secret}",
        },
        "response": {
            "body": {"string": json.dumps(response)},
            "headers": json_type,
            "status": {"code": 200, "message": "OK"},
        },
    }
    return yaml.safe_dump({"interactions": [interaction], "version": 1})


HI = {"role": "user", "content": "hi"}


FOREIGN_TEST = """
import os
import httpx2, pytest, requests

BODY = {{"model": os.environ.get("AR_MODEL", "m"), "authorization": "Bearer {secret}",
        "messages": [{{"role": "user", "content": "hi"}}]}}
URL = "https://api.anthropic.com/v1/messages?key={secret}"


# a vcrpy file matches on method and URI unless asked (issue 20): ask for the body
@pytest.mark.agentreplay(match_on=["method", "host", "path", "query", "body"])
@pytest.mark.parametrize("client", ["httpx2", "requests"])
def test_foreign(agentreplay, client):
    post = httpx2.post if client == "httpx2" else requests.post
    assert post(URL, json=BODY).json()["content"][0]["text"] == "recorded"
"""


def _foreign(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=FOREIGN_TEST.format(secret=SECRET))
    for client in ("httpx2", "requests"):
        path = cassette(pytester, f"test_foreign[{client}]")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_vcr_cassette(SECRET))


def test_a_cassette_holding_unscrubbed_secrets_matches_the_scrubbed_live_request(
    pytester: pytest.Pytester,
) -> None:
    _foreign(pytester)
    before = cassette(pytester, "test_foreign[httpx2]").read_text()
    run(pytester).assert_outcomes(passed=2)
    assert cassette(pytester, "test_foreign[httpx2]").read_text() == before


def test_the_miss_report_shows_what_really_differs(pytester: pytest.Pytester) -> None:
    _foreign(pytester)
    result = run(pytester, AR_MODEL="other-model")
    result.assert_outcomes(failed=2)
    out = result.stdout.str()
    # the failures section only: on CI (``CI`` set) pytest repeats each whole
    # message in the short summary
    failures = out.split("short test summary info")[0]
    assert failures.count("differs in body:") == 2
    assert failures.count("model: recorded 'm', now 'other-model'") == 2
    assert "authorization" not in out, "a scrubbed field was reported as a difference"
    assert SECRET not in out


RULE_ADDED_LATER = """
def pytest_agentreplay_configure(config, settings):
    settings.redact_body_keys.add("tenant_ref")
"""

OURS_TEST = """
import httpx2, pytest

@pytest.mark.agentreplay
def test_ours(agentreplay):
    body = {"model": "m", "tenant_ref": "acme-4711", "messages": []}
    answer = httpx2.post("https://api.anthropic.com/v1/messages", json=body).json()
    assert answer["content"][0]["text"] == "recorded"
"""


def test_a_rule_added_after_recording_still_matches(pytester: pytest.Pytester) -> None:
    """A cassette of ours written before ``tenant_ref`` was scrubbed holds its value;
    once the rule exists the live request is scrubbed, and the recording must be too."""
    pytester.makepyfile(test_user=OURS_TEST)
    [foreign] = loads(_vcr_cassette(SECRET)).interactions
    request = RecordedRequest(
        method="POST",
        url="https://api.anthropic.com/v1/messages",
        json_body={"model": "m", "tenant_ref": "acme-4711", "messages": []},
    )
    path = cassette(pytester, "test_ours")
    save(path, Cassette(interactions=[foreign.replace(request=request)]))
    assert "acme-4711" in path.read_text()
    run(pytester).assert_outcomes(passed=1)
    pytester.makeconftest(RULE_ADDED_LATER)
    run(pytester).assert_outcomes(passed=1)
