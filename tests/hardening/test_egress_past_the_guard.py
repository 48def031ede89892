"""Issue 18, items 8-11: ways out of a replaying test that went past the egress guard.

* item 8: a ``bytes`` or ``bytearray`` host (``connect``, ``sendto``), and the C socket
  type ``_socket.socket`` used directly;
* item 9: a keep-alive connection opened before the test and reused in it, with no
  ``connect()`` for the guard to see (a ``requests.Session`` warmed in a fixture of
  wider scope, a pooled ``urllib3`` connection, a bare ``http.client`` one);
* item 10: reverse DNS (``gethostbyaddr``, ``getnameinfo``), while the machine's own
  name, which the standard library asks for, still resolves;
* item 11: a proxy on loopback carrying a request out: the request is judged by the
  host it is for.

The connections are aimed at a canary or a witness server on loopback with loopback
blocking on (the guard treats a blocked loopback peer as any other blocked host), so
a connection or a request line that got through would be counted.
"""

from __future__ import annotations

import _socket
import asyncio
import http.client
import os
import socket
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import requests
import urllib3

from pytest_agentreplay import EgressBlocked
from tests.hardening._canary import Canary, loopback_canary
from tests.hardening._witness import Witness, witness

pytest_plugins = ["pytester"]

BLOCK_LOOPBACK = pytest.mark.agentreplay(block_loopback=True, record_mode="none")


@pytest.fixture(scope="module")
def canary(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Canary]:
    with loopback_canary(tmp_path_factory.mktemp("canary")) as listener:
        listener.prove_reachable()
        yield listener


def _bytes_host(canary: Canary) -> None:
    with socket.socket() as sock:
        sock.connect((canary.host.encode(), canary.port))


def _bytearray_host(canary: Canary) -> None:
    with socket.socket() as sock:
        sock.connect_ex((bytearray(canary.host.encode()), canary.port))


def _c_socket(canary: Canary) -> None:
    sock = _socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.connect((canary.host, canary.port))
    finally:
        sock.close()


def _c_socket_bytes(canary: Canary) -> None:
    sock = _socket.socket()
    try:
        sock.connect((canary.host.encode(), canary.port))
    finally:
        sock.close()


FORMS: dict[str, Callable[[Canary], None]] = {
    "bytes-host": _bytes_host,
    "bytearray-host": _bytearray_host,
    "_socket.socket": _c_socket,
    "_socket.socket-bytes-host": _c_socket_bytes,
}


@BLOCK_LOOPBACK
@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_form_of_a_host_is_judged(canary: Canary, form: str) -> None:
    before = canary.accepted()
    with pytest.raises(EgressBlocked, match=f"socket connect to {canary.host}:{canary.port}"):
        FORMS[form](canary)
    assert canary.accepted() == before, f"{form} reached the canary"


@BLOCK_LOOPBACK
@pytest.mark.parametrize(
    "host", [b"127.0.0.1", bytearray(b"127.0.0.1")], ids=["bytes", "bytearray"]
)
def test_a_datagram_to_a_bytes_host_is_refused(host: bytes) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        with pytest.raises(EgressBlocked, match="socket sendto to 127.0.0.1:9"):
            sock.sendto(b"ping", (host, 9))
        with pytest.raises(EgressBlocked, match="socket sendmsg to 127.0.0.1:9"):
            sock.sendmsg([b"ping"], [], 0, (host, 9))


def test_the_c_socket_type_still_names_every_socket() -> None:
    """Rebinding ``_socket.socket`` keeps ``isinstance`` true of every socket."""
    with socket.socket() as sock:
        assert isinstance(sock, _socket.socket)
    assert issubclass(socket.socket, _socket.socket)


# --- item 9: a connection opened before the test --------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Witness]:
    with witness(tmp_path_factory.mktemp("witness")) as running:
        yield running


class Warmed:
    """Clients that made one request to the witness before any test intercepted."""

    def __init__(self, server: Witness) -> None:
        self.session = requests.Session()
        self.pool = urllib3.HTTPConnectionPool("127.0.0.1", server.port, maxsize=1)
        self.connection = http.client.HTTPConnection("127.0.0.1", server.port)
        assert self.session.get(f"{server.url}/warm").text == "ok"
        assert self.pool.request("GET", "/warm").data == b"ok"
        self.connection.request("GET", "/warm")
        assert self.connection.getresponse().read() == b"ok"

    def close(self) -> None:
        self.session.close()
        self.pool.close()
        self.connection.close()


@pytest.fixture(scope="module")
def warmed(server: Witness) -> Iterator[Warmed]:
    clients = Warmed(server)
    yield clients
    clients.close()


def _reuse_session(clients: Warmed, url: str) -> Any:
    return clients.session.get(f"{url}/reused")


def _reuse_pool(clients: Warmed, url: str) -> Any:
    return clients.pool.request("GET", "/reused", retries=False)


def _reuse_connection(clients: Warmed, url: str) -> Any:
    clients.connection.request("GET", "/reused")
    return clients.connection.getresponse()


REUSED: dict[str, Callable[[Warmed, str], Any]] = {
    "requests.Session": _reuse_session,
    "urllib3-pool": _reuse_pool,
    "http.client": _reuse_connection,
}


class TestWarmConnections:
    """The test intercepts with the router alone (no cassette, so vcrpy, which
    replays ``requests`` and ``urllib3`` through a cassette, does not stand in the
    way): the socket guard has to hold by itself."""

    @pytest.fixture
    def agentreplay_config(self) -> dict[str, Any]:
        return {"block_loopback": True}

    @pytest.mark.parametrize("client", sorted(REUSED))
    def test_a_connection_opened_before_the_test_is_not_reused(
        self, warmed: Warmed, server: Witness, client: str, scripted_model: object
    ) -> None:
        before = server.lines()
        with pytest.raises(EgressBlocked, match="over a connection made before the guard"):
            REUSED[client](warmed, server.url)
        assert server.lines() == before, f"{client} sent a request on its warm connection"


