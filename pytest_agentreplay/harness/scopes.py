"""What the plugin opens for one test: its router, its cassette, its fake models.

The fixtures of :mod:`pytest_agentreplay.plugin` (and the marker's fixture) enter
these scopes. A test may ask for a scope twice, in either order (the marker, then
the ``agentreplay`` fixture, or an autouse fixture of a conftest first): the
second request joins the scope already open, which is closed by whoever opened it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest

from .state import RunState, TestState, sync_stdio

if TYPE_CHECKING:
    from pathlib import Path

    from ..cassettes.handle import AgentReplay
    from ..cassettes.session import CassetteSession
    from ..fakes.fake_model import FakeModel
    from ..mcp.fake.server import FakeToolServer
    from ..mcp.stdio_swap import StandIn
    from ..transport.router import Router
    from .settings import TestSettings

__all__ = [
    "NO_CASSETTE_HINT",
    "cassette_scope",
    "fake_model",
    "fake_tools",
    "note_unrecorded_server",
    "router_scope",
]

NO_CASSETTE_HINT = (
    "This test has no cassette, so recording cannot serve it. Serve the host with a "
    "fake model (scripted_model.serve(base_url=...)), allow it with "
    "@pytest.mark.agentreplay(allow_hosts=[...]), or, for a child process, point it at "
    "the model_server fixture (its .url / .env). To record the call instead, give the "
    "test a cassette (@pytest.mark.agentreplay) and run it with "
    "--agentreplay-record-mode=once."
)


@contextmanager
def router_scope(request: pytest.FixtureRequest) -> Iterator[Router]:
    """Intercept for one test: a router with the egress rules its settings give."""
    item = request.node
    state = TestState.of(item)
    if state.router is not None:
        yield state.router
        return
    from ..transport.router import Router, intercepting
    from .settings import resolve

    run = RunState.of(item.config)
    try:
        settings = state.settings = resolve(item, request.getfixturevalue("agentreplay_config"))
    except pytest.UsageError as exc:
        # A bad value may be a secret (a vcrpy filter_sensitive_data, a key pasted into
        # the wrong option): the message reaches CI logs, so it is masked as others are.
        raise pytest.UsageError(run.mask(str(exc))) from None
    router = state.router = Router(
        test=item.nodeid,
        allow_hosts=settings.allow_hosts,
        allow_loopback=not settings.block_loopback,
        guard_children=settings.guard_subprocesses,
        # A test with no cassette cannot record: "record it" looped back to this same
        # error (issue 19). cassette_scope gives a test with a cassette that hint.
        hint=NO_CASSETTE_HINT,
        mask=run.mask,
    )
    try:
        with intercepting(router):
            yield router
    finally:
        state.router = None


@contextmanager
def cassette_scope(request: pytest.FixtureRequest, router: Router) -> Iterator[AgentReplay]:
    """One test's cassette on ``router``: opened, played or recorded, then finished."""
    item = request.node
    state = TestState.of(item)
    if state.handle is not None:
        yield state.handle
        return
    from ..cassettes.handle import AgentReplay
    from ..mcp.stdio_swap import standing_in
    from .vcrpy import bridge_for

    run = RunState.of(item.config)
    session = _open_cassette(item, run, router)
    state.sessions.append(session)
    router.add(session)
    router.hint = f"Record it with: pytest '{item.nodeid}' --agentreplay-record-mode=new_episodes"
    if not session.existed and session.replaying:
        _point_at_pytest_recording_file(item, session, router)
    router.recorder = session.recorder()
    router.block = not session.recording
    handle = state.handle = AgentReplay(session, router)
    swap = _stdio_servers(session)
    state.stdio.append((session, swap))
    session.settle = functools.partial(sync_stdio, session, swap)
    try:
        with bridge_for(run.vcr, session, router), standing_in(swap):
            yield handle
    finally:
        state.handle = None
        router.remove(session)
        router.recorder = None
        state.stdio.remove((session, swap))
        session.settle = None  # a cycle through the session: it is freed at once
        sync_stdio(session, swap)
        for interaction in swap.recorded():
            session.add_recorded(interaction)
        swap.close()
        _close_cassette(item, run, session, router)
        # Strict mode has read it (in the call phase); the item lives until the run
        # ends, and must not keep every test's cassette in memory until then.
        state.sessions.remove(session)


