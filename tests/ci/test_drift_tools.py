"""The tools that keep CI honest about versions: the lock file, the floors report of the
lowest session, and the drift sessions' pins (.ci/lock.py, .ci/versions.py, noxfile.py).

The sessions themselves run in .ci/run (they install from the index, which tests may
not reach); these tests check what the sessions rely on.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem.replace("-", "_"), path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


versions = _load(ROOT / ".ci" / "versions.py")
lock = _load(ROOT / ".ci" / "lock.py")


def _names(reqs: list[Requirement]) -> set[str]:
    return {canonicalize_name(r.name) for r in reqs}


# --- .ci/versions.py --------------------------------------------------------------------


def test_the_test_extra_expands_the_projects_own_extras_and_the_runtime_ones() -> None:
    names = _names(versions.requirements(PROJECT, "test"))
    assert {"pytest", "pydantic", "pyyaml"} <= names  # runtime
    assert {"syrupy", "hypothesis", "vcrpy"} <= names  # through [snapshot,hypothesis,vcr]
    assert {"anthropic", "openai", "litellm"} <= names  # the test extra's own
    assert canonicalize_name(PROJECT["name"]) not in names
    assert "mypy" not in names  # dev only


def test_dev_holds_test_and_its_tools() -> None:
    test, dev = (_names(versions.requirements(PROJECT, e)) for e in ("test", "dev"))
    assert test < dev
    assert {"mypy", "ruff", "nox", "uv"} <= dev - test


def test_a_marker_that_does_not_hold_here_drops_its_requirement() -> None:
    project = {
        "name": "p",
        "dependencies": ["a>=1"],
        "optional-dependencies": {"t": ["b>=2; python_version < '3'", "p[u]"], "u": ["c==3"]},
    }
    assert _names(versions.requirements(project, "t")) == {"a", "c"}


@pytest.mark.parametrize(
    ("line", "floor"),
    [("a>=1.2", "1.2"), ("a>=1,<3", "1"), ("a==2.0.1", "2.0.1"), ("a~=4.1", "4.1"), ("a", None)],
)
def test_the_floor_of_a_requirement(line: str, floor: str | None) -> None:
    assert versions.floor(Requirement(line)) == (Version(floor) if floor else None)


def test_the_lowest_report_names_a_floor_that_was_not_installed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    installed = Version(version("pytest"))
    below = Requirement("pytest>=1")  # a floor under every pytest that runs this suite
    exact = Requirement(f"pytest>={installed}")
    assert versions.report([exact], lowest=True) == []
    [problem] = versions.report([below], lowest=True)
    assert problem.startswith("pytest: pyproject.toml declares >=1, ")
    assert f"Raise it to >={installed}." in problem
    assert versions.report([below], lowest=False) == []  # newest: above a floor is fine
    assert "<- above its floor" in capsys.readouterr().out


def test_a_pin_outside_the_declared_range_is_reported_not_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--pin`` below a floor is how the drift check shows what a lower floor would do:
    the tests must run, so the report only says so."""
    installed = Version(version("pytest"))
    above = Requirement(f"pytest>={installed.major + 1}")
    assert versions.report([above], lowest=True) == []
    assert "(pinned outside what pyproject.toml allows)" in capsys.readouterr().out


def test_every_installed_requirement_is_one_pyproject_allows() -> None:
    """A stale environment (a floor raised since it was installed) fails here, naming
    the package, rather than somewhere obscure."""
    outside = [
        f"{r.name} {version(r.name)} (pyproject.toml: {r.specifier})"
        for r in versions.requirements(PROJECT, "test")
        if Version(version(r.name)) not in r.specifier
    ]
    assert outside == [], "reinstall with the README's command: " + ", ".join(outside)


# --- .ci/lock.py and requirements/dev.lock ------------------------------------------------

LOCK = (ROOT / "requirements" / "dev.lock").read_text(encoding="utf-8")


def test_lock_lines_are_read_with_their_markers() -> None:
    text = "a==1.0\n    # via b\nc-d==2.1 ; python_full_version < '3.12'\n# e==9\n-e .\n"
    assert lock.pins(text) == {"a": "1.0", "c-d (python_full_version < '3.12')": "2.1"}


def test_the_changelog_lines_say_what_moved() -> None:
    old = {"a": "1.0", "b": "2.0", "gone": "3.0"}
    new = {"a": "1.0", "b": "2.1", "Fresh": "0.1"}
    assert lock.changes(old, new) == ["- b 2.0 -> 2.1", "- Fresh 0.1 (new)", "- gone 3.0 (removed)"]


