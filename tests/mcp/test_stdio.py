"""stdio MCP servers recorded by their command and replayed without being started.

The mcp SDK's own client spawns a real ``MCPServer`` script over stdio: recorded
through the plugin's proxy into the test's cassette, then replayed with the script
deleted (the server cannot start), with the tools called in another order and another
client version. A server the cassette never recorded is not started in replay: the
test fails naming its command.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import mcp  # noqa: F401 - imported once here: in-process runs reuse it
import pytest
import yaml

from pytest_agentreplay.mcp.stdio_form import command_key
from pytest_agentreplay.mcp.stdio_ledger import Ledger
from pytest_agentreplay.mcp.stdio_record import Exchanges
from pytest_agentreplay.mcp.stdio_replay import StdioReplayer
from tests.cassettes._plugin_runs import results, run
from tests.mcp._servers import CALLS_SOURCE, stdio_script

pytest_plugins = ["pytester"]

USER_TEST = (
    CALLS_SOURCE
    + """
import asyncio, json, os, sys
import pytest
from mcp import Client, StdioServerParameters


async def session(order):
    script = os.environ["MCP_SCRIPT"]
    params = StdioServerParameters(command=sys.executable, args=[script])
    async with Client(params, mode="legacy") as client:
        names = sorted(t.name for t in (await client.list_tools()).tools)
        texts = []
        for name, args in order:
            texts.append((await client.call_tool(name, args)).content[0].text)
    return names, texts


@pytest.mark.agentreplay
def test_tools(agentreplay, monkeypatch):
    order = tool_calls(monkeypatch)
    names, texts = asyncio.run(session(order))
    with open(os.environ["AR_OUT"], "a") as out:
        out.write(json.dumps({"names": names, "texts": texts,
                              "unplayed": agentreplay.unplayed}) + "\\n")
