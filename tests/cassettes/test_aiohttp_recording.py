"""aiohttp recorded and replayed as httpx is (issue 19, §1): first-class cassettes.

Recording tees the live body (the client reads it chunk by chunk as it arrives; the
cassette keeps a stream as its events, with how it ended), and replay feeds aiohttp's
reader one event at a time. Until issue 19 aiohttp reached cassettes only through
vcrpy, which buffers a stream and replays it as one chunk.
"""

from __future__ import annotations

import gzip
import json

import aiohttp  # noqa: F401 - imported once here: in-process runs reuse it
import pytest

from pytest_agentreplay import Reply
from tests.cassettes._plugin_runs import cassette, interactions, run
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

SECRET = "sk-ant-api03-" + "Q" * 40

USER_TEST = """
import asyncio, gzip, json, os
import aiohttp, pytest
from pytest_agentreplay import Fault, sse

URL = os.environ.get("AR_SERVER", "http://127.0.0.1:9") + "/v1/messages"
KEY = os.environ.get("AR_KEY", "none")
BODY = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}


async def post(body, **options):
    async with aiohttp.ClientSession() as session:
        async with session.post(URL, json=body, headers={"x-api-key": KEY}, **options) as r:
            chunks = []
            try:
                async for chunk in r.content.iter_any():
                    chunks.append(chunk)
            except aiohttp.ClientPayloadError:
                chunks.append(b"<cut>")
            return r.status, chunks


def report(name, chunks):
    with open(os.environ["AR_OUT"], "a") as out:
        out.write(json.dumps({"name": name, "chunks": [c.decode() for c in chunks]}) + "\\n")


@pytest.mark.agentreplay
def test_stream():
    status, chunks = asyncio.run(post({**BODY, "stream": True}))
    report("stream", chunks)
    assert status == 200


@pytest.mark.agentreplay
def test_cut():
    status, chunks = asyncio.run(post({**BODY, "stream": True}))
    report("cut", chunks)
    assert chunks[-1] == b"<cut>"


@pytest.mark.agentreplay
@pytest.mark.parametrize("decompress", [True, False])
def test_gzip(decompress):
    async def call():
        async with aiohttp.ClientSession(auto_decompress=decompress) as session:
            async with session.post(URL, json=BODY) as r:
                raw = await r.read()
                return r.headers.get("content-encoding"), raw

    encoding, raw = asyncio.run(call())
    body = gzip.decompress(raw) if encoding == "gzip" and not decompress else raw
    assert json.loads(body)["content"][0]["text"] == "zipped"


@pytest.mark.agentreplay
def test_injected(agentreplay):
    agentreplay.inject(Fault.cut(after_events=2))
    status, chunks = asyncio.run(post({**BODY, "stream": True}))
    report("injected", chunks)
"""


def _reports(pytester: pytest.Pytester) -> dict[str, list[str]]:
    out = pytester.path / "out.jsonl"
    found = {}
    for line in out.read_text().splitlines():
        entry = json.loads(line)
        found[entry["name"]] = entry["chunks"]
    out.unlink()
    return found


def _anthropic_json(text: str) -> bytes:
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    return json.dumps(body).encode()


def test_aiohttp_streams_are_recorded_as_events_and_replayed_event_by_event(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    server.add(Reply.text("one two three four"))
    server.add(Reply.text("never finished"), drop_after=3)
    zipped = gzip.compress(_anthropic_json("zipped"))
    for _ in range(2):
        server.add_raw(
            [zipped[:10], zipped[10:]],
            headers={"content-type": "application/json", "content-encoding": "gzip"},
        )
    server.add(Reply.text("five six seven"))
    env = {"AR_SERVER": server.url, "AR_KEY": SECRET}

    recorded = run(pytester, "--agentreplay-record-mode=once", **env)
    recorded.assert_outcomes(passed=5)
    live = _reports(pytester)
    assert len(server.requests) == 5

    [stream] = interactions(cassette(pytester, "test_stream"))
    events = stream["response"]["events"]
    assert [e["event"] for e in events][0 :: len(events) - 1] == ["message_start", "message_stop"]
    assert len(live["stream"]) == len(events), "the client read one chunk per event, live"
    [cut] = interactions(cassette(pytester, "test_cut"))
    assert (cut["response"]["end"], len(cut["response"]["events"])) == ("cut", 3)
    for decompress in ("True", "False"):
        [zipped_call] = interactions(cassette(pytester, f"test_gzip[{decompress}]"))
        assert zipped_call["response"]["json"]["content"][0]["text"] == "zipped"
    for path in (pytester.path / "cassettes").rglob("*.yaml"):
        assert SECRET not in path.read_text(), f"{path.name} holds the API key"

    replayed = run(pytester, **env)
    replayed.assert_outcomes(passed=5)
    again = _reports(pytester)
    assert len(server.requests) == 5, "the replay went live"
    assert again["stream"] == live["stream"], "the same chunks, one event each"
    assert again["cut"] == live["cut"]
    assert again["cut"][-1] == "<cut>"
    assert len(again["injected"]) == 3
    assert again["injected"][-1] == "<cut>"
