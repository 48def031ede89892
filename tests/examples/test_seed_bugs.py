"""The example suite catches, for every seed test it reproduces, a bug planted for it.

``examples/tests/`` reproduces the 30 seed tests the plugin was designed from
(:mod:`tests.examples.seeds`). A reproduction that cannot fail proves nothing (issue
30: four examples compared a saved partial text with the very buffer that was saved).
So for each seed test a bug that breaks what it checks is planted in the example
agent — an edit of one of its functions, applied for the nested run only — and that
seed's examples run in a nested, in-process pytest run: every one must fail, in the
words :data:`~tests.examples.seeds.BUGS` gives. A run of all of them without a bug
must pass: the failures are the bug's, not the nested run's.

The nested runs select only each seed's examples (by node id), with the example
suite's own settings (the repository's ``pyproject.toml`` and ``examples/conftest.py``).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import textwrap
from pathlib import Path
from typing import Any

# Imported here, once, so that the in-process runs (which drop the modules a run
# imports) reuse one copy of the SDKs and of their HTTP clients, as tests/test_docs.py.
import anthropic  # noqa: F401
import httpx2  # noqa: F401
import openai  # noqa: F401
import pytest
import yaml  # noqa: F401 - its C extension cannot be imported twice in one process

from . import seeds
from .seeds import BUGS, SEEDS, Edit, PlantedBug

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "tests"
PAGE = ROOT / "docs" / "how-to" / "reference-agent.md"
HOOK = ROOT / "docs" / "_hooks" / "seed_bugs.py"
AGENT = "agent"  # the example agent's package, as the example suite imports it
NESTED = ("-p", "no:cacheprovider", "-q")


# --- planting a bug ------------------------------------------------------------------


class PlantError(Exception):
    """An edit of :data:`BUGS` no longer fits the agent's source."""


def _owner_and_name(where: str) -> tuple[Any, str]:
    """The object holding the function ``where`` names (a module or a class), and the
    function's name in it."""
    module_name, _, qualified = where.partition(".")
    owner: Any = importlib.import_module(f"{AGENT}.{module_name}")
    *path, name = qualified.split(".")
    for part in path:
        owner = getattr(owner, part)
    return owner, name


def _edited(source: str, edit: Edit) -> str:
    """``source`` with ``edit`` made; ``edit.new``'s further lines are indented as the
    line ``edit.old`` starts on."""
    found = source.count(edit.old)
    if found != 1:
        raise PlantError(
            f"{edit.where}: {edit.old!r} occurs {found} times in its source, not once: "
            "the agent changed; update the edit in tests/examples/seeds.py"
        )
    start = source.index(edit.old)
    line_start = source.rfind("\n", 0, start) + 1
    indent = source[line_start:start]
    if indent.strip():  # ``old`` starts inside a line: keep ``new`` on it
        indent = ""
    new = edit.new.replace("\n", "\n" + indent)
    return source.replace(edit.old, new)


def _mutant(where: str, edits: list[Edit]) -> tuple[Any, str, Any, Any]:
    """(owner, name, the original, its mutant): the function ``where`` names, compiled
    again from its source with ``edits`` made, in its own module's globals."""
    owner, name = _owner_and_name(where)
    original = inspect.getattr_static(owner, name)
    function = original.fget if isinstance(original, property) else original
    source = textwrap.dedent(inspect.getsource(function))
    for edit in edits:
        source = _edited(source, edit)
    namespace: dict[str, Any] = {}
    code = compile(source, f"<{where}, with a bug planted>", "exec")
    exec(code, function.__globals__, namespace)
    return owner, name, original, namespace[function.__name__]  # decorated as the original


