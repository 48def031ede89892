"""Time to first event of a scripted fake-model stream, against the stream's length.

A fake model renders, encodes and chunks its SSE stream lazily, so the first event
should reach the client after the same short time whether the reply has 10 or
100,000 text deltas. This script measures that through a raw httpx2 client and
through the real anthropic and openai SDKs, reporting min/median of repeats.

Usage::

    python bench/fake_stream_ttfe.py            # full: 10 / 1,000 / 100,000 deltas
    python bench/fake_stream_ttfe.py --quick    # 10 / 1,000 / 20,000

Results go to ``bench/results/fake-stream-ttfe[-quick].json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai

from pytest_agentreplay import FakeModel, Reply, Usage

BODY = {
    "model": "m",
    "max_tokens": 9,
    "stream": True,
    "messages": [{"role": "user", "content": "hi"}],
}


def _reply(deltas: int) -> Reply:
    return Reply.text(" ".join(["word"] * deltas), usage=Usage(input_tokens=1, output_tokens=1))


def _raw(deltas: int) -> tuple[float, float]:
    with httpx2.Client() as client:
        start = time.perf_counter()
        with client.stream("POST", "https://api.anthropic.com/v1/messages", json=BODY) as resp:
            chunks = resp.iter_bytes()
            next(chunks)
            first = time.perf_counter() - start
            for _ in chunks:
                pass
    return first, time.perf_counter() - start


def _anthropic(deltas: int) -> tuple[float, float]:
    client = anthropic.Anthropic(api_key="k")
    start = time.perf_counter()
    stream = client.messages.create(**BODY)  # type: ignore[call-overload]
    first = 0.0
    for i, _event in enumerate(stream):
        if i == 0:
            first = time.perf_counter() - start
    return first, time.perf_counter() - start


def _openai(deltas: int) -> tuple[float, float]:
    client = openai.OpenAI(api_key="k")
    start = time.perf_counter()
    stream = client.chat.completions.create(
        model="m", stream=True, messages=[{"role": "user", "content": "hi"}]
    )
    first = 0.0
    for i, _chunk in enumerate(stream):
        if i == 0:
            first = time.perf_counter() - start
    return first, time.perf_counter() - start


CONSUMERS: dict[str, Callable[[int], tuple[float, float]]] = {
    "httpx2-raw": _raw,
    "anthropic-sdk": _anthropic,
    "openai-sdk": _openai,
}


def _measure(
    consumer: Callable[[int], tuple[float, float]], deltas: int, repeats: int
) -> dict[str, Any]:
    firsts, totals = [], []
    for _ in range(repeats):
        gc.collect()
        with FakeModel(_reply(deltas)):
            first, total = consumer(deltas)
        firsts.append(first)
        totals.append(total)
    return {
        "deltas": deltas,
        "repeats": repeats,
        "ttfe_ms": {"min": min(firsts) * 1e3, "median": statistics.median(firsts) * 1e3},
        "total_ms": {"min": min(totals) * 1e3, "median": statistics.median(totals) * 1e3},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sizes = [10, 1_000, 20_000] if args.quick else [10, 1_000, 100_000]
    results: list[dict[str, Any]] = []
    for name, consumer in CONSUMERS.items():
        for deltas in sizes:
            repeats = 3 if deltas >= 20_000 else 9
            cell = {"consumer": name, **_measure(consumer, deltas, repeats)}
            results.append(cell)
            print(
                f"{name:14} {deltas:>7} deltas  ttfe {cell['ttfe_ms']['median']:8.2f} ms "
                f"(min {cell['ttfe_ms']['min']:.2f})  total {cell['total_ms']['median']:9.1f} ms"
            )
    for name in CONSUMERS:
        cells = [c for c in results if c["consumer"] == name]
        ratio = cells[-1]["ttfe_ms"]["min"] / cells[0]["ttfe_ms"]["min"]
        print(f"{name}: ttfe({sizes[-1]}) / ttfe({sizes[0]}) = {ratio:.2f} (min)")
    out = (
        Path(__file__).parent
        / "results"
        / ("fake-stream-ttfe-quick.json" if args.quick else "fake-stream-ttfe.json")
    )
    out.parent.mkdir(exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "schema": "agentreplay-bench/ttfe-1",
                "python": platform.python_version(),
                "machine": platform.machine(),
                "cpus": __import__("os").cpu_count(),
                "results": results,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
