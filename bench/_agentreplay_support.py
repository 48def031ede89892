"""Plumbing for the ``agentreplay`` contender of ``bench/peers.py``.

Outside pytest the contender drives the plugin the way its fixtures do: a
:class:`~pytest_agentreplay.cassettes.session.CassetteSession` (the per-test cassette the
``agentreplay`` fixture opens) added to a :class:`~pytest_agentreplay.transport.router.Router`
that :func:`~pytest_agentreplay.transport.router.intercepting` activates. That is the
fixture's code path minus pytest, and it is what the in-process workloads
(W1, W2, W3, W6) time. W4 uses the real marker inside pytest.

Cassettes are *recorded through the plugin*: the recording client's requests go out
"live" through a real ``HTTPTransport`` (so the plugin's patched
``handle_request``, egress check and teeing recorder run exactly as in record
mode), but the transport's connection pool is replaced by :class:`UpstreamPool`,
which answers from an in-memory upstream instead of a socket. The file on disk is
therefore what ``--agentreplay-record-mode=once`` would write: scrubbed headers,
parsed JSON bodies, one line per SSE event with its arrival time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pytest_agentreplay.cassettes.session import CassetteSession
from pytest_agentreplay.redact import Scrubber
from pytest_agentreplay.transport.router import Router, intercepting

__all__ = [
    "UpstreamPool",
    "record_exchanges",
    "recording",
    "replaying",
    "scrubber",
    "upstream_transport",
]

# The bench's fake key is not a secret: let the scrubber's backstop accept it.
BENCH_KEY = "sk-bench-not-a-real-key"


class _Body:
    """An upstream response body handed to the transport as httpcore would."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._stream)

    def close(self) -> None:
        self._stream.close()


class UpstreamPool:
    """A stand-in for a transport's connection pool that answers from ``upstream``
    (any ``hx`` transport, e.g. a ``MockTransport``) instead of opening a socket."""

    def __init__(self, hx: Any, upstream: Any) -> None:
        self.hx = hx
        self.upstream = upstream

    def handle_request(self, req: Any) -> Any:
        url = req.url
        port = f":{url.port}" if url.port else ""
        request = self.hx.Request(
            req.method.decode(),
            f"{url.scheme.decode()}://{url.host.decode()}{port}{url.target.decode()}",
            headers=list(req.headers),
            content=b"".join(req.stream),
        )
        response = self.upstream.handle_request(request)
        return SimpleNamespace(
            status=response.status_code,
            headers=response.headers.raw,
            stream=_Body(response.stream),
            extensions={},
        )

    def __enter__(self) -> UpstreamPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.upstream.close()


def upstream_transport(hx: Any, upstream: Any) -> Any:
    """A real ``hx.HTTPTransport`` whose connections are answered by ``upstream``.

    Build it while recording (the router then lets requests out, so the transport
    is constructed for real rather than lazily).
    """
    transport = hx.HTTPTransport()
    transport._pool = UpstreamPool(hx, upstream)
    return transport


def scrubber() -> Scrubber:
    return Scrubber(allow=(BENCH_KEY,))


@contextlib.contextmanager
def recording(path: Path, *, mode: str = "rewrite") -> Iterator[CassetteSession]:
    """Record live traffic into the cassette at ``path`` (what the ``agentreplay``
    fixture does in ``rewrite`` mode), written when the block ends."""
    router = Router(test="bench", block=False)
    session = CassetteSession(path=path, record_mode=mode, router=router, scrubber=scrubber())
    router.add(session)
    router.recorder = session.recorder()
    with intercepting(router):
        yield session
    result = session.finish(failed=False)
    if not result.written:
        raise RuntimeError(f"{path}: nothing recorded ({result.reason})")


@contextlib.contextmanager
def replaying(path: Path, **session_kwargs: Any) -> Iterator[CassetteSession]:
    """Replay the cassette at ``path`` in record mode ``none`` (the plugin's default):
    entering loads the cassette and builds its index."""
    router = Router(test="bench")
    session = CassetteSession(
        path=path, record_mode="none", router=router, scrubber=scrubber(), **session_kwargs
    )
    router.add(session)
    with intercepting(router):
        yield session


def record_exchanges(
    hx: Any,
    path: Path,
    handler: Callable[[Any], Any],
    requests: Iterable[Callable[[Any], Any]],
) -> Path:
    """Record what each of ``requests`` (a function of a client) does against the
    upstream ``handler`` into ``path``."""
    with recording(path):
        transport = upstream_transport(hx, hx.MockTransport(handler))
        with hx.Client(transport=transport) as client:
            for send in requests:
                send(client)
    return path
