"""Item 9: replay blocks all egress — httpx and httpx2 (sync and async), requests,
aiohttp, urllib3, urllib, a raw socket connect, asyncio's connect, a UDP datagram
(``sendto``, ``sendmsg``) and a DNS lookup.
Each fails at once with an error naming the host and the test: ``EgressBlocked`` is
a ``BaseException`` that no retry loop catches (how long a refusal takes is not
asserted: a wall-clock bound fails on a loaded machine, issue 18, item 20); and a
canary listener the requests are aimed at accepts no connection.

The canary sits on a non-loopback address of a network namespace the test makes
(skipped, saying why, where that is not permitted), and on loopback with loopback
blocking switched on.
"""

from __future__ import annotations

import asyncio
import socket
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import httpx
import httpx2
import pytest
import requests
import urllib3

from pytest_agentreplay import EgressBlocked
from tests.hardening._canary import WHERE, Canary

pytestmark = pytest.mark.agentreplay  # replay (record mode none), no cassette recorded


def _async(make: Callable[[str], Any]) -> Callable[[str], Any]:
    return lambda url: asyncio.run(make(url))


async def _httpx_async(module: Any, url: str) -> None:
    async with module.AsyncClient() as client:
        await client.get(url)


async def _aiohttp(url: str) -> None:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        await response.read()


def _address(url: str) -> tuple[str, int]:
    host, port = urlsplit(url).hostname, urlsplit(url).port
    assert host is not None and port is not None
    return host, port


async def _asyncio_connect(url: str) -> None:
    await asyncio.open_connection(*_address(url))


def _raw_socket(url: str) -> None:
    with socket.socket() as sock:
        sock.settimeout(5)
        sock.connect(_address(url))


def _udp_sendto(url: str) -> None:
    """A datagram needs no connect: ``sendto`` is guarded on its own."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.sendto(b"ping", _address(url))


def _udp_sendmsg(url: str) -> None:
    """``sendmsg`` with an address sends a datagram as ``sendto`` does."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.sendmsg([b"ping"], [], 0, _address(url))


CLIENTS: dict[str, Callable[[str], Any]] = {
    "httpx": lambda url: httpx.get(url, timeout=5),
    "httpx-async": _async(lambda url: _httpx_async(httpx, url)),
    "httpx2": lambda url: httpx2.get(url, timeout=5),
    "httpx2-async": _async(lambda url: _httpx_async(httpx2, url)),
    "requests": lambda url: requests.get(url, timeout=5),
    "urllib3": lambda url: urllib3.PoolManager(retries=3).request("GET", url, timeout=5),
    "aiohttp": _async(_aiohttp),
    "urllib": lambda url: urllib.request.urlopen(url, timeout=5),
    "socket-connect": _raw_socket,
    "asyncio-connect": _async(_asyncio_connect),
    "udp-sendto": _udp_sendto,
    "udp-sendmsg": _udp_sendmsg,
}


@pytest.mark.parametrize("canary", WHERE, indirect=True)
@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_replay_blocks_egress_from_every_client(
    canary: Canary, client: str, request: pytest.FixtureRequest
) -> None:
    before = canary.accepted()
    with pytest.raises(EgressBlocked) as info:
        CLIENTS[client](canary.url)
    message = str(info.value)
    assert canary.host in message
    assert request.node.nodeid in message
    assert canary.accepted() == before, f"{client} reached the canary ({canary.note})"


async def _lookup_async(name: str) -> Any:
    return await asyncio.get_running_loop().getaddrinfo(name, 443)


LOOKUPS: dict[str, Callable[[str], Any]] = {
    "getaddrinfo": lambda name: socket.getaddrinfo(name, 443),
    # Looked up at call time: the guard patches ``socket`` after this module is imported.
    "gethostbyname": lambda name: socket.gethostbyname(name),  # noqa: PLW0108
    "gethostbyname_ex": lambda name: socket.gethostbyname_ex(name),  # noqa: PLW0108
    "asyncio-getaddrinfo": _async(_lookup_async),
}


@pytest.mark.parametrize("lookup", sorted(LOOKUPS))
def test_replay_blocks_dns_lookups(lookup: str, request: pytest.FixtureRequest) -> None:
    name = "canary.agentreplay.test"
    with pytest.raises(EgressBlocked, match=f"DNS lookup of {name}") as info:
        LOOKUPS[lookup](name)
    assert request.node.nodeid in str(info.value)