def test_the_lock_pins_every_requirement_of_the_dev_extra_within_its_range() -> None:
    """A floor raised in pyproject.toml without `python .ci/lock.py` fails here: the
    README's command would then refuse to install (a pin outside the range)."""
    pinned = {canonicalize_name(name.split(" ")[0]): v for name, v in lock.pins(LOCK).items()}
    stale = [
        f"{r.name}: lock {pinned.get(canonicalize_name(r.name))}, pyproject.toml {r.specifier}"
        for r in versions.requirements(PROJECT, "dev")
        if canonicalize_name(r.name) not in pinned
        or Version(pinned[canonicalize_name(r.name)]) not in r.specifier
    ]
    assert stale == [], "run `python .ci/lock.py`: " + "; ".join(stale)


def test_the_readme_commands_install_from_the_lock() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", readme, re.S)
    assert block is not None
    first, second = block.group(1).splitlines()
    assert first.startswith('python -m pip install -c requirements/dev.lock -e ".[test]" && ')
    assert second.startswith('python -m pip install -c requirements/dev.lock -e ".[dev]" && ')


# --- noxfile.py --------------------------------------------------------------------------


def test_the_ci_runs_the_drift_sessions_and_their_check() -> None:
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "\nnox -s lowest newest drift_check\n" in run
    assert "\nnox -s mcp1\n" in run


@pytest.fixture(scope="module")
def noxfile() -> ModuleType:
    pytest.importorskip("nox")
    return _load(ROOT / "noxfile.py")


def test_pins_are_read_from_the_session_arguments(noxfile: ModuleType) -> None:
    assert noxfile._pins(["--pin", "a==1", "--pin", "b==2.0"]) == ["a==1", "b==2.0"]
    assert noxfile._pins([]) == []
    for bad in (["a==1"], ["--pin"], ["--pin", "a>=1"]):
        with pytest.raises(ValueError, match="use --pin NAME==VERSION"):
            noxfile._pins(bad)


def test_the_probe_is_below_a_floor_the_project_declares(noxfile: ModuleType) -> None:
    package, release, tests = noxfile.PROBE
    [req] = [r for r in versions.requirements(PROJECT, "test") if r.name == package]
    assert Version(release) not in req.specifier
    assert all((ROOT / test).exists() for test in tests)


def test_the_sdk_tests_exist(noxfile: ModuleType) -> None:
    assert [t for t in noxfile.SDK_TESTS if not (ROOT / t).exists()] == []


def test_newest_lifts_the_caps_on_the_sdks_and_keeps_the_pins(noxfile: ModuleType) -> None:
    """pydantic-ai caps google-genai below 3; users calling google-genai alone get 3.x,
    so the newest session takes it too (a bare override drops every bound on it)."""
    assert noxfile._overrides([], lowest=True) == []
    assert noxfile._overrides(["vcrpy==8.2.1"], lowest=True) == ["vcrpy==8.2.1"]
    newest = noxfile._overrides(["Google_GenAI==3.0.0"], lowest=False)
    assert newest[0] == "Google_GenAI==3.0.0"
    assert "google-genai" not in newest  # the pin wins over lifting the cap
    assert {"anthropic", "openai", "httpx2"} <= set(newest)
    sdks = {canonicalize_name(r.name) for r in versions.requirements(PROJECT, "test")}
    assert {canonicalize_name(Requirement(s).name) for s in noxfile.SDKS} <= sdks


def test_an_override_keeps_the_extras_the_suite_needs(noxfile: ModuleType) -> None:
    """An override replaces a requirement with its extras: a bare ``httpx`` dropped
    litellm's ``httpx[http2]`` and its h2 (the newest session, issue 26)."""
    assert "httpx[http2]" in noxfile._overrides([], lowest=False)
    assert noxfile._overrides(["HTTPX==0.28.1"], lowest=True) == ["HTTPX[http2]==0.28.1"]
    assert noxfile._overrides(["vcrpy==8.2.1"], lowest=False)[0] == "vcrpy==8.2.1"


def test_versions_names_an_extra_an_install_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``.ci/versions.py`` reads what the installed packages ask for: an extra whose
    requirements are absent is named, with what to write."""
    for name, requires in {
        "app": ["lib[fast]>=1"],
        "lib": ['speedup; extra == "fast"', "core"],
        "core": [],
    }.items():
        info = tmp_path / f"{name}-1.0.dist-info"
        info.mkdir()
        lines = [f"Name: {name}", "Version: 1.0", *(f"Requires-Dist: {r}" for r in requires)]
        (info / "METADATA").write_text("\n".join(["Metadata-Version: 2.1", *lines]) + "\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert versions.missing_extras() == [
        "app requires lib[fast], but speedup of that extra is not installed (an override "
        "without the extra? write it as lib[fast])"
    ]
    (tmp_path / "speedup-1.0.dist-info").mkdir()
    (tmp_path / "speedup-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: speedup\nVersion: 1.0\n"
    )
    assert versions.missing_extras() == []
