"""A real HTTP/1.1 server on loopback that plays a handler's answers to any process.

Fakes and cassettes answer the HTTP clients of the test's own process through the
patched transports; a child process (a CLI the agent shells out to, a worker, an
agent written in Rust or TypeScript) has its own sockets. :class:`ModelServer`
serves the same handler (a :class:`~..fakes.FakeModel`, a cassette) on a port, and
plays the same :class:`~.playback.Playback` through the same
:class:`~.delivery.Delivery`, so scripts, faults, holds and the call log mean what
they mean in-process:

- keep-alive HTTP/1.1; each request is read whole and strictly before it is
  answered (:mod:`.request_reader`: malformed framing is a 400 and a closed
  connection, a request cut short is dropped unanswered and uncounted); a body
  without a length goes out chunked, one chunk per delivered chunk (an SSE stream is
  flushed event by event), or, to an HTTP/1.0 client, delimited by the close;
- a ``cut`` ends the connection mid-body (no terminating chunk: the client sees
  "incomplete chunked read"), a ``timeout`` holds the socket silent until the
  client gives up, a gate (``block()``, ``Fault.stall``) holds it until released;
- a client that hangs up while a response is held or streamed is noticed (the
  socket is watched), and the call is logged ``cancelled`` — unless every byte was
  handed over before it closed: the log says what the client received;
- closing the server lets every held response go and closes every connection, so
  no thread or socket outlives it.

The server's own writes are not egress: they go to a client that connected to it,
and bypass the guard of :mod:`.send_guard` (which judges sends by their peer).
"""

from __future__ import annotations

import _socket
import contextlib
import json
import select
import socket
import socketserver
import threading
import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import TypeVar

from ..providers.catalog import client_env
from .delivery import Delivery
from .errors import BadRequestError, IncompleteRequestError
from .playback import Playback, reason_phrase
from .request_reader import (
    RequestHead,
    framing,
    read_body,
    read_head,
)
from .router import Deferred, Handler, HTTPRequest

__all__ = ["ModelServer"]

_S = TypeVar("_S", bound="ModelServer")
_T = TypeVar("_T")

_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "proxy-connection",
    }
)
_WATCH_INTERVAL = 0.05  # how often a held socket is checked for a hang-up (seconds)
_send = _socket.socket.sendall  # the C method: the guard patches socket.socket's
_LINGER_SECONDS = 2.0  # how long a refused client's remaining bytes are read and dropped
_LINGER_BYTES = 1 << 20  # ... and how many at most
_BACKLOG = 1024
"""Connections the kernel queues before the server accepts them (the kernel may cap it
lower, ``net.core.somaxconn``). The standard library's 5 made about every sixth of 60
clients connecting at once wait a second for a SYN retransmit, and some were reset
(issue 27): a test suite in another language runs its clients in parallel."""


class _DroppedError(Exception):
    """How a played body ends early: ``cut`` (drop the connection), ``timeout``."""

    def __init__(self, how: str) -> None:
        super().__init__(how)
        self.how = how


class _Faults:
    """What a delivery raises at the end of a cut body: here, a note to drop the line."""

    def cut(self) -> BaseException:
        return _DroppedError("cut")

    def timeout(self) -> BaseException:
        return _DroppedError("timeout")


class _HungUpError(Exception):
    """The client closed its end while the response was being sent."""


