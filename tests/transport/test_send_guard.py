"""The proxy request line the send guard reads (issue 18, item 11): the host a request
is for, in every form a client writes it, and nothing from anything else."""

from __future__ import annotations

import array

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.transport.send_guard import proxied_host


@pytest.mark.parametrize(
    ("data", "host"),
    [
        (b"GET http://a.example/x HTTP/1.1\r\nHost: a.example\r\n\r\n", "a.example"),
        (b"post HTTPS://B.example:8443/v1 HTTP/1.1\r\n", "b.example"),
        (bytearray(b"CONNECT c.example:443 HTTP/1.1\r\n\r\n"), "c.example"),
        (memoryview(b"CONNECT [2001:db8::1]:443 HTTP/1.1\r\n"), "2001:db8::1"),
        (b"GET http://user:pw@d.example/ HTTP/1.0\r\n", "d.example"),
    ],
)
def test_the_host_of_a_proxy_request(data: bytes, host: str) -> None:
    assert proxied_host(data) == host


@pytest.mark.parametrize(
    "data",
    [
        b"GET /v1/messages HTTP/1.1\r\nHost: api.example\r\n\r\n",  # origin form: no proxy
        b"\x16\x03\x01\x02\x00",  # a TLS record
        b'{"GET http://x/ HTTP/1.1": 1}',  # a body that quotes one
        b"GET http://x.example/ FTP/1.0\r\n",
        b"",
        array.array("i", [1, 2, 3]),
        "GET http://x.example/ HTTP/1.1",  # not bytes: no socket sends a str
    ],
)
def test_anything_else_names_no_host(data: object) -> None:
    assert proxied_host(data) is None


@given(st.binary(max_size=300))
def test_any_bytes_are_read_without_error(data: bytes) -> None:
    host = proxied_host(data)
    assert host is None or isinstance(host, str)
