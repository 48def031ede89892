"""Issue 20, item 16: vcrpy's own ``VCR()`` keys in ``agentreplay_config`` and the marker.

After the documented renames a pytest-recording ``vcr_config`` keeps its keys, and
real ones set ``filter_headers``, ``filter_query_parameters``,
``filter_post_data_parameters``, ``decode_compressed_response``,
``before_record_request`` / ``before_record_response``. They were refused ("unknown
agentreplay_config key(s)"); now each is honoured with vcrpy's semantics, through the
SDKs (httpx2) and through vcrpy (requests), and the filtered values never reach the
cassette. Keys that cannot be honoured are refused by name, with what to do instead.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests  # noqa: F401 - imported once here: in-process runs reuse it

from pytest_agentreplay import Reply
from tests.cassettes._plugin_runs import PRELUDE, cassette, interactions, run
from tests.migration._web import Handler
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

SECRETS = ("tenant-secret-1", "team-secret-2", "ref-secret-3", "body-secret-4")


def _text(pytester: pytest.Pytester, name: str) -> str:
    return cassette(pytester, name).read_text("utf-8")


def _no_secrets(text: str) -> None:
    for secret in (*SECRETS, "cookie-secret-5"):
        assert secret not in text, secret


SDK_TEST = (
    PRELUDE
    + """

@pytest.fixture
def agentreplay_config():
    return {
        "filter_headers": ["x-tenant-token", ("x-team", "DUMMY")],
        "filter_query_parameters": ["ref"],
        "filter_post_data_parameters": [("tenant_ref", None)],
        "decode_compressed_response": True,
    }


@pytest.mark.agentreplay
@pytest.mark.parametrize("stream", [False, True])
def test_sdk(agentreplay, stream):
    extra = dict(
        extra_headers={"x-tenant-token": "tenant-secret-1", "x-team": "team-secret-2"},
        extra_query={"ref": "ref-secret-3", "page": "1"},
        extra_body={"tenant_ref": "body-secret-4"},
    )
    assert ask("hello", stream=stream, **extra) == "Hi there."
    report(agentreplay)
"""
)


def test_filters_through_the_sdk_never_reach_the_cassette_and_still_match(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=SDK_TEST)
    server.add(Reply.text("Hi there."))
    server.add(Reply.text("Hi there."))
    run(pytester, "--agentreplay-record-mode=once", AR_SERVER=server.url).assert_outcomes(passed=2)
    for name in ("test_sdk[False]", "test_sdk[True]"):
        text = _text(pytester, name)
        _no_secrets(text)
        [stored] = interactions(cassette(pytester, name))
        request = stored["request"]
        assert "x-tenant-token" not in request["headers"]  # a name alone: removed
        assert request["headers"]["x-team"] == "DUMMY"  # (name, replacement)
        assert request["url"].endswith("/v1/messages?page=1")
        assert "tenant_ref" not in request["json"]
    assert "tenant-secret-1" in json.dumps(server.headers)  # the server got them all
    # Replayed with the server gone: the live request is filtered as the stored one was,
    # so it matches (in this plugin's format, the body is matched too).
    replayed = run(pytester, AR_SERVER=server.url.replace(server.url.split(":")[-1], "9"))
    replayed.assert_outcomes(passed=2)


ASYNC_TEST = """
import asyncio, os, openai, pytest


@pytest.mark.agentreplay(
    filter_headers=["x-tenant-token"],
    filter_query_parameters=[("ref", "REF")],
    filter_post_data_parameters=["tenant_ref"],
)
@pytest.mark.parametrize("stream", [False, True])
def test_async_openai(agentreplay, stream):
    async def main():
        client = openai.AsyncOpenAI(api_key="test", base_url=os.environ["AR_SERVER"] + "/v1",
                                    max_retries=0)
        args = dict(
            model="gpt-test", messages=[{"role": "user", "content": "hello"}],
            extra_headers={"x-tenant-token": "tenant-secret-1"},
            extra_query={"ref": "ref-secret-3"}, extra_body={"tenant_ref": "body-secret-4"},
        )
        async with client:
            if not stream:
                reply = await client.chat.completions.create(**args)
                return reply.choices[0].message.content
            chunks = await client.chat.completions.create(stream=True, **args)
            return "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])

    assert asyncio.run(main()) == "Hi there."
"""


def test_filters_through_the_async_openai_sdk(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=ASYNC_TEST)
    server.add(Reply.text("Hi there."))
    server.add(Reply.text("Hi there."))
    run(pytester, "--agentreplay-record-mode=once", AR_SERVER=server.url).assert_outcomes(passed=2)
    for name in ("test_async_openai[False]", "test_async_openai[True]"):
        _no_secrets(_text(pytester, name))
        [stored] = interactions(cassette(pytester, name))
        assert stored["request"]["url"].endswith("/v1/chat/completions?ref=REF")
    run(pytester, AR_SERVER="http://127.0.0.1:9").assert_outcomes(passed=2)
    assert len(server.requests) == 2


REQUESTS_TEST = """
import os, requests, pytest

