"""Per-request matching cost against cassette size: the index is flat, a scan is not.

Builds cassettes of 100, 1,000 and 5,000 interactions whose request bodies are
distinct agent conversations of the same size (~2 KB), then measures:

* ``build``: constructing the :class:`~pytest_agentreplay.cassettes.matching.Index`;
* ``take``: serving every recorded request once, in a shuffled order (mean per
  request) — the index looks up one key, whatever the cassette size;
* ``scan``: what a matcher without an index pays (vcrpy compares the request
  with every interaction): normalize and compare against each recorded body,
  measured on a sample of requests;
* ``miss``: building one :func:`explain_miss` report.

Usage::

    python bench/matching_index.py            # 100 / 1,000 / 5,000
    python bench/matching_index.py --quick    # 100 / 5,000, fewer repeats

Results go to ``bench/results/matching-index[-quick].json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import statistics
import time
from pathlib import Path
from typing import Any

from pytest_agentreplay.cassettes.cassette import RecordedRequest
from pytest_agentreplay.cassettes.matching import Index, explain_miss, normalize_body

URL = "https://api.anthropic.com/v1/messages"


def _body(i: int) -> dict[str, Any]:
    messages = [
        {
            "role": "user" if k % 2 == 0 else "assistant",
            "content": f"turn {k} of run {i}: " + "x" * 150,
        }
        for k in range(10)
    ]
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 1024,
        "temperature": 0.2,
        "stream": True,
        "messages": messages,
    }


def _requests(n: int) -> list[RecordedRequest]:
    return [RecordedRequest(method="POST", url=URL, json=_body(i)) for i in range(n)]


def _live(n: int) -> list[RecordedRequest]:
    """The same requests as a client sends them: JSON text, other key order."""
    return [
        RecordedRequest(
            method="POST",
            url=URL,
            body=json.dumps(_body(i), sort_keys=True, indent=1),
            headers={"content-type": "application/json"},
        )
        for i in range(n)
    ]


def _best(fn: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _scan_once(recorded: list[RecordedRequest], live: RecordedRequest) -> int | None:
    want = normalize_body(live)
    return next((i for i, r in enumerate(recorded) if normalize_body(r) == want), None)


def measure(n: int, repeats: int) -> dict[str, float]:
    recorded, live = _requests(n), _live(n)
    order = list(range(n))
    random.Random(n).shuffle(order)
    build = _best(lambda: Index(recorded), repeats)

    def replay_all() -> None:
        index = Index(recorded)
        start = time.perf_counter()
        for i in order:
            assert index.take(live[i]) == i
        replay_all.elapsed = time.perf_counter() - start  # type: ignore[attr-defined]

    takes = []
    for _ in range(repeats):
        replay_all()
        takes.append(replay_all.elapsed / n)  # type: ignore[attr-defined]
    sample = order[:20]
    scan = _best(lambda: [_scan_once(recorded, live[i]) for i in sample], 1) / len(sample)
    index = Index(recorded)
    missing = RecordedRequest(method="POST", url=URL, json=_body(-1))
    miss = _best(
        lambda: explain_miss(
            missing,
            index,
            cassette=Path("c.yaml"),
            test="t",
            record_mode="none",
            rerecord="rewrite",
        ),
        repeats,
    )
    return {
        "interactions": n,
        "build_s": build,
        "take_us": min(takes) * 1e6,
        "take_median_us": statistics.median(takes) * 1e6,
        "scan_us": scan * 1e6,
        "miss_report_ms": miss * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sizes, repeats = ((100, 5000), 2) if args.quick else ((100, 1000, 5000), 5)
    rows = [measure(n, repeats) for n in sizes]
    for row in rows:
        print(
            f"{row['interactions']:>6} interactions: build {row['build_s'] * 1e3:8.1f} ms, "
            f"take {row['take_us']:7.1f} µs/request (median {row['take_median_us']:.1f}), "
            f"scan {row['scan_us']:10.1f} µs/request, miss report {row['miss_report_ms']:.1f} ms"
        )
    flat = rows[-1]["take_us"] / rows[0]["take_us"]
    print(f"take cost at {sizes[-1]} vs {sizes[0]}: x{flat:.2f}")
    out = Path(__file__).parent / "results" / f"matching-index{'-quick' if args.quick else ''}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "python": platform.python_version(),
                "machine": platform.machine(),
                "rows": rows,
                "take_ratio_largest_vs_smallest": flat,
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
