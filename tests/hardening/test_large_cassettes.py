"""Item 24: large cassettes.

Replay: a cassette of 10,000 interactions plus one 50 MB SSE body. Once it is loaded,
replaying one interaction — a small one found by the index, or the whole 50 MB stream
read chunk by chunk — stays under a fixed memory budget (tracemalloc peak): the
player encodes events as the client pulls them, never the whole body at once.

Record: a response bigger than ``max_body_bytes`` (set in
``pytest_agentreplay_configure``) still reaches the client whole, is not recorded —
the test errors with a message naming the request and the cap — and recording it
costs memory bounded by the cap, not by the stream.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import httpx2
import pytest

from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.handle import AgentReplay
from pytest_agentreplay.cassettes.io import dumps
from tests.cassettes._plugin_runs import PRELUDE, cassette, results, run
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

SMALL_CALLS = 10_000
BIG_EVENTS = 5_000
EVENT_TEXT = 10_000  # bytes of text per event: 50 MB in all
URL = "https://api.anthropic.com/v1/messages"
REPLAY_BUDGET = 1024 * 1024  # bytes: tracemalloc peak while replaying one interaction
KEY_BUDGET = 400  # bytes per recorded request: its matching key, made at the first take by key


def _template() -> tuple[str, str, str]:
    """Our own writer's text for one small call and one streamed call (one event):
    the blocks the big file repeats, so it is exactly what the recorder writes."""
    small = Interaction(
        request=RecordedRequest(
            method="POST", url=URL, json_body={"model": "m", "messages": [_user("PROMPT")]}
        ),
        response=RecordedResponse(
            status=200,
            headers={"content-type": "application/json"},
            json_body={"id": "PROMPT", "content": [{"type": "text", "text": "PROMPT"}]},
        ),
    )
    big = Interaction(
        request=RecordedRequest(
            method="POST",
            url=URL,
            json_body={"model": "m", "stream": True, "messages": [_user("big")]},
        ),
        response=RecordedResponse(
            status=200,
            headers={"content-type": "text/event-stream"},
            events=[RecordedEvent(event="delta", data='{"text":"TEXT"}', t=0.5)],
        ),
    )
    text = dumps(Cassette(interactions=[small, big]))
    _, small_block, big_block = text.split("- request:\n")
    event = next(line for line in big_block.splitlines(keepends=True) if "TEXT" in line)
    return "- request:\n" + small_block, "- request:\n" + big_block, event


def _user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


@pytest.fixture(scope="module")
def big_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    small, big, event = _template()
    path = tmp_path_factory.mktemp("large") / "large.yaml"
    filler = "x" * (EVENT_TEXT - 8)
    events = "".join(event.replace("TEXT", f"{filler}{i:08d}") for i in range(BIG_EVENTS))
    with path.open("w") as out:
        out.write("interactions:\n")
        out.writelines(small.replace("PROMPT", f"q{i}") for i in range(SMALL_CALLS))
        out.write(big.replace(event, events))
    assert path.stat().st_size > 50_000_000
    return path


@pytest.fixture
def agentreplay_config(big_cassette: Path) -> dict[str, Any]:
    return {"cassette": str(big_cassette)}


def _peak(work: Any) -> tuple[Any, int]:
    """What ``work()`` returns and its tracemalloc peak in bytes (time is measured in
    bench/: a wall-clock bound fails on a loaded machine)."""
    tracemalloc.start()
    try:
        result = work()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return result, peak


def _read_stream() -> tuple[int, int]:
    body = {"model": "m", "stream": True, "messages": [_user("big")]}
    size = events = 0
    with httpx2.stream("POST", URL, json=body) as response:
        for chunk in response.iter_bytes():
            size += len(chunk)
            events += chunk.count(b"\n\n")
    return size, events


def test_replaying_one_interaction_of_a_huge_cassette_stays_in_a_memory_budget(
    agentreplay: AgentReplay,
) -> None:
    assert len(agentreplay.interactions) == SMALL_CALLS + 1
    first = {"model": "m", "messages": [_user("q0")]}
    answer, peak = _peak(lambda: httpx2.post(URL, json=first).json())
    assert answer["id"] == "q0"
    assert peak < REPLAY_BUDGET, f"one small call: peak {peak / 1e6:.1f} MB"
    print(f"replay peak, one small call: {peak / 1e6:.3f} MB")

    # Out of recorded order: the recorded requests' keys are computed now (a replay in
    # order never needs them), and kept for the test, as they were from the load before.
    last = {"model": "m", "messages": [_user(f"q{SMALL_CALLS - 1}")]}
    answer, peak = _peak(lambda: httpx2.post(URL, json=last).json())
    assert answer["id"] == f"q{SMALL_CALLS - 1}"
    keys = SMALL_CALLS * KEY_BUDGET
    assert peak < keys, f"one small call out of order: peak {peak / 1e6:.1f} MB"
    print(f"replay peak, one small call out of order: {peak / 1e6:.3f} MB")

    (size, events), peak = _peak(_read_stream)
    assert events == BIG_EVENTS
    assert size > BIG_EVENTS * EVENT_TEXT
    assert peak < REPLAY_BUDGET, f"the 50 MB stream: peak {peak / 1e6:.1f} MB"
    print(f"replay peak, {size / 1e6:.0f} MB stream: {peak / 1e6:.3f} MB")


CAP = """
def pytest_agentreplay_configure(config, settings):
    settings.max_body_bytes = 1_000_000
"""

HUGE = (
    PRELUDE
    + """
import tracemalloc

@pytest.mark.agentreplay
def test_huge(agentreplay):
    body = {"model": "m", "max_tokens": 9, "stream": True,
            "messages": [{"role": "user", "content": "lots"}]}
    tracemalloc.start()
    with httpx2.stream("POST", URL + "/v1/messages", json=body) as response:
        size = sum(len(chunk) for chunk in response.iter_bytes())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    report(agentreplay, size=size, peak=peak)
"""
)
RECORD_BUDGET = 3 * 1024 * 1024  # bytes, for a 1 MB cap and a 20 MB stream


def test_recording_a_stream_over_the_size_cap_is_a_clear_error_in_bounded_memory(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    pytester.makeconftest(CAP)
    pytester.makepyfile(test_user=HUGE)
    chunk = b"event: blob\ndata: " + b"x" * 20_000 + b"\n\n"
    server.add_raw([chunk] * 1_000)  # 20 MB
    result = run(pytester, "--agentreplay-record-mode=once", AR_SERVER=server.url)
    result.assert_outcomes(passed=1, errors=1)
    [seen] = results(pytester)
    assert seen["size"] == len(chunk) * 1_000, "the client did not get the whole stream"
    assert seen["peak"] < RECORD_BUDGET, f"recording peak {seen['peak'] / 1e6:.1f} MB"
    print(f"recording peak, 20 MB stream over a 1 MB cap: {seen['peak'] / 1e6:.2f} MB")
    result.stdout.fnmatch_lines(
        [
            "*CassetteWriteError: *test_huge.yaml: POST *: the response body exceeded 1,000,000 "
            "bytes and was not recorded (raise max_body_bytes in pytest_agentreplay_configure*"
        ]
    )
    assert not cassette(pytester, "test_huge").exists()