"""
)


def _record(pytester: pytest.Pytester) -> Path:
    pytester.makepyfile(test_user=USER_TEST)
    script = Path(stdio_script(pytester.path)[1])
    result = run(pytester, "--agentreplay-record-mode=once", MCP_SCRIPT=str(script))
    result.assert_outcomes(passed=1)
    assert results(pytester)[0]["texts"] == ["3", "HI"]
    return script


def _interactions(pytester: pytest.Pytester) -> list[dict[str, object]]:
    path = pytester.path / "cassettes" / "test_user" / "test_tools.yaml"
    return list(yaml.safe_load(path.read_text("utf-8"))["interactions"])


def test_a_stdio_server_replays_without_being_started(pytester: pytest.Pytester) -> None:
    script = _record(pytester)
    stored = _interactions(pytester)
    assert {i["request"]["url"] for i in stored} == {"stdio:python%20calc_server.py"}
    methods = [i["request"]["json"]["method"] for i in stored]
    assert methods[:3] == ["initialize", "notifications/initialized", "tools/list"]
    script.unlink()  # the server cannot start: only the cassette can answer
    result = run(
        pytester,
        "--agentreplay-strict",
        MCP_SCRIPT=str(script),
        MCP_REVERSE="1",
        MCP_CLIENT_VERSION="99.0.0",
    )
    result.assert_outcomes(passed=1)
    (replayed,) = results(pytester)
    assert replayed == {"names": ["add", "shout"], "texts": ["HI", "3"], "unplayed": []}


def test_an_unrecorded_stdio_server_is_not_started_in_replay(
    pytester: pytest.Pytester,
) -> None:
    _record(pytester)
    other = pytester.path / "other_server.py"
    canary = pytester.path / "started"
    other.write_text(f"open({str(canary)!r}, 'w').close()\n")
    result = run(pytester, MCP_SCRIPT=str(other))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*StdioServerNotRecorded*'python other_server.py' is not in cassette*"]
    )
    assert not canary.exists()


def test_a_stdio_miss_is_a_jsonrpc_error_and_fails_the_test(pytester: pytest.Pytester) -> None:
    script = _record(pytester)
    result = run(pytester, MCP_SCRIPT=str(script), MCP_B="5")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "agentreplay: cassette miss: no recorded interaction matches POST stdio:" in text
    assert "params.arguments.b: recorded 2, now 5" in text


def test_a_stdio_cassette_is_linted_and_inspected_like_any(pytester: pytest.Pytester) -> None:
    from pytest_agentreplay.cli.app import main

    _record(pytester)
    path = pytester.path / "cassettes" / "test_user" / "test_tools.yaml"
    assert main(["lint", str(path)]) == 0
    assert main(["inspect", str(path)]) == 0
    assert main(["diff", str(path), str(path)]) == 0


def test_command_keys_drop_where_a_server_lives() -> None:
    assert command_key(sys.executable, ["/tmp/x/calc_server.py", "--port", "1"]) == (
        "python calc_server.py --port 1"
    )
    assert command_key("npx", ["-y", "@scope/server"]) == "npx -y @scope/server"
    secret = ["srv", "--api-key", "sk-live-1", "--token=t0k", "--max-tokens", "5"]
    assert command_key("node", secret) == (
        "node srv --api-key REDACTED --token=REDACTED --max-tokens 5"
    )


def _line(message: dict[str, object]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_the_proxy_pairs_each_request_with_the_lines_up_to_its_response() -> None:
    emitted = []
    exchanges = Exchanges("srv", lambda n, i: emitted.append((n, i)))
    exchanges.client(_line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}))
    exchanges.client(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": 1},
    }
    exchanges.server(_line(progress))
    exchanges.server(_line({"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}))
    exchanges.client(_line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    exchanges.close()
    assert [n for n, _ in emitted] == [1, 0, 2]  # noted as they ended, numbered as sent
    kept = [i for _, i in sorted(emitted, key=lambda pair: pair[0])]
    assert [i.response.status for i in kept] == [200, 202, 200]
    call = kept[0]
    assert [json.loads(e.data) for e in call.response.events] == [
        progress,
        {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}},
    ]
    assert call.response.end == "complete"
    assert kept[2].response.end == "cut"  # the server never answered it


def test_the_replayer_answers_with_the_live_id(tmp_path: Path) -> None:
    kept = []
    exchanges = Exchanges("srv", lambda n, i: kept.append(i))
    exchanges.client(_line({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}))
    exchanges.server(_line({"jsonrpc": "2.0", "id": 7, "result": {"tools": []}}))
    report = tmp_path / "played.jsonl"
    replayer = StdioReplayer(kept, "srv", cassette=tmp_path / "c.yaml", report=Ledger(report))
    (answer,) = replayer.answer(_line({"jsonrpc": "2.0", "id": 0, "method": "tools/list"}))
    assert json.loads(answer) == {"jsonrpc": "2.0", "id": 0, "result": {"tools": []}}
    (miss,) = replayer.answer(_line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    assert json.loads(miss)["error"]["code"] == -32000
    assert "it matched, but it was consumed" in json.loads(miss)["error"]["message"]
    assert json.loads(report.read_text().splitlines()[0]) == {"played": 0}


def test_spawns_of_one_server_share_its_recording(tmp_path: Path) -> None:
    """A framework that spawns the server again for each session (langchain-mcp-adapters)
    gets each recorded exchange once: the second spawn's replayer answers from what the
    first left unplayed, and the test's process reads both in one report."""
    kept = []
    exchanges = Exchanges("srv", lambda n, i: kept.append(i))
    for session, tool in enumerate(["add", "shout"]):
        call = {"name": tool, "arguments": {}}
        exchanges.client(_line({"jsonrpc": "2.0", "id": 0, "method": "initialize"}))
        exchanges.server(_line({"jsonrpc": "2.0", "id": 0, "result": {"session": session}}))
        exchanges.client(_line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}))
        exchanges.server(_line({"jsonrpc": "2.0", "id": 1, "result": {"tool": tool}}))
    exchanges.close()
    report = tmp_path / "played.jsonl"
    first, second = (
        StdioReplayer(kept, "srv", cassette=tmp_path / "c.yaml", report=Ledger(report))
        for _ in range(2)
    )
    initialize = _line({"jsonrpc": "2.0", "id": 0, "method": "initialize"})
    shout = {"name": "shout", "arguments": {}}
    (one,) = first.answer(initialize)
    (two,) = second.answer(initialize)
    assert [json.loads(one)["result"], json.loads(two)["result"]] == [
        {"session": 0},
        {"session": 1},
    ]
    (called,) = first.answer(
        _line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": shout})
    )
    assert json.loads(called)["result"] == {"tool": "shout"}
    reader = Ledger(report)
    assert reader.news() == [{"played": 0}, {"played": 2}, {"played": 3}]
    assert reader.news() == []  # each entry read once


