"""kill -9 a process while it writes a cassette, at many points: the file is always whole.

A child process writes a recording into a cassette that already holds a few
interactions, through the plugin's end-of-test write (``write_recorded``: lock,
merge, scrub, stream the text into a temporary file while scanning it, verify it,
rename). The parent measures how long that write takes, then starts the child again
and again and sends it ``SIGKILL`` at evenly spread moments from the start of the
write to half as long again past its end. After each kill the cassette must be byte for byte
either the old file or the complete new one, and load; a temporary file left by the
dead child must never be the cassette, and the next write sweeps it.

Usage::

    python bench/kill_during_write.py                 # 40 kill points, a 5 MB stream
    python bench/kill_during_write.py --points 200 --mb 20

Results go to ``bench/results/kill-during-write.json`` (``--out`` to change).
"""

from __future__ import annotations

import argparse
import json
import platform
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.io import load, save

CHILD = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from pytest_agentreplay.cassettes.cassette import Interaction, RecordedRequest
    from pytest_agentreplay.cassettes.from_wire import response_from_wire
    from pytest_agentreplay.cassettes.write import write_recorded
    from pytest_agentreplay.redact import Scrubber

    path, size = Path(sys.argv[1]), int(sys.argv[2])
    events, sent, i = [], 0, 0
    while sent < size:
        delta = {"type": "content_block_delta", "index": 0, "delta": {"text": f"w{i} " * 10}}
        event = f"event: content_block_delta\\ndata: {json.dumps(delta)}\\n\\n".encode()
        events.append(event)
        sent, i = sent + len(event), i + 1
    request = RecordedRequest(method="POST", url="https://api.anthropic.com/v1/messages")
    response = response_from_wire(200, [("content-type", "text/event-stream")], b"".join(events))
    new = [Interaction(request=request, response=response)]
    scrubber = Scrubber(env={})
    print("go", flush=True)
    started = time.perf_counter()
    write_recorded(path, new, scrubber, replace_old=False, run_started=None)
    print(f"done {time.perf_counter() - started:.6f}", flush=True)
    """
)


def _old_cassette(path: Path) -> bytes:
    old = [
        Interaction(
            request=RecordedRequest(method="POST", url=f"https://api.example.test/v1/{n}"),
            response=RecordedResponse(status=200, json={"n": n}),
        )
        for n in range(3)
    ]
    save(path, Cassette(interactions=old))
    return path.read_bytes()


def _child(path: Path, size: int) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), str(size)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    if line.strip() != "go":
        raise SystemExit(f"the writer did not start: {line!r}")
    return child


def _write(path: Path, size: int) -> float:
    """Seconds one uninterrupted write of a ``size`` stream into ``path`` takes."""
    child = _child(path, size)
    out, _ = child.communicate()
    if child.returncode != 0:
        raise SystemExit(f"the writer failed ({child.returncode})")
    return float(out.split()[-1])


def _kill_at(path: Path, size: int, delay: float, old: bytes, new: bytes) -> dict[str, Any]:
    path.write_bytes(old)
    child = _child(path, size)
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.communicate()
    data = path.read_bytes()
    state = "old" if data == old else "new" if data == new else "other"
    leftovers = [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    killed = child.returncode < 0
    return {"delay_s": round(delay, 4), "state": state, "killed": killed, "temp": len(leftovers)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=40, help="kill points")
    parser.add_argument("--mb", type=float, default=5.0, help="stream size in MB (1e6 bytes)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    size = int(args.mb * 1e6)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        old = _old_cassette(folder / "old.yaml")
        (folder / "new.yaml").write_bytes(old)
        seconds = _write(folder / "new.yaml", size)
        new = (folder / "new.yaml").read_bytes()
        path = folder / "cassettes" / "test_kill.yaml"
        path.parent.mkdir()
        runs = []
        for k in range(args.points):
            delay = seconds * 1.5 * k / max(args.points - 1, 1)
            runs.append(_kill_at(path, size, delay, old, new))
            load(path)  # whichever it is, it loads
        left = sum(1 for p in path.parent.iterdir() if p.name.endswith(".tmp"))
        _write(path, 1000)  # the next write of the cassette sweeps what the kills left
        swept_after = sum(1 for p in path.parent.iterdir() if p.name.endswith(".tmp"))
    states = [run["state"] for run in runs]
    result = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "stream_mb": args.mb,
        "cassette_mb": round(len(new) / 1e6, 2),
        "write_s": round(seconds, 3),
        "kill_points": args.points,
        "killed_mid_run": sum(run["killed"] for run in runs),
        "old_file": states.count("old"),
        "new_file": states.count("new"),
        "anything_else": states.count("other"),
        "kills_that_left_a_temp_file": sum(1 for run in runs if run["temp"]),
        "temp_files_before_next_write": left,
        "temp_files_after_next_write": swept_after,
        "runs": runs,
    }
    print(json.dumps({k: v for k, v in result.items() if k != "runs"}, indent=2))
    out = args.out or Path(__file__).parent / "results" / "kill-during-write.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    if result["anything_else"] or swept_after:
        raise SystemExit("a kill left a cassette that is neither the old nor the new file")


if __name__ == "__main__":
    main()
