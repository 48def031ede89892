"""The ``pytest11`` entry point: options, the marker, fixtures and hooks — nothing heavy.

Installing the plugin must cost other test suites nothing, so this module imports
no HTTP client, YAML, pydantic, syrupy or hypothesis at import time; fixtures
import what they need when a test asks for them. Interception is active only in
tests that use an agentreplay fixture or marker (or with
``--agentreplay-block-network``).

What the hooks and fixtures share is the run state of :mod:`.harness.state` (one
object for the session, one per test); the scopes a test opens are in
:mod:`.harness.scopes`.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from .harness.marker import add_marker_fixture
from .harness.options import MARKER_HELP, RECORD_MODES, add_options
from .harness.scopes import (
    cassette_scope,
    fake_model,
    fake_tools,
    note_unrecorded_server,
    router_scope,
)
from .harness.state import RUN_STATE, TEST_STATE, RunState, TestState
from .hooks import accept_recording_hook, unused_recording_hook

if TYPE_CHECKING:
    from .cassettes.handle import AgentReplay
    from .fakes.fake_model import FakeModel
    from .fakes.listening import FakeServer
    from .mcp.fake.listening import ToolServerListener
    from .mcp.fake.server import FakeToolServer
    from .transport.router import Router

__all__ = ["RECORD_MODES"]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hooks

    pluginmanager.add_hookspecs(hooks)


@pytest.hookimpl(trylast=True)  # after other plugins' configure hooks have run
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    accept_recording_hook(config)
    from .harness import vcrpy

    if _pytest_recording(config):  # its own vcr in its tests, ours in ours
        config.pluginmanager.register(vcrpy.VcrBesidePytestRecording(), "agentreplay-vcr")
    else:
        config.pluginmanager.register(vcrpy.VcrFixture(), "agentreplay-vcr")
    RunState.start(config)
    # Only when xdist distributes: hooks run for every test of every suite, and a plain
    # run has no use for these (a makereport wrapper and a logreport, six calls a test).
    if hasattr(config, "workerinput"):
        from .harness.xdist import XdistWorker

        config.pluginmanager.register(XdistWorker(), "agentreplay-xdist-worker")


def _pytest_recording(config: pytest.Config) -> bool:
    """Whether pytest-recording is active (by its entry point or ``-p`` module name)."""
    names = ("recording", "pytest_recording.plugin")
    return any(config.pluginmanager.has_plugin(name) for name in names)


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which starts the workers
def pytest_sessionstart(session: pytest.Session) -> None:
    """On the controller of an xdist run, register the hooks that give the workers the
    run's start time and merge what their tests did into the summary.

    Not at configure time: xdist registers its distributing session (``dsession``) in
    its own ``trylast`` configure hook, which runs after ours when both plugins come
    from their entry points (issue 18: the summary, the unplayed cache and the test
    order of shared cassettes were lost under ``-n 2``). By now it is there."""
    config = session.config
    if config.pluginmanager.has_plugin("dsession") and not config.pluginmanager.has_plugin(
        "agentreplay-xdist"
    ):
        from .harness.xdist import XdistController

        config.pluginmanager.register(XdistController(RunState.of(config)), "agentreplay-xdist")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Remember each test's place in the collection: cassettes that several tests
    wrote on xdist workers are put in this order at the end (see ``order_blocks``)."""
    RunState.of(session.config).order = {item.nodeid: i for i, item in enumerate(session.items)}


@pytest.hookimpl(trylast=True)  # after other plugins and conftests have marked tests
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give the marker's fixture to the tests that need it: those with the marker, or
    every test under ``--agentreplay-block-network``.

    It is not an autouse fixture: pytest spends about 40 us a test on one, which every
    test of a suite would pay for merely having the plugin installed (bench/ W4). It
    goes where an autouse fixture would: after the test's fixtures of wider scope and
    before its function-scoped ones, so those run inside the router.
    """
    everywhere = RunState.of(config).block_network
    for item in items:
        if everywhere or item.get_closest_marker("agentreplay") is not None:
            add_marker_fixture(item)


@pytest.hookimpl(trylast=True)  # after pytest's own setup has run the test's fixtures
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Never let a test that needs interception run without it (``--setup-plan`` runs
    no fixture, and no test)."""
    state = item.stash.get(TEST_STATE, None)
    if (
        state is not None
        and state.marked
        and state.router is None
        and not item.config.getoption("setupplan", False)
    ):
        raise RuntimeError(
            f"pytest-agentreplay: the fixture that intercepts {item.nodeid} did not run; "
            "refusing to run it with live network access. Please report it with your "
            "pytest version."
        )


