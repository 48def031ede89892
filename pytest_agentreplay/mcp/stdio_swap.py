"""Stand a recording in for each stdio MCP server a framework spawns during a test.

pydantic-ai (``MCPToolset`` and FastMCP's stdio transports), openai-agents
(``MCPServerStdio``) and langchain-mcp-adapters all start a stdio server through the
mcp SDK's ``stdio_client``, which spawns ``command args`` in
``mcp.client.stdio._create_platform_compatible_process``. While a test's cassette is
open, that spawn is swapped, by the server's command key (:func:`.stdio_form.command_key`):

* replaying, for a server the cassette recorded: the replayer
  (:mod:`.stdio_replay`) answers from the cassette, so the framework runs unchanged;
* recording: the recording proxy (:mod:`.stdio_record`) runs the real server and keeps
  each exchange; the test's cassette stores them with its HTTP interactions;
* replaying, for a server the cassette never recorded: nothing is spawned, and the
  test fails with :class:`~.errors.StdioServerNotRecorded` naming the command.

The swap is installed once per process, on the first import of ``mcp`` (nothing is
imported before), and does nothing outside a test with a cassette.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import json
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from ..cassettes.cassette import Interaction
from ..cassettes.io import from_data
from ..transport.import_hook import when_imported
from .errors import StdioServerNotRecorded
from .stdio_form import command_key, key_of
from .stdio_ledger import Ledger

__all__ = ["StandIn", "install", "recorded_in", "stand_in", "standing_in"]

_lock = threading.Lock()
_active: list[StandIn] = []

_PLAYED = "played.jsonl"
"""The report the test's replayers share (:mod:`.stdio_ledger`)."""


class StandIn:
    """The swap of one test: what it recorded and replayed is collected at the end."""

    def __init__(
        self,
        cassette: Path,
        interactions: Sequence[Interaction],
        *,
        replaying: bool,
        recording: bool,
        rerecord: str = "",
    ) -> None:
        self.cassette = cassette
        keys = (key_of(i.request.url) for i in interactions)
        self.servers = {k for k in keys if k is not None}
        """The command keys of the stdio servers the cassette recorded."""
        self.replaying = replaying
        self.recording = recording
        self.rerecord = rerecord
        self._folder: Path | None = None  # made at the first spawn: most tests spawn none
        self._count = 0
        self._played: Ledger | None = None

    @property
    def folder(self) -> Path:
        """Where the replayers and proxies of this test write what they did."""
        with _lock:
            if self._folder is None:
                self._folder = Path(tempfile.mkdtemp(prefix="agentreplay-mcp-"))
            return self._folder

    def command(self, command: str, args: Sequence[str]) -> list[str]:
        """What to spawn for ``command args``: the replayer, the recording proxy, or
        nothing (:class:`StdioServerNotRecorded`). The plugin's own processes (a
        fake tool server's relay, a replayer) are spawned as they are."""
        if _ours(args):
            return [command, *args]
        key = command_key(command, args)
        with _lock:
            self._count += 1
            number = self._count
        if self.replaying and key in self.servers:
            report = self.folder / _PLAYED  # one for all: each exchange is played once
            return [sys.executable, "-m", "pytest_agentreplay.mcp.stdio_replay",
                    str(self.cassette), "--key", key, "--report", str(report)]  # fmt: skip
        if self.recording:
            out = self.folder / f"recorded-{number}.jsonl"
            return [sys.executable, "-m", "pytest_agentreplay.mcp.stdio_record",
                    "--jsonl", str(out), "--key", key, "--", command, *args]  # fmt: skip
        known = "; ".join(sorted(self.servers)) or "none"
        raise StdioServerNotRecorded(
            f"the stdio MCP server {key!r} is not in cassette {self.cassette} (stdio "
            f"servers recorded there: {known}); in replay it is not started. "
            + (self.rerecord or "Record it with --agentreplay-record-mode=new_episodes.")
        )

    def news(self) -> tuple[list[int], list[str]]:
        """What the replayers did since the last call: the recorded interactions they
        played (numbers in the cassette) and their miss reports."""
        played: list[int] = []
        misses: list[str] = []
        folder = self._folder
        if folder is None:
            return played, misses
        with _lock:
            if self._played is None:
                self._played = Ledger(folder / _PLAYED)
            entries = self._played.news()
        for entry in entries:
            if "played" in entry:
                played.append(int(entry["played"]))
            else:
                misses.append(str(entry["miss"]))
        return played, misses

    def recorded(self) -> list[Interaction]:
        """The exchanges the recording proxies kept, server by server."""
        folder = self._folder
        if folder is None:
            return []
        found: list[Interaction] = []
        for path in sorted(folder.glob("recorded-*.jsonl"), key=_number):
            found += recorded_in(path)
        return found

    def close(self) -> None:
        """Remove the working files."""
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)