def test_a_session_warmed_in_a_session_scoped_fixture_is_held(
    pytester: pytest.Pytester, server: Witness
) -> None:
    """The case as reported: a user's ``requests.Session`` fixture of session scope,
    a test with the marker, and vcrpy off (so the guard, not vcrpy, has to hold)."""
    pytester.makeini("[pytest]\nagentreplay_vcr = never\n")
    pytester.makeconftest(
        f"""
import pytest, requests

@pytest.fixture(scope="session")
def client():
    session = requests.Session()
    assert session.get("{server.url}/warm-session").text == "ok"
    yield session
    session.close()
"""
    )
    pytester.makepyfile(
        test_user=f"""
import pytest

@pytest.mark.agentreplay(block_loopback=True)
def test_reuses_it(client):
    client.get("{server.url}/in-test")
"""
    )
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*EgressBlocked*over a connection made before the guard*"])
    assert "GET /warm-session HTTP/1.1" in server.lines()
    assert "GET /in-test HTTP/1.1" not in server.lines()


def test_a_warm_connection_to_an_allowed_host_is_still_used(
    warmed: Warmed, server: Witness, scripted_model: object
) -> None:
    """Loopback is allowed by default: the warm connection serves the test."""
    assert warmed.session.get(f"{server.url}/allowed").text == "ok"
    assert server.lines()[-1] == "GET /allowed HTTP/1.1"


# --- item 10: reverse DNS -------------------------------------------------------------

REVERSE: dict[str, Callable[[], Any]] = {
    "gethostbyaddr": lambda: socket.gethostbyaddr("203.0.113.7"),
    "getnameinfo": lambda: socket.getnameinfo(("203.0.113.7", 443), 0),
    "asyncio-getnameinfo": lambda: asyncio.run(_getnameinfo_async()),
}


async def _getnameinfo_async() -> Any:
    return await asyncio.get_running_loop().getnameinfo(("203.0.113.7", 443))


@BLOCK_LOOPBACK
@pytest.mark.parametrize("lookup", sorted(REVERSE))
def test_reverse_dns_is_refused(lookup: str, request: pytest.FixtureRequest) -> None:
    with pytest.raises(EgressBlocked, match="reverse DNS lookup of 203.0.113.7") as info:
        REVERSE[lookup]()
    assert request.node.nodeid in str(info.value)


@BLOCK_LOOPBACK
def test_the_machines_own_name_still_resolves() -> None:
    """``socket.getfqdn()`` (``http.server``, ``smtplib``) asks for the machine's own
    name and for loopback's; a numeric ``getnameinfo`` asks no server at all."""
    assert socket.getfqdn()
    socket.gethostbyaddr("127.0.0.1")
    flags = socket.NI_NUMERICHOST | socket.NI_NUMERICSERV
    assert socket.getnameinfo(("203.0.113.7", 443), flags) == ("203.0.113.7", "443")


# --- item 11: a proxy on loopback -----------------------------------------------------


@pytest.fixture
def proxy(server: Witness, monkeypatch: pytest.MonkeyPatch) -> Witness:
    """The witness as the environment's proxy (on loopback, which stays allowed)."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, server.url)
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    # urlopen() builds its opener, and reads the proxies, once: not before, not after.
    monkeypatch.setattr(urllib.request, "_opener", None)
    return server


async def _aiohttp_via_proxy(url: str) -> None:
    async with aiohttp.ClientSession(trust_env=True) as session, session.get(url) as response:
        await response.read()


def _requests_imported_in_the_test(url: str) -> Any:
    import requests as imported  # as a user's code does it, after the guard is on

    return imported.get(url, timeout=5)


PROXIED: dict[str, Callable[[str], Any]] = {
    "urllib": lambda url: urllib.request.urlopen(url, timeout=5),
    "requests": _requests_imported_in_the_test,
    "urllib3-ProxyManager": lambda url: urllib3.ProxyManager(os.environ["HTTP_PROXY"]).request(
        "GET", url, retries=False
    ),
    "aiohttp": lambda url: asyncio.run(_aiohttp_via_proxy(url)),
}


@pytest.mark.parametrize("scheme", ["http", "https"])
@pytest.mark.parametrize("client", sorted(PROXIED))
def test_a_request_through_a_loopback_proxy_is_judged_by_its_host(
    proxy: Witness, scripted_model: object, client: str, scheme: str
) -> None:
    before = proxy.lines()
    # aiohttp's requests are judged by the router before any connection (issue 19).
    where = "No fake model" if client == "aiohttp" else "through 127.0.0.1"
    with pytest.raises(EgressBlocked, match=f"outside.example.*{where}"):
        PROXIED[client](f"{scheme}://outside.example/leak")
    assert proxy.lines() == before, f"{client} handed the proxy a request for the outside"


@pytest.fixture
def agentreplay_config() -> dict[str, Any]:
    return {"allow_hosts": ["allowed.example"]}


def test_a_request_for_an_allowed_host_goes_through_the_proxy(
    proxy: Witness, scripted_model: object, tmp_path: Path
) -> None:
    assert urllib.request.urlopen("http://allowed.example/fine", timeout=5).read() == b"ok"
    assert proxy.lines()[-1] == "GET http://allowed.example/fine HTTP/1.1"