@pytest.fixture
def _agentreplay_marker(request: pytest.FixtureRequest) -> Iterator[None]:
    """Given to tests with the marker (and, with ``--agentreplay-block-network``, to every
    test) by :func:`pytest_collection_modifyitems`.

    The marker's scope (router and cassette) is opened here directly rather than
    through the ``agentreplay`` fixture: two fewer fixtures a test, which is most of
    what the plugin adds to a replayed test (see bench/ W4). The fixtures that a
    test also asks for hand out the objects opened here."""
    node = request.node
    if node.get_closest_marker("agentreplay") is not None:
        with router_scope(request) as router, cassette_scope(request, router):
            yield
    else:
        if RunState.of(node.config).block_network:
            request.getfixturevalue("_agentreplay_router")
        yield


@pytest.fixture
def agentreplay_config() -> dict[str, Any]:
    """Defaults for the ``agentreplay`` marker's keywords (``cassette``, ``record_mode``,
    ``match_on``, ``allow_hosts``, ``strict``, ``pace``, ...) for the tests that see this
    fixture: override it in a ``conftest.py`` or module to configure a group of tests.
    The marker overrides it; the command line overrides both. vcrpy's ``VCR()`` keys
    (``filter_headers``, ``before_record_response``, ...) are taken too, so a
    pytest-recording ``vcr_config`` works renamed (see docs/migrating.md)."""
    return {}


@pytest.fixture
def _agentreplay_router(
    request: pytest.FixtureRequest, agentreplay_config: dict[str, Any]
) -> Iterator[Router]:
    """The interception scope of one test: egress rules from the settings, all handlers
    (the marker's, when the test has the marker)."""
    with router_scope(request) as router:
        yield router


@pytest.fixture
def agentreplay(
    request: pytest.FixtureRequest, _agentreplay_router: Router
) -> Iterator[AgentReplay]:
    """The per-test cassette handle: path, interactions, calls, live-call ledger,
    ``inject(fault, at_call=n)``. Using it (or the marker) turns the cassette on."""
    with cassette_scope(request, _agentreplay_router) as handle:
        yield handle


@pytest.fixture
def scripted_model(request: pytest.FixtureRequest, _agentreplay_router: Router) -> FakeModel:
    """A fake model serving a script: ``scripted_model.script(Reply.text("Done."))``."""
    return fake_model(request, _agentreplay_router, "scripted_model")


@pytest.fixture
def blocking_model(request: pytest.FixtureRequest, _agentreplay_router: Router) -> FakeModel:
    """A fake model whose next call is held before its first byte until ``release()``
    (``blocking_model.block(after_events=k)`` holds it mid-stream instead)."""
    return fake_model(request, _agentreplay_router, "blocking_model").block()


@pytest.fixture
def interrupting_model(request: pytest.FixtureRequest, _agentreplay_router: Router) -> FakeModel:
    """A fake model that cuts its first stream halfway, then serves the script normally
    (``interrupting_model.interrupt(after_events=k, times=n)`` to change that)."""
    return fake_model(request, _agentreplay_router, "interrupting_model").interrupt()


@pytest.fixture
def failing_model(request: pytest.FixtureRequest, _agentreplay_router: Router) -> FakeModel:
    """A fake model failing every call with a provider 500
    (``failing_model.fail_with(Fault.http(401))`` to change the fault)."""
    from .neutral import Fault

    return fake_model(request, _agentreplay_router, "failing_model").fail_with(Fault.http(500))


@pytest.fixture
def model_server(
    request: pytest.FixtureRequest, _agentreplay_router: Router
) -> Iterator[FakeServer[FakeModel]]:
    """The test's fake model served on a real loopback HTTP port, for child processes:
    ``model_server.url`` (or ``model_server.env``) goes into their ``ANTHROPIC_BASE_URL``
    / ``OPENAI_BASE_URL``. The same fake as ``scripted_model`` and the others; closed
    at teardown (a call still held is logged ``cancelled``)."""
    if not _agentreplay_router.allow_loopback:  # its children could not reach it
        pytest.fail(
            "model_server listens on loopback, which this test blocks "
            "(block_loopback=True): allow loopback in tests that use it.",
            pytrace=False,
        )
    fake = fake_model(request, _agentreplay_router, "model_server")
    server = fake.listen()
    # The test's own clients pointed at the URL are served in-process, as the fake's
    # calls: through the socket they were loopback live calls (and, recording, taped).
    fake.serve(server.url)
    try:
        yield server
    finally:
        server.close()
        note_unrecorded_server(request, fake)


@pytest.fixture
def scripted_tools(request: pytest.FixtureRequest, _agentreplay_router: Router) -> FakeToolServer:
    """A fake MCP tool server serving scripted tools over Streamable HTTP at
    ``scripted_tools.url``, and over stdio through ``scripted_tools.stdio_command()``:
    ``scripted_tools.tool("weather", "Rain.", input_schema={...})``."""
    return fake_tools(request, _agentreplay_router)


@pytest.fixture
def blocking_tools(request: pytest.FixtureRequest, _agentreplay_router: Router) -> FakeToolServer:
    """The test's fake tool server, its next call held before any byte until
    ``release()`` (or until the client cancels it): ``blocking_tools.block("weather")``
    holds the next call of one tool instead."""
    return fake_tools(request, _agentreplay_router).block()


