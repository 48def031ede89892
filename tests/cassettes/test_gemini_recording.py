"""Gemini traffic recorded through google-genai, then replayed with no server.

The loopback provider server answers as Gemini does (CRLF-framed streams); a user
test records ``generate_content`` and ``generate_content_stream`` with an API key
in Google's header and in a ``?key=`` query, then replays them offline. The key
reaches the cassette in no form, and the replay gives the SDK what the server did.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import google.genai  # noqa: F401 - imported once, before the in-process runs (see _plugin_runs)
import pytest

from pytest_agentreplay.neutral import Reply, Thinking, ToolCall, Usage
from tests.cassettes._plugin_runs import cassette, interactions, results, run
from tests.servers import ProviderServer, provider_server

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.sdk

KEY = "AIzaSyD-0123456789abcdefghijklmnopqrstu"
USER_TEST = """
import json, os
import httpx, pytest
from google import genai
from google.genai import types

URL = os.environ["AR_SERVER"]
KEY = os.environ["AR_KEY"]
MODEL = "gemini-3.5-flash-lite"


@pytest.mark.agentreplay
def test_gemini(agentreplay):
    client = genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=URL))
    whole = client.models.generate_content(model=MODEL, contents="Leeds?")
    chunks = list(client.models.generate_content_stream(model=MODEL, contents="York?"))
    raw = httpx.post(
        URL + "/v1beta/models/" + MODEL + ":generateContent?key=" + KEY,
        json={"contents": [{"role": "user", "parts": [{"text": "Hull?"}]}]},
    ).json()
    parts = [p for c in chunks for p in c.candidates[0].content.parts]
    with open(os.environ["AR_OUT"], "a") as out:
        out.write(json.dumps({
            "mode": agentreplay.record_mode,
            "sources": [c.source for c in agentreplay.calls],
            "whole": whole.text,
            "chunks": len(chunks),
            "thoughts": "".join(p.text or "" for p in parts if p.thought),
            "calls": [[p.function_call.name, p.function_call.args]
                      for p in parts if p.function_call],
            "signatures": [p.thought_signature.hex() for p in parts if p.thought_signature],
            "usage": chunks[-1].usage_metadata.model_dump(exclude_none=True),
            "raw": raw["candidates"][0]["content"]["parts"][0]["text"],
        }) + "\\n")
"""


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    with provider_server() as state:
        yield state


def test_record_then_replay_without_the_server(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    server.add(Reply.text("Leeds is in Yorkshire."))
    server.add(
        Reply(
            parts=[
                Thinking(text="A city in the north.", signature="c2lnLXlvcms="),
                ToolCall(name="map", args={"city": "York"}),
            ],
            usage=Usage(input_tokens=4, output_tokens=9, reasoning_tokens=5),
        )
    )
    server.add(Reply.text("Hull is on the Humber."))

    run(
        pytester, "--agentreplay-record-mode=once", AR_SERVER=server.url, AR_KEY=KEY
    ).assert_outcomes(passed=1)
    [recorded] = results(pytester)
    assert recorded["mode"] == "once" and recorded["sources"] == ["live"] * 3
    assert recorded["calls"] == [["map", {"city": "York"}]]
    assert recorded["signatures"] == [b"sig-york".hex()]
    assert server.headers[0]["x-goog-api-key"] == KEY  # the key did go to the server

    path = cassette(pytester, "test_gemini")
    text = path.read_text("utf-8")
    assert KEY not in text and KEY[4:20] not in text  # header and ?key= both scrubbed
    assert ":generateContent?key=REDACTED" in text
    stream = interactions(path)[1]
    assert stream["request"]["url"].endswith(":streamGenerateContent?alt=sse")
    events = stream["response"]["events"]
    assert len(events) == recorded["chunks"] > 1  # recorded event by event
    assert json.loads(events[-1]["data"])["candidates"][0]["finishReason"] == "STOP"

    server.script.clear()
    run(pytester, AR_SERVER=server.url, AR_KEY=KEY).assert_outcomes(passed=1)
    [replayed] = results(pytester)
    assert replayed["sources"] == ["cassette"] * 3
    assert len(server.requests) == 3  # the replay sent nothing to the server
    assert {k: v for k, v in replayed.items() if k not in ("mode", "sources")} == {
        k: v for k, v in recorded.items() if k not in ("mode", "sources")
    }
    assert replayed["usage"]["thoughts_token_count"] == 5
