"""Installing the plugin costs other suites nothing: no heavy import at start-up."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

HEAVY = ("httpx", "httpx2", "yaml", "syrupy", "hypothesis", "pydantic", "anthropic", "openai")


def _modules_after(args: list[str], tmp_path: object) -> set[str]:
    """Run pytest in a fresh interpreter and list the top-level modules it imported."""
    probe = textwrap.dedent(f"""
        import sys, pytest
        code = pytest.main({args!r})
        tops = sorted({{m.split('.')[0] for m in sys.modules}})
        print('MODULES:' + ','.join(tops))
    """)
    # Other installed plugins (syrupy, hypothesis, anyio) would import themselves:
    # load ours alone, as `-p agentreplay` in a project that does not use us.
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        check=False,
        env=env,
    )
    line = next(x for x in out.stdout.splitlines() if x.startswith("MODULES:"))
    return set(line.removeprefix("MODULES:").split(","))


def test_help_imports_nothing_heavy(tmp_path: object) -> None:
    mods = _modules_after(["-p", "agentreplay", "--help"], tmp_path)
    assert "pytest_agentreplay" in mods
    assert mods.isdisjoint(HEAVY), sorted(mods & set(HEAVY))


def test_a_suite_that_does_not_use_us_imports_nothing_heavy(tmp_path: object) -> None:
    from pathlib import Path

    Path(str(tmp_path), "test_plain.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    mods = _modules_after(["-q", "-p", "agentreplay", "-p", "no:cacheprovider"], tmp_path)
    assert "pytest_agentreplay" in mods
    assert mods.isdisjoint(HEAVY), sorted(mods & set(HEAVY))
