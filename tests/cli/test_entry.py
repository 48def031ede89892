"""The real entry points, in subprocesses: ``python -m pytest_agentreplay.cli`` and the
installed ``agentreplay`` script. Help, version, exit codes 0 / 1 / 2, one-line errors.

The bulk of the behaviour is tested in-process (``main([...])``) in the other
modules; here each subcommand runs once for real.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_agentreplay._version import __version__
from pytest_agentreplay.cli import build_parser
from tests.cli._helpers import CORPUS, FAKE_KEY, broken, cli, good, run, with_secret

COMMANDS = ("inspect", "lint", "fold", "redact", "convert", "diff", "import-trace", "serve", "mcp")


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_command_is_there() -> None:
    assert tuple(_subparsers()) == COMMANDS


@pytest.mark.parametrize("command", COMMANDS)
def test_help_describes_every_option_and_the_exit_codes(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = _subparsers()[command]
    result = cli(capsys, command, "--help")
    assert result.code == 0
    for action in parser._actions:
        assert action.help, f"{command}: {action.dest} has no help"
        for flag in action.option_strings:
            assert flag in result.out
    assert "exit codes:" in result.out
    assert all(f"  {code}  " in result.out for code in "012")
    assert parser.description and len(parser.description) > 100


def test_the_module_runs_and_help_imports_nothing_heavy() -> None:
    code = (
        "import sys\n"
        "from pytest_agentreplay.cli import main\n"
        "assert main(['--help']) == 0\n"
        "heavy = sorted(m for m in ('pydantic', 'yaml', 'httpx') if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert "HEAVY []" in done.stdout
    assert all(command in done.stdout for command in COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_is_whole_in_its_own_module(command: str) -> None:
    """The options of a command are defined beside its work: ``configure`` and ``run``
    of ``pytest_agentreplay.cli.<command>``, ``-`` spelt ``_`` (the app module only lists
    the commands)."""
    module = importlib.import_module(f"pytest_agentreplay.cli.{command.replace('-', '_')}")
    assert module.configure.__module__ == module.run.__module__ == module.__name__
    parser = argparse.ArgumentParser()
    module.configure(parser)
    assert parser.description == _subparsers()[command].description
    assert [a.dest for a in parser._actions] == [a.dest for a in _subparsers()[command]._actions]


def test_a_command_imports_its_own_module_only() -> None:
    code = (
        "import sys\n"
        "from pytest_agentreplay.cli import main\n"
        "assert main(['fold', '--help']) == 0\n"
        "cli = sorted(m for m in sys.modules if m.startswith('pytest_agentreplay.cli.'))\n"
        "print('LOADED', cli)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = next(line for line in done.stdout.splitlines() if line.startswith("LOADED"))
    commands = {
        name for name in COMMANDS if f"'pytest_agentreplay.cli.{name.replace('-', '_')}'" in loaded
    }
    assert commands == {"fold"}


def test_version_and_top_level_help() -> None:
    result = run("--version")
    assert (result.code, result.out.strip()) == (0, f"agentreplay {__version__}")
    result = run("--help")
    assert result.code == 0
    assert "exit codes:" in result.out


def test_the_installed_script() -> None:
    script = Path(sys.executable).parent / "agentreplay"
    found = str(script) if script.exists() else shutil.which("agentreplay")
    if found is None:
        pytest.skip("the agentreplay console script is not installed")
    anthropic = CORPUS / "anthropic" / "pydantic-ai__test_anthropic_model_thinking_part_stream.yaml"
    done = subprocess.run(
        [found, "inspect", str(anthropic)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "model claude-sonnet-4-0" in done.stdout


def test_bad_input_is_one_line_and_exit_code_2(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    files = broken(tmp_path)
    for args, reason in (
        (("inspect", missing), "no such file or directory"),
        (("fold", files["empty"]), "the file is empty"),
        (("diff", files["truncated"], files["bad-utf8"]), "unexpected end of stream"),
    ):
        result = run(*args)
        assert result.code == 2, result
        assert result.out == ""
        lines = result.err.splitlines()
        assert len(lines) == 1, result.err
        assert lines[0].startswith(f"agentreplay: {args[1]}")
        assert reason in lines[0]


def test_usage_errors_exit_2() -> None:
    result = run("lint", "--format", "nope", ".")
    assert result.code == 2
    assert "invalid choice" in result.err


def test_lint_exit_codes_and_github_annotations(tmp_path: Path) -> None:
    clean = good(tmp_path / "clean")
    assert run("lint", clean).code == 0
    files = broken(tmp_path / "broken")
    result = run("lint", "--format", "github", tmp_path / "broken")
    assert result.code == 1
    annotations = result.out.splitlines()
    assert all(line.startswith("::error file=") for line in annotations)
    tail = next(line for line in annotations if "sse-tail" in line)
    assert tail.startswith(f"::error file={files['no-tail']},line=16,col=1,")
    assert "problems in" in result.err


def test_each_command_runs_for_real(tmp_path: Path) -> None:
    path = good(tmp_path)
    inspected = run("inspect", "--json", path)
    assert inspected.code == 0
    assert len(json.loads(inspected.out)["interactions"]) == 3

    folded = run("fold", "--interaction", "0", path)
    assert folded.code == 0
    assert json.loads(folded.out)["content"][0]["text"] == "It is sunny in Leeds."

    converted = tmp_path / "vcr.yaml"
    assert run("convert", path, "--to", "vcrpy", "-o", converted).code == 0
    assert run("diff", path, converted).code == 0

    assert run("redact", path).code == 0
    assert run("redact", "--check", path).code == 0


def test_a_secret_stops_a_write_with_exit_1(tmp_path: Path) -> None:
    leaky = with_secret(tmp_path / "leaky.yaml")
    before = leaky.read_bytes()
    result = run("redact", leaky)
    assert result.code == 1
    assert "survived scrubbing" in result.err
    assert "sk-ant" not in result.err + result.out
    assert leaky.read_bytes() == before


def test_a_bug_is_shown_masked_with_exit_code_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from pytest_agentreplay.cli import inspect as _cli_inspect

    def explode(args: object, output: object) -> int:
        raise RuntimeError(f"unexpected value {FAKE_KEY}")

    monkeypatch.setattr(_cli_inspect, "run", explode)
    result = cli(capsys, "inspect", good(tmp_path))
    assert result.code == 2
    assert "RuntimeError: unexpected value" in result.err
    assert FAKE_KEY not in result.err
    assert result.err.endswith(
        "agentreplay: internal error (the traceback above); please report it\n"
    )
