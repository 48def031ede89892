"""Cassette load time: our YAML vs what vcrpy does with the same data.

Measures, best of several runs each:

* ``ours``: :func:`pytest_agentreplay.cassettes.io.loads` on our own canonical file
  (the fast canonical reader, re-emission check and the model's checks included);
* ``ours_libyaml``: the same file through the safe libyaml loader and validation
  (the path a hand-edited file takes);
* ``vcr_yaml``: ``yaml.load(text, Loader=yaml.CSafeLoader)`` of the same data in
  vcrpy's shape (what vcrpy itself spends parsing; its own object building on
  top is not counted, so the ratio understates the difference);
* ``vcr_converted``: our loader on the vcrpy-shaped file (YAML + conversion,
  SSE split into events).

Workloads: 1,000 and 5,000 small JSON interactions (an Anthropic request and
reply each), and one interaction streaming 100,000 SSE events.

Usage::

    python bench/cassette_load.py           # results in bench/results/cassette-load.json
    python bench/cassette_load.py --quick   # fewer repeats
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from pytest_agentreplay.cassettes import io as cassette
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.yaml.load import load_yaml

URL = "https://api.anthropic.com/v1/messages"
REQUEST_HEADERS = {"content-type": "application/json", "anthropic-version": "2023-06-01"}


def _pair(i: int) -> tuple[dict[str, Any], dict[str, Any]]:
    request = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": [{"type": "text", "text": f"Weather #{i}?"}]}],
        "stream": False,
    }
    reply = {
        "id": f"msg_{i:06d}",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "It is raining in Leeds."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 20, "output_tokens": 7},
    }
    return request, reply


def _ours_small(n: int) -> Cassette:
    interactions = []
    for i in range(n):
        request, reply = _pair(i)
        interactions.append(
            Interaction(
                request=RecordedRequest(
                    method="POST", url=URL, headers=REQUEST_HEADERS, json=request
                ),
                response=RecordedResponse(
                    status=200, headers={"content-type": "application/json"}, json=reply
                ),
            )
        )
    return Cassette(interactions=interactions)


def _vcr_small(n: int) -> dict[str, Any]:
    items = []
    for i in range(n):
        request, reply = _pair(i)
        items.append(
            {
                "request": {
                    "body": json.dumps(request),
                    "headers": {k: [v] for k, v in REQUEST_HEADERS.items()},
                    "method": "POST",
                    "uri": URL,
                },
                "response": {
                    "body": {"string": json.dumps(reply)},
                    "headers": {"content-type": ["application/json"]},
                    "status": {"code": 200, "message": "OK"},
                },
            }
        )
    return {"interactions": items, "version": 1}


def _events(n: int) -> list[RecordedEvent]:
    return [
        RecordedEvent(
            t=i / 1000,
            event="content_block_delta",
            data=json.dumps(
                {"type": "content_block_delta", "index": 0, "delta": {"text": f"tok{i} "}},
                separators=(",", ":"),
            ),
        )
        for i in range(n)
    ]


def _streams(n: int) -> tuple[Cassette, dict[str, Any]]:
    events = _events(n)
    ours = Cassette(
        interactions=[
            Interaction(
                request=RecordedRequest(method="POST", url=URL),
                response=RecordedResponse(
                    status=200, headers={"content-type": "text/event-stream"}, events=events
                ),
            )
        ]
    )
    body = "".join(f"event: {e.event}\ndata: {e.data}\n\n" for e in events)
    vcr = {
        "interactions": [
            {
                "request": {"body": None, "headers": {}, "method": "POST", "uri": URL},
                "response": {
                    "body": {"string": body},
                    "headers": {"content-type": ["text/event-stream"]},
                    "status": {"code": 200, "message": "OK"},
                },
            }
        ],
        "version": 1,
    }
    return ours, vcr


def _best(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def _slow_path(text: str) -> Cassette:
    return cassette.from_data(load_yaml(text, "bench.yaml"))


def _measure(name: str, ours: Cassette, vcr: dict[str, Any], repeats: int) -> dict[str, Any]:
    text = cassette.dumps(ours)
    vcr_text = yaml.dump(vcr, Dumper=yaml.CSafeDumper)
    row = {
        "workload": name,
        "bytes_ours": len(text.encode()),
        "bytes_vcr": len(vcr_text.encode()),
        "ours": _best(lambda: cassette.loads(text), repeats),
        "ours_libyaml": _best(lambda: _slow_path(text), max(1, repeats // 2)),
        "vcr_yaml": _best(lambda: yaml.load(vcr_text, Loader=yaml.CSafeLoader), repeats),
        "vcr_converted": _best(lambda: cassette.loads(vcr_text), max(1, repeats // 2)),
    }
    row["speedup_vs_vcr_yaml"] = round(row["vcr_yaml"] / row["ours"], 2)
    print(
        f"{name:>24}: ours {row['ours']:.3f}s  ours via libyaml {row['ours_libyaml']:.3f}s  "
        f"vcr yaml {row['vcr_yaml']:.3f}s  vcr converted {row['vcr_converted']:.3f}s  "
        f"(x{row['speedup_vs_vcr_yaml']})"
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeats = 2 if args.quick else 5
    rows = [
        _measure("1,000 JSON interactions", _ours_small(1000), _vcr_small(1000), repeats),
        _measure("5,000 JSON interactions", _ours_small(5000), _vcr_small(5000), repeats),
        _measure("100,000-event stream", *_streams(100_000), max(1, repeats // 2)),
    ]
    out = Path(__file__).parent / "results" / "cassette-load.json"
    out.parent.mkdir(exist_ok=True)
    meta = {"python": platform.python_version(), "libyaml": yaml.__with_libyaml__}
    out.write_text(json.dumps({"environment": meta, "results": rows}, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
