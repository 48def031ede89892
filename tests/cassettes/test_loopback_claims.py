"""Replay claims the loopback host:port pairs its cassette recorded, no other (issue 31).

A cassette that recorded a local test server (an MCP server on ``127.0.0.1:P``) used to
claim every request to ``127.0.0.1``: an unrelated local service on another port became
a cassette miss in replay instead of passing as loopback does without a cassette. Each
client the plugin serves is checked: httpx and httpx2 (sync and async), aiohttp, and
requests (through vcrpy).
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator

import aiohttp  # noqa: F401 - imported once here: in-process runs reuse it
import httpx  # noqa: F401
import pytest
import requests  # noqa: F401

from tests.cassettes._plugin_runs import run

pytest_plugins = ["pytester"]

USER_TEST = """
import asyncio, os
import aiohttp, httpx, httpx2, pytest, requests
from pytest_agentreplay import CassetteMiss

RECORDED = os.environ["AR_RECORDED"]
OTHER = os.environ["AR_OTHER"]


def get(client, url):
    if client == "httpx":
        return httpx.get(url).json()
    if client == "httpx2":
        return httpx2.get(url).json()
    if client == "requests":
        return requests.get(url, timeout=10).json()
    async def call():
        if client == "httpx2-async":
            async with httpx2.AsyncClient() as c:
                return (await c.get(url)).json()
        async with aiohttp.ClientSession() as session:
            async with session.get(url) as r:
                return await r.json(content_type=None)
    return asyncio.run(call())


CLIENTS = ["httpx", "httpx2", "httpx2-async", "aiohttp", "requests"]


@pytest.mark.agentreplay(cassette="local.yaml")
@pytest.mark.parametrize("client", CLIENTS)
def test_other_port_passes(client):
    assert get(client, OTHER + "/status") == {"from": "live service"}


@pytest.mark.agentreplay(cassette="local.yaml")
@pytest.mark.parametrize("client", CLIENTS)
def test_recorded_port_replays(client):
    assert get(client, RECORDED + "/status") == {"from": "cassette"}


@pytest.mark.agentreplay(cassette="local.yaml")
@pytest.mark.parametrize("client", CLIENTS)
def test_recorded_port_misses(client):
    with pytest.raises(CassetteMiss, match="no recorded interaction matches GET"):
        get(client, RECORDED + "/elsewhere")
"""


class _Status(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"from": "live service"}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def live_service() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Status)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _cassette(url: str) -> str:
    return (
        "version: 1\n"
        "interactions:\n"
        "- request: {method: GET, url: '" + url + "/status'}\n"
        "  response:\n"
        "    status: 200\n"
        "    headers: {content-type: application/json}\n"
        "    json: {from: cassette}\n"
    )


def test_replay_claims_only_the_recorded_loopback_port(
    pytester: pytest.Pytester, live_service: str
) -> None:
    port = int(live_service.rsplit(":", 1)[1])
    recorded = f"http://127.0.0.1:{port + 1 if port < 65535 else port - 1}"
    pytester.makepyfile(test_user=USER_TEST)
    folder = pytester.path / "cassettes" / "test_user"
    folder.mkdir(parents=True)
    (folder / "local.yaml").write_text(_cassette(recorded))
    result = run(pytester, AR_RECORDED=recorded, AR_OTHER=live_service)
    result.assert_outcomes(passed=15)
