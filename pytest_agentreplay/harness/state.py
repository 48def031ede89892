"""The plugin's run state: one object for the session, one for each test.

What the hooks and fixtures share lives in two objects, each under one stash key
(as syrupy keeps its one ``SnapshotSession``): :class:`RunState` in
``config.stash`` (the configure hook's settings, the summary's report, the
session scrubber, collection order) and :class:`TestState` in ``item.stash`` (the
test's resolved settings, its router, cassette sessions and fake models).

The ``pytest11`` entry module imports this one at start-up, so it imports nothing
heavy: the scrubber, the cassette merge and the cache are imported when used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from .settings import AgentReplaySettings, TestSettings, check_session_settings
from .summary import Report

if TYPE_CHECKING:
    from ..cassettes.handle import AgentReplay
    from ..cassettes.ledger import RunLedger
    from ..cassettes.session import CassetteSession
    from ..fakes.fake_model import FakeModel
    from ..mcp.fake.server import FakeToolServer
    from ..mcp.stdio_swap import StandIn
    from ..redact.scrubber import Scrubber
    from ..transport.router import Router
    from .summary import CassetteUse

__all__ = ["LEDGER_KEY", "RUN_STATE", "TEST_STATE", "RunState", "TestState", "sync_stdio"]


def sync_stdio(session: CassetteSession, swap: StandIn) -> None:
    """What the test's stdio MCP replayers did, into its cassette session: the
    interactions they played count as played (strict mode), their misses fail the test
    (:mod:`..mcp.stdio_swap`)."""
    played, misses = swap.news()
    for number in played:
        session.index.play(number)
    session.answered_misses.extend(misses)


RUN_STATE: pytest.StashKey[RunState] = pytest.StashKey()
"""Where ``config.stash`` keeps the session's :class:`RunState`."""

TEST_STATE: pytest.StashKey[TestState] = pytest.StashKey()
"""Where ``item.stash`` keeps a test's :class:`TestState` (only tests that use us have one)."""

LEDGER_KEY = "agentreplay_run_ledger"
"""The key of the run's shared ledger folder in an xdist worker's ``workerinput``."""

_VCR_CHOICES = ("auto", "always", "never")


@dataclass(eq=False)
class RunState:
    """What the session knows: built once at configure time, read by every test."""

    settings: AgentReplaySettings
    """The session's settings, as the ``pytest_agentreplay_configure`` hook left them."""
    vcr: str
    """``agentreplay_vcr``: when vcrpy serves the clients that are not httpx."""
    ledger: RunLedger
    """What the run wrote into which cassette (``rewrite`` keeps it): shared by the xdist
    workers through a folder the controller names."""
    block_network: bool
    """``--agentreplay-block-network``: every test is intercepted, not only ours."""
    report: Report = field(default_factory=Report)
    order: dict[str, int] = field(default_factory=dict)
    """Each test's place in the collection (the same on every xdist worker)."""
    _scrubber: Scrubber | None = None

    @classmethod
    def start(cls, config: pytest.Config) -> RunState:
        """The session's state, after the configure hook has changed its settings."""
        settings = AgentReplaySettings()
        config.hook.pytest_agentreplay_configure(config=config, settings=settings)
        check_session_settings(settings)
        workerinput = getattr(config, "workerinput", {})
        run = cls(
            settings=settings,
            vcr=_vcr_setting(config),
            ledger=_ledger(workerinput.get(LEDGER_KEY)),
            block_network=bool(
                config.getoption("agentreplay_block_network")
                or config.getini("agentreplay_block_network")
            ),
        )
        config.stash[RUN_STATE] = run
        return run

    @staticmethod
    def of(config: pytest.Config) -> RunState:
        return config.stash[RUN_STATE]

    def scrubber(self) -> Scrubber:
        """The session scrubber: default rules plus the hook's, built on first use
        (most tests never need it)."""
        if self._scrubber is None:
            from ..redact.scrubber import Scrubber

            s = self.settings
            self._scrubber = Scrubber(
                extra_headers=tuple(s.redact_headers),
                extra_query_params=tuple(s.redact_query_params),
                extra_body_keys=tuple(s.redact_body_keys),
                custom=tuple(s.scrubbers),
            )
        return self._scrubber

    def mask(self, text: str) -> str:
        """``text`` with secrets masked by the session scrubber."""
        return self.scrubber().mask(text)

    def shared_ledger(self) -> str:
        """The folder the xdist workers share the ledger through (named on first use,
        created by the first write, removed by :meth:`finish`)."""
        if self.ledger.directory is None:
            import tempfile
            import uuid

            name = f"agentreplay-run-{os.getpid()}-{uuid.uuid4().hex[:12]}"
            self.ledger.directory = os.path.join(tempfile.gettempdir(), name)
        return self.ledger.directory

    def finish(self, cache: Any) -> None:
        """At the end of the run (on the controller of an xdist run): cassettes that
        tests on several workers wrote are put in test order, and unplayed
        interactions are remembered in pytest's ``cache`` for ``agentreplay lint``."""
        self.ledger.remove()
        self._order_shared_cassettes()
        found = self.report.unplayed_by_path()
        if cache is not None and found:
            from ..cassettes.unplayed import remember

            remember(cache, found)

    def _order_shared_cassettes(self) -> None:
        """After an xdist run: cassettes written by several tests get their blocks of
        interactions in collection order, so the file does not depend on worker timing."""
        shared = self.report.shared_writes()
        if not shared:
            return  # the usual case, and a suite that does not use us: import nothing
        from pathlib import Path

        from ..cassettes.merge import order_blocks
        from ..errors import AgentReplayError

        for path, uses in shared.items():
            try:
                order_blocks(Path(path), [(u.order, u.block) for u in uses], self.scrubber())
            except (AgentReplayError, OSError) as exc:
                self.report.problems.append(f"could not put {path} in test order: {exc}")


