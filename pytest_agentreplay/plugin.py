"""The ``pytest11`` entry point: options, the marker, fixtures and hooks — nothing heavy.

Installing the plugin must cost other test suites nothing, so this module imports
no HTTP client, YAML, pydantic, syrupy or hypothesis at import time; fixtures
import what they need when a test asks for them. Interception is active only in
tests that use an agentreplay fixture or marker (or with
``--agentreplay-block-network``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .harness.options import MARKER_HELP, RECORD_MODES, add_options

if TYPE_CHECKING:
    from .cassettes.handle import AgentReplay
    from .cassettes.session import CassetteSession
    from .fakes import FakeModel
    from .harness.report import CassetteUse, Report
    from .harness.settings import Settings
    from .hooks import AgentReplaySettings
    from .redact import Scrubber
    from .transport.router import Router

__all__ = ["RECORD_MODES"]

_FAKES: pytest.StashKey[list[FakeModel]] = pytest.StashKey()
_CASSETTES: pytest.StashKey[list[CassetteSession]] = pytest.StashKey()
_FAILED: pytest.StashKey[bool] = pytest.StashKey()
_SETTINGS: pytest.StashKey[AgentReplaySettings] = pytest.StashKey()
_SCRUBBER: pytest.StashKey[Scrubber] = pytest.StashKey()
_REPORT: pytest.StashKey[Report] = pytest.StashKey()
_RESOLVED: pytest.StashKey[Settings] = pytest.StashKey()
_ORDER: pytest.StashKey[dict[str, int]] = pytest.StashKey()
_RUN_STARTED: pytest.StashKey[float] = pytest.StashKey()
_RUN_STARTED_KEY = "agentreplay_run_started"
_USES: pytest.StashKey[list[CassetteUse]] = pytest.StashKey()
_VCR: pytest.StashKey[str] = pytest.StashKey()
_ROUTER: pytest.StashKey[Router] = pytest.StashKey()
_HANDLE: pytest.StashKey[AgentReplay] = pytest.StashKey()
_REPORT_ATTR = "agentreplay_uses"  # on a worker's teardown report, read by the controller


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hooks

    pluginmanager.add_hookspecs(hooks)


@pytest.hookimpl(trylast=True)  # after xdist's, which registers its distributing session
def pytest_configure(config: pytest.Config) -> None:
    from .harness.report import Report
    from .hooks import AgentReplaySettings

    config.addinivalue_line("markers", MARKER_HELP)
    settings = AgentReplaySettings()
    config.hook.pytest_agentreplay_configure(config=config, settings=settings)
    config.stash[_SETTINGS] = settings
    config.stash[_VCR] = _vcr_setting(config)
    config.stash[_REPORT] = Report()
    workerinput = getattr(config, "workerinput", {})
    config.stash[_RUN_STARTED] = float(workerinput.get(_RUN_STARTED_KEY, time.time()))
    # Only when xdist distributes: hooks run for every test of every suite, and a plain
    # run has no use for these (a makereport wrapper and a logreport, six calls a test).
    if hasattr(config, "workerinput"):
        config.pluginmanager.register(_XdistWorker(), "agentreplay-xdist-worker")
    elif config.pluginmanager.has_plugin("dsession"):
        config.pluginmanager.register(_XdistController(config), "agentreplay-xdist")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Remember each test's place in the collection: cassettes that several tests
    wrote on xdist workers are put in this order at the end (see ``order_blocks``)."""
    session.config.stash[_ORDER] = {item.nodeid: i for i, item in enumerate(session.items)}


def _block_everywhere(config: pytest.Config) -> bool:
    return bool(
        config.getoption("agentreplay_block_network") or config.getini("agentreplay_block_network")
    )


_MARKER_FIXTURE = "_agentreplay_marker"
_MARKED: pytest.StashKey[bool] = pytest.StashKey()


