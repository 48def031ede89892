"""Replayed streams: paced like the recording when asked, re-chunked by the
configure hook, and lazy — the first event leaves before the last is touched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_agentreplay import Reply, sse
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.handle import AgentReplay
from pytest_agentreplay.cassettes.io import dumps
from tests import sdk
from tests.cassettes._plugin_runs import PRELUDE, interactions, results, run
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

WORDS = " ".join(f"w{i}" for i in range(10))

TIMED = (
    PRELUDE
    + """
import time

@pytest.mark.agentreplay(pace=float(os.environ["AR_PACE"]) if os.environ.get("AR_PACE") else None)
def test_timed(agentreplay, monkeypatch):
    arrivals, slept = [], []
    sleep = time.sleep
    monkeypatch.setattr(time, "sleep", lambda s: (slept.append(s), sleep(s))[1])
    with client().messages.stream(model="m", max_tokens=9,
                                  messages=[{"role": "user", "content": "go"}]) as s:
        start = time.monotonic()
        for text in s.text_stream:
            arrivals.append(time.monotonic() - start)
        message = s.get_final_message()
    report(agentreplay, arrivals=arrivals, slept=slept, text=message.content[0].text)
"""
)


def test_pace_replays_with_the_recorded_timing_and_default_is_fast(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=TIMED)
    server.add(Reply.text(WORDS), delay=0.06)
    run(pytester, "--agentreplay-record-mode=once", AR_SERVER=server.url).assert_outcomes(passed=1)
    [live] = results(pytester)
    [recorded] = interactions(pytester.path / "cassettes" / "test_user" / "test_timed.yaml")
    times = [e["t"] for e in recorded["response"]["events"]]
    span = times[-1] - times[0]
    assert span >= 0.06 * (len(times) - 2), "the recording kept the arrival times"

    run(pytester, AR_PACE="1.0").assert_outcomes(passed=1)
    run(pytester).assert_outcomes(passed=1)
    paced, fast = results(pytester)
    assert paced["text"] == fast["text"] == live["text"] == WORDS
    paced_span = paced["arrivals"][-1] - paced["arrivals"][0]
    deltas = [e for e in recorded["response"]["events"] if e["event"] == "content_block_delta"]
    recorded_span = deltas[-1]["t"] - deltas[0]["t"]
    # Sleeps make a lower bound reliable. The default replay is fast because it never
    # waits: no sleep at all (a clock bound would fail on a loaded machine).
    assert paced_span >= 0.9 * recorded_span
    assert paced["slept"], "the paced replay slept between events"
    assert fast["slept"] == []


CHUNKED = (
    PRELUDE
    + """
@pytest.mark.agentreplay
def test_chunks(agentreplay):
    body = {"model": "m", "max_tokens": 9, "stream": True,
            "messages": [{"role": "user", "content": "go"}]}
    with httpx2.stream("POST", URL + "/v1/messages", json=body) as response:
        chunks = list(response.iter_raw())
    report(agentreplay, sizes=[len(c) for c in chunks], body=b"".join(chunks).decode(),
           text=ask("go", stream=True))
"""
)


@pytest.mark.parametrize(
    ("chunking", "check"),
    [
        ("7", lambda sizes: max(sizes) == 7 and len(sizes) > 20),
        ('"whole"', lambda sizes: len(sizes) == 1),
        ('"lines"', lambda sizes: len(sizes) > 30),
        (
            "__import__('pytest_agentreplay.transport.chunking')"
            ".transport.chunking.Chunking.random(seed=3, max_size=5)",
            lambda sizes: max(sizes) <= 5 and len(set(sizes)) > 1,
        ),
    ],
)
def test_the_configure_hook_rechunks_replayed_streams(
    pytester: pytest.Pytester, server: ProviderServer, chunking: str, check: Any
) -> None:
    pytester.makepyfile(test_user=CHUNKED)
    server.add(Reply.text(WORDS))
    server.add(Reply.text(WORDS))
    run(pytester, "--agentreplay-record-mode=once", AR_SERVER=server.url).assert_outcomes(passed=1)
    pytester.makeconftest(
        f"def pytest_agentreplay_configure(config, settings):\n    settings.chunking = {chunking}\n"
    )
    run(pytester).assert_outcomes(passed=1)
    live, replayed = results(pytester)
    assert check(replayed["sizes"]), replayed["sizes"]
    assert not check(live["sizes"]) or chunking == '"lines"'
    assert replayed["body"] == live["body"]  # the same bytes, cut elsewhere
    assert replayed["text"] == live["text"] == WORDS


# --- laziness ------------------------------------------------------------------------

EVENTS = 100_000


def _long_stream(n: int) -> Cassette:
    """An anthropic text stream of ``n`` events (one delta each)."""
    head = [
        RecordedEvent(
            event="message_start",
            data='{"type":"message_start","message":{"id":"msg_1","type":"message","role":'
            '"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,'
            '"usage":{"input_tokens":1,"output_tokens":1}}}',
        ),
        RecordedEvent(
            event="content_block_start",
            data='{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
        ),
    ]
    delta = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}'
    body = [RecordedEvent(event="content_block_delta", data=delta) for _ in range(n - 2)]
    request = RecordedRequest(method="POST", url="https://api.anthropic.com/v1/messages")
    response = RecordedResponse(
        status=200, headers={"content-type": "text/event-stream"}, events=[*head, *body]
    )
    return Cassette(interactions=[Interaction(request=request, response=response)])


@pytest.fixture(scope="module")
def long_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The long stream on disk: the canonical text of a 3-event stream with its delta
    line repeated (``save`` would take seconds to verify 100,000 events)."""
    lines = dumps(_long_stream(3)).splitlines(keepends=True)
    [delta] = [i for i, line in enumerate(lines) if "content_block_delta" in line]
    lines[delta:delta] = [lines[delta]] * (EVENTS - 3)
    path = tmp_path_factory.mktemp("long") / "long.yaml"
    path.write_text("".join(lines))
    return path


@pytest.fixture
def agentreplay_config(long_cassette: Path) -> dict[str, Any]:
    """Every test below replays the long stream (the config fixture: no marker needed)."""
    return {"cassette": str(long_cassette), "match_on": ["method", "path"]}


class _Counter:
    def __init__(self) -> None:
        self.converted = 0
        self.encoded = 0


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> _Counter:
    """Counts recorded events turned into SSE events, and SSE events encoded."""
    counter = _Counter()
    to_sse, encode = RecordedEvent.to_sse, sse.SSEEncoder.encode

    def counted_to_sse(self: RecordedEvent) -> sse.SSEEvent:
        counter.converted += 1
        return to_sse(self)

    def counted_encode(self: sse.SSEEncoder, event: sse.SSEEvent) -> bytes:
        counter.encoded += 1
        return encode(self, event)

    monkeypatch.setattr(RecordedEvent, "to_sse", counted_to_sse)
    monkeypatch.setattr(sse.SSEEncoder, "encode", counted_encode)
    return counter


def test_the_first_event_leaves_before_the_player_touches_the_rest(
    agentreplay: AgentReplay, work: _Counter
) -> None:
    assert len(agentreplay.interactions[0].response.events or ()) == EVENTS
    client = sdk.client("anthropic")
    stream = client.messages.create(
        model="m", max_tokens=9, messages=[{"role": "user", "content": "go"}], stream=True
    )
    first = next(iter(stream))
    assert first.type == "message_start"
    assert work.converted < 100, "replay converted the whole recording up front"
    assert work.encoded < 100, "replay encoded the whole recording up front"
    stream.close()
    assert [c.outcome for c in agentreplay.calls] == ["cancelled"]
