"""Many processes recording into one cassette at once: nothing lost, nothing twice.

``--writers`` processes each hold ``--each`` recorded interactions (one of them a
stream of ``--events`` events) and, released together, write them into the same
cassette through the plugin's end-of-test write (``write_recorded``: an inter-process
lock around read, merge, scrub, write, verify, rename). After each round the cassette
must load and hold every writer's interactions exactly once, each writer's in its
own order, and no temporary or lock file may be left. ``--rounds`` rounds run.

Usage::

    python bench/concurrent_writers.py                  # 16 writers x 5, 5 rounds
    python bench/concurrent_writers.py --writers 32 --rounds 10

Results go to ``bench/results/concurrent-writers.json`` (``--out`` to change).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path

from pytest_agentreplay.cassettes.io import load

CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    from pathlib import Path
    from pytest_agentreplay.cassettes.cassette import (
        Interaction, RecordedEvent, RecordedRequest, RecordedResponse)
    from pytest_agentreplay.cassettes.write import write_recorded
    from pytest_agentreplay.redact import Scrubber

    path, who, each, events = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    new = []
    for n in range(each):
        request = RecordedRequest(method="POST", url=f"https://api.example.test/{who}/{n}")
        if n == 0:
            stream = [RecordedEvent(data=json.dumps({"who": who, "i": i})) for i in range(events)]
            response = RecordedResponse(status=200, events=stream)
        else:
            response = RecordedResponse(status=200, json={"who": who, "n": n})
        new.append(Interaction(request=request, response=response))
    go = Path(sys.argv[5])
    while not go.exists():
        time.sleep(0.001)
    write_recorded(path, new, Scrubber(env={}), replace_old=False, run_started=None)
    """
)


def _round(folder: Path, writers: int, each: int, events: int) -> dict[str, object]:
    path = folder / "cassettes" / "shared.yaml"
    go = folder / "go"
    go.unlink(missing_ok=True)
    names = [f"w{n:02d}" for n in range(writers)]
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(path), who, str(each), str(events), str(go)]
        )
        for who in names
    ]
    time.sleep(3.0)  # every child has built its interactions and waits for the signal
    started = time.perf_counter()
    go.touch()
    codes = [child.wait() for child in children]
    seconds = time.perf_counter() - started
    urls = [i.request.url for i in load(path).interactions]
    expected = [f"https://api.example.test/{who}/{n}" for who in names for n in range(each)]
    counts = Counter(urls)
    in_order = all(
        [u for u in urls if f"/{who}/" in u] == [u for u in expected if f"/{who}/" in u]
        for who in names
    )
    left = sorted(p.name for p in path.parent.iterdir() if p != path)
    path.unlink()
    return {
        "exit_codes_nonzero": sum(1 for code in codes if code),
        "expected": len(expected),
        "found": len(urls),
        "lost": sum(1 for url in expected if url not in counts),
        "twice": sum(1 for n in counts.values() if n > 1),
        "each_writer_in_order": in_order,
        "files_left": left,
        "seconds": round(seconds, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--each", type=int, default=5, help="interactions per writer")
    parser.add_argument("--events", type=int, default=2000, help="events of each stream")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rounds = [
            _round(Path(tmp), args.writers, args.each, args.events) for _ in range(args.rounds)
        ]
    result = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "writers": args.writers,
        "interactions_per_writer": args.each,
        "events_per_stream": args.events,
        "rounds": args.rounds,
        "interactions_written": sum(r["found"] for r in rounds),  # type: ignore[misc]
        "lost": sum(r["lost"] for r in rounds),  # type: ignore[misc]
        "written_twice": sum(r["twice"] for r in rounds),  # type: ignore[misc]
        "files_left": sum(len(r["files_left"]) for r in rounds),  # type: ignore[arg-type]
        "per_round": rounds,
    }
    print(json.dumps({k: v for k, v in result.items() if k != "per_round"}, indent=2))
    out = args.out or Path(__file__).parent / "results" / "concurrent-writers.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    bad = result["lost"] or result["written_twice"] or result["files_left"]
    if bad or not all(r["each_writer_in_order"] and not r["exit_codes_nonzero"] for r in rounds):
        raise SystemExit("a concurrent write lost, doubled or misordered interactions")


if __name__ == "__main__":
    main()