def recorded_in(path: Path) -> list[Interaction]:
    """The exchanges a recording proxy wrote to ``path``, in the order the client sent
    them (checked as a cassette file is)."""
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    lines.sort(key=lambda entry: int(entry["n"]))
    data = {"version": 1, "interactions": [entry["interaction"] for entry in lines]}
    return from_data(data, path=str(path)).interactions


def _ours(args: Sequence[str]) -> bool:
    """Whether ``args`` run a module of this package (``-m pytest_agentreplay....``)."""
    return any(
        flag == "-m" and module.startswith("pytest_agentreplay.")
        for flag, module in itertools.pairwise(args)
    )


def _number(path: Path) -> int:
    return int(path.stem.rpartition("-")[2])


@contextmanager
def standing_in(swap: StandIn) -> Iterator[StandIn]:
    """``swap`` active for the block (the spawns of the test's frameworks go to it)."""
    install()
    with _lock:
        _active.append(swap)
    try:
        yield swap
    finally:
        with _lock:
            _active.remove(swap)


def stand_in() -> StandIn | None:
    """The active swap, if a test with a cassette is running."""
    with _lock:
        return _active[-1] if _active else None


Spawn = Callable[..., Awaitable[Any]]


_HOME = str(Path(__file__).resolve().parents[2])
"""The folder this package is imported from: first on the stand-in's ``PYTHONPATH``,
so that the child runs this very code (a source checkout, another worktree)."""


def _with_home(env: dict[str, str] | None) -> dict[str, str]:
    """``env`` (the SDK's default environment when ``None``) with :data:`_HOME` first
    on ``PYTHONPATH``."""
    out = dict(os.environ if env is None else env)
    paths = [p for p in out.get("PYTHONPATH", "").split(os.pathsep) if p]
    out["PYTHONPATH"] = os.pathsep.join([_HOME, *(p for p in paths if p != _HOME)])
    return out


def _swapped(original: Spawn) -> Spawn:
    @functools.wraps(original)
    async def spawn(command: str, args: list[str], *rest: Any, **options: Any) -> Any:
        swap = stand_in()
        if swap is not None:
            program, *arguments = swap.command(command, args)
            command, args = program, arguments
            if rest:  # env given by position
                rest = (_with_home(rest[0]), *rest[1:])
            else:
                options["env"] = _with_home(options.get("env"))
        return await original(command, args, *rest, **options)

    spawn.__agentreplay__ = True  # type: ignore[attr-defined]
    return spawn


def _patch(_mcp: ModuleType) -> None:
    """Wrap the SDK's spawn (once: a second patch would swap twice)."""
    try:
        stdio = importlib.import_module("mcp.client.stdio")
    except ImportError:  # an mcp without a stdio client: nothing to stand in for
        return
    original = getattr(stdio, "_create_platform_compatible_process", None)
    if original is None or getattr(original, "__agentreplay__", False):
        return
    stdio._create_platform_compatible_process = _swapped(original)  # type: ignore[attr-defined]


def install() -> None:
    """Swap the mcp SDK's spawn of stdio servers, now or when ``mcp`` is imported."""
    when_imported("mcp", _patch)
