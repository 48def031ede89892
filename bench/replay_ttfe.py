"""Time to the first event of a replayed recording, against the recording's length.

Builds one recorded Anthropic stream of 10, 1,000 and 100,000 events, and for
each measures (median of repeats, the cassette already loaded, as in a test):

* ``first``: from asking for the interaction's playback to holding
  the first chunk — what a client waits before its first token;
* ``all``: draining every chunk (throughput, for scale).

Replay converts and encodes events as the client pulls them, so ``first``
should not grow with the length.

Usage::

    python bench/replay_ttfe.py

Results go to ``bench/results/replay-ttfe.json``.
"""

from __future__ import annotations

import json
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import httpx2

from pytest_agentreplay.cassettes.cassette import (
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.replay import playback_for
from pytest_agentreplay.transport.answer import Plan
from pytest_agentreplay.transport.delivery import Delivery
from pytest_agentreplay.transport.family import Family

DELTA = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}'


def _interaction(n: int) -> Interaction:
    events = [RecordedEvent(event="content_block_delta", data=DELTA, t=i * 1e-4) for i in range(n)]
    return Interaction(
        request=RecordedRequest(method="POST", url="https://api.anthropic.com/v1/messages"),
        response=RecordedResponse(
            status=200, headers={"content-type": "text/event-stream"}, events=events
        ),
    )


def _delivery(interaction: Interaction) -> Delivery:
    playback = playback_for(
        interaction, method="POST", path="/v1/messages", fault=None, plan=Plan()
    )
    return Delivery(playback, Family("httpx2", httpx2))


def _first(interaction: Interaction) -> float:
    started = time.perf_counter()
    chunks = _delivery(interaction).iterate()
    next(chunks)
    elapsed = time.perf_counter() - started
    chunks.close()
    return elapsed


def _all(interaction: Interaction) -> float:
    started = time.perf_counter()
    for _ in _delivery(interaction).iterate():
        pass
    return time.perf_counter() - started


def measure(n: int, repeats: int) -> dict[str, Any]:
    interaction = _interaction(n)
    first = statistics.median(_first(interaction) for _ in range(repeats))
    drain = statistics.median(_all(interaction) for _ in range(3))
    return {
        "events": n,
        "first_event_us": round(first * 1e6, 1),
        "all_events_ms": round(drain * 1e3, 2),
        "per_event_us": round(drain / n * 1e6, 2),
    }


def main() -> None:
    rows = [measure(n, 50) for n in (10, 1_000, 100_000)]
    for row in rows:
        print(row)
    out = Path(__file__).parent / "results" / "replay-ttfe.json"
    out.write_text(
        json.dumps({"python": platform.python_version(), "results": rows}, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
