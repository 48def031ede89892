"""A plain loopback web server (not a model API) for the migration suites."""

from __future__ import annotations

import gzip
import http.server
import json
import threading
from typing import ClassVar
from urllib.parse import urlsplit

__all__ = ["Handler", "WebServer"]


class Handler(http.server.BaseHTTPRequestHandler):
    """Answers any path with JSON naming it (not its query: that may hold what a test
    filters) and the size of the body; ``/gzip`` compressed, ``/missing`` 404, every
    answer with a ``Set-Cookie``."""

    hits: ClassVar[list[str]] = []

    def log_message(self, *args: object) -> None:
        pass

    def _answer(self) -> None:
        size = int(self.headers.get("content-length") or 0)
        got = len(self.rfile.read(size))
        path = urlsplit(self.path).path
        type(self).hits.append(path)
        payload = json.dumps({"path": path, "got": got}).encode()
        status = 404 if self.path.startswith("/missing") else 200
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Set-Cookie", "session=cookie-secret-5")
        if self.path.startswith("/gzip"):
            payload = gzip.compress(payload)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()


class WebServer:
    """A running :class:`Handler` server: its ``url``; ``stop()`` takes it down."""

    def __init__(self) -> None:
        Handler.hits = []
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._stopped = False

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self._httpd.shutdown()
            self._httpd.server_close()
