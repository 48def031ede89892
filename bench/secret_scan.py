"""Throughput of the backstop: how fast the last check before a write reads a cassette.

Every write runs :meth:`Scrubber.check` on the final text (and, since issue 18, on the
cassette it came from: opaque bodies decoded, streams read as a client assembles them).
This measures, best of several runs each:

* ``real``: ``scan`` of every real recording the project holds, as stored
  (``tests/corpus/real``, ``cassettes/``, ``examples/``), in MB of text per second;
* ``canonical``: ``check`` of the same recordings as the writer would write them
  (loaded, scrubbed, dumped), with the cassette-level scan when there is one;
* ``stream``: ``check`` of one interaction streaming 50,000 Anthropic text deltas
  (about 6 MB of YAML), the size where a per-stream pass would show.

Usage::

    python bench/secret_scan.py            # results in bench/results/secret-scan.json
    python bench/secret_scan.py --quick    # fewer repeats
    python bench/secret_scan.py --out PATH # somewhere else (a "before" run, say)
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_agentreplay.cassettes import io as cassette_io
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.errors import CassetteFormatError
from pytest_agentreplay.redact import Scrubber

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("tests/corpus/real", "cassettes", "examples")
SUFFIXES = (".yaml", ".yml", ".json", ".txt")


def _real_files() -> list[Path]:
    return sorted(
        path
        for folder in SOURCES
        for path in (ROOT / folder).rglob("*")
        if path.is_file() and path.suffix in SUFFIXES
    )


def _best(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def _check(scrubber: Scrubber, text: str, cassette: Cassette) -> None:
    """``check`` as ``save`` calls it (with the cassette, where this version takes it)."""
    if "cassette" in inspect.signature(scrubber.check).parameters:
        scrubber.check(text, None, cassette=cassette)  # type: ignore[call-arg]
    else:
        scrubber.check(text, None)


def _canonical(paths: list[Path], scrubber: Scrubber) -> list[tuple[str, Cassette]]:
    out = []
    for path in paths:
        try:
            scrubbed = scrubber.scrub(cassette_io.load(path))
        except CassetteFormatError:
            continue  # not a cassette (a note, a fixture of another shape)
        out.append((cassette_io.dumps(scrubbed), scrubbed))
    return out


def _stream(n: int) -> Cassette:
    events = [
        RecordedEvent(
            t=i / 1000,
            event="content_block_delta",
            data=json.dumps(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": f"tok{i} "},
                },
                separators=(",", ":"),
            ),
        )
        for i in range(n)
    ]
    return Cassette(
        interactions=[
            Interaction(
                request=RecordedRequest(method="POST", url="https://api.anthropic.com/v1/messages"),
                response=RecordedResponse(
                    status=200, headers={"content-type": "text/event-stream"}, events=events
                ),
            )
        ]
    )


def _row(name: str, size: int, seconds: float) -> dict[str, Any]:
    row = {"workload": name, "bytes": size, "seconds": round(seconds, 4)}
    row["mb_per_s"] = round(size / seconds / 1e6, 1)
    print(f"{name:>34}: {size / 1e6:7.2f} MB in {seconds:.3f}s = {row['mb_per_s']:6.1f} MB/s")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/secret-scan.json")
    args = parser.parse_args()
    repeats = 2 if args.quick else 7
    scrubber = Scrubber(env={})
    texts = [p.read_bytes().decode("utf-8", "replace") for p in _real_files()]
    canonical = _canonical(_real_files(), scrubber)
    stream = _stream(50_000)
    stream_text = cassette_io.dumps(stream)
    real_size = sum(len(t.encode()) for t in texts)
    canon_size = sum(len(t.encode()) for t, _ in canonical)

    def scan_real() -> None:
        for text in texts:
            scrubber.scan(text)

    def check_canonical() -> None:
        for text, cassette in canonical:
            _check(scrubber, text, cassette)

    rows = [
        _row(f"real ({len(texts)} files) scan", real_size, _best(scan_real, repeats)),
        _row(f"canonical ({len(canonical)}) check", canon_size, _best(check_canonical, repeats)),
        _row(
            "50,000-event stream check",
            len(stream_text.encode()),
            _best(lambda: _check(scrubber, stream_text, stream), max(1, repeats // 2)),
        ),
    ]
    args.out.parent.mkdir(exist_ok=True)
    meta = {"python": platform.python_version()}
    args.out.write_text(json.dumps({"environment": meta, "results": rows}, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
