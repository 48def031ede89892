"""The ``pytest11`` entry point: options, the marker, fixtures and hooks — nothing heavy.

Installing the plugin must cost other test suites nothing, so this module imports
no HTTP client, YAML, pydantic, syrupy or hypothesis at import time; fixtures
import what they need when a test asks for them. Interception is active only in
tests that use an agentreplay fixture or marker (or with
``--agentreplay-block-network``).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from .options import MARKER_HELP, RECORD_MODES, add_options

if TYPE_CHECKING:
    from .fakes import FakeModel
    from .intercept import Router

__all__ = ["RECORD_MODES"]

_FAKES = pytest.StashKey["list[FakeModel]"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)


def _block_everywhere(config: pytest.Config) -> bool:
    return bool(
        config.getoption("agentreplay_block_network") or config.getini("agentreplay_block_network")
    )


@pytest.fixture(autouse=True)
def _agentreplay_marker(request: pytest.FixtureRequest) -> None:
    """Route tests that carry the marker (or every test, if asked) through the plugin.

    Costs one marker lookup in tests that do neither.
    """
    node = request.node
    if node.get_closest_marker("agentreplay") is None and not _block_everywhere(node.config):
        return
    request.getfixturevalue("_agentreplay_router")


@pytest.fixture
def _agentreplay_router(request: pytest.FixtureRequest) -> Iterator[Router]:
    """The interception scope of one test: egress rules from the settings, all handlers."""
    from .intercept import Router, intercepting
    from .settings import resolve

    item = request.node
    settings = resolve(item)
    router = Router(
        test=item.nodeid,
        block=settings.replay_only,
        allow_hosts=settings.allow_hosts,
        allow_loopback=not settings.block_loopback,
    )
    with intercepting(router):
        yield router


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
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """After a passing test body, fail it for what the fakes saw (unexpected calls,
    calls after the script ran out, replies never requested)."""
    result = yield
    problems: list[str] = []
    for fake in item.stash.get(_FAKES, []):
        fake.close_open_calls()
        problems.extend(fake.problems)
    if problems:
        pytest.fail("pytest-agentreplay:\n" + "\n".join(problems), pytrace=False)
    return result
