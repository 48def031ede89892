"""``agentreplay mcp record`` and ``replay``: a stdio server recorded by a proxy in front
of its command, and served back from the cassette to the mcp SDK's own client."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import yaml
from mcp import Client, StdioServerParameters

from pytest_agentreplay.cli.app import main
from tests.mcp._servers import stdio_script

AGENTREPLAY = [sys.executable, "-m", "pytest_agentreplay.cli"]


async def _session(command: list[str], order: list[tuple[str, dict[str, object]]]) -> list[str]:
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with Client(params, mode="legacy") as client:
        return [(await client.call_tool(name, args)).content[0].text for name, args in order]


ORDER: list[tuple[str, dict[str, object]]] = [("add", {"a": 2, "b": 3}), ("shout", {"text": "x"})]


def test_record_then_replay_a_stdio_server(tmp_path: Path) -> None:
    cassette = tmp_path / "calc.yaml"
    server = stdio_script(tmp_path)
    recorder = [*AGENTREPLAY, "mcp", "record", str(cassette), "--", *server]
    assert asyncio.run(_session(recorder, ORDER)) == ["5", "X"]
    stored = yaml.safe_load(cassette.read_text("utf-8"))["interactions"]
    calls = [i["request"]["json"]["params"]["name"] for i in stored
             if i["request"]["json"]["method"] == "tools/call"]  # fmt: skip
    assert calls == ["add", "shout"]
    assert main(["lint", str(cassette)]) == 0

    Path(server[1]).unlink()  # replay never starts it
    replayer = [*AGENTREPLAY, "mcp", "replay", str(cassette)]
    assert asyncio.run(_session(replayer, list(reversed(ORDER)))) == ["X", "5"]


def test_replay_names_the_servers_a_cassette_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = tmp_path / "empty.yaml"
    cassette.write_text("version: 1\ninteractions: []\n")
    assert main(["mcp", "replay", str(cassette), "--key", "python x.py"]) == 2
    assert "no stdio server 'python x.py' recorded here (recorded: none)" in capsys.readouterr().err


def test_record_needs_a_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "record", str(tmp_path / "c.yaml")]) == 2
    assert "give the server's command after --" in capsys.readouterr().err
