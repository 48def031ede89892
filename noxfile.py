"""The drift sessions: the suite's SDK-facing half against the versions users really get.

The main CI run installs the lock file (requirements/dev.lock), so it tests exactly what
was tested before. That alone never notices a new SDK release, nor a floor in
pyproject.toml that stopped working. These sessions do (CONTRIBUTING.md):

- ``lowest``: the ``test`` extra with every requirement at the lowest version
  pyproject.toml allows (uv's ``--resolution lowest-direct``: each direct requirement at
  its floor, what they pull in at its newest). ``.ci/versions.py --lowest`` fails the
  session when a floor could not be installed, so every floor is one that was tested.
- ``newest``: the ``test`` extra at the newest releases on the index, ignoring the lock,
  and the SDKs (``SDKS``) at their newest even where a framework caps them: users call
  an SDK without the framework (pydantic-ai 2.78 asks for google-genai below 3, and
  google-genai 3.0 changed its default client and API version).
- ``drift_check``: proves the other two can fail. It runs ``lowest`` with one package
  pinned below the floor the suite needs (``PROBE``) and passes only if that session
  fails with a message naming the package and the pinned version.

Both drift sessions print the versions they installed, then run the tests that meet an
SDK, a framework, an HTTP client or vcrpy (``SDK_TESTS``). ``--pin NAME==VERSION`` (after
``--``) overrides one requirement, floors included: ``nox -s lowest -- --pin
anthropic==2.13.0`` shows what a floor set lower would do.

One more session covers what the lock cannot hold:

- ``mcp1``: the ``mcp1`` extra, the mcp 1.x line (``mcp>=1.24,<2``) with
  langchain-mcp-adapters, which requires it, at the newest releases on the index (as
  ``newest`` installs; ``--pin`` too). The test extra needs mcp 2, so the two never
  share an environment, nor the lock. It proves that the plugin imports and records
  under mcp 1.x, that langchain-mcp-adapters' ``MultiServerMCPClient`` (a stdio and a
  Streamable HTTP server, the tools called directly and by a LangGraph agent) runs
  unchanged from a recording, and that the fake tool servers serve it
  (``MCP1_TESTS``, skipped by the main suite, which has no langchain-mcp-adapters).
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import nox
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

sys.path.insert(0, str(Path(__file__).parent / ".ci"))
import versions

nox.options.default_venv_backend = "uv"
nox.options.error_on_external_run = True
nox.options.sessions = ["lowest", "newest", "drift_check", "mcp1"]

SDK_TESTS = [
    "tests/fakes",
    "tests/cassettes",
    "tests/transport",
    "tests/migration",
    "tests/runlog",
    "tests/invariants/test_retries.py",
    "tests/hardening/test_fault_injection_replay.py",
    "tests/hardening/test_egress_every_client.py",
    "tests/cli/test_serve.py",
    "tests/test_docs.py",
]
"""The fakes and faults through each SDK, record and replay, the transports and their
clients, the frameworks, serve, the migration from vcrpy and pytest-recording, and the
docs pages' examples (each page runs real SDK code)."""

SDKS = ["anthropic", "openai", "google-genai", "httpx[http2]", "httpx2"]
"""Taken at their newest release by ``newest``, whatever upper bound another
requirement puts on them (each becomes an ``--override`` without bounds). An override
replaces every requirement on the package, extras too: each keeps the extras the test
extra's packages ask for (litellm's ``httpx[http2]``), and ``.ci/versions.py`` fails the
session naming any extra an override dropped."""

SDK_CONTRACT = ["tests/fakes/test_faults.py", "tests/test_docs.py", "-k", "faults"]
"""The tests that pin down what an SDK raises for each fault: the table of docs/faults.md
and the fake's faults through each SDK (see ``releases``)."""

MCP1_TESTS = ["tests/mcp/mcp1"]
"""What ``mcp1`` runs: langchain-mcp-adapters against recorded MCP servers, under mcp 1."""

PROBE = ("vcrpy", "8.2.1", ["tests/migration/test_vcr_fixture.py"])
"""A package, a release below the floor the suite needs, and the tests that meet it: the
drift check pins it and expects the session to fail naming it (vcrpy 8.2.1 was allowed by
the old floor and failed every migrated test with a ``TypeError``)."""


def _pins(args: list[str]) -> list[str]:
    """``--pin NAME==VERSION`` arguments as requirement lines (uv ``--override``)."""
    pins, rest = [], list(args)
    while rest:
        arg = rest.pop(0)
        if arg != "--pin" or not rest or "==" not in rest[0]:
            raise ValueError(f"unknown argument {arg!r}: use --pin NAME==VERSION")
        pins.append(rest.pop(0))
    return pins


def _overrides(pins: list[str], *, lowest: bool) -> list[str]:
    """The uv ``--override`` lines: the pins (an SDK's with its extras), and at the
    newest the SDKs without caps."""
    extras = {canonicalize_name(Requirement(sdk).name): Requirement(sdk).extras for sdk in SDKS}
    pinned, lines = set(), []
    for pin in pins:
        name, _, release = pin.partition("==")
        key = canonicalize_name(name)
        pinned.add(key)
        wanted = ",".join(sorted(extras.get(key, ())))
        lines.append(f"{name}[{wanted}]=={release}" if wanted else pin)
    if not lowest:
        lines += [sdk for sdk in SDKS if canonicalize_name(Requirement(sdk).name) not in pinned]
    return lines


