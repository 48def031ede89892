"""Record the example suite's cassettes from a local server that speaks the providers'
wire formats.

    python examples/tools/record_cassettes.py              # every cassette variant
    python examples/tools/record_cassettes.py -k one_step  # some (pytest arguments)

What it does:

1. starts an HTTP server on ``127.0.0.1:8787`` (``--port``). For each model call it
   receives — ``/v1/messages`` (Anthropic), ``/chat/completions`` and ``/responses``
   (OpenAI) — it answers with a pytest-agentreplay ``FakeModel`` running in this
   process, relayed byte for byte and event by event: the providers' exact SSE,
   status codes, error bodies and ``retry-after`` headers, and a dropped connection
   when the reply says ``Fault.cut``;
2. runs ``pytest examples/tests -k cassette --agentreplay-record-mode=rewrite`` in a
   subprocess, with ``AGENT_EXAMPLES_SERVER`` pointing at the server. Each test calls
   ``backend.script(...)``, which stages the replies in a file this server reads
   before the test's first model call (``AGENT_EXAMPLES_SCRIPTS``);
3. the plugin tees every response into ``cassettes/<module>/<test>.yaml``, scrubbed.

A script entry may also ask the server to edit what it relays, as a gateway in
front of the provider does: ``add_fields`` adds JSON fields to every event (a field
the event already has is kept, as ``Reply(event_fields=...)`` keeps it). The
cassette then holds events the plugin's renderer did not write.
"""

from __future__ import annotations

import argparse
import hashlib
import http.server
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from collections import deque
from pathlib import Path
from typing import Any

import httpx2

from pytest_agentreplay import FakeModel, Fault, Reply, Request

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = {
    "/v1/messages": "https://api.anthropic.com/v1/messages",
    "/v1/chat/completions": "https://api.openai.com/v1/chat/completions",
    "/v1/responses": "https://api.openai.com/v1/responses",
}
HOP_BY_HOP = {"host", "content-length", "connection", "transfer-encoding", "accept-encoding"}


class Script:
    """The replies the running test staged, taken from ``script.json`` when it appears."""

    def __init__(self, folder: Path, fake: FakeModel) -> None:
        self.staged = folder / "script.json"
        self.fake = fake
        self.entries: deque[dict[str, Any]] = deque()
        self.serving: deque[Reply] = deque()
        self.lock = threading.Lock()

    def next(self) -> dict[str, Any]:
        if self.staged.exists():
            text = self.staged.read_text()
            self.staged.unlink()
            self.entries = deque(json.loads(text))
            # Ids depend only on the test's script: a re-recording diffs clean.
            self.fake.configure(seed=hashlib.sha256(text.encode()).hexdigest()[:12])
        if not self.entries:
            problem = "the recording server's script ran out: call backend.script(...) first"
            return {"reply": Reply.failure(Fault.http(500, problem)).model_dump(mode="json")}
        return self.entries.popleft()

    def respond(self, request: Request) -> Reply:
        return self.serving.popleft()


def handler(script: Script) -> type[http.server.BaseHTTPRequestHandler]:
    class Relay(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def version_string(self) -> str:  # no Python version in the cassettes' headers
            return "agent-examples-recorder"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            upstream = UPSTREAM.get(self.path)
            if upstream is None:
                self.send_error(404)
                return
            with script.lock:  # one model call at a time, in the order they arrive
                entry = script.next()
                script.serving.append(Reply.model_validate(entry["reply"]))
                self.relay(upstream, body, entry)

        def relay(self, upstream: str, body: bytes, entry: dict[str, Any]) -> None:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            with httpx2.stream("POST", upstream, content=body, headers=headers) as response:
                self.send_response(response.status_code)
                for name, value in response.headers.items():
                    if name.lower() not in HOP_BY_HOP:
                        self.send_header(name, value)
                self.send_header("transfer-encoding", "chunked")
                # One connection per call: nothing stays pooled in the SDK clients the
                # tests leave open, to be closed after their event loop is gone.
                self.send_header("connection", "close")
                self.close_connection = True
                self.end_headers()
                try:
                    self.send_events(response.iter_raw(), entry)
                except httpx2.TransportError:  # the fake dropped the stream: so do we
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
            self.chunk(b"")

        def send_events(self, chunks: Any, entry: dict[str, Any]) -> None:
            # The fake sends one SSE event per chunk, so each chunk is edited whole.
            for chunk in chunks:
                self.chunk(edited(chunk, entry.get("add_fields")))

        def chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    return Relay


def edited(chunk: bytes, fields: dict[str, Any] | None) -> bytes:
    """``chunk`` with ``fields`` added to the JSON of its ``data:`` lines; a field the
    event already has is kept (Anthropic's error event keeps its ``error`` object)."""
    if not fields:
        return chunk
    lines = chunk.decode().split("\n")
    for n, line in enumerate(lines):
        if line.startswith("data: {"):
            data = json.loads(line[6:])
            data.update({key: value for key, value in fields.items() if key not in data})
            lines[n] = "data: " + json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return "\n".join(lines).encode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8787)
    args, pytest_args = parser.parse_known_args()
    with tempfile.TemporaryDirectory() as folder:
        fake = FakeModel(check_unused=False, name="recording server")
        script = Script(Path(folder), fake)
        fake.configure(respond=script.respond)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler(script))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        env = {
            **os.environ,
            "AGENT_EXAMPLES_SERVER": f"http://127.0.0.1:{args.port}",
            "AGENT_EXAMPLES_SCRIPTS": folder,
        }
        command = [
            sys.executable,
            "-m",
            "pytest",
            "examples/tests",
            "-p",
            "no:cacheprovider",
            "-q",
            "-k",
            "cassette",
            "--agentreplay-record-mode=rewrite",
            # The tests never close the SDK clients they build: in replay those hold no
            # socket, but while recording they hold real ones, closed by the collector.
            "-W",
            "ignore::ResourceWarning",
            "-W",
            "ignore::pytest.PytestUnraisableExceptionWarning",
            *pytest_args,
        ]
        with fake:
            code = subprocess.call(command, cwd=ROOT, env=env)
        server.shutdown()
    for path in sorted((ROOT / "cassettes").rglob("*.yaml")):
        print(f"{path.stat().st_size:>8}  {path.relative_to(ROOT)}")
    return code


if __name__ == "__main__":
    sys.exit(main())