def test_the_shared_report_leaves_a_line_being_written_for_later(tmp_path: Path) -> None:
    report = tmp_path / "played.jsonl"
    report.write_bytes(b'{"played": 4}\n{"pla')
    reader = Ledger(report)
    assert reader.news() == [{"played": 4}]
    with report.open("ab") as file:
        file.write(b'yed": 5}\n')
    assert reader.news() == [{"played": 5}]
    assert Ledger(tmp_path / "absent.jsonl").news() == []


def test_a_secret_in_a_tools_arguments_is_stored_scrubbed_and_still_matches(
    tmp_path: Path,
) -> None:
    from pytest_agentreplay.cassettes.cassette import Cassette
    from pytest_agentreplay.redact.scrubber import default_scrubber

    def call(id_: int) -> bytes:
        arguments = {"url": "https://example.test", "api_key": "sk-live-0123456789abcdef"}
        params = {"name": "fetch", "arguments": arguments}
        return _line({"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params})

    kept = []
    exchanges = Exchanges("srv", lambda n, i: kept.append(i))
    exchanges.client(call(1))
    exchanges.server(_line({"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}))
    stored = default_scrubber().scrub(Cassette(interactions=kept)).interactions
    assert "sk-live" not in json.dumps(stored[0].request.json_body)
    replayer = StdioReplayer(stored, "srv", cassette=tmp_path / "c.yaml")
    (answer,) = replayer.answer(call(9))
    assert json.loads(answer) == {"jsonrpc": "2.0", "id": 9, "result": {"ok": True}}


def test_a_response_that_overtakes_the_proxys_write_still_finds_its_request() -> None:
    """The server may answer before the proxy's write to it returns (it runs at once,
    on the other pipe's thread): the request is noted before it is passed on, so the
    answer is kept with it, not lost and the exchange stored ``cut``."""
    from pytest_agentreplay.mcp.stdio_record import _pump

    kept = []
    exchanges = Exchanges("srv", lambda n, i: kept.append(i))

    class EagerServer(io.BytesIO):
        def write(self, line: bytes) -> int:  # type: ignore[override]
            request = json.loads(line)
            exchanges.server(_line({"jsonrpc": "2.0", "id": request["id"], "result": {}}))
            return len(line)

    client = io.BytesIO(_line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    _pump(client, EagerServer(), exchanges.client)
    exchanges.close()
    (interaction,) = kept
    assert interaction.response.end == "complete"
    assert [json.loads(e.data)["id"] for e in interaction.response.events] == [1]


def test_a_cut_exchange_ends_the_replayer_as_the_server_ended(tmp_path: Path) -> None:
    """The server exited before it answered: in replay its stand-in exits there too,
    so the client sees the server gone rather than waiting for an answer for ever."""
    kept = []
    exchanges = Exchanges("srv", lambda n, i: kept.append(i))
    exchanges.client(_line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    exchanges.close()  # the server is gone, the request unanswered
    replayer = StdioReplayer(kept, "srv", cassette=tmp_path / "c.yaml")
    stdin = io.BytesIO(
        _line({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
        + _line({"jsonrpc": "2.0", "id": 6, "method": "tools/list"})
    )
    stdout = io.BytesIO()
    replayer.serve(stdin, stdout)
    assert replayer.ended
    assert stdout.getvalue() == b""  # nothing answered, the second line never read
    assert stdin.read() == _line({"jsonrpc": "2.0", "id": 6, "method": "tools/list"})


def test_the_proxys_working_file_holds_no_secret(tmp_path: Path) -> None:
    """What the proxy writes as it goes outlives a proxy killed mid-test: it is
    scrubbed by the default rules before it reaches the disk, not only when the
    cassette is written (a secret-named field, sent or answered)."""
    from pytest_agentreplay.mcp.stdio_record import JsonlWriter

    path = tmp_path / "recorded-1.jsonl"
    writer = JsonlWriter(str(path))
    exchanges = Exchanges("srv", writer)
    secret = "sk-ant-api03-" + "A1b2C3d4" * 8
    arguments = {"url": "https://example.test", "api_key": secret}
    request = {"name": "fetch", "arguments": arguments}
    exchanges.client(_line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": request}))
    exchanges.server(_line({"jsonrpc": "2.0", "id": 1, "result": {"api_key": secret}}))
    writer.close()
    text = path.read_text("utf-8")
    assert "fetch" in text
    assert secret not in text
    assert "sk-ant-api03" not in text