def plant(edits: tuple[Edit, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``edits`` in the agent until ``monkeypatch`` is undone: each edited function
    is replaced in its class or module, and in every module of the agent that imported
    it by name (``runtime`` calls ``answers.is_silent`` as ``is_silent``)."""
    by_function: dict[str, list[Edit]] = {}
    for edit in edits:
        by_function.setdefault(edit.where, []).append(edit)
    for where, function_edits in by_function.items():
        owner, name, original, mutant = _mutant(where, function_edits)
        monkeypatch.setattr(owner, name, mutant)
        for module_name, module in list(sys.modules.items()):
            if module_name.split(".")[0] != AGENT:
                continue
            for attribute, value in list(vars(module).items()):
                if value is original and module is not owner:
                    monkeypatch.setattr(module, attribute, mutant)


class Planted:
    """A plugin for a nested run: plants ``edits`` for each test, and undoes them."""

    def __init__(self, edits: tuple[Edit, ...]) -> None:
        self.edits = edits

    @pytest.fixture(autouse=True)
    def _planted_bug(self, monkeypatch: pytest.MonkeyPatch) -> None:
        plant(self.edits, monkeypatch)  # undone with ``monkeypatch``, after the test


# --- running the examples -------------------------------------------------------------


def _run(pytester: pytest.Pytester, examples: tuple[str, ...], edits: tuple[Edit, ...]) -> Any:
    """The nested run of ``examples`` (node ids under examples/tests/) with ``edits``."""
    node_ids = [str(EXAMPLES / example) for example in examples]
    return pytester.inline_run(*node_ids, *NESTED, plugins=[Planted(edits)])


def _shown(report: pytest.TestReport) -> list[str]:
    """The lines of a failure's traceback that ran (``>``) or say the error (``E``), and
    the error's own text (a failure without a traceback, as the plugin's own
    ``pytest.fail(..., pytrace=False)``, shows only that)."""
    lines = report.longreprtext.splitlines()
    crash = getattr(report.longrepr, "reprcrash", None)
    said = crash.message.splitlines() if crash is not None else []
    return [line for line in lines if line.startswith((">", "E"))] + said


def _example_of(report: pytest.TestReport, examples: tuple[str, ...]) -> str:
    """Which of ``examples`` the report's test is (a node id, with or without its
    parameters)."""
    node = report.nodeid.rpartition("examples/tests/")[2]
    return next(e for e in examples if node == e or node.startswith(e + "["))


def _bug_id(bug: PlantedBug) -> str:
    same_seed = [b for b in BUGS if b.seed == bug.seed]
    suffix = f"-{'abcdefgh'[same_seed.index(bug)]}" if len(same_seed) > 1 else ""
    return f"seed{bug.seed:02d}{suffix}"


# --- the audit ------------------------------------------------------------------------


def test_every_seed_test_has_examples_and_a_bug_they_catch() -> None:
    """Checks: 30 seed tests numbered 1 to 30; every one has a planted bug, and every
    bug names a seed test, examples and the words that catch it."""
    assert [seed.number for seed in SEEDS] == list(range(1, 31))
    assert len({seed.name for seed in SEEDS}) == 30
    assert {bug.seed for bug in BUGS} == {seed.number for seed in SEEDS}
    for bug in BUGS:
        assert bug.examples and bug.edits and bug.caught_by, bug
        assert len(set(bug.examples)) == len(bug.examples), bug


def test_the_seed_examples_pass_without_their_bugs(pytester: pytest.Pytester) -> None:
    """Checks: every example a bug names passes when no bug is planted, in the same
    kind of nested run, so that the failures below are the bugs'."""
    examples = tuple(dict.fromkeys(e for bug in BUGS for e in bug.examples))

    result = _run(pytester, examples, ())

    passed, skipped, failed = result.listoutcomes()
    assert (skipped, failed) == ([], []), [r.nodeid for r in skipped + failed]
    assert result.ret == 0
    ran = {_example_of(report, examples) for report in passed}
    assert ran == set(examples)


@pytest.mark.parametrize("bug", BUGS, ids=_bug_id)
def test_the_examples_of_a_seed_test_catch_its_bug(
    pytester: pytest.Pytester, bug: PlantedBug
) -> None:
    """Checks: with the bug planted, every example of the seed test fails (its call,
    not only its teardown), and says so in the words the row gives."""
    result = _run(pytester, bug.examples, bug.edits)

    calls = [r for r in result.getreports("pytest_runtest_logreport") if r.when == "call"]
    setup_errors = [r for r in result.getreports("pytest_runtest_logreport") if r.when == "setup"]
    assert not [r for r in setup_errors if r.failed], "\n".join(
        r.longreprtext for r in setup_errors if r.failed
    )
    assert calls, "the examples ran no test"
    assert [r.nodeid for r in calls if not r.failed] == [], "passed with the bug planted"
    assert {_example_of(r, bug.examples) for r in calls} == set(bug.examples)
    shown = {r.nodeid: _shown(r) for r in calls}
    unexplained = {
        node: lines
        for node, lines in shown.items()
        if not any(words in line for words in bug.caught_by for line in lines)
    }
    assert unexplained == {}, "failed, but not in the words given"
    for words in bug.caught_by:
        assert any(words in line for lines in shown.values() for line in lines), words


def test_the_reference_agent_page_renders_every_row() -> None:
    """Checks: the docs page asks for the table once, and the mkdocs hook renders every
    seed test and every planted bug, with its examples and the words that catch it."""
    spec = importlib.util.spec_from_file_location("_seed_bugs_hook", HOOK)
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = PAGE.read_text(encoding="utf-8")
    assert page.count(hook.MARKER) == 1

    shown = hook.on_page_markdown(page, None, None, None)

    assert hook.MARKER not in shown
    rows = [line for line in shown.splitlines() if line.startswith("| ")]
    assert len(rows) == 3 + len(BUGS)  # a header row per runtime, a row per bug
    for seed in SEEDS:
        assert f"| {seed.number} | `{seed.name}` |" in shown
    for bug, row in zip(BUGS, [r for r in rows if not r.startswith("| Seed |")], strict=True):
        assert bug.bug in row
        assert all(f"`{example}`" in row for example in bug.examples)
        assert all(f"`{words}`" in row for words in bug.caught_by)
    assert hook.render(seeds) in shown


def test_an_edit_that_no_longer_fits_the_agent_says_which_and_what_to_do() -> None:
    """Checks: an edit whose text does not occur exactly once in its function's source
    is refused with the function, the text, how often it occurs and where to fix it,
    instead of planting nothing (a bug not planted would pass as caught by nothing)."""
    source = "def f(x):\n    return x + x\n"

    with pytest.raises(PlantError) as missing:
        _edited(source, Edit("runtime.f", "x * 2", "x"))
    with pytest.raises(PlantError) as twice:
        _edited(source, Edit("runtime.f", "x", "y"))

    assert str(missing.value) == (
        "runtime.f: 'x * 2' occurs 0 times in its source, not once: the agent changed; "
        "update the edit in tests/examples/seeds.py"
    )
    assert "'x' occurs 3 times" in str(twice.value)  # f(x), x + x
    edited = _edited(source, Edit("runtime.f", "return x + x", "y = x\nreturn y + y"))
    assert edited == "def f(x):\n    y = x\n    return y + y\n"
