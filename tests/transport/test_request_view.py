"""The request a handler sees (``HTTPRequest``): its URL is split once and read many
times (routing asks for the host and path several times a call), and that leaves its
equality, its copies and its repr as they were."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_agentreplay.transport.router import HTTPRequest


def _request(url: str) -> HTTPRequest:
    return HTTPRequest("POST", url, (("x-api-key", "sk-secret"),), b"{}", "httpx2")


def test_the_url_parts_are_read_from_the_url_once_and_agree_with_it() -> None:
    request = _request("https://user:pw@api.example.com:8443/v1/messages?key=abc#frag")
    assert request.url_parts is request.url_parts  # split once
    assert (request.scheme, request.host, request.path) == (
        "https",
        "api.example.com",
        "/v1/messages",
    )
    assert request.url_parts.port == 8443


def test_a_split_request_still_equals_and_copies_as_an_unsplit_one() -> None:
    split, fresh = _request("https://h/v1/a?x=1"), _request("https://h/v1/a?x=1")
    assert split.host == "h"
    assert split == fresh and hash(split.url) == hash(fresh.url)
    moved = dataclasses.replace(split, url="https://other/v2/b")
    assert (moved.host, moved.path) == ("other", "/v2/b")  # not the copied split
    assert "key" not in repr(_request("https://h/p?key=sk-secret"))


def _wire(url: str = "https://h/v1/a?x=1") -> HTTPRequest:
    """A request as the patched transports make it: headers as the client holds them."""
    return HTTPRequest.from_wire(
        "POST", url, [(b"X-Api-Key", b"sk-secret"), (b"X-Name", b"caf\xe9")], b"{}", "httpx2"
    )


def test_a_request_from_the_wire_reads_its_headers_decoded_as_latin_1() -> None:
    request = _wire()
    assert request.headers == (("X-Api-Key", "sk-secret"), ("X-Name", "café"))
    assert request.header("x-name") == "café"
    assert request.headers is request.headers  # decoded once


def test_a_request_from_the_wire_equals_copies_and_shows_as_one_built_whole() -> None:
    whole = HTTPRequest(
        "POST",
        "https://h/v1/a?x=1",
        (("X-Api-Key", "sk-secret"), ("X-Name", "café")),
        b"{}",
        "httpx2",
    )
    wire = _wire()
    assert wire == whole and whole == wire and hash(wire) == hash(whole)
    assert {wire: 1}[whole] == 1
    assert wire != _wire("https://h/v1/b")
    moved = dataclasses.replace(wire, url="https://other/v2/b")
    assert moved == dataclasses.replace(whole, url="https://other/v2/b")
    assert (moved.host, moved.headers) == ("other", whole.headers)
    assert repr(wire) == repr(whole) and "sk-secret" not in repr(wire)
    with pytest.raises(dataclasses.FrozenInstanceError):
        wire.url = "https://elsewhere/"  # type: ignore[misc]


def test_headers_decode_alike_as_bytes_as_str_and_mixed() -> None:
    from pytest_agentreplay.transport.router import decode_headers

    want = (("Content-Type", "application/json"), ("x-note", "caf\xe9"))
    raw = ((b"Content-Type", b"application/json"), (b"x-note", b"caf\xe9"))
    assert decode_headers(raw) == want
    assert decode_headers(want) == want
    assert decode_headers(((b"Content-Type", "application/json"), ("x-note", b"caf\xe9"))) == want
    assert decode_headers(((b"Content-Type", b"application/json"), ("x-note", "caf\xe9"))) == want
    assert decode_headers(()) == ()


def test_has_header_reads_the_bytes_without_decoding_them() -> None:
    request = _wire()
    assert request.has_header("x-api-key") and request.has_header("x-name")
    assert not request.has_header("content-encoding")
    assert "_headers" not in vars(request)  # still as the client module holds them
    assert request.headers[0] == ("X-Api-Key", "sk-secret")
    assert request.has_header("x-api-key") and not request.has_header("x-other")  # decoded


def test_has_header_agrees_for_str_bytes_mixed_and_no_headers() -> None:
    def wire(headers: list[tuple[bytes | str, bytes | str]]) -> HTTPRequest:
        return HTTPRequest.from_wire("GET", "https://h/", headers, b"", "httpx")  # type: ignore[arg-type]

    for headers in (
        [(b"Content-Encoding", b"gzip")],
        [("Content-Encoding", "gzip")],
        [("Accept", b"*/*"), (b"Content-Encoding", "gzip")],
        [(b"Accept", b"*/*"), ("Content-Encoding", "gzip")],
    ):
        assert wire(headers).has_header("content-encoding"), headers
        assert not wire(headers).has_header("content-type"), headers
    assert not wire([]).has_header("content-encoding")
    assert _request("https://h/").has_header("x-api-key")  # built whole
