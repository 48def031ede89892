"""Peak memory (RSS) of recording a big SSE stream, and of replaying it, against its size.

A loopback server streams an Anthropic-shaped SSE body of ``--mb`` megabytes (text
deltas of ``--event-bytes`` bytes each, one event per chunk, as a provider flushes).
A fresh pytest process records it through the plugin (``--agentreplay-record-mode=once``,
the client reads it with ``httpx2.stream``), then another replays the cassette it wrote.
Each run is a child process; its peak RSS is ``ru_maxrss`` of that child. The
**baseline** is the same run on a stream of a few events: what pytest, the SDK clients
and the plugin cost before any body is held. The figure that matters is

    (peak - baseline) / body size

with a target of 3 (issue 18, item 19). It was 26 when the writer held several
copies of the stream at the end of the test (a dict per event to re-check it, a
second model and two JSON texts to verify it, one more JSON text to fingerprint it),
4.8 once those went one event at a time, when the YAML text, its lines while it was
verified, and each key's assembled text for the split-key scan were still held
whole. Now the text goes to the temporary file a batch of events at a time, each
piece scanned first, and is verified by reading the file back line by line: what
is left is the recorded events themselves (a Python object per event). Replay loads
a big file the plugin wrote a line at a time, building each event as it is read, and
encodes events as the client pulls them, so its figure is the loaded cassette, not
copies of it. See ``bench/results/record-memory.json`` for the figures.

Usage::

    python bench/record_memory.py                    # 50 MB, 150-byte events
    python bench/record_memory.py --mb 50 --event-bytes 10000

Results go to ``bench/results/record-memory.json`` (``--out`` to change).
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

USER_TEST = textwrap.dedent(
    """
    import os
    import httpx2, pytest

    @pytest.mark.agentreplay
    def test_big_stream():
        body = {"model": "m", "max_tokens": 9, "stream": True,
                "messages": [{"role": "user", "content": "count"}]}
        size = 0
        with httpx2.stream("POST", os.environ["AR_URL"] + "/v1/messages", json=body,
                           timeout=120) as response:
            for chunk in response.iter_bytes():
                size += len(chunk)
        assert size >= int(os.environ["AR_SIZE"])
    """
)

# Reading ru_maxrss of the pytest child: a tiny wrapper, so only that process counts.
CHILD = textwrap.dedent(
    """
    import resource, subprocess, sys
    code = subprocess.call(sys.argv[1:])
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"PEAK_KB={peak}")
    sys.exit(code)
    """
)


def _event(i: int, text_bytes: int) -> bytes:
    """One ``content_block_delta`` whose whole wire form is about ``text_bytes`` long."""
    text = (f"w{i} " * (text_bytes // 4 + 1))[: max(text_bytes - 110, 1)]
    data = json.dumps(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        separators=(",", ":"),
    )
    return f"event: content_block_delta\ndata: {data}\n\n".encode()


def _stream(size: int, event_bytes: int) -> Iterator[bytes]:
    start = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1",'
        b'"type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,'
        b'"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":""}}\n\n'
    )
    yield start
    sent, i = len(start), 0
    while sent < size:
        chunk = _event(i, event_bytes)
        sent += len(chunk)
        i += 1
        yield chunk
    yield (
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":'
        b'"end_turn"},"usage":{"output_tokens":2}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )


@contextmanager
def _server(size: int, event_bytes: int) -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for chunk in _stream(size, event_bytes):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _pytest(project: Path, url: str, size: int, *args: str) -> tuple[float, float]:
    """Peak RSS (MB) and wall time of one pytest run on ``project``."""
    env = {**os.environ, "AR_URL": url, "AR_SIZE": str(size), "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-c", CHILD, sys.executable, "-m", "pytest", "-q", "-x"]
    command += ["-p", "no:cacheprovider", *args]
    started = time.perf_counter()
    done = subprocess.run(
        command, cwd=project, env=env, capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"pytest failed ({done.returncode}):\n{done.stdout[-3000:]}")
    peak_kb = int(done.stdout.rsplit("PEAK_KB=", 1)[1].split()[0])
    return peak_kb / 1024, elapsed


def _run(size: int, event_bytes: int) -> dict[str, float]:
    """Record a stream of ``size`` bytes, then replay it: peaks, times, file size."""
    with tempfile.TemporaryDirectory() as tmp, _server(size, event_bytes) as url:
        project = Path(tmp)
        (project / "test_big.py").write_text(USER_TEST)
        record_mb, record_s = _pytest(project, url, size, "--agentreplay-record-mode=once")
        replay_mb, replay_s = _pytest(project, "http://127.0.0.1:9", size)
        written = next(project.glob("cassettes/**/*.yaml")).stat().st_size
    return {
        "record_peak_mb": round(record_mb, 1),
        "record_s": round(record_s, 2),
        "replay_peak_mb": round(replay_mb, 1),
        "replay_s": round(replay_s, 2),
        "cassette_mb": round(written / 1e6, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=50.0, help="stream size in MB (1e6 bytes)")
    parser.add_argument("--event-bytes", type=int, default=150, help="wire bytes per event")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    size = int(args.mb * 1e6)
    base = _run(20_000, args.event_bytes)
    big = _run(size, args.event_bytes)
    body_mb = size / 2**20
    ratios = {
        f"{kind}_ratio": round((big[f"{kind}_peak_mb"] - base[f"{kind}_peak_mb"]) / body_mb, 2)
        for kind in ("record", "replay")
    }
    result = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "body_mb": round(body_mb, 1),
        "event_bytes": args.event_bytes,
        "baseline": base,
        "big": big,
        **ratios,
        "target": "record_ratio < 3: peak RSS above the baseline, in units of the body",
    }
    print(json.dumps(result, indent=2))
    out = args.out or Path(__file__).parent / "results" / "record-memory.json"
    previous = json.loads(out.read_text()) if out.exists() else {}
    key = f"{args.mb:g}MB-{args.event_bytes}B"
    previous[key] = result
    out.write_text(json.dumps(previous, indent=2) + "\n")


if __name__ == "__main__":
    main()
