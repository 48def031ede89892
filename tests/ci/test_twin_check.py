"""The twin check of .ci/run: pylint's copy-paste detector with the project's settings
(pyproject.toml) fails on code written twice, and lets through what it should.

Each test copies the settings next to a small package written for it and runs pylint
on that package, as .ci/run runs it on ours.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

if shutil.which("pylint", path=str(Path(sys.executable).parent)) is None:
    pytest.skip("pylint (the dev extra) is not installed", allow_module_level=True)

TWICE = """
    def {name}(usage):
        if usage is None:
            return None
        total = usage.input + usage.output
        cached = usage.cached or 0
        return {{"total": total, "cached": cached}}
"""


def _check(tmp_path: Path, **files: str) -> subprocess.CompletedProcess[str]:
    """pylint, with our settings, on package ``pkg`` holding ``files``."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    package = tmp_path / "pkg"
    package.mkdir()
    for name, text in files.items():
        (package / f"{name}.py").write_text(textwrap.dedent(text))
    return subprocess.run(
        [sys.executable, "-m", "pylint", "pkg"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_code_written_twice_fails(tmp_path: Path) -> None:
    done = _check(tmp_path, a=TWICE.format(name="one"), b=TWICE.format(name="two"))
    assert done.returncode != 0
    assert "R0801" in done.stdout
    assert "==a:" in done.stdout and "==b:" in done.stdout  # both places named


def test_signatures_imports_and_docstrings_are_no_twins(tmp_path: Path) -> None:
    api = '''
        from collections.abc import Mapping
        from typing import Any


        def {name}(
            status: int,
            message: str | None = None,
            *,
            retry_after: float | None = None,
            headers: Mapping[str, str] | None = None,
        ) -> Any:
            """The same long docstring,
            over several lines,
            in both places,
            as an API family has."""
            return {name!r}
    '''
    done = _check(tmp_path, a=api.format(name="http"), b=api.format(name="cut"))
    assert done.returncode == 0, done.stdout


def test_an_allowed_data_duplicate_passes(tmp_path: Path) -> None:
    table = """
        STATUSES = {
            400: "bad request",
            401: "unauthorized",
            429: "rate limited",
            500: "server error",
            529: "overloaded",
        }
    """
    allowed = (
        "# The same table as a.py, on purpose: ...\n"
        "# pylint: disable=duplicate-code\n"
        + textwrap.dedent(table)
        + "# pylint: enable=duplicate-code\n"
    )
    assert _check(tmp_path, a=table, b=table).returncode != 0
    shutil.rmtree(tmp_path / "pkg")
    assert _check(tmp_path, a=table, b=allowed).returncode == 0
