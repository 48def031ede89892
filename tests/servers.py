"""A real HTTP server on loopback that speaks the providers' wire formats.

Recording tests need live traffic; the network is closed, so the tests start this
server themselves. It answers model calls from a script of replies rendered by
the plugin's codecs (the same bytes the providers send), streams SSE with
chunked transfer encoding one event per chunk, can pause between events, and can
drop the connection in the middle of a stream. With ``echo`` on, a call the script
has no step for is answered with its own prompt, with ids drawn from it: the same
request always gets the same bytes, whatever order concurrent requests arrive in.
``add_raw`` sends any body (an endless one too) chunk by chunk.
"""

from __future__ import annotations

import gzip
import http.server
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from pytest_agentreplay import sse
from pytest_agentreplay.neutral import Reply
from pytest_agentreplay.providers import codec_for, detect
from pytest_agentreplay.providers.base import IdFactory, RenderContext, json_data


@dataclass
class Step:
    """One scripted answer: a reply, a pause between events, an optional drop."""

    reply: Reply | None
    delay: float = 0.0
    drop_after: int | None = None
    status: int = 200
    raw: Iterable[bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    hold: threading.Event | None = None
    """Wait for this before answering (``hold_after`` None) or before event ``hold_after``."""
    hold_after: int | None = None
    reached: threading.Event = field(default_factory=threading.Event)
    """Set when the answer reaches its hold."""


@dataclass
class ProviderServer:
    """The server's state: its script, and when each event was sent."""

    url: str = ""
    script: deque[Step] = field(default_factory=deque)
    sent_at: list[list[float]] = field(default_factory=list)
    requests: list[dict[str, object]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    ids: IdFactory = field(default_factory=lambda: IdFactory("server"))
    echo: bool = False
    delays: dict[str, float] = field(default_factory=dict)  # echo: prompt -> seconds

    def add(self, reply: Reply, *, delay: float = 0.0, drop_after: int | None = None) -> None:
        self.script.append(Step(reply, delay, drop_after))

    def add_held(self, reply: Reply, hold: threading.Event, *, after: int | None = None) -> Step:
        """Answer the next call with ``reply`` once ``hold`` is set: before the response
        (``after`` None) or after ``after`` events of its stream. The step's ``reached``
        says when the answer is held."""
        step = Step(reply, hold=hold, hold_after=after)
        self.script.append(step)
        return step

    def add_raw(
        self,
        chunks: Iterable[bytes],
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        """Answer the next call with ``chunks`` as they are (one chunk each, ``delay``
        seconds apart); the default content type is ``text/event-stream``."""
        heads = headers or {"content-type": "text/event-stream; charset=utf-8"}
        self.script.append(Step(None, delay, status=status, raw=chunks, headers=heads))


def _prompt(body: dict[str, Any]) -> str:
    """The last user text of a model call (what ``echo`` answers with)."""
    messages = body.get("messages")
    if isinstance(messages, list) and messages:
        content = messages[-1].get("content")
        return content if isinstance(content, str) else json.dumps(content)
    return str(body.get("input", ""))


def _request_json(raw: bytes, encoding: str | None) -> Any:
    """A request body as JSON: gunzipped if it says so; one that is not JSON (a form or
    a multipart upload) is kept as it came, under ``"raw"``."""
    if encoding == "gzip":
        raw = gzip.decompress(raw)
    try:
        return json.loads(raw or b"{}")
    except ValueError:
        return {"raw": raw.decode("utf-8", "replace")}


def _handler(state: ProviderServer) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = _request_json(self.rfile.read(length), self.headers.get("content-encoding"))
            state.requests.append(body)
            state.headers.append({k.lower(): v for k, v in self.headers.items()})
            state.paths.append(self.path)
            provider = detect("POST", urlsplit(self.path).path)
            step = state.script.popleft() if state.script else None
            if step is None and state.echo:
                time.sleep(state.delays.get(_prompt(body), 0.0))
                step = Step(Reply.text(f"echo: {_prompt(body)}"))
            if step is not None and step.raw is not None:
                self._raw(step)
                return
            if provider is None or step is None or step.reply is None:
                self.send_error(404)
                return
            if step.hold is not None and step.hold_after is None:
                step.reached.set()
                step.hold.wait()
            codec = codec_for(provider)
            ids = IdFactory(_prompt(body)) if state.echo else state.ids
            request = codec.parse_call("POST", self.path, body)  # Gemini: model, stream in the path
            ctx = RenderContext(model=request.model or "m", request=request, ids=ids)
            if request.stream:
                self._stream(codec.render_events(step.reply, ctx), step, codec.sse_line_end)
            else:
                self._json(json_data(codec.render_body(step.reply, ctx)).encode())

        def _json(self, payload: bytes) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.send_header("request-id", "req_server_1")
            self.end_headers()
            self.wfile.write(payload)

        def _raw(self, step: Step) -> None:
            self.send_response(step.status)
            for name, value in step.headers.items():
                self.send_header(name, value)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            try:
                for i, data in enumerate(step.raw or ()):
                    if i and step.delay:
                        time.sleep(step.delay)
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except OSError:  # the client hung up (an endless body ends here)
                self.close_connection = True

        def _stream(
            self, events: list[sse.SSEEvent], step: Step, line_end: sse.LineEnd = "\n"
        ) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            times: list[float] = []
            state.sent_at.append(times)
            encoder = sse.SSEEncoder(line_end=line_end)
            for i, event in enumerate(events):
                if step.hold is not None and i == step.hold_after:
                    step.reached.set()
                    step.hold.wait()
                if step.drop_after is not None and i == step.drop_after:
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if i and step.delay:
                    time.sleep(step.delay)
                data = encoder.encode(event)
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
                times.append(time.monotonic())
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return Handler


@contextmanager
def provider_server() -> Iterator[ProviderServer]:
    """Start a server on 127.0.0.1 for the duration of the block."""
    state = ProviderServer()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
