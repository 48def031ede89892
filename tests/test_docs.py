"""Every Python example in the documentation runs, as a test.

Each fenced ```python block of ``docs/*.md`` and ``README.md`` is one test,
identified by ``file:line``:

* a block that defines ``test_*`` functions is a pytest module: it is written to a
  temporary directory and run with ``pytester`` (in-process), and every test in it
  must pass — at least one must run;
* any other block is ``exec``'d in a fresh namespace: it must run, and may assert.

A block may be skipped only where running it is impossible: fence it as
```python title="..."`` or put ``<!-- no-test -->`` (with the reason) on the line
before the fence.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

# Imported here, once, so that in-process pytester runs (which drop the modules a
# run imports) reuse one copy of the SDKs, of the patched transports and of our
# classes: a second copy of httpx2 would be a second, unpatched transport class.
import anthropic  # noqa: F401
import httpx  # noqa: F401
import httpx2  # noqa: F401
import openai  # noqa: F401
import pytest
import yaml  # noqa: F401 - its C extension cannot be imported twice in one process

import pytest_agentreplay._snapshot_syrupy  # one copy of the snapshot extension, too
import pytest_agentreplay.fakes
import pytest_agentreplay.intercept
import pytest_agentreplay.invariants  # noqa: F401 - one copy of the run-log classes, too

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(?P<indent>[ \t]*)```python(?P<info>(?:[ \t][^`]*)?)$")
DEFINES_TEST = re.compile(r"^(?:async\s+)?def\s+test_\w*\s*\(", re.MULTILINE)
USES_SNAPSHOTS = re.compile(r"^(?:async\s+)?def\s+test_\w*\s*\([^)]*\bsnapshot\b", re.MULTILINE)
NO_TEST = "<!-- no-test"


@dataclass(frozen=True)
class Example:
    """One fenced python block: where it is, its code, and whether it may run."""

    path: Path
    line: int
    code: str
    skip: str | None

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT).as_posix()}:{self.line}"

    @property
    def is_test_module(self) -> bool:
        return DEFINES_TEST.search(self.code) is not None

    @property
    def uses_snapshots(self) -> bool:
        """Its tests take syrupy's ``snapshot`` fixture."""
        return USES_SNAPSHOTS.search(self.code) is not None


def _examples(path: Path) -> list[Example]:
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Example] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        indent, start = match["indent"], i
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"
                    and lines[j].startswith(indent)), None)
        if end is None:
            raise ValueError(f"{path}:{start + 1}: the python block is never closed")
        body = [line.removeprefix(indent) for line in lines[start + 1:end]]
        previous = lines[start - 1].strip() if start else ""
        skip = None
        if "title=" in match["info"]:
            skip = f"fenced with a title: {match['info'].strip()}"
        elif previous.startswith(NO_TEST):
            skip = previous
        found.append(Example(path, start + 1, textwrap.dedent("\n".join(body)) + "\n", skip))
        i = end + 1
    return found


EXAMPLES = [example for path in SOURCES for example in _examples(path)]


def test_the_docs_have_examples() -> None:
    assert len(EXAMPLES) > 20
    assert any(e.path.name == "README.md" and e.is_test_module for e in EXAMPLES)


def test_blocks_are_found_with_their_line_and_skip_reason(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n```python\nx = 1\n```\n\n"
        '??? example\n    ```python title="conftest.py"\n    def test_a():\n        pass\n    ```\n'
        "<!-- no-test: needs a GPU -->\n```python\nimport gpu\n```\n"
        "```pycon\n>>> 1\n```\n",
        encoding="utf-8",
    )
    found = _examples(page)
    assert [(e.line, e.code, e.is_test_module) for e in found] == [
        (3, "x = 1\n", False), (8, "def test_a():\n    pass\n", True), (13, "import gpu\n", False)]
    assert [e.skip for e in found] == [
        None, 'fenced with a title: title="conftest.py"', "<!-- no-test: needs a GPU -->"]


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_example(example: Example, pytester: pytest.Pytester) -> None:
    if example.skip is not None:
        pytest.skip(example.skip)
    if example.is_test_module:
        _run_as_test_module(example, pytester)
    else:
        exec(compile(example.code, example.id, "exec"), {"__name__": "__doc_example__"})


def _run_as_test_module(example: Example, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_example=example.code)
    if example.uses_snapshots:
        # A snapshot test is first run with --snapshot-update, as its author does to
        # write the snapshots; the run below checks the tests against them.
        pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "--snapshot-update")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-W", "error", "-q")
    outcomes = result.parseoutcomes()
    failed = {k: v for k, v in outcomes.items() if k != "passed" and v}
    assert not failed, f"{example.id}: {outcomes}\n{result.stdout.str()}"
    assert outcomes.get("passed", 0) >= 1, f"{example.id}: no test ran\n{result.stdout.str()}"