URL = os.environ["WEB"]


def drop_errors(response):
    return None if response["status"]["code"] >= 400 else response


def strip_cookie(response):
    del response["headers"]["Set-Cookie"]  # the server's case: vcrpy kept it
    return response


def skip_health(request):
    return None if request.path == "/health" else request


@pytest.fixture
def agentreplay_config():
    return {
        "filter_headers": [("X-Api-Token", "DUMMY"), ("X-Team", "DUMMY"), "x-tenant-token"],
        "filter_query_parameters": [("ref", "REF")],
        "filter_post_data_parameters": ["password"],
        "before_record_request": skip_health,
        "before_record_response": [drop_errors, strip_cookie],
        "decode_compressed_response": True,
    }


@pytest.mark.agentreplay
def test_requests(agentreplay):
    headers = {"X-Api-Token": "team-secret-2", "X-Team": "team-secret-2",
               "x-tenant-token": "tenant-secret-1"}
    got = requests.get(URL + "/items", params={"ref": "ref-secret-3", "q": "a"}, headers=headers)
    assert got.json()["path"] == "/items"
    form = requests.post(URL + "/login", data={"user": "ann", "password": "body-secret-4"})
    assert form.json()["path"] == "/login"
    assert requests.get(URL + "/gzip").json()["path"] == "/gzip"
    if agentreplay.record_mode != "none":  # not recorded: a replay misses it, as vcrpy's
        assert requests.get(URL + "/missing").status_code == 404
    assert requests.get(URL + "/health").status_code == 200
"""


def test_filters_through_vcrpy_with_requests(pytester: pytest.Pytester, web: str) -> None:
    pytester.makepyfile(test_user=REQUESTS_TEST)
    run(pytester, "--agentreplay-record-mode=once", WEB=web).assert_outcomes(passed=1)
    text = _text(pytester, "test_requests")
    _no_secrets(text)
    stored = interactions(cassette(pytester, "test_requests"))
    paths = [i["request"]["url"].split(web)[-1] for i in stored]
    # /missing: before_record_response returned None; /health: before_record_request did.
    assert paths == ["/items?q=a&ref=REF", "/login", "/gzip"]  # vcrpy sorts the query
    assert stored[0]["request"]["headers"]["x-team"] == "DUMMY"
    # A header the default rules scrub as well gets their placeholder: they run last.
    assert stored[0]["request"]["headers"]["x-api-token"] == "REDACTED"
    assert "x-tenant-token" not in stored[0]["request"]["headers"]
    assert stored[1]["request"]["body"] == "user=ann"
    assert stored[2]["response"]["json"] == {"path": "/gzip", "got": 0}  # stored decoded
    assert all("set-cookie" not in i["response"]["headers"] for i in stored)
    # Replayed: the recorded ones answer; the one before_record_request skipped goes
    # out live, as vcrpy lets it (loopback is allowed).
    hits = len(Handler.hits)
    run(pytester, WEB=web).assert_outcomes(passed=1)
    assert Handler.hits[hits:] == ["/health"]


STREAM_TEST = (
    PRELUDE
    + """

def no_request_id(response):
    response["headers"].pop("request-id", None)
    response["headers"]["x-recorded"] = ["yes"]
    return response


@pytest.mark.agentreplay(before_record_response=no_request_id)
def test_stream(agentreplay):
    assert ask("hello", stream=True) == "Hi there."
"""
)


def test_a_response_filter_leaves_a_stream_event_by_event(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=STREAM_TEST)
    server.add(Reply.text("Hi there."))
    run(pytester, "--agentreplay-record-mode=once", AR_SERVER=server.url).assert_outcomes(passed=1)
    [stored] = interactions(cassette(pytester, "test_stream"))
    response = stored["response"]
    assert response["headers"]["x-recorded"] == "yes"
    assert len(response["events"]) > 3  # still one entry per event, with its time
    assert all("t" in event for event in response["events"])
    run(pytester, AR_SERVER=server.url).assert_outcomes(passed=1)


IGNORE_TEST = """
import os, httpx2, requests, pytest

URL = os.environ["WEB"]


@pytest.mark.agentreplay(ignore_localhost=True)
def test_ignored(agentreplay):
    assert httpx2.get(URL + "/a").json()["path"] == "/a"
    assert requests.get(URL + "/b").json()["path"] == "/b"
