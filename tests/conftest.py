"""Suite-wide settings: a bounded, derandomized hypothesis profile for CI; one copy of
the package for in-process pytester runs; ``ast.parse`` kept to one thread at a time
where CPython needs it (:mod:`tests.ast_lock`)."""

from __future__ import annotations

import asyncio
import importlib
import os
import pkgutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import pytest_agentreplay
from tests import ast_lock
from tests.garbage import collect_garbage
from tests.servers import ProviderServer, provider_server

ast_lock.install()

settings.register_profile(
    "ci",
    max_examples=60,
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    """Refuse a temporary folder inside the project: the suite's nested pytest runs
    (pytester) would find the project's pyproject.toml above them and run with its
    settings instead of their own (nox's ``session.create_tmp()`` sets TMPDIR there)."""
    temp = Path(tempfile.gettempdir()).resolve()
    if temp.is_relative_to(ROOT):
        raise pytest.UsageError(
            f"the temporary folder {temp} is inside the project: nested pytest runs would "
            f"read the project's pytest settings. Point TMPDIR outside {ROOT}."
        )


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio (the SDKs' default event loop)."""
    return "asyncio"


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    """A loopback server speaking the providers' wire formats, answering from its
    script (``server.add(reply)``): what tests record from."""
    with provider_server() as state:
        yield state


@pytest.fixture
def echo_server(server: ProviderServer) -> ProviderServer:
    """``server`` that, once its script is used up, answers every model call with
    ``echo: <the last user message>``: any number of distinct calls to record."""
    server.echo = True
    return server


def _import_every_module() -> None:
    """Import each module of the package once, before any in-process pytester run.

    An in-process run drops the modules it imported when it ends: a module first
    imported inside one would come back as a second copy in the next (a second
    ``EgressBlocked`` class, a second cassette model), and an ``isinstance`` between
    the copies fails. Whether a module was imported first inside a run depended on
    which tests ran before it (``tests/test_docs.py`` alone failed 12 examples).
    """
    prefix = f"{pytest_agentreplay.__name__}."
    for module in pkgutil.walk_packages(pytest_agentreplay.__path__, prefix):
        if module.name.endswith(".__main__"):
            continue
        try:
            importlib.import_module(module.name)
        except ModuleNotFoundError as exc:
            # An optional dependency the environment lacks (syrupy, aiohttp in the mcp1
            # session of noxfile.py): no run can import that module either. A module of
            # the package itself missing is a bug, and raises.
            if exc.name is None or exc.name.partition(".")[0] == pytest_agentreplay.__name__:
                raise


@pytest.fixture(scope="session", autouse=True)
def _one_copy_of_the_package() -> None:
    """Every module of the package, imported before any test (and so before any
    ``pytester``, which drops at teardown what was imported after it was set up): see
    :func:`_import_every_module`."""
    _import_every_module()


@pytest.fixture(autouse=True)
def _close_default_loop() -> Iterator[None]:
    """Close the default event loop a test left open: frameworks' ``run_sync`` make
    one and keep it on purpose, and its ResourceWarning (unclosed loop, its
    self-pipe sockets) otherwise lands in whichever later test the GC runs in (seen
    in the aiohttp tests and docs examples)."""
    yield
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            loop = asyncio.get_event_loop_policy().get_event_loop()
    except RuntimeError:  # no default loop in this thread
        return
    if not loop.is_running():
        loop.close()
        asyncio.set_event_loop(None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """Collect what a nested pytest run left behind, once its test is over.

    A nested run's test module is dropped when ``pytester`` tears down, and with it the
    clients its tests kept at module level, like a user's suite, unclosed. Sockets in
    such a cycle reached the GC in a later, unrelated test, whose unraisable-exception
    check then failed it (a ResourceWarning of the nested run's client, seen in CI).
    They are collected here, once pytest has let go of the test's fixtures (the
    ``pytester`` too), and what survives is frozen (:func:`collect_garbage`)."""
    yield
    if "pytester" in getattr(item, "fixturenames", ()):
        collect_garbage(freeze=True)