def _install(session: nox.Session, *, lowest: bool, pins: list[str], extra: str = "test") -> None:
    """``extra``, at its floors or at the newest, with ``pins`` forced."""
    options = ["--resolution", "lowest-direct"] if lowest else ["--upgrade", "--refresh"]
    if overrides := _overrides(pins, lowest=lowest):
        # Not session.create_tmp(): it points TMPDIR into the project, where the
        # suite's nested pytest runs would read the project's own pytest settings.
        path = Path(session.virtualenv.location) / "overrides.txt"
        path.write_text("\n".join(overrides) + "\n", encoding="utf-8")
        options += ["--override", str(path)]
        session.log(f"overrides: {', '.join(overrides)}")
    session.install(*options, "-e", f".[{extra}]")
    checks = ["--lowest"] if lowest and not pins else []
    session.run("python", ".ci/versions.py", "--extra", extra, *checks)


def _pytest(session: nox.Session, tests: list[str], **kwargs: object) -> str | bool:
    command = ["python", "-m", "pytest", "-n", "2", "-q", "-p", "no:cacheprovider", *tests]
    return session.run(*command, env={"CI": "true"}, **kwargs)  # type: ignore[arg-type]


def _failed(output: object) -> bool:
    """Whether pytest's quiet output reports a failure or an error."""
    return re.search(r"\b\d+ (failed|errors?)\b", str(output)) is not None


def _session_pins(session: nox.Session) -> list[str]:
    try:
        return _pins(session.posargs)
    except ValueError as exc:
        session.error(str(exc))


@nox.session
def lowest(session: nox.Session) -> None:
    """The SDK-facing tests with every requirement at its declared floor."""
    _install(session, lowest=True, pins=_session_pins(session))
    _pytest(session, SDK_TESTS)


@nox.session
def newest(session: nox.Session) -> None:
    """The SDK-facing tests with the newest release of everything on the index."""
    _install(session, lowest=False, pins=_session_pins(session))
    _pytest(session, SDK_TESTS)


@nox.session
def drift_check(session: nox.Session) -> None:
    """``lowest`` with ``PROBE`` pinned below its floor must fail, naming it."""
    package, release, tests = PROBE
    _install(session, lowest=True, pins=[f"{package}=={release}"])
    output = str(_pytest(session, tests, success_codes=[0, 1], silent=True))
    if not _failed(output):
        session.error(
            f"the lowest session passed with {package}=={release}, below the floor the"
            f" suite needs: the drift sessions cannot tell a floor set too low\n{output}"
        )
    named = re.search(rf"{re.escape(package)}\W+{re.escape(release)}", output)
    if not named:
        session.error(
            f"the lowest session with {package}=={release} failed, but no message named"
            f" {package} {release}:\n{output}"
        )
    session.log(f"as it should, the session failed naming it: {named.group(0)!r}")


@nox.session
def mcp1(session: nox.Session) -> None:
    """langchain-mcp-adapters on mcp 1.x, recorded and replayed (``MCP1_TESTS``), at
    the newest releases; ``-- --pin mcp==1.24.0`` tries another."""
    _install(session, lowest=False, pins=_session_pins(session), extra="mcp1")
    _pytest(session, MCP1_TESTS)


@nox.session
def releases(session: nox.Session) -> None:
    """``SDK_CONTRACT`` against every release of one package, from the floor
    pyproject.toml declares to the newest: where a row of the "What the SDKs raise"
    table changes, the first release that fails says so. Not run by CI (it installs
    every release): ``nox -s releases -- anthropic``."""
    if len(session.posargs) != 1:
        session.error("name one package: nox -s releases -- anthropic")
    [package] = session.posargs
    _install(session, lowest=False, pins=[])
    session.install("pip")  # to list the releases on the index, as pip sees them
    listing = str(session.run("python", "-m", "pip", "index", "versions", package, silent=True))
    found = re.search(r"Available versions: (.*)", listing)
    if not found:
        session.error(f"no releases of {package} on the index:\n{listing}")
    floor = _floor(package)
    listed = sorted(v for v in map(Version, found.group(1).split(", ")) if not v.is_prerelease)
    results = []
    for release in (v for v in listed if floor is None or v >= floor):
        session.install(f"{package}=={release}")
        output = _pytest(session, SDK_CONTRACT, success_codes=[0, 1], silent=True)
        results.append((release, "FAILED" if _failed(output) else "passed"))
    for release, outcome in results:
        session.log(f"{package} {release}: {outcome}")
    if any(outcome == "FAILED" for _, outcome in results):
        session.error("a release fails the SDK contract: see which above")


def _floor(package: str) -> Version | None:
    """The floor pyproject.toml declares for ``package`` (runtime or any extra)."""
    project = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8"))["project"]
    for req in versions.requirements(project, "dev"):
        if canonicalize_name(req.name) == canonicalize_name(package):
            return versions.floor(req)
    return None
