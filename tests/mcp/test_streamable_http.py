"""MCP over Streamable HTTP, recorded from a real ``MCPServer`` and replayed with it stopped.

Each case records one session of the real mcp SDK client against the SDK's own server
on a free loopback port, stops the server, and replays the session from the cassette
with what broke replay before issue 31: the tools called in another order (the
JSON-RPC ids differ), another SDK version (``clientInfo``), and a session that lasts
longer than the client's one-second reconnect delay (the standalone GET stream of a
stateful server). Both handshakes are covered (``legacy``: ``initialize``; ``auto``:
the 2026-07-28 protocol's ``server/discover``), with SSE and JSON responses, stateful
and stateless servers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2  # noqa: F401 - imported once here: in-process runs reuse it
import mcp  # noqa: F401
import pytest
import yaml

from tests.cassettes._plugin_runs import results, run
from tests.mcp._servers import CALLS_SOURCE, http_server

pytest_plugins = ["pytester"]

USER_TEST = (
    CALLS_SOURCE
    + """
import asyncio, json, os
import pytest
from mcp import Client

URL = os.environ["MCP_URL"]


async def session(order, pause):
    async with Client(URL, mode=os.environ["MCP_MODE"]) as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        texts = []
        for name, args in order:
            texts.append((await client.call_tool(name, args)).content[0].text)
        await asyncio.sleep(pause)
    return names, texts


@pytest.mark.agentreplay
def test_tools(agentreplay, monkeypatch):
    order = tool_calls(monkeypatch)
    names, texts = asyncio.run(session(order, float(os.environ.get("MCP_PAUSE", "0"))))
    with open(os.environ["AR_OUT"], "a") as out:
        out.write(json.dumps({
            "names": names, "texts": texts,
            "calls": [[c.method, c.outcome, c.source] for c in agentreplay.calls],
        }) + "\\n")
"""
)

SERVERS = {
    "legacy-sse": ("legacy", {}),
    "legacy-json": ("legacy", {"json_response": True}),
    "legacy-stateless": ("legacy", {"stateless": True}),
    "modern": ("auto", {}),
}


def _record(pytester: pytest.Pytester, mode: str, server: dict[str, Any]) -> str:
    """Record one session against a live server; the URL it was recorded at."""
    pytester.makepyfile(test_user=USER_TEST)
    with http_server(**server) as url:
        result = run(pytester, "--agentreplay-record-mode=once", MCP_URL=url, MCP_MODE=mode)
    result.assert_outcomes(passed=1)
    (recorded,) = results(pytester)
    assert recorded["texts"] == ["3", "HI"]
    assert {source for _, _, source in recorded["calls"]} == {"live"}
    return url


def _cassette(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    path = pytester.path / "cassettes" / "test_user" / "test_tools.yaml"
    return list(yaml.safe_load(path.read_text("utf-8"))["interactions"])


@pytest.mark.parametrize("name", list(SERVERS))
def test_a_session_replays_in_another_order_with_another_client_version(
    pytester: pytest.Pytester, name: str
) -> None:
    mode, server = SERVERS[name]
    url = _record(pytester, mode, server)
    pause = "1.5" if name == "legacy-sse" else "0"  # past the client's 1 s reconnect delay
    result = run(
        pytester,
        MCP_URL=url,
        MCP_MODE=mode,
        MCP_REVERSE="1",
        MCP_CLIENT_VERSION="99.0.0",
        MCP_PAUSE=pause,
    )
    result.assert_outcomes(passed=1)
    (replayed,) = results(pytester)
    assert replayed["names"] == ["add", "shout"]
    assert replayed["texts"] == ["HI", "3"]
    assert {source for _, _, source in replayed["calls"]} == {"cassette"}
    # Every POST answered whole: none replayed as a cut (issue 31, "Outcome").
    posts = [outcome for method, outcome, _ in replayed["calls"] if method == "POST"]
    assert posts and set(posts) == {"completed"}


def test_posts_closed_after_their_response_are_recorded_complete(
    pytester: pytest.Pytester,
) -> None:
    _record(pytester, *SERVERS["legacy-sse"])
    ends = {
        (i["request"]["method"], (i["request"].get("json") or {}).get("method")): i["response"].get(
            "end", "complete"
        )
        for i in _cassette(pytester)
    }
    assert ends[("POST", "tools/call")] == "complete"
    assert ends[("POST", "initialize")] == "complete"
    assert ends[("POST", "notifications/initialized")] == "complete"
    # (The standalone GET stream ends as the race between the client's close and the
    # server's end of session has it; replay holds it open whatever it says.)


def test_a_replayed_response_carries_the_live_request_id(pytester: pytest.Pytester) -> None:
    _record(pytester, *SERVERS["legacy-json"])
    recorded_ids = {
        (i["request"].get("json") or {}).get("params", {}).get("name"): i["response"]["json"]["id"]
        for i in _cassette(pytester)
        if (i["request"].get("json") or {}).get("method") == "tools/call"
    }
    assert recorded_ids == {"add": 3, "shout": 4}
    # Reversed, "shout" is sent as request 3: a response still saying 4 is dropped by
    # the client, which then waits for ever (it passes only if the id was moved).
    result = run(pytester, MCP_URL="http://127.0.0.1:9/mcp", MCP_MODE="legacy", MCP_REVERSE="1")
    result.assert_outcomes(failed=1)  # the URL differs from the recording's: a clean miss
    result = run(pytester, MCP_URL=_url(pytester), MCP_MODE="legacy", MCP_REVERSE="1")
    result.assert_outcomes(passed=1)
    assert results(pytester)[-1]["texts"] == ["HI", "3"]


def _url(pytester: pytest.Pytester) -> str:
    url: str = _cassette(pytester)[0]["request"]["url"]
    return url


def test_a_miss_is_a_jsonrpc_error_naming_the_closest_recording(
    pytester: pytest.Pytester,
) -> None:
    url = _record(pytester, *SERVERS["legacy-sse"])
    result = run(pytester, MCP_URL=url, MCP_MODE="legacy", MCP_B="5")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "MCPError: agentreplay: cassette miss: no recorded interaction matches POST" in text
    assert "params.arguments.b: recorded 2, now 5" in text
    results(pytester)


def test_the_recorded_cassette_lints_clean(pytester: pytest.Pytester) -> None:
    from pytest_agentreplay.cli.app import main

    _record(pytester, *SERVERS["legacy-sse"])
    path = pytester.path / "cassettes" / "test_user" / "test_tools.yaml"
    assert main(["lint", str(path)]) == 0
    assert json.loads(json.dumps(_cassette(pytester)))  # plain YAML, nothing custom


def test_recordings_are_matched_without_ids_and_client_info(tmp_path: Path) -> None:
    from pytest_agentreplay.cassettes.cassette import RecordedRequest
    from pytest_agentreplay.cassettes.matching import Index, body_with

    def call(id_: int, version: str) -> RecordedRequest:
        return RecordedRequest(
            method="POST",
            url="http://127.0.0.1:1/mcp",
            headers={"content-type": "application/json", "mcp-session-id": f"s{id_}"},
            json_body={
                "jsonrpc": "2.0",
                "id": id_,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "mcp", "version": version},
                },
            },
        )

    assert Index([call(0, "1.0")]).take(call(7, "2.0")) == 0
    strict = Index([call(0, "1.0")], match_on=("method", "path", body_with("id")))
    assert strict.take(call(7, "1.0")) is None
    assert strict.take(call(0, "2.0")) == 0  # initialize: the version never counts