"""


def test_ignored_hosts_are_never_recorded_and_go_out_live(
    pytester: pytest.Pytester, web: str
) -> None:
    pytester.makepyfile(test_user=IGNORE_TEST)
    run(pytester, "--agentreplay-record-mode=once", WEB=web).assert_outcomes(passed=1)
    assert not cassette(pytester, "test_ignored").exists()
    run(pytester, WEB=web).assert_outcomes(passed=1)
    assert Handler.hits == ["/a", "/b", "/a", "/b"]


LEAK_TEST = """
import os, requests, pytest

URL = os.environ["WEB"]


def leak(response):
    response["body"]["string"] = b'{"api_key": "sk-ant-api03-' + b"x" * 40 + b'"}'
    return response


@pytest.mark.agentreplay(before_record_response=leak)
def test_body(agentreplay):
    requests.get(URL + "/x")


@pytest.mark.agentreplay(filter_headers=[("x-a", "sk-proj-" + "y7" * 20)])
def test_header(agentreplay):
    requests.get(URL + "/x", headers={"x-a": "1"})
"""


def test_what_a_filter_writes_is_still_scrubbed_and_scanned(
    pytester: pytest.Pytester, web: str
) -> None:
    pytester.makepyfile(test_user=LEAK_TEST)
    result = run(pytester, "--agentreplay-record-mode=once", WEB=web)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*refusing to write*test_header.yaml: 1 secret(s) survived*"])
    assert not cassette(pytester, "test_header").exists()
    [stored] = interactions(cassette(pytester, "test_body"))
    assert stored["response"]["json"] == {"api_key": "REDACTED"}  # the default rules ran


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"custom_patches": ()}, "custom_patches is not supported*agentreplay_vcr*"),
        ({"drop_unused_requests": True}, "drop_unused_requests is not supported*rewrite*"),
        ({"filter_sensitive_data": {"X": "y"}}, "filter_sensitive_data is not*scrubbers*"),
        ({"serializer": "json"}, "serializer='json' is not supported*YAML*"),
        ({"filter_headers": "authorization"}, "filter_headers must be a list*"),
        ({"filter_headers": [("a", 1)]}, "filter_headers takes names or (name, replacement)*"),
        ({"before_record_response": "x"}, "before_record_response must be a function*"),
        ({"decode_compressed_response": "yes"}, "decode_compressed_response must be True*"),
        ({"filter_header": ["a"]}, "unknown agentreplay_config key(s) filter_header;*"),
    ],
    ids=lambda value: str(value)[:30] if isinstance(value, dict) else "",
)
def test_a_key_that_cannot_be_honoured_is_refused_by_name(
    pytester: pytest.Pytester, config: dict[str, Any], message: str
) -> None:
    pytester.makepyfile(
        test_user=f"""
import pytest

@pytest.fixture
def agentreplay_config():
    return {config!r}

@pytest.mark.agentreplay
def test_one():
    pass
"""
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*test_user.py::test_one: *{message}"])


MODES_TEST = """
import httpx2, pytest
from vcr.record_mode import RecordMode


@pytest.fixture
def agentreplay_config():
    return {"record_mode": RecordMode.NONE, "match_on": ["method", "url"]}


@pytest.mark.agentreplay
def test_modes(agentreplay):
    assert agentreplay.record_mode == "none"
    assert httpx2.get("https://api.example.test/a?x=1").json() == {"ok": 1}
"""

CASSETTE = """\
interactions:
- request:
    body: null
    headers: {}
    method: GET
    uri: https://api.example.test/a?x=1
  response:
    body:
      string: '{"ok": 1}'
    headers:
      Content-Type:
      - application/json
    status:
      code: 200
      message: OK
version: 1
"""


def test_vcrpy_record_modes_and_matcher_names_are_understood(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=MODES_TEST)
    path = cassette(pytester, "test_modes")
    path.parent.mkdir(parents=True)
    path.write_text(CASSETTE)
    run(pytester).assert_outcomes(passed=1)


def test_a_refused_value_never_reaches_the_output(pytester: pytest.Pytester) -> None:
    """``filter_sensitive_data`` holds the secrets themselves; a key pasted into another
    option is one too: the refusal names the key, never the value."""
    key = "sk-ant-api03-" + "Zq3" * 12
    pytester.makepyfile(
        test_user=f"""
import pytest

@pytest.mark.agentreplay(filter_sensitive_data={{"<KEY>": "{key}"}})
def test_one():
    pass

@pytest.mark.agentreplay(ignore_hosts="{key}")
def test_two():
    pass
"""
    )
    result = run(pytester)
    result.assert_outcomes(errors=2)
    output = result.stdout.str()
    assert "filter_sensitive_data is not supported" in output
    assert "ignore_hosts must be a list" in output
    assert key not in output