@pytest.fixture
def tool_server(
    request: pytest.FixtureRequest, _agentreplay_router: Router
) -> Iterator[ToolServerListener[FakeToolServer]]:
    """The test's fake tool server on a real loopback port, for clients in child
    processes: ``tool_server.url`` is its MCP endpoint, ``tool_server.tools`` the fake
    (the same one as ``scripted_tools``). Closed at teardown."""
    if not _agentreplay_router.allow_loopback:
        pytest.fail(
            "tool_server listens on loopback, which this test blocks "
            "(block_loopback=True): allow loopback in tests that use it.",
            pytrace=False,
        )
    tools = fake_tools(request, _agentreplay_router)
    server = tools.listen()
    tools.serve(server.url)  # the test's own clients at the port are served in-process
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def record_xml_attribute(
    record_xml_attribute: Callable[[str, object], None], request: pytest.FixtureRequest
) -> Callable[[str, object], None]:
    """pytest's ``record_xml_attribute``, masked for a test under interception: it
    writes the JUnit XML node at once, past the report masking below."""

    def record(name: str, value: object) -> None:
        if _intercepted(request.node):
            value = RunState.of(request.config).mask(str(value))
        record_xml_attribute(name, value)

    return record


@pytest.fixture(scope="session")
def record_testsuite_property(
    record_testsuite_property: Callable[[str, object], None], request: pytest.FixtureRequest
) -> Callable[[str, object], None]:
    """pytest's ``record_testsuite_property``, masked: the suite's properties reach the
    JUnit XML file with no report to mask."""

    def record(name: str, value: object) -> None:
        record_testsuite_property(name, RunState.of(request.config).mask(str(value)))

    return record


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Generator[None, Any, Any]:
    """Remember that the test body failed (a failed test's cassette is not saved over an
    existing one), and mask secrets in every report of every test that ran under
    interception: tracebacks show request reprs, locals and messages that can hold a
    credential, and a passing test's captured output reaches JUnit XML
    (``junit_logging=all``) and ``-rA`` too (issue 18: only failures were masked)."""
    if call.excinfo is not None and _intercepted(item):
        from .harness.report_mask import masked_reprs

        with masked_reprs(RunState.of(item.config).mask):
            report = yield
    else:
        report = yield
    if call.when == "call" and call.excinfo is not None:
        state = TestState.of(item)
        state.failed = True
        state.stopped = not isinstance(call.excinfo.value, (Exception, *_OUTCOMES))
    if _intercepted(item) or (report.skipped and _marked(item)):
        from .harness.report_mask import mask_report

        mask_report(report, RunState.of(item.config).mask)  # never raises
    return report


_OUTCOMES = (pytest.skip.Exception, pytest.fail.Exception, pytest.xfail.Exception)
"""pytest's outcomes are ``BaseException``s too, but they end a test as it chose."""


def _intercepted(item: pytest.Item) -> bool:
    """Whether ``item`` ran under a router (its settings were resolved)."""
    state = item.stash.get(TEST_STATE, None)
    return state is not None and state.settings is not None


def _marked(item: pytest.Item) -> bool:
    """Whether ``item`` is marked for the plugin: a test skipped before its fixtures ran
    was never intercepted, yet its skip reason is ours to mask."""
    return item.get_closest_marker("agentreplay") is not None


@pytest.hookimpl(trylast=True)  # after pytest's own, which runs the test body
def pytest_runtest_call(item: pytest.Item) -> None:
    """After a passing test body, fail it for what the fakes saw (unexpected calls,
    calls after the script ran out, replies never requested) and, in strict mode,
    for recorded interactions it left unplayed. (A plain hook, not a wrapper: it runs
    for every test of every suite, and costs a test that does not use us nothing.)"""
    state = item.stash.get(TEST_STATE, None)
    if state is None:
        return
    problems = state.problems()
    if problems:
        pytest.fail("pytest-agentreplay:\n" + "\n".join(problems), pytrace=False)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    run = config.stash.get(RUN_STATE, None)
    if run is None:
        return
    notice = unused_recording_hook(config)
    if notice is not None and notice not in run.report.notices:
        run.report.notices.append(notice)
    lines = run.report.lines(verbose=config.getoption("verbose") > 0)
    if lines:
        terminalreporter.write_sep("-", "agentreplay")
        for line in lines:  # test ids and paths may hold a parameter that is a key
            loud = line.startswith("WARNING: ")  # what was not done, though the test passed
            terminalreporter.write_line(run.mask(line), yellow=loud, bold=loud)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """At the end of the run (on the controller of an xdist run): cassettes that tests
    on several workers wrote are put in test order, and unplayed interactions are
    remembered for ``agentreplay lint``."""
    run = session.config.stash.get(RUN_STATE, None)
    if run is not None and not hasattr(session.config, "workerinput"):
        run.finish(getattr(session.config, "cache", None))
