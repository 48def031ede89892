"""Issue 27: the port server's front end fuzzed — framing, headers, sizes and timing.

Each example opens one connection to a fresh
:class:`~pytest_agentreplay.transport.server.ModelServer` (the server of
``agentreplay serve``, ``model_server`` and ``FakeModel.listen()``) whose handler
echoes every request's body, and sends a conversation: well-formed requests in every
framing the server reads (``Content-Length`` with leading zeros or repeated,
``chunked`` with any chunking, extensions and trailers, LF line ends, HTTP/1.0,
``Expect: 100-continue``, random header fields), then maybe one malformed request
(a mutation with a known status) or a request cut short, all cut into random pieces
sent with random pauses. The properties:

- each well-formed request before the end is answered once, in order, with its exact
  body; a malformed one gets its status, then the connection closes;
- the handler sees exactly the well-formed requests, whole: a malformed or cut request
  is never handed on;
- the server records no error, and every connection's thread ends when it closes.

Arbitrary bytes are sent too: never a crash, never a request handed on. The number
of examples comes from the suite's hypothesis profile (bounded and derandomized in CI).
"""

from __future__ import annotations

import contextlib
import socket
from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.transport.server import ModelServer
from tests.hardening._raw_http import EchoHandler, RawClient

TOKEN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+.^_`|~-"
VALUE = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40).map(str.strip)
REFUSALS = {400, 413, 414, 431, 501, 505}


@dataclass
class Message:
    """One request as sent, and what the server must make of it."""

    raw: bytes
    body: bytes | None  # what the handler receives; None: it is refused
    status: int = 200
    keeps_alive: bool = True


def _casing(draw: st.DrawFn, name: str) -> str:
    return "".join(c.upper() if draw(st.booleans()) else c.lower() for c in name)


def _extra_headers(draw: st.DrawFn) -> list[str]:
    names = st.text(TOKEN, min_size=1, max_size=12).filter(
        lambda n: n.lower() not in {"content-length", "transfer-encoding", "connection", "expect"}
    )
    return [f"{n}: {v}" for n, v in draw(st.lists(st.tuples(names, VALUE), max_size=4))]


def _chunked(draw: st.DrawFn, body: bytes, eol: bytes) -> bytes:
    cuts = sorted(set(draw(st.lists(st.integers(0, len(body)), max_size=5))))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    out = b""
    for piece in (p for p in pieces if p):
        size = f"{len(piece):x}"
        size = size.upper() if draw(st.booleans()) else size
        ext = draw(st.sampled_from(["", ";a=b", " ; name", ';q="x y"']))
        out += size.encode() + ext.encode() + eol + piece + eol
    trailers = draw(st.lists(st.sampled_from(["X-Trailer: 1", "Digest: sha-256=x"]), max_size=2))
    return out + b"0" + eol + b"".join(t.encode() + eol for t in trailers) + eol


@st.composite
def well_formed(draw: st.DrawFn) -> Message:
    """A request the server must read whole and hand on, in any framing it reads."""
    eol = draw(st.sampled_from([b"\r\n", b"\r\n", b"\n"]))
    version = draw(st.sampled_from(["HTTP/1.1", "HTTP/1.1", "HTTP/1.0"]))
    method = draw(st.sampled_from(["POST", "PUT", "PATCH", "DELETE", "GET"]))
    target = "/v1/" + draw(st.text("abcxyz019-_", min_size=1, max_size=10))
    body = draw(st.binary(max_size=3000))
    headers = [f"{_casing(draw, 'host')}: agentreplay.test", *_extra_headers(draw)]
    chunked = version == "HTTP/1.1" and draw(st.booleans())
    if chunked:
        headers.append(f"{_casing(draw, 'transfer-encoding')}: {_casing(draw, 'chunked')}")
        data = _chunked(draw, body, eol)
    else:
        if body or draw(st.booleans()):
            length = "0" * draw(st.integers(0, 3)) + str(len(body))
            repeats = draw(st.integers(1, 2))
            headers += [f"{_casing(draw, 'content-length')}: {length}"] * repeats
        data = body
    if version == "HTTP/1.1" and (body or chunked) and draw(st.booleans()):
        headers.append("Expect: 100-continue")
    keep = version == "HTTP/1.1" or draw(st.booleans())
    if version == "HTTP/1.0" and keep:
        headers.append("Connection: keep-alive")
    elif version == "HTTP/1.1" and draw(st.integers(0, 5)) == 0:
        headers.append("Connection: close")
        keep = False
    head = eol.join([f"{method} {target} {version}".encode(), *(h.encode() for h in headers)])
    return Message(head + eol + eol + data, body, keeps_alive=keep)


def _framed(head: str, *headers: str) -> bytes:
    return "\r\n".join([head, "Host: agentreplay.test", *headers, "", ""]).encode()


MUTATIONS: list[tuple[str, bytes, int]] = [
    (
        "negative chunk size",
        _framed("POST /v1/x HTTP/1.1", "Transfer-Encoding: chunked") + b"-1\r\n",
        400,
    ),
    (
        "0x chunk size",
        _framed("POST /v1/x HTTP/1.1", "Transfer-Encoding: chunked") + b"0x5\r\nhello\r\n0\r\n\r\n",
        400,
    ),
    (
        "short chunk",
        _framed("POST /v1/x HTTP/1.1", "Transfer-Encoding: chunked") + b"2\r\nhello\r\n0\r\n\r\n",
        400,
    ),
    (
        "CL and TE",
        _framed("POST /v1/x HTTP/1.1", "Content-Length: 10", "Transfer-Encoding: chunked")
        + b"0\r\n\r\n",
        400,
    ),
    ("TE gzip", _framed("POST /v1/x HTTP/1.1", "Transfer-Encoding: gzip"), 400),
    ("TE gzip, chunked", _framed("POST /v1/x HTTP/1.1", "Transfer-Encoding: gzip, chunked"), 501),
    ("TE in 1.0", _framed("POST /v1/x HTTP/1.0", "Transfer-Encoding: chunked") + b"0\r\n\r\n", 400),
    (
        "two lengths",
        _framed("POST /v1/x HTTP/1.1", "Content-Length: 1", "Content-Length: 2") + b"ab",
        400,
    ),
    ("signed length", _framed("POST /v1/x HTTP/1.1", "Content-Length: +2") + b"ab", 400),
    ("length over the cap", _framed("POST /v1/x HTTP/1.1", "Content-Length: 99999999999"), 413),
    ("space before colon", _framed("POST /v1/x HTTP/1.1", "Content-Length : 2") + b"ab", 400),
    ("folded header", _framed("POST /v1/x HTTP/1.1", "X-A: 1", "\tfolded"), 400),
    ("NUL in a value", _framed("POST /v1/x HTTP/1.1", "X-A: a\x00b"), 400),
    ("bare CR", _framed("POST /v1/x HTTP/1.1", "X-A: a\rb"), 400),
    ("long header", _framed("POST /v1/x HTTP/1.1", "X-A: " + "a" * 8200), 431),
    ("long request line", _framed("GET /" + "a" * 8200 + " HTTP/1.1"), 414),
    ("HTTP/3.0", _framed("GET /v1/x HTTP/3.0"), 505),
    ("lowercase version", _framed("GET /v1/x http/1.1"), 400),
]


@st.composite
def conversations(draw: st.DrawFn) -> tuple[list[Message], bytes]:
    """Well-formed requests (up to the first that closes), then maybe a malformed one
    or one cut short; and the bytes as sent."""
    messages: list[Message] = []
    for message in draw(st.lists(well_formed(), min_size=1, max_size=3)):
        messages.append(message)
        if not message.keeps_alive:
            break
    tail = draw(st.sampled_from(["none", "malformed", "cut"]))
    sent = b"".join(m.raw for m in messages)
    if tail == "malformed" and messages[-1].keeps_alive:
        _, raw, status = draw(st.sampled_from(MUTATIONS))
        messages.append(Message(raw, None, status, keeps_alive=False))
        sent += raw
    elif tail == "cut" and messages[-1].keeps_alive:
        last = draw(well_formed())
        cut = draw(st.integers(1, len(last.raw) - 1))
        messages.append(Message(last.raw[:cut], None, 0, keeps_alive=False))
        sent += last.raw[:cut]
    return messages, sent


def _converse(messages: list[Message], sent: bytes, pieces: list[int], pause: float) -> None:
    """Send ``sent`` to a fresh server in ``pieces``, check each answer, close the server
    (which joins every connection's thread), and check what the handler saw."""
    handler = EchoHandler()
    server = ModelServer(handler).start()
    try:
        with RawClient(server.host, server.port) as client:
            client.send(sent, pieces, pause)
            _answers(client, messages)
    finally:
        server.close()
    assert [r.content for r in handler.requests] == [m.body for m in messages if m.body is not None]
    assert server.errors == []


@given(conversations())
def test_a_fuzzed_conversation_is_answered_exactly(
    conversation: tuple[list[Message], bytes],
) -> None:
    _converse(*conversation, [], 0.0)


def _answers(client: RawClient, messages: list[Message]) -> None:
    for message in messages:
        if message.body is None and message.status == 0:  # cut short: the client dies
            return
        response = client.response()
        assert response is not None, "the server closed without answering"
        assert response.status == message.status, response.body
        if message.body is not None:
            assert response.body == message.body
        if not message.keeps_alive:
            assert client.closed_by_server()
            return


@given(conversations(), st.data(), st.sampled_from([0.0, 0.001, 0.003]))
def test_a_fuzzed_conversation_sent_in_pieces_with_pauses(
    conversation: tuple[list[Message], bytes], data: st.DataObject, pause: float
) -> None:
    messages, sent = conversation
    pieces = data.draw(st.lists(st.integers(1, max(1, len(sent) - 1)), max_size=8))
    _converse(messages, sent, pieces, pause)


@given(st.binary(min_size=1, max_size=600))
def test_arbitrary_bytes_never_reach_the_handler(garbage: bytes) -> None:
    handler = EchoHandler()
    server = ModelServer(handler).start()
    try:
        with RawClient(server.host, server.port) as client:
            client.send(garbage)
            with contextlib.suppress(OSError):  # the server may have closed already
                client.sock.shutdown(socket.SHUT_WR)  # no more: a cut request is dropped
            response = client.response()
            assert response is None or response.status in REFUSALS
    finally:
        server.close()
    assert handler.requests == []
    assert server.errors == []
