"""Record a stdio MCP server: a proxy between the client and the server it spawns.

The proxy starts the server's command, passes every line the client writes to the
server and every line the server writes back to the client, unchanged and at once,
and keeps each exchange as an interaction (:mod:`.stdio_form`): a client request with
the lines the server wrote up to its response, a client notification as ``202``.
Each finished exchange is written at once as one JSON line to ``--jsonl`` (the
plugin reads them when the test ends), so a proxy killed with its server's process
group loses nothing it had finished. ``agentreplay mcp record`` merges them into a
cassette, scrubbed, when the server exits.

Run as ``python -m pytest_agentreplay.mcp.stdio_record --key KEY --jsonl FILE --
COMMAND...``. The server's standard error is the proxy's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from ..cassettes.cassette import Interaction, RecordedEvent
from ..redact.scrubber import default_scrubber
from . import jsonrpc
from .stdio_form import command_key, exchange

__all__ = ["Exchanges", "JsonlWriter", "main", "relay"]


@dataclass
class _Open:
    number: int
    """Its place among the client's messages: exchanges are stored in sending order."""
    message: dict[str, Any]
    events: list[RecordedEvent] = field(default_factory=list)
    sent: float = field(default_factory=time.monotonic)
    """When the client sent it: an event's ``t`` counts from here, as over HTTP."""


class Exchanges:
    """Pairs the lines of the two directions into interactions, handed to ``emit``."""

    def __init__(self, key: str, emit: Callable[[int, Interaction], None]) -> None:
        self.key = key
        self.emit = emit
        """``emit(number, interaction)``: ``number`` orders the exchanges as the client
        sent them (a response may be noted after the next message was sent)."""
        self._sent = 0
        self._open: dict[tuple[type, Any], _Open] = {}
        self._last: _Open | None = None
        self._lock = threading.Lock()

    def client(self, line: bytes) -> None:
        """A line the client sent: a request opens an exchange, a notification is one."""
        value = jsonrpc.messages_of(line)
        if not isinstance(value, dict) or jsonrpc.kind(value) == "response":
            return  # a batch or an answer to a server's request: passed on, not kept
        with self._lock:
            number = self._sent
            self._sent += 1
            if jsonrpc.kind(value) == "request":
                self._last = self._open[(type(value["id"]), value["id"])] = _Open(number, value)
                return
        self.emit(number, exchange(self.key, value, None, end="complete"))

    def server(self, line: bytes) -> None:
        """A line the server wrote: kept with the request it answers, or with the
        request open last (a progress or log notification on the way)."""
        text = line.decode("utf-8", "replace").rstrip("\r\n")
        value = jsonrpc.messages_of(line)
        if value is None:
            return
        now = time.monotonic()
        with self._lock:
            answered = self._answered(value)
            target = answered or self._last
            if target is None:
                return
            t = round(now - target.sent, 6)
            target.events.append(RecordedEvent(data=text, event="message", t=t))
        if answered is not None:
            whole = exchange(self.key, answered.message, answered.events, end="complete")
            self.emit(answered.number, whole)

    def _answered(self, value: Any) -> _Open | None:
        """The open request ``value`` is the response to, now closed."""
        if not isinstance(value, dict) or jsonrpc.kind(value) != "response":
            return None
        found = self._open.pop((type(value.get("id")), value.get("id")), None)
        if found is self._last:
            self._last = next(reversed(self._open.values()), None)
        return found

    def close(self) -> None:
        """The server is gone: requests it never answered are kept as ``cut``."""
        with self._lock:
            left, self._open, self._last = list(self._open.values()), {}, None
        for item in left:
            self.emit(item.number, exchange(self.key, item.message, item.events, end="cut"))


def _pump(source: IO[bytes], sink: IO[bytes], note: Callable[[bytes], None]) -> None:
    """Copy lines from ``source`` to ``sink`` as they come, noting each **before** it
    is passed on: once a request reaches the server, its response can come back on
    the other thread at once, and it must find the request already open (noted after,
    the response found no request, and the exchange was stored ``cut`` and empty)."""
    for line in iter(source.readline, b""):
        note(line)
        try:
            sink.write(line)
            sink.flush()
        except (BrokenPipeError, ValueError):
            return


def relay(
    command: Sequence[str],
    exchanges: Exchanges,
    *,
    stdin: IO[bytes],
    stdout: IO[bytes],
) -> int:
    """Run ``command`` between ``stdin`` and ``stdout``, recording into ``exchanges``;
    the server's exit status."""
    child = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    to_child, from_child = child.stdin, child.stdout
    if to_child is None or from_child is None:  # pragma: no cover - both are pipes
        raise RuntimeError("the server's pipes were not opened")

    def to_server() -> None:
        _pump(stdin, to_child, exchanges.client)
        with contextlib.suppress(OSError):
            to_child.close()

    writer = threading.Thread(target=to_server, name="agentreplay-mcp-to-server", daemon=True)
    writer.start()
    try:
        _pump(from_child, stdout, exchanges.server)
        return child.wait()
    finally:
        exchanges.close()
        if child.poll() is None:
            child.terminate()


class JsonlWriter:
    """Appends each interaction to ``path`` as one JSON line, flushed:
    ``{"n": number, "interaction": ...}`` (an ``emit`` for :class:`Exchanges`).

    Each is scrubbed by the default rules first: the file (in a folder only its user
    can read, removed when the test ends) outlives a proxy killed mid-test, so a
    secret-named field a tool was sent or answered never reaches the disk. The test's
    own rules, and the backstop that refuses a key-shaped value anywhere else, run
    when its cassette is written."""

    def __init__(self, path: str) -> None:
        self._out = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
        self._lock = threading.Lock()
        self._scrubber = default_scrubber()

    def __call__(self, number: int, interaction: Interaction) -> None:
        data = self._scrubber.scrub_interaction(interaction).to_data()
        line = json.dumps({"n": number, "interaction": data}, ensure_ascii=False)
        with self._lock:
            self._out.write(line + "\n")
            self._out.flush()

    def close(self) -> None:
        with self._lock:
            self._out.close()


def _stop_on_sigterm() -> None:
    """SIGTERM (the client tearing down its server) ends the proxy as an exit does."""

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_agentreplay.mcp.stdio_record")
    parser.add_argument("--jsonl", required=True, help="append each exchange here")
    parser.add_argument("--key", help="the server's command key (default: from COMMAND)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the server's command after --")
    key = args.key or command_key(command[0], command[1:])
    _stop_on_sigterm()
    writer = JsonlWriter(args.jsonl)
    try:
        return relay(
            command, Exchanges(key, writer), stdin=sys.stdin.buffer, stdout=sys.stdout.buffer
        )
    finally:
        writer.close()


if __name__ == "__main__":
    sys.exit(main())