def _ledger(directory: str | None) -> RunLedger:
    from ..cassettes.ledger import RunLedger

    return RunLedger(directory)


def _vcr_setting(config: pytest.Config) -> str:
    wanted = str(config.getini("agentreplay_vcr")).strip().lower()
    if wanted not in _VCR_CHOICES:
        raise pytest.UsageError(
            f"agentreplay_vcr = {wanted!r} in the ini file: use auto, always or never."
        )
    return wanted


@dataclass(eq=False)
class TestState:
    """What one test that uses the plugin has open, and what it leaves for the run.

    The router, the handle and the open cassette sessions are dropped when the test
    ends: the item lives until the run ends, and must not keep every test's cassette
    in memory until then.
    """

    __test__ = False  # a plain class, not a test class to collect

    marked: bool = False
    """Given the marker's fixture at collection: it must run before the test does."""
    settings: TestSettings | None = None
    """The test's settings, resolved when its router opens."""
    router: Router | None = None
    handle: AgentReplay | None = None
    sessions: list[CassetteSession] = field(default_factory=list)
    """The cassette sessions open in this test."""
    stdio: list[tuple[CassetteSession, StandIn]] = field(default_factory=list)
    """The stand-ins for the stdio MCP servers of the open cassettes (their misses
    fail the test)."""
    fakes: list[FakeModel] = field(default_factory=list)
    tool_servers: list[FakeToolServer] = field(default_factory=list)
    """The test's fake tool server (``scripted_tools`` and the others), when it has one."""
    uses: list[CassetteUse] = field(default_factory=list)
    """What the test did with its cassettes, for the summary (sent on under xdist)."""
    unrecorded: list[str] = field(default_factory=list)
    """The summary's warning that the test's ``model_server`` answered calls while
    recording, which no cassette records (sent on under xdist)."""
    failed: bool = False
    """The test body failed: a failed test's cassette is not saved over an existing one."""
    stopped: bool = False
    """A ``BaseException`` that is not a pytest outcome (``SystemExit``, one of the
    test's own) ended the body: what it recorded is kept only as incomplete."""

    @staticmethod
    def of(item: pytest.Item) -> TestState:
        """The state of ``item``, made on first use."""
        state = item.stash.get(TEST_STATE, None)
        if state is None:
            state = item.stash[TEST_STATE] = TestState()
        return state

    def problems(self) -> list[str]:
        """Why a passing test body fails after all: what its fakes saw (unexpected
        calls, calls after the script ran out, replies never requested) and, in strict
        mode, the recorded interactions it left unplayed."""
        found: list[str] = []
        for fake in self.fakes:
            fake.close_open_calls()
            found.extend(fake.problems)
        for session, swap in self.stdio:
            sync_stdio(session, swap)
        for tools in self.tool_servers:
            tools.close_open_calls()
            found.extend(tools.problems)
        found.extend(self._unplayed())
        found.extend(miss for s in self.sessions for miss in s.answered_misses)
        return found

    def _unplayed(self) -> list[str]:
        if not self.sessions or self.settings is None or not self.settings.strict:
            return []
        return [
            f"strict mode: {len(s.unplayed)} recorded interaction(s) of {s.path} were not "
            f"played: #{', #'.join(map(str, s.unplayed))}"
            for s in self.sessions
            if s.unplayed
        ]