def _stdio_servers(session: CassetteSession) -> StandIn:
    """The stand-in for the stdio MCP servers the test's frameworks spawn
    (:mod:`..mcp.stdio_swap`): replayed from the cassette, or recorded into it."""
    from ..mcp.stdio_swap import StandIn

    return StandIn(
        session.path,
        session.interactions,
        replaying=session.replaying,
        recording=session.recording,
        rerecord=session.router.hint or "",
    )


def fake_model(request: pytest.FixtureRequest, router: Router, name: str) -> FakeModel:
    """The test's fake model on ``router``, detached when the test ends.

    Every fake-model fixture of one test is this one fake, each adding its setting
    (``blocking_model`` a hold, ``interrupting_model`` a cut): issue 20 saw two
    fakes on the same hosts, the newer answering every call while the test waited
    on the older one's hold, hang until a 600 s timeout with no message.
    """
    from ..fakes.fake_model import FakeModel

    state = TestState.of(request.node)
    if state.fakes:
        return state.fakes[0]
    fake = FakeModel(name=name).attach(router)
    state.fakes.append(fake)
    request.addfinalizer(fake.detach)
    return fake


def fake_tools(request: pytest.FixtureRequest, router: Router) -> FakeToolServer:
    """The test's fake tool server on ``router``, detached when the test ends.

    As :func:`fake_model`: every tool-server fixture of one test is this one fake
    (``blocking_tools`` adds a hold, ``tool_server`` a port), so a test never waits on
    a hold of one fake while another answers."""
    from ..mcp.fake.server import FakeToolServer

    state = TestState.of(request.node)
    if state.tool_servers:
        return state.tool_servers[0]
    fake = FakeToolServer().attach(router)
    state.tool_servers.append(fake)
    request.addfinalizer(fake.detach)
    return fake


def _open_cassette(item: pytest.Item, run: RunState, router: Router) -> CassetteSession:
    from ..cassettes.session import CassetteSession
    from ..transport.chunking import resolve_chunking
    from .settings import match_on_for, more_match_on_for
    from .vcrpy import filters_for

    settings, config, session = TestState.of(item).settings, item.config, run.settings
    assert settings is not None  # resolved when the router opened
    return CassetteSession(
        path=_path(item, settings, run),
        record_mode=settings.record_mode,
        router=router,
        scrubber=run.scrubber(),
        test=item.nodeid,
        match_on=match_on_for(settings, session),
        more_match_on=more_match_on_for(settings, session),
        chunker=resolve_chunking(session.chunking),
        pace=settings.pace if settings.pace is not None else session.pace,
        allow_incomplete=settings.allow_incomplete,
        save_on_failure=bool(config.getoption("agentreplay_save_on_failure"))
        or session.save_on_failure,
        max_body_bytes=session.max_body_bytes,
        ledger=run.ledger,
        filters=filters_for(settings.vcrpy),
        repeats=settings.vcrpy is not None and settings.vcrpy.repeats,
        record_on_exception=None if settings.vcrpy is None else settings.vcrpy.record_on_exception,
        rerecord=f"pytest '{item.nodeid}' --agentreplay-record-mode=new_episodes "
        f"(or =rewrite to record it afresh)",
    )


