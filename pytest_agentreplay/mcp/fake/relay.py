"""The stdio side of a fake tool server: ``python -m pytest_agentreplay.mcp.fake.relay URL``.

Reads JSON-RPC messages, one a line, from stdin; posts each to ``URL`` (the fake's
loopback port) on a thread of its own, so that a ``notifications/cancelled`` reaches
the fake while a call is held; writes each answer to stdout as one line. An answer
that carries the exit header is written as it is and the process exits with that
status (a crash, or a line cut short). When stdin closes (the client is done) or the
fake's port is gone, the process ends. The standard library only: it starts fast.
"""

from __future__ import annotations

import http.client
import os
import sys
import threading
from typing import BinaryIO
from urllib.parse import urlsplit

from .stdio import EXIT_HEADER, RELAY_HEADER  # a module of the standard library only


def _forward(url: str, line: bytes, out: BinaryIO, lock: threading.Lock) -> None:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port)
    try:
        connection.request(
            "POST",
            parts.path or "/",
            body=line,
            headers={
                "content-type": "application/json",
                "accept": "application/json",
                RELAY_HEADER: "stdio",
            },
        )
        response = connection.getresponse()
        status = response.getheader(EXIT_HEADER)
        try:
            body = response.read()
        except http.client.IncompleteRead as exc:
            body, status = exc.partial, status or "1"
    except OSError:
        os._exit(1)  # the fake is gone: so is its server
    with lock:
        if body:
            out.write(body if status is not None else body.rstrip(b"\n") + b"\n")
            out.flush()
        if status is not None:
            os._exit(int(status))


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        sys.stderr.write("usage: python -m pytest_agentreplay.mcp.fake.relay URL\n")
        return 2
    url, out, lock = argv[1], sys.stdout.buffer, threading.Lock()
    for line in sys.stdin.buffer:
        if line.strip():
            threading.Thread(target=_forward, args=(url, line, out, lock), daemon=True).start()
    os._exit(0)  # stdin closed: calls still held are hung up on


if __name__ == "__main__":
    sys.exit(main(sys.argv))
