"""Issue 27, items 1 and 2: how a request body enters the port server.

``agentreplay serve``, ``model_server`` and ``FakeModel.listen()`` share one server
(:class:`~pytest_agentreplay.transport.server.ModelServer`), which reads every
request with one strict reader. A chunk size of ``-1`` made the old reader read to
EOF, past its 64 MiB cap; a request with both ``Content-Length`` and
``Transfer-Encoding`` got two responses on one connection, which stayed open.

Every way a body can be framed is tried here, raw, on one connection each: a
malformed or unsupported framing gets its 4xx/5xx, the connection is closed, and the
handler never sees the request.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_agentreplay.cassettes import io as cassette_io
from pytest_agentreplay.cassettes.cassette import Cassette
from pytest_agentreplay.transport.server import ModelServer
from tests.cli._helpers import stream_interaction
from tests.hardening._raw_http import EchoHandler, RawClient, chunked, head

TIMEOUT = 300  # a hung process fails the test instead of the run (not a speed bound)
BODY = b'{"hello": "world"}'


@pytest.fixture
def echo() -> Iterator[tuple[ModelServer, EchoHandler]]:
    handler = EchoHandler()
    with ModelServer(handler) as server:
        yield server, handler


def _refused(server: ModelServer, handler: EchoHandler, data: bytes, status: int) -> None:
    with RawClient(server.host, server.port) as client:
        client.send(data)
        response = client.response()
        assert response is not None, "the server closed without answering"
        assert response.status == status, response.body
        assert b"pytest-agentreplay" in response.body  # says why, in the error's message
        assert response.headers.get("connection") == "close"
        assert client.closed_by_server()
    assert handler.requests == []  # never handed on: not consumed, not counted
    assert server.errors == []


def test_a_negative_chunk_size_is_refused_before_any_body_is_read(
    echo: tuple[ModelServer, EchoHandler],
) -> None:
    # The old reader took int("-1", 16) and read to EOF: 69,206,016 bytes past the cap.
    _refused(*echo, head("POST", "/v1/echo", "Transfer-Encoding: chunked") + b"-1\r\n", 400)


def test_content_length_with_transfer_encoding_is_one_refusal_then_a_close(
    echo: tuple[ModelServer, EchoHandler],
) -> None:
    smuggled = b"GET /v1/smuggled HTTP/1.1\r\nHost: agentreplay.test\r\n\r\n"
    body = chunked(BODY) + smuggled
    data = head("POST", "/v1/echo", f"Content-Length: {len(body)}", "Transfer-Encoding: chunked")
    _refused(*echo, data + body, 400)  # one response, then the close: the GET never runs


TE = "Transfer-Encoding: chunked"
MALFORMED = {
    # chunk sizes
    "chunk size 0x10": (head("POST", "/v1/echo", TE) + b"0x10\r\n", 400),
    "chunk size +5": (head("POST", "/v1/echo", TE) + b"+5\r\nhello\r\n0\r\n\r\n", 400),
    "chunk size not hex": (head("POST", "/v1/echo", TE) + b"zz\r\n", 400),
    "chunk size of 17 digits": (head("POST", "/v1/echo", TE) + b"1" * 17 + b"\r\n", 400),
    "chunk size over the cap": (head("POST", "/v1/echo", TE) + b"ffffffffffffffff\r\n", 413),
    "chunk longer than its size": (head("POST", "/v1/echo", TE) + b"3\r\nhello\r\n0\r\n\r\n", 400),
    "chunk extension with a CR": (head("POST", "/v1/echo", TE) + b"5;a\rb\r\nhello\r\n", 400),
    "trailer folded": (head("POST", "/v1/echo", TE) + b"0\r\nx: 1\r\n 2\r\n\r\n", 400),
    # transfer codings
    "gzip, chunked": (head("POST", "/v1/echo", "Transfer-Encoding: gzip, chunked"), 501),
    "chunked, gzip": (head("POST", "/v1/echo", "Transfer-Encoding: chunked, gzip"), 400),
    "chunked twice": (head("POST", "/v1/echo", TE, TE), 400),
    "chunked in HTTP/1.0": (
        b"POST /v1/echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(BODY),
        400,
    ),
    # content lengths
    "two lengths": (head("POST", "/v1/echo", "Content-Length: 5", "Content-Length: 6"), 400),
    "a list of lengths": (head("POST", "/v1/echo", "Content-Length: 5, 6"), 400),
    "length +5": (head("POST", "/v1/echo", "Content-Length: +5") + b"hello", 400),
    "length 5_0": (head("POST", "/v1/echo", "Content-Length: 5_0"), 400),
    "length -1": (head("POST", "/v1/echo", "Content-Length: -1"), 400),
    "length over the cap": (head("POST", "/v1/echo", "Content-Length: 67108865"), 413),
    "length of 5,000 digits": (head("POST", "/v1/echo", "Content-Length: " + "9" * 5000), 413),
    # header fields
    "space before the colon": (head("POST", "/v1/echo", "Content-Length : 5") + b"hello", 400),
    "obsolete line folding": (head("POST", "/v1/echo", "X-A: 1", " folded"), 400),
    "a bare CR in a value": (head("POST", "/v1/echo", "X-A: 1\r2"), 400),
    "a NUL in a value": (head("POST", "/v1/echo", "X-A: 1\x002"), 400),
    "a header line over 8 KiB": (head("POST", "/v1/echo", "X-A: " + "a" * 9000), 431),
    "101 header fields": (head("POST", "/v1/echo", *(f"X-{i}: 1" for i in range(101))), 431),
    # request lines
    "two spaces in the request line": (b"POST  /v1/echo HTTP/1.1\r\n\r\n", 400),
    "HTTP/2.0": (b"POST /v1/echo HTTP/2.0\r\n\r\n", 505),
    "a request line over 8 KiB": (b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n", 414),
    "no version": (b"GET /v1/echo\r\n\r\n", 400),
}


@pytest.mark.parametrize(("data", "status"), MALFORMED.values(), ids=MALFORMED.keys())
def test_every_malformed_framing_is_refused_and_the_connection_closed(
    echo: tuple[ModelServer, EchoHandler], data: bytes, status: int
) -> None:
    _refused(*echo, data, status)


WELL_FORMED = {
    "content-length": head("POST", "/v1/echo", f"Content-Length: {len(BODY)}") + BODY,
    "leading zeros": head("POST", "/v1/echo", f"Content-Length: 000{len(BODY)}") + BODY,
    "a repeated equal length": head(
        "POST", "/v1/echo", f"Content-Length: {len(BODY)}", f"content-length: {len(BODY)}"
    )
    + BODY,
    "chunked": head("POST", "/v1/echo", TE) + chunked(BODY[:3], BODY[3:]),
    "chunked, upper-case hex, extensions, trailers": head(
        "POST", "/v1/echo", "TRANSFER-ENCODING: Chunked"
    )
    + b"3;name=value\r\n"
    + BODY[:3]
    + b"\r\nF ; x\r\n"
    + BODY[3:]
    + b"\r\n0\r\nX-Trailer: dropped\r\n\r\n",
    "LF line ends": (
        f"POST /v1/echo HTTP/1.1\nHost: h\nContent-Length: {len(BODY)}\n\n".encode() + BODY
    ),
    "expect 100-continue": head(
        "POST", "/v1/echo", "Expect: 100-continue", f"Content-Length: {len(BODY)}"
    )
    + BODY,
}


@pytest.mark.parametrize("data", WELL_FORMED.values(), ids=WELL_FORMED.keys())
def test_every_well_formed_framing_hands_over_the_exact_body(
    echo: tuple[ModelServer, EchoHandler], data: bytes
) -> None:
    server, handler = echo
    with RawClient(server.host, server.port) as client:
        client.send(data + data)  # twice, pipelined: keep-alive reads each whole
        first, second = client.response(), client.response()
    assert first is not None and second is not None
    assert (first.status, first.body, second.body) == (200, BODY, BODY)
    assert [r.content for r in handler.requests] == [BODY, BODY]


# --- through `agentreplay serve` -------------------------------------------------------


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    path = tmp_path / "agent.yaml"
    cassette_io.save(path, Cassette(interactions=[stream_interaction()]))
    command = [sys.executable, "-m", "pytest_agentreplay.cli", "serve", str(path)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    try:
        yield process, int(url.rsplit(":", 1)[1])
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=TIMEOUT)


def test_serve_refuses_a_negative_chunk_size_and_counts_no_miss(
    served: tuple[subprocess.Popen[str], int],
) -> None:
    process, port = served
    attacks = [
        head("POST", "/v1/messages", TE) + b"-1\r\n",
        head("POST", "/v1/messages", "Content-Length: 5", TE) + chunked(b"hello"),
    ]
    for attack in attacks:
        with RawClient("127.0.0.1", port) as client:
            client.send(attack)
            response = client.response()
            assert response is not None
            assert response.status == 400
            assert client.closed_by_server()
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=TIMEOUT)
    assert process.returncode == 0, stderr  # a refused request is not a miss
    assert "matched no recording" not in stderr
    assert "bytes of non-JSON" not in stderr  # the old miss report of a body read to EOF
