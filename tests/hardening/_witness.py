"""A witness server: HTTP/1.1 with keep-alive on 127.0.0.1, in a subprocess, that
writes every request line it receives to a log. It answers ``GET /path`` as a server
and ``GET http://host/path`` or ``CONNECT host:443`` as a proxy would (200, then
nothing more), so a test can count what reached it: a reused keep-alive connection
(one request line more, no new connection) or a request a proxy would have carried
out (its absolute URL).

In a subprocess, so that the plugin's guard, active in the test's process, does not
stand between the server and its clients.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

_SERVER = """
import http.server, sys

LOG = sys.argv[1]


class Witness(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _answer(self):
        with open(LOG, "a") as log:
            log.write(self.requestline + "\\n")
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    do_GET = do_POST = _answer

    def do_CONNECT(self):
        with open(LOG, "a") as log:
            log.write(self.requestline + "\\n")
        self.send_response(200)
        self.end_headers()
        self.close_connection = True

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Witness)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


@dataclass
class Witness:
    """Where the witness listens, and the request lines it has received."""

    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def lines(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@contextmanager
def witness(tmp: Path) -> Iterator[Witness]:
    """Run a witness server until the block ends."""
    log = tmp / "witness.log"
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(log)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        yield Witness(int(server.stdout.readline()), log)
    finally:
        server.kill()
        server.wait(timeout=10)
        if server.stdout is not None:
            server.stdout.close()
