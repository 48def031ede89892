"""Fixtures of the example agent's regression suite.

Most scenarios run twice through the ``backend`` fixture: against a fake model
(``backend.fake``, the plugin's ``scripted_model``) and against a cassette recorded
from a local server that speaks the providers' wire formats (``backend.cassette``,
the plugin's ``agentreplay`` handle). The cassettes live in the repository's
top-level ``cassettes/`` folder, one file per test: ``cassettes/<module>/<test>.yaml``.

To record them again: ``python examples/tools/record_cassettes.py``. It starts the
server, runs the cassette variants with ``--agentreplay-record-mode=rewrite``, and
each test tells the server what to answer through ``backend.script(...)`` — the same
call that scripts the fake.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agent import SessionConfig

from pytest_agentreplay import FakeModel, Fault, Reply, invariants
from pytest_agentreplay.cassettes.cassette import Interaction
from pytest_agentreplay.runlog import RunLog
from pytest_agentreplay.snapshot import AgentReplaySnapshotExtension

CASSETTES = Path(__file__).resolve().parent.parent / "cassettes"
# Where the recordings were made (and where tools/record_cassettes.py serves while
# recording). Replay matches the host but not the port, and answers every model call
# from the cassette: nothing needs to listen here in replay.
SERVER = os.environ.get("AGENT_EXAMPLES_SERVER", "http://127.0.0.1:8787")
SCRIPTS = os.environ.get("AGENT_EXAMPLES_SCRIPTS")  # set by record_cassettes.py


def pytest_agentreplay_configure(config: pytest.Config, settings: Any) -> None:
    """While record_cassettes.py records, keep no arrival times: the local server's
    timings are noise, and without them a re-recording of an unchanged test is
    byte-identical. (Only then: the settings are the whole session's.)"""
    if SCRIPTS:
        settings.scrubbers.append(_without_times)


def _without_times(interaction: Interaction) -> Interaction:
    events = interaction.response.events
    if not events:
        return interaction
    untimed = [event.replace(t=None) for event in events]
    return interaction.replace(response=interaction.response.replace(events=untimed))


@pytest.fixture
def snapshot(snapshot: Any) -> Any:
    """syrupy's ``snapshot``, storing run logs with their ids and clocks masked."""
    return snapshot.use_extension(AgentReplaySnapshotExtension)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def agentreplay_config(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Cassettes in ``cassettes/<module>/<test>.yaml``, strict: a recorded interaction
    the test does not play fails it."""
    path = CASSETTES / request.path.stem / f"{request.node.name}.yaml"
    return {"cassette": str(path), "strict": True}


@dataclass
class Backend:
    """Where the model's answers come from: a fake model or a recorded cassette."""

    name: str
    fake: FakeModel | None = None
    cassette: Any = None  # the plugin's ``agentreplay`` handle

    @property
    def recording(self) -> bool:
        return self.cassette is not None and self.cassette.record_mode != "none"

    def base_url(self, provider: str) -> str | None:
        """The provider's own API for the fake; the local server for a cassette."""
        if self.fake is not None:
            return None
        return SERVER + ("/v1" if provider == "openai" else "")

    def config(self, provider: str = "anthropic", **settings: Any) -> SessionConfig:
        return SessionConfig(provider=provider, base_url=self.base_url(provider), **settings)  # type: ignore[arg-type]

    def script(self, *items: Reply | Fault | str) -> None:
        """What the model answers: the fake's script, or what the recording server
        serves while the cassette is recorded (in replay, the cassette has it)."""
        if self.fake is not None:
            self.fake.script(*items)
        else:
            self.serve_edited(*items, add_fields={})

    def serve_edited(self, *items: Reply | Fault | str, add_fields: dict[str, Any]) -> None:
        """Like :meth:`script`, with ``add_fields`` added to the JSON data of every
        streamed event, as a gateway in front of the provider adds ``"error": null``.
        The fake renders them itself (``Reply(event_fields=...)``); while a cassette
        is recorded, the recording server adds them to the provider's events on the
        way out, so the cassette holds bytes the plugin's renderer did not write.
        Either way a field an event already has is kept."""
        if self.fake is not None:
            self.fake.script(*(_with_fields(_reply(item), add_fields) for item in items))
            return
        if not self.recording:
            return
        entries = [
            {"reply": _reply(item).model_dump(mode="json"), "add_fields": add_fields}
            for item in items
        ]
        folder = Path(SCRIPTS or ".")
        staged = folder / "script.json.tmp"
        staged.write_text(json.dumps(entries))
        staged.replace(folder / "script.json")  # the server takes it whole, or not at all

    def runlog(self) -> RunLog:
        """A run log whose model side is what this backend served."""
        if self.fake is not None:
            return RunLog.from_fake(self.fake)
        return RunLog.from_cassette(self.cassette)

    def assert_offline(self) -> None:
        """Nothing went out; with a cassette, every call was answered by it, and every
        recorded interaction was played."""
        if self.fake is not None:
            invariants.assert_no_live_calls()
        elif not self.recording:
            assert {call.source for call in self.cassette.calls} == {"cassette"}
            invariants.assert_no_live_calls(self.cassette, all_played=True)


def _with_fields(reply: Reply, fields: dict[str, Any]) -> Reply:
    """``reply`` with ``fields`` added to its ``event_fields`` (its own win)."""
    return reply.model_copy(update={"event_fields": {**fields, **(reply.event_fields or {})}})


def _reply(item: Reply | Fault | str) -> Reply:
    if isinstance(item, Fault):
        return Reply.failure(item)
    return Reply.text(item) if isinstance(item, str) else item


@pytest.fixture(params=["fake", "cassette"])
def backend(request: pytest.FixtureRequest) -> Backend:
    """The same scenario against a fake model and against its recorded cassette."""
    if request.param == "fake":
        return Backend("fake", fake=request.getfixturevalue("scripted_model"))
    if request.config.getoption("agentreplay_record_mode") not in (None, "none") and not SCRIPTS:
        pytest.skip("record the cassettes with examples/tools/record_cassettes.py")
    return Backend("cassette", cassette=request.getfixturevalue("agentreplay"))
