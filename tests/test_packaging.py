"""The distribution name is the one every install line names.

``pytest-agentreplay`` on the package index is an unrelated project: an install line
that names it (in the README, the docs or an error message) installs someone else's
code. Every ``pip install`` of this project must name the distribution in
``pyproject.toml``; the import name, the plugin and the command keep theirs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
NAME = PROJECT["name"]

# "pip install pytest-agentreplay…", quoted or not, with or without extras.
INSTALL = re.compile(r"""pip install\s+['"]?(pytest[-_]agentreplay[\w.-]*)""")


def _sources() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return files + sorted((ROOT / "pytest_agentreplay").rglob("*.py"))


def _install_lines() -> list[tuple[str, str]]:
    return [
        (f"{path.relative_to(ROOT)}:{n}", match.group(1))
        for path in _sources()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for match in INSTALL.finditer(line)
    ]


def test_the_distribution_is_not_the_unrelated_project() -> None:
    assert NAME != "pytest-agentreplay"  # the unrelated project on the index
    assert PROJECT["entry-points"]["pytest11"] == {"agentreplay": "pytest_agentreplay.plugin"}
    assert PROJECT["scripts"] == {"agentreplay": "pytest_agentreplay.cli:main"}


def test_every_install_line_names_this_distribution() -> None:
    lines = _install_lines()
    assert len(lines) >= 5, lines  # README, index, tutorial, extras pages, messages
    wrong = [(where, name) for where, name in lines if name.split("[")[0] != NAME]
    assert wrong == []


def _own(extra: str) -> list[str]:
    requirements = PROJECT["optional-dependencies"][extra]
    return [r for r in requirements if r.startswith("pytest-agentreplay")]


def test_the_test_extra_pulls_the_user_extras_and_dev_pulls_test() -> None:
    assert _own("test") == [f"{NAME}[snapshot,hypothesis,vcr]"]
    assert _own("dev") == [f"{NAME}[test]"]