class ModelServer:
    """A loopback HTTP/1.1 server answering every request with ``handler``'s playback.

    ``url`` is ``http://127.0.0.1:PORT`` (no path): the base URL of the Anthropic SDK;
    :attr:`env` holds the variables that point the official SDKs at it. Use it as a
    context manager, or call :meth:`start` and :meth:`close`. ``errors`` lists the
    requests the handler failed on (their clients got a 500).
    """

    def __init__(self, handler: Handler, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.handler = handler
        self.errors: list[str] = []
        self._server = _Server((host, port), _Connection, owner=self)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._wakers: set[Callable[[], None]] = set()
        self._sockets: set[socket.socket] = set()
        self.closed = False
        bound = self._server.server_address
        self.host, self.port = str(bound[0]), int(bound[1])

    @property
    def url(self) -> str:
        """The server's base URL, ``http://127.0.0.1:PORT``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        """Environment variables pointing the official SDKs (and most tools built on
        them) at this server, with placeholder keys, so a child never sends a real one."""
        return client_env(self.url)  # each provider's, from its catalog entry

    def start(self: _S) -> _S:
        """Start serving in a background thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": _WATCH_INTERVAL},
                name=f"agentreplay-server-{self.port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving: let every held response go, close every connection, and wait
        for the server's threads to end. Idempotent."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            wakers, sockets = list(self._wakers), list(self._sockets)
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
        for wake in wakers:
            wake()
        for sock in sockets:
            _shut(sock)
        self._server.server_close()  # joins the connections' threads

    def __enter__(self: _S) -> _S:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc: BaseException | None = None,
        tb: TracebackType | None = None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "serving"
        return f"<ModelServer {self.url} {state}>"

    # --- what the connections share -------------------------------------------------

    def _track(self, sock: socket.socket, wake: Callable[[], None] | None = None) -> bool:
        """Remember an open connection (or a waiter to wake at close); ``False`` once
        the server is closing (the caller must give up at once)."""
        with self._lock:
            if self.closed:
                return False
            self._sockets.add(sock)
            if wake is not None:
                self._wakers.add(wake)
            return True

    def _forget(self, sock: socket.socket | None, wake: Callable[[], None] | None) -> None:
        with self._lock:
            if sock is not None:
                self._sockets.discard(sock)
            if wake is not None:
                self._wakers.discard(wake)

    def _failed(self, what: str, exc: BaseException) -> None:
        with self._lock:
            self.errors.append(f"{what}: {exc}")


class _Server(socketserver.ThreadingTCPServer):
    """One thread per connection; closing joins them (``block_on_close``)."""

    daemon_threads = False
    block_on_close = True
    allow_reuse_address = True
    request_queue_size = _BACKLOG

    def __init__(self, address: tuple[str, int], handler: type, *, owner: ModelServer) -> None:
        self.owner = owner
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, handler)


def _shut(sock: socket.socket) -> None:
    """End a connection now, whatever its thread is doing with it."""
    with contextlib.suppress(OSError):  # already closed by the client or by its thread
        sock.shutdown(socket.SHUT_RDWR)


class _Watch:
    """Watches a connection while its response is held or streamed: a client that
    closes its end (EOF) calls ``on_hang_up`` once. Bytes waiting to be read (a
    pipelined request) mean the client is still there: the watch then stops."""

    def __init__(self, sock: socket.socket, on_hang_up: Callable[[], None]) -> None:
        self.sock = sock
        self.on_hang_up = on_hang_up
        self.hung_up = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="agentreplay-watch", daemon=True)

    def __enter__(self) -> _Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                readable = select.select([self.sock], [], [], _WATCH_INTERVAL)[0]
                if not readable:
                    continue
                peeked = self.sock.recv(1, socket.MSG_PEEK)
            except (OSError, ValueError):  # closed under us: the connection is over
                peeked = b""
            if not peeked:
                self.hung_up = True
                self.on_hang_up()
            return


