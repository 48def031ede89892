"""Throughput of the backstop: how fast the last check before a write reads a cassette.

Every write runs :meth:`Scrubber.check` on the final text (and, since issue 18, on the
cassette it came from: opaque bodies decoded, streams read as a client assembles them).
This measures, each workload run several times by two scrubbers taking turns:

* ``real``: ``scan`` of every real recording the project holds, as stored
  (``tests/corpus/real``, ``cassettes/``, ``examples/``), in MB of text per second;
* ``canonical``: ``check`` of the same recordings as the writer would write them
  (loaded, scrubbed, dumped), with the cassette-level scan when there is one;
* ``stream``: ``check`` of one interaction streaming 50,000 Anthropic text deltas
  (about 6 MB of YAML), the size where a per-stream pass would show.

The two scrubbers are today's and the **baseline**: the backstop as it was before
issue 29 (``secret_scan_baseline.py``, a frozen copy of its key shapes), measured in
the same run so that the ratio holds on a noisy machine. The run checks first that
both find the same on every text it times, and the Targets table states issue 29's
bound: today's throughput on the real recordings at least 4x the baseline's
(median and best run both; "min only" when just the best runs hold it), in CPU
time of the process (the wall clock's ratio beside it: on a loaded machine it counts
other processes' time too).

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
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from secret_scan_baseline import BaselineScrubber

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


def _times(
    runs: dict[str, Callable[[], object]], repeats: int
) -> dict[str, tuple[list[float], list[float]]]:
    """Seconds of each run, wall clock and CPU time of this process, ``repeats`` times,
    the runs taking turns (a load spike then hits both, not one). On a loaded machine
    the wall clock counts the time other processes ran too; the CPU time does not."""
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            gc.collect()
            wall, cpu = time.perf_counter(), time.process_time()
            run()
            times[name][0].append(time.perf_counter() - wall)
            times[name][1].append(time.process_time() - cpu)
    return times


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


def _row(name: str, who: str, size: int, times: tuple[list[float], list[float]]) -> dict[str, Any]:
    row: dict[str, Any] = {"workload": name, "scanner": who, "bytes": size}
    for clock, seconds in zip(("wall", "cpu"), times, strict=True):
        best, median = min(seconds), statistics.median(seconds)
        row[clock] = {
            "seconds": round(best, 5),
            "seconds_median": round(median, 5),
            "mb_per_s": round(size / best / 1e6, 1),
            "mb_per_s_median": round(size / median / 1e6, 1),
        }
    wall, cpu = row["wall"], row["cpu"]
    print(
        f"{name:>30} {who:>8}: {size / 1e6:5.2f} MB, {wall['mb_per_s']:6.1f} MB/s "
        f"[median {wall['mb_per_s_median']:6.1f}], CPU time {cpu['mb_per_s']:6.1f} MB/s "
        f"[median {cpu['mb_per_s_median']:6.1f}]"
    )
    return row


def _same_findings(texts: list[str], today: Scrubber, baseline: Scrubber) -> None:
    """The speed of two scanners is compared only where they find the same."""
    for text in texts:
        if today.scan(text) != baseline.scan(text):
            raise SystemExit("today's backstop and the baseline differ on a text: see the tests")


def _target(rows: list[dict[str, Any]], workload: str, bound: float) -> dict[str, Any]:
    """Issue 29's bound on the baseline's seconds over today's, in CPU time (the wall
    clock's ratio is kept beside it)."""
    today, base = (
        next(r for r in rows if r["workload"] == workload and r["scanner"] == who)
        for who in ("today", "baseline")
    )
    ratios = {
        clock: {
            "median": round(base[clock]["seconds_median"] / today[clock]["seconds_median"], 2),
            "min": round(base[clock]["seconds"] / today[clock]["seconds"], 2),
        }
        for clock in ("cpu", "wall")
    }
    median, best = ratios["cpu"]["median"], ratios["cpu"]["min"]
    met = (
        "yes"
        if min(median, best) >= bound
        else ("min only" if best >= bound else ("median only" if median >= bound else "NO"))
    )
    return {
        "target": "backstop throughput on real recordings: new / today's",
        "goal": f">= {bound:g}x",
        "median": median,
        "min": best,
        "wall_clock": ratios["wall"],
        "met": met,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/secret-scan.json")
    args = parser.parse_args()
    repeats = 3 if args.quick else 15
    scrubbers: dict[str, Scrubber] = {
        "today": Scrubber(env={}),
        "baseline": BaselineScrubber(env={}),
    }
    texts = [p.read_bytes().decode("utf-8", "replace") for p in _real_files()]
    canonical = _canonical(_real_files(), scrubbers["today"])
    stream = _stream(50_000)
    stream_text = cassette_io.dumps(stream)
    _same_findings(texts + [t for t, _ in canonical], scrubbers["today"], scrubbers["baseline"])
    real_size = sum(len(t.encode()) for t in texts)
    canon_size = sum(len(t.encode()) for t, _ in canonical)

    def scan_real(scrubber: Scrubber) -> Callable[[], None]:
        return lambda: [scrubber.scan(text) for text in texts] and None

    def check_canonical(scrubber: Scrubber) -> Callable[[], None]:
        return lambda: [_check(scrubber, text, cassette) for text, cassette in canonical] and None

    def check_stream(scrubber: Scrubber) -> Callable[[], None]:
        return lambda: _check(scrubber, stream_text, stream)

    rows = []
    for name, size, make, n in (
        (f"real ({len(texts)} files) scan", real_size, scan_real, repeats),
        (f"canonical ({len(canonical)}) check", canon_size, check_canonical, repeats),
        (
            "50,000-event stream check",
            len(stream_text.encode()),
            check_stream,
            max(2, repeats // 3),
        ),
    ):
        times = _times({who: make(scrubber) for who, scrubber in scrubbers.items()}, n)
        rows += [_row(name, who, size, times[who]) for who in scrubbers]
    target = _target(rows, f"real ({len(texts)} files) scan", 4.0)
    print("\nTargets")
    ratio = f"{target['median']:.2f}x [{target['min']:.2f}x]"
    wall = target["wall_clock"]
    print(f"  {target['target']} {target['goal']}: {ratio} met: {target['met']}")
    print(
        f"  (CPU time; median [best run]. Wall clock: {wall['median']:.2f}x [{wall['min']:.2f}x])"
    )
    args.out.parent.mkdir(exist_ok=True)
    meta = {"python": platform.python_version(), "repeats": repeats}
    out = {"environment": meta, "results": rows, "targets": [target]}
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
