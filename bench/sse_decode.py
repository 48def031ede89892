"""Is SSE decoding linear in the input size, whatever the chunking?

Decodes synthetic Anthropic-style streams of growing size (fed as one chunk, one
chunk per event, and 7-byte chunks), plus a single long ``data:`` line fed one
byte at a time — the case a naive ``buffer += chunk`` decoder turns quadratic —
and the recorder keeping one long event in 16 KB chunks (it was quadratic). For
each series it reports the time per MB and the growth exponent d log(t) / d log(n)
between sizes (1.0 is linear, 2.0 quadratic), min of repeats.

Usage::

    python bench/sse_decode.py [--quick]

Results go to ``bench/results/sse-decode[-quick].json``.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import math
import platform
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from pytest_agentreplay.cassettes.record import InteractionSink
from pytest_agentreplay.sse import SSEDecoder
from pytest_agentreplay.transport.router import HTTPRequest

EVENT = (
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta",'
    b'"text":" word"}}\n\n'
)


def _stream(events: int) -> bytes:
    return EVENT * events


def _decode(chunks: list[bytes]) -> int:
    decoder = SSEDecoder()
    count = sum(len(decoder.feed(chunk)) for chunk in chunks)
    decoder.finish()
    return count


def _best(fn: Callable[[], object], repeats: int) -> float:
    """Min of ``repeats`` runs, with the garbage collector paused as ``timeit`` does:
    millions of live chunk objects would otherwise make GC passes, not the decoder,
    grow with the input."""
    best = math.inf
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
    return best


def _record(chunks: list[bytes]) -> int:
    """What the recorder does with a live stream: decode it and keep the bytes of the
    event not finished yet (for a cut stream's ``tail``)."""
    response = httpx.Response(200, headers={"content-type": "text/event-stream"})
    request = HTTPRequest(method="POST", url="https://x.test/v1", headers=[], content=b"")
    done: list[object] = []
    sink = InteractionSink(request, response, time.monotonic(), done.append)
    for chunk in chunks:
        sink.chunk(chunk)
    sink.end("complete")
    return len(done)


def _series(
    name: str,
    sizes: list[int],
    make: Callable[[int], list[bytes]],
    repeats: int,
    run: Callable[[list[bytes]], int] = _decode,
) -> dict[str, object]:
    rows = []
    for n in sizes:
        chunks = make(n)
        nbytes = sum(map(len, chunks))
        seconds = _best(lambda c=chunks: run(c), repeats)
        rows.append(
            {
                "n": n,
                "bytes": nbytes,
                "seconds": seconds,
                "ms_per_mb": seconds * 1e3 / (nbytes / 1e6),
            }
        )
    for prev, row in itertools.pairwise(rows):
        row["growth_exponent"] = math.log(row["seconds"] / prev["seconds"]) / math.log(
            row["bytes"] / prev["bytes"]
        )
    return {"series": name, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    events = [2_000, 8_000, 32_000] if args.quick else [5_000, 20_000, 80_000, 160_000]
    line = [10_000, 40_000] if args.quick else [20_000, 80_000, 320_000]
    repeats = 3 if args.quick else 5
    results = [
        _series("whole body, one chunk", events, lambda n: [_stream(n)], repeats),
        _series("one chunk per event", events, lambda n: [EVENT] * n, repeats),
        _series(
            "7-byte chunks",
            events,
            lambda n: [b[i : i + 7] for b in [_stream(n)] for i in range(0, len(b), 7)],
            repeats,
        ),
        _series(
            "one long data line, byte by byte",
            line,
            lambda n: [b"data: "] + [b"x"] * n + [b"\n\n"],
            repeats,
        ),
        _series(
            "recording one long event, 16 KB chunks",
            [n * 100 for n in line],
            lambda n: [b"data: " + b"x" * 16_384 for _ in range(n // 16_384)] + [b"\n\n"],
            repeats,
            run=_record,
        ),
    ]
    for series in results:
        print(series["series"])
        for row in series["rows"]:  # type: ignore[attr-defined]
            growth = row.get("growth_exponent")
            print(
                f"  {row['bytes']:>11,} bytes  {row['seconds'] * 1e3:9.1f} ms  "
                f"{row['ms_per_mb']:7.1f} ms/MB"
                + (f"  growth exponent {growth:.2f}" if growth is not None else "")
            )
    out = (
        Path(__file__).parent
        / "results"
        / ("sse-decode-quick.json" if args.quick else "sse-decode.json")
    )
    out.parent.mkdir(exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "schema": "agentreplay-bench/sse-decode-1",
                "python": platform.python_version(),
                "machine": platform.machine(),
                "results": results,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