class _Connection(socketserver.StreamRequestHandler):
    """One client connection: requests read in turn (keep-alive) by the strict reader
    of :mod:`.request_reader`, each answered by the server's handler and played by a
    :class:`~.delivery.Delivery`."""

    server: _Server

    def setup(self) -> None:
        super().setup()
        self.close_connection = False
        self.command, self.path, self.version = "", "", "HTTP/1.1"
        # Each event is its own small write: with Nagle's algorithm on, it waited for
        # the client's delayed ACK, about 40 ms an event or a call (measured).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if not self.server.owner._track(self.connection):
            self.close_connection = True

    def finish(self) -> None:
        self.server.owner._forget(self.connection, None)
        with contextlib.suppress(OSError):  # the client is gone already
            super().finish()

    def handle(self) -> None:
        while not self.close_connection and not self.server.owner.closed:
            self._one()

    # --- one request ----------------------------------------------------------------

    def _one(self) -> None:
        """Read one request whole, then answer it. A request cut short by its client
        was never made: nothing is answered, consumed or counted (issue 27)."""
        self.close_connection = True  # until a request is read whole and may keep it
        try:
            head = read_head(self.rfile)
            if head is None:
                return
            self.command, self.path, self.version = head.method, head.target, head.version
            how = framing(head)
            if head.expects_continue and how.has_body:
                self._write(b"HTTP/1.1 100 Continue\r\n\r\n")
            body = read_body(self.rfile, how)
        except BadRequestError as refused:
            self._plain(refused.status, f"pytest-agentreplay: {refused.reason}")
            self._linger()
            return
        except (IncompleteRequestError, _HungUpError, OSError):
            return
        self.close_connection = not head.keep_alive
        self._serve(head, body)

    def _serve(self, head: RequestHead, body: bytes) -> None:
        request = self._request(head, body)
        owner = self.server.owner
        try:
            answer = owner.handler.respond(request)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # the fake's surprise is a pytest Failed
            owner._failed(f"{request.method} {request.path}", exc)
            self._plain(500, f"pytest-agentreplay: {exc}")
            return
        playback = self._held(answer) if isinstance(answer, Deferred) else answer
        if playback is not None:
            self._play(playback)

    def _request(self, head: RequestHead, body: bytes) -> HTTPRequest:
        owner = self.server.owner
        host = head.get("host") or f"{owner.host}:{owner.port}"
        return HTTPRequest(
            method=head.method,
            url=f"http://{host}{head.target}",
            headers=head.headers,
            content=body,
            family="server",
        )

    def _held(self, deferred: Deferred) -> Playback | None:
        """Wait at the deferred's gate; ``None`` if the client hung up meanwhile."""
        wake = threading.Event()
        owner = self.server.owner
        if not owner._track(self.connection, wake.set):
            wake.set()
        try:
            with _Watch(self.connection, wake.set) as watch:
                deferred.gate.wait(wake)
        finally:
            owner._forget(None, wake.set)
        if watch.hung_up or owner.closed:
            deferred.cancelled()
            self.close_connection = True
            return None
        return deferred.then()

    def _play(self, playback: Playback) -> None:
        if playback.before_headers:  # no response at all
            playback.ended(playback.ending, 0)
            self._drop(playback.ending)
            return
        delivery = Delivery(playback, _Faults())
        owner = self.server.owner
        if not owner._track(self.connection, delivery.hang_up):
            delivery.hang_up()
        sent = _Sent()
        try:
            with _Watch(self.connection, sent.client_gone(delivery)):
                self._deliver(playback, delivery, sent)
        except _HungUpError:
            delivery.events_sent = sent.events  # what the client really got
            delivery.hang_up()
            self.close_connection = True
        except _DroppedError as dropped:
            self._drop(dropped.how)
        except Exception as exc:  # the body failed to render: the client sees a drop
            owner._failed(f"{self.command} {self.path}", exc)
            delivery.end("cut")
            self._drop("cut")
        finally:
            owner._forget(None, delivery.hang_up)
        if delivery.ended == "cancelled":
            self.close_connection = True

    def _deliver(self, playback: Playback, delivery: Delivery, sent: _Sent) -> None:
        """The status line, headers and body of ``playback``. A client noticed gone
        (:class:`_Watch`) is taken for hung up only before its next write: once the
        last byte is handed over, the call is what the client received, whenever it
        closes (issue 27: 3 of 60 clients that read a whole reply were logged
        ``cancelled``)."""
        headers = [(k, v) for k, v in playback.headers if k.lower() not in _HOP_BY_HOP]
        sized = any(k.lower() == "content-length" for k, _ in headers)
        bodiless = self.command == "HEAD" or playback.status in (204, 304)
        old_client = self.version == "HTTP/1.0"  # no chunked coding: the close ends the body
        chunked = not sized and not bodiless and not old_client
        if not sized and not bodiless and old_client:
            self.close_connection = True
        lines = [f"HTTP/1.1 {playback.status} {reason_phrase(playback.status)}"]
        lines += [f"{k}: {v}" for k, v in headers]
        lines += ["transfer-encoding: chunked"] if chunked else []
        if self.close_connection:
            lines.append("connection: close")
        elif old_client:
            lines.append("connection: keep-alive")
        self._write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        # A client that reads the log as soon as it has the body must find its call
        # ended (issue 30: the Node example's log showed it still ``open``), so the call
        # is logged before the last chunk goes out. A client may stop at its protocol's
        # last event without waiting for the chunked body's terminating chunk (the
        # OpenAI SDK stops at ``[DONE]``), so a stream is held one chunk behind too,
        # unless its chunks wait (a gate, recorded timing): holding one back would then
        # delay it by the wait, and only the terminating chunk follows the log.
        chunks = _counted(delivery)
        if not chunked or delivery.ready_at_once:
            chunks = _one_ahead(chunks)
        for chunk, complete in chunks:
            if sent.gone.is_set():
                raise _HungUpError
            if bodiless or not chunk:
                continue
            self._write(b"%x\r\n%b\r\n" % (len(chunk), chunk) if chunked else chunk)
            sent.events = complete
        if delivery.ended == "cancelled":
            raise _HungUpError
        if chunked:
            self._write(b"0\r\n\r\n")

    def _write(self, data: bytes) -> None:
        try:
            _send(self.connection, data)
        except OSError as exc:  # EPIPE, ECONNRESET: the client went away
            raise _HungUpError from exc

    def _drop(self, how: str) -> None:
        """End the connection the way ``how`` says: ``cut`` now, ``timeout`` once the
        client gives up (or the server closes)."""
        self.close_connection = True
        if how == "timeout":
            gone = threading.Event()
            owner = self.server.owner
            if owner._track(self.connection, gone.set):
                try:
                    with _Watch(self.connection, gone.set):
                        gone.wait()
                finally:
                    owner._forget(None, gone.set)
        _shut(self.connection)

    def _linger(self) -> None:
        """Close after refusing a request whose bytes may still be arriving: a socket
        closed with unread data sends a reset, which can destroy the refusal before the
        client reads it. The rest is read and dropped, up to a bound, first."""
        sock = self.connection
        deadline = time.monotonic() + _LINGER_SECONDS
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_WR)
            drained = 0
            while drained < _LINGER_BYTES and not self.server.owner.closed:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([sock], [], [], left)[0]:
                    break
                data = sock.recv(65536)
                if not data:
                    break
                drained += len(data)

    def _plain(self, status: int, message: str) -> None:
        """A refusal (bad framing, a handler's surprise) in one write, then a close:
        nothing to log, and nothing to watch (a client that half-closed after its
        request still reads it)."""
        body = json.dumps({"error": {"type": "agentreplay_error", "message": message}}).encode()
        head = (
            f"HTTP/1.1 {status} {reason_phrase(status)}\r\n"
            "content-type: application/json\r\n"
            f"content-length: {len(body)}\r\n"
            "x-should-retry: false\r\n"  # the SDKs would retry the same surprise
            "connection: close\r\n\r\n"
        )
        self.close_connection = True
        with contextlib.suppress(_HungUpError):  # the client is gone: nobody to tell
            self._write(head.encode("latin-1") + body)


def _counted(delivery: Delivery) -> Iterator[tuple[bytes, int]]:
    """Each chunk of ``delivery`` with the number of events complete once it is sent."""
    for chunk in delivery.iterate():
        yield chunk, delivery.events_sent


def _one_ahead(chunks: Iterator[_T]) -> Iterator[_T]:
    """``chunks``, each handed on once the next one is known: the last one after the
    source has ended (and its ending has been logged). A source that fails (a cut, a
    line of a cassette that cannot be sent) hands on the chunk it held first, so the
    client gets what came before the failure, as without holding."""
    held: list[_T] = []
    try:
        for chunk in chunks:
            if held:
                yield held.pop()
            held.append(chunk)
    except Exception:
        if held:
            yield held.pop()
        raise
    yield from held


class _Sent:
    """What one response has handed the client so far, and whether the client was
    noticed gone (the connection's thread decides what that means, see ``_deliver``)."""

    def __init__(self) -> None:
        self.events = 0
        self.gone = threading.Event()

    def client_gone(self, delivery: Delivery) -> Callable[[], None]:
        def noticed() -> None:
            self.gone.set()
            delivery.wake()  # a wait at a gate or hold ends now

        return noticed