@pytest.hookimpl(trylast=True)  # after other plugins and conftests have marked tests
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give the marker's fixture to the tests that need it: those with the marker, or
    every test under ``--agentreplay-block-network``.

    It is not an autouse fixture: pytest spends about 40 us a test on one, which every
    test of a suite would pay for merely having the plugin installed (bench/ W4). It
    goes where an autouse fixture would: after the test's fixtures of wider scope and
    before its function-scoped ones, so those run inside the router.
    """
    everywhere = _block_everywhere(config)
    for item in items:
        if everywhere or item.get_closest_marker("agentreplay") is not None:
            _add_marker_fixture(item)


def _add_marker_fixture(item: pytest.Item) -> None:
    names = getattr(item, "fixturenames", None)
    info = getattr(item, "_fixtureinfo", None)
    if names is None or info is None:
        return  # not a test that takes fixtures (another plugin's item): as with autouse
    if _MARKER_FIXTURE not in names:  # parametrized tests share the list
        defs = info.name2fixturedefs
        at = next(
            (
                i
                for i, name in enumerate(names)
                if name not in defs or defs[name][-1].scope == "function"
            ),
            len(names),
        )
        if isinstance(names, list):
            names.insert(at, _MARKER_FIXTURE)
        if _MARKER_FIXTURE not in getattr(item, "fixturenames", ()):
            raise pytest.UsageError(
                f"pytest-agentreplay could not add its fixture to {item.nodeid} (this pytest "
                f"version keeps a test's fixture names differently); it would run without "
                f"interception. Please report it with your pytest version."
            )
    item.stash[_MARKED] = True


@pytest.hookimpl(trylast=True)  # after pytest's own setup has run the test's fixtures
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Never let a test that needs interception run without it (``--setup-plan`` runs
    no fixture, and no test)."""
    if (
        item.stash.get(_MARKED, False)
        and _ROUTER not in item.stash
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
        with _router_scope(request) as router, _cassette_scope(request, router):
            yield
    else:
        if _block_everywhere(node.config):
            request.getfixturevalue("_agentreplay_router")
        yield


@pytest.fixture
def agentreplay_config() -> dict[str, Any]:
    """Defaults for the ``agentreplay`` marker's keywords (``cassette``, ``record_mode``,
    ``match_on``, ``allow_hosts``, ``strict``, ``pace``, ...) for the tests that see this
    fixture: override it in a ``conftest.py`` or module to configure a group of tests.
    The marker overrides it; the command line overrides both."""
    return {}


@pytest.fixture
def _agentreplay_router(
    request: pytest.FixtureRequest, agentreplay_config: dict[str, Any]
) -> Iterator[Router]:
    """The interception scope of one test: egress rules from the settings, all handlers
    (the marker's, when the test has the marker)."""
    with _router_scope(request) as router:
        yield router


@pytest.fixture
def agentreplay(
    request: pytest.FixtureRequest, _agentreplay_router: Router
) -> Iterator[AgentReplay]:
    """The per-test cassette handle: path, interactions, calls, live-call ledger,
    ``inject(fault, at_call=n)``. Using it (or the marker) turns the cassette on."""
    with _cassette_scope(request, _agentreplay_router) as handle:
        yield handle


@contextmanager
def _router_scope(request: pytest.FixtureRequest) -> Iterator[Router]:
    """Intercept for one test: a router with the egress rules its settings give. The
    marker and the fixtures may each ask for it, in either order: a test's second
    request joins the router already open (it is closed by whoever opened it)."""
    item = request.node
    opened = item.stash.get(_ROUTER, None)
    if opened is not None:
        yield opened
        return
    from .harness.settings import resolve
    from .transport.router import Router, intercepting

    config = request.getfixturevalue("agentreplay_config")
    settings = item.stash[_RESOLVED] = resolve(item, config)
    router = Router(
        test=item.nodeid,
        allow_hosts=settings.allow_hosts,
        allow_loopback=not settings.block_loopback,
        hint=f"Record it with: pytest '{item.nodeid}' --agentreplay-record-mode=new_episodes",
        mask=_masker(item.config),
    )
    item.stash[_ROUTER] = router
    try:
        with intercepting(router):
            yield router
    finally:
        del item.stash[_ROUTER]


@contextmanager
def _cassette_scope(request: pytest.FixtureRequest, router: Router) -> Iterator[AgentReplay]:
    """One test's cassette on ``router``: opened, played or recorded, then finished;
    joined, like :func:`_router_scope`, when the test already has it open."""
    node = request.node
    opened = node.stash.get(_HANDLE, None)
    if opened is not None:
        yield opened
        return
    from .cassettes.handle import AgentReplay

    session = _open_cassette(node, router)
    node.stash.setdefault(_CASSETTES, []).append(session)
    router.add(session)
    router.recorder = session.recorder()
    router.block = not session.recording
    handle = node.stash[_HANDLE] = AgentReplay(session, router)
    try:
        with _non_httpx_clients(request.config, session, router):
            yield handle
    finally:
        del node.stash[_HANDLE]
        router.remove(session)
        router.recorder = None
        _close_cassette(node, session, router)
        # Strict mode has read it (in the call phase); the item lives until the run
        # ends, and must not keep every test's cassette in memory until then.
        node.stash[_CASSETTES].remove(session)


def _non_httpx_clients(
    config: pytest.Config, session: CassetteSession, router: Router
) -> AbstractContextManager[None]:
    """vcrpy records and replays requests / urllib3 / aiohttp into the same cassette,
    when it is installed and wanted (``agentreplay_vcr``: patching their modules costs
    about 2 ms a test, so by default it is done only where it can matter)."""
    from .cassettes import vcr_bridge

    wanted = config.stash[_VCR]
    if wanted == "never" or not vcr_bridge.available():
        return nullcontext()
    if wanted == "auto" and not session.recording and not vcr_bridge.clients_imported():
        router.hint += f" {vcr_bridge.SKIPPED_HINT}"
        return nullcontext()
    return vcr_bridge.vcr_cassette(session)


def _vcr_setting(config: pytest.Config) -> str:
    wanted = str(config.getini("agentreplay_vcr")).strip().lower()
    if wanted not in ("auto", "always", "never"):
        raise pytest.UsageError(
            f"agentreplay_vcr = {wanted!r} in the ini file: use auto, always or never."
        )
    return wanted


def _scrubber(config: pytest.Config) -> Scrubber:
    scrubber = config.stash.get(_SCRUBBER, None)
    if scrubber is None:
        from .redact import Scrubber

        s = config.stash[_SETTINGS]
        scrubber = config.stash[_SCRUBBER] = Scrubber(
            extra_headers=tuple(s.redact_headers),
            extra_query_params=tuple(s.redact_query_params),
            extra_body_keys=tuple(s.redact_body_keys),
            custom=tuple(s.scrubbers),
        )
    return scrubber


def _masker(config: pytest.Config) -> Callable[[str], str]:
    """The session scrubber's ``mask``, built on first use (most tests never need it)."""

    def mask(text: str) -> str:
        return _scrubber(config).mask(text)

    return mask


def _open_cassette(item: pytest.Item, router: Router) -> CassetteSession:
    from .cassettes.session import CassetteSession
    from .harness.paths import cassette_path
    from .harness.settings import match_on_for
    from .transport.chunking import resolve_chunking

    settings, config = item.stash[_RESOLVED], item.config
    session_settings = config.stash[_SETTINGS]
    return CassetteSession(
        path=cassette_path(item, config.getini("agentreplay_cassette_dir"), settings.cassette),
        record_mode=settings.record_mode,
        router=router,
        scrubber=_scrubber(config),
        test=item.nodeid,
        match_on=match_on_for(settings, session_settings),
        chunker=resolve_chunking(session_settings.chunking),
        pace=settings.pace if settings.pace is not None else session_settings.pace,
        allow_incomplete=settings.allow_incomplete,
        save_on_failure=bool(config.getoption("agentreplay_save_on_failure"))
        or session_settings.save_on_failure,
        max_body_bytes=session_settings.max_body_bytes,
        run_started=config.stash[_RUN_STARTED],
        rerecord=f"pytest '{item.nodeid}' --agentreplay-record-mode=new_episodes "
        f"(or =rewrite to record it afresh)",
    )


def _close_cassette(item: pytest.Item, session: CassetteSession, router: Router) -> None:
    from .harness.report import CassetteUse

    use = CassetteUse(
        test=item.nodeid,
        order=item.config.stash.get(_ORDER, {}).get(item.nodeid, 0),
        path=str(session.path),
        record_mode=session.record_mode,
        replayed=sum(1 for c in session.calls if c.source == "cassette"),
        unplayed=session.unplayed,
        # The summary may print these (CI logs are public): masked as messages are,
        # URLs scrubbed as in a cassette (``?key=`` and the like).
        live_calls=[session.scrubber.mask(call) for call in router.live_calls],
        blocked=[session.scrubber.mask(call) for call in router.blocked],
    )
    item.config.stash[_REPORT].add(use)
    item.stash.setdefault(_USES, []).append(use)
    result = session.finish(failed=item.stash.get(_FAILED, False))
    use.recorded, use.written, use.not_written_reason = (
        result.recorded,
        result.written,
        result.reason,
    )
    use.block = result.block


def _order_shared_cassettes(config: pytest.Config) -> None:
    """After an xdist run: cassettes written by several tests get their blocks of
    interactions in collection order, so the file does not depend on worker timing."""
    shared = config.stash[_REPORT].shared_writes()
    if not shared:
        return  # the usual case, and a suite that does not use us: import nothing
    from .cassettes.merge import order_blocks
    from .errors import AgentReplayError

    for path, uses in shared.items():
        try:
            order_blocks(Path(path), [(u.order, u.block) for u in uses], _scrubber(config))
        except (AgentReplayError, OSError) as exc:
            config.stash[_REPORT].problems.append(f"could not put {path} in test order: {exc}")


def _fake(request: pytest.FixtureRequest, router: Router, name: str) -> FakeModel:
    from .fakes import FakeModel

    fake = FakeModel(name=name).attach(router)
    request.node.stash.setdefault(_FAKES, []).append(fake)
    request.addfinalizer(fake.detach)
    return fake


@pytest.fixture
def scripted_model(request: pytest.FixtureRequest, _agentreplay_router: Router) -> FakeModel:
    """A fake model serving a script: ``scripted_model.script(Reply.text("Done."))``."""
    return _fake(request, _agentreplay_router, "scripted_model")


@pytest.fixture
def blocking_model(request: pytest.FixtureRequest, _agentreplay_router: Router) -> FakeModel:
    """A fake model whose next call is held before its first byte until ``release()``
    (``blocking_model.block(after_events=k)`` holds it mid-stream instead)."""
    return _fake(request, _agentreplay_router, "blocking_model").block()


@pytest.fixture
def interrupting_model(request: pytest.FixtureRequest, _agentreplay_router: Router) -> FakeModel:
    """A fake model that cuts its first stream halfway, then serves the script normally
    (``interrupting_model.interrupt(after_events=k, times=n)`` to change that)."""
    return _fake(request, _agentreplay_router, "interrupting_model").interrupt()


@pytest.fixture
def failing_model(request: pytest.FixtureRequest, _agentreplay_router: Router) -> FakeModel:
    """A fake model failing every call with a provider 500
    (``failing_model.fail_with(Fault.http(401))`` to change the fault)."""
    from .model import Fault

    return _fake(request, _agentreplay_router, "failing_model").fail_with(Fault.http(500))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Generator[None, Any, Any]:
    """Remember that the test body failed (a failed test's cassette is not saved over an
    existing one), and mask secrets in the failure report of every test that ran under
    interception: tracebacks show request reprs, locals and messages that can hold a
    credential."""
    report = yield
    if call.when == "call" and call.excinfo is not None:
        item.stash[_FAILED] = True
    if report.failed and _RESOLVED in item.stash:
        from .harness.report_mask import mask_report

        mask_report(report, _masker(item.config))  # never raises
    return report


@pytest.hookimpl(trylast=True)  # after pytest's own, which runs the test body
def pytest_runtest_call(item: pytest.Item) -> None:
    """After a passing test body, fail it for what the fakes saw (unexpected calls,
    calls after the script ran out, replies never requested) and, in strict mode,
    for recorded interactions it left unplayed. (A plain hook, not a wrapper: it runs
    for every test of every suite, and costs a test that does not use us nothing.)"""
    fakes = item.stash.get(_FAKES, ())
    if not fakes and _CASSETTES not in item.stash:
        return
    problems: list[str] = []
    for fake in fakes:
        fake.close_open_calls()
        problems.extend(fake.problems)
    problems.extend(_unplayed_problems(item))
    if problems:
        pytest.fail("pytest-agentreplay:\n" + "\n".join(problems), pytrace=False)


def _unplayed_problems(item: pytest.Item) -> list[str]:
    sessions = item.stash.get(_CASSETTES, [])
    if not sessions or not item.stash[_RESOLVED].strict:
        return []
    return [
        f"strict mode: {len(s.unplayed)} recorded interaction(s) of {s.path} were not "
        f"played: #{', #'.join(map(str, s.unplayed))}"
        for s in sessions
        if s.unplayed
    ]


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    report = config.stash.get(_REPORT, None)
    if report is None:
        return
    lines = report.lines(verbose=config.getoption("verbose") > 0)
    if lines:
        terminalreporter.write_sep("-", "agentreplay")
        for line in lines:
            terminalreporter.write_line(line)


def _remember_unplayed(config: pytest.Config) -> None:
    """Merge this run's unplayed interactions into pytest's cache, for
    ``agentreplay lint`` (cassettes this run did not use keep what an earlier run
    found)."""
    from .harness.report import UNPLAYED_CACHE_KEY

    cache = getattr(config, "cache", None)
    report = config.stash.get(_REPORT, None)
    if cache is None or report is None:
        return
    found = report.unplayed_by_path()
    if found:
        cache.set(UNPLAYED_CACHE_KEY, {**(cache.get(UNPLAYED_CACHE_KEY, {}) or {}), **found})


def pytest_sessionfinish(session: pytest.Session) -> None:
    """At the end of the run (on the controller of an xdist run): cassettes that tests
    on several workers wrote are put in test order, and unplayed interactions are
    remembered for ``agentreplay lint``."""
    if not hasattr(session.config, "workerinput"):
        _order_shared_cassettes(session.config)
        _remember_unplayed(session.config)


class _XdistWorker:
    """On an xdist worker: what each test did with its cassette travels to the
    controller on the test's teardown report, as soon as the test ends, so a worker
    that crashes later loses nothing the summary already had."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: Any) -> Generator[None, Any, Any]:
        report = yield
        uses = item.stash.get(_USES, None)
        if call.when == "teardown" and uses:
            from .harness.report import Report

            setattr(report, _REPORT_ATTR, Report(uses=uses).to_json())
        return report


class _XdistController:
    """On the controller of an xdist run: the workers share the run's start time and
    send what their tests did with their cassettes, so the summary covers the run."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[_RUN_STARTED_KEY] = self.config.stash[_RUN_STARTED]

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, _REPORT_ATTR, None)
        if data and getattr(report, "node", None) is not None:
            self.config.stash[_REPORT].merge_json(data)