def _point_at_pytest_recording_file(
    item: pytest.Item, session: CassetteSession, router: Router
) -> None:
    """The test's cassette is missing: when pytest-recording's file for the test is
    there under its own name (:func:`.paths.pytest_recording_path`), a miss or a
    blocked call says to rename it (a migrated suite's parametrized tests, issue 26)."""
    settings = TestState.of(item).settings
    if settings is None or settings.cassette is not None:
        return
    vcrpy = settings.vcrpy
    if vcrpy is not None and (vcrpy.library_dir is not None or vcrpy.path_transformer):
        return  # a path vcrpy's keys make: the name is theirs to give
    from ..cassettes.miss import renaming_hint
    from .paths import pytest_recording_path

    found = pytest_recording_path(item, item.config.getini("agentreplay_cassette_dir"))
    if found is not None and _is_file(found):
        session.pytest_recording_file = found
        router.hint += f". {renaming_hint(found, session.path)}"


def _is_file(path: Path) -> bool:
    """``path`` is a file; ``False`` for a name the file system cannot hold (too long:
    ``Path.is_file`` raises for it before Python 3.14), as for one that is not there."""
    try:
        return path.is_file()
    except OSError:
        return False


def _path(item: pytest.Item, settings: TestSettings, run: RunState) -> Path:
    """The test's cassette: ``cassette=``, else the default name (no secret in it),
    placed as vcrpy's ``cassette_library_dir`` / ``path_transformer`` say when they are
    set; never a name another test's cassette has in another case."""
    from .paths import cassette_path, vcrpy_path

    folder = item.config.getini("agentreplay_cassette_dir")
    vcrpy = settings.vcrpy
    if settings.cassette is not None or vcrpy is None:
        return cassette_path(item, folder, settings.cassette, run.mask)
    if vcrpy.library_dir is None and vcrpy.path_transformer is None:
        return cassette_path(item, folder, None, run.mask)
    return vcrpy_path(item, folder, vcrpy.library_dir, vcrpy.path_transformer, run.mask)


def _close_cassette(
    item: pytest.Item, run: RunState, session: CassetteSession, router: Router
) -> None:
    """Finish the cassette (write what was recorded) and note its use for the summary."""
    from .summary import CassetteUse

    state = TestState.of(item)
    use = CassetteUse(
        test=item.nodeid,
        order=run.order.get(item.nodeid, 0),
        path=str(session.path),
        record_mode=session.record_mode,
        replayed=session.replayed,
        unplayed=session.unplayed,
        # The summary may print these (CI logs are public): masked as messages are,
        # URLs scrubbed as in a cassette (``?key=`` and the like).
        live_calls=[session.scrubber.mask(call) for call in router.live_calls],
        blocked=[session.scrubber.mask(call) for call in router.blocked],
    )
    run.report.add(use)
    state.uses.append(use)
    # Ctrl-C and pytest.exit() are re-raised without a call report: the test is torn
    # down at session end, after the run was marked interrupted (issue 18).
    interrupted = state.stopped or item.session.exitstatus == pytest.ExitCode.INTERRUPTED
    result = session.finish(failed=state.failed, interrupted=interrupted)
    use.recorded, use.written, use.not_written_reason = (
        result.recorded,
        result.written,
        result.reason,
    )
    use.block = result.block


def note_unrecorded_server(request: pytest.FixtureRequest, fake: FakeModel) -> None:
    """Say loudly, in the summary, that a test's ``model_server`` answered calls while
    the run recorded: a fake's answers are never recorded, so the test passes and no
    cassette is written for them (issue 30: "cassettes written: 0", and nothing else)."""
    item = request.node
    state = TestState.of(item)
    settings = state.settings
    if settings is None or settings.record_mode == "none" or not fake.calls:
        return
    calls = len(fake.calls)
    line = (
        f"WARNING: {item.nodeid}: model_server answered {calls} "
        f"call{'' if calls == 1 else 's'} in record mode {settings.record_mode}, and a "
        "fake's answers are never recorded: no cassette holds them. To build a cassette "
        "from a fake without an API key, record through agentreplay serve CASSETTE "
        '--record-mode once --upstream URL-OF-THE-FAKE (docs/serving.md, "Recording a '
        'cassette from a fake"); to test against the fake, run without a record mode.'
    )
    state.unrecorded.append(line)
    RunState.of(item.config).report.unrecorded.append(line)
