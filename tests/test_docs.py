"""Every Python example in the documentation runs, as a test.

Each fenced ```python block of ``docs/**/*.md`` and ``README.md`` runs:

* a block that defines ``test_*`` functions is a pytest module: it is written to a
  temporary directory and run with ``pytester`` (in-process), and every test in it
  must pass — at least one must run (one test, identified by ``file:line``);
* a block fenced with a file name — ```python title="conftest.py"``, or any other
  language, ```yaml title="cassettes/test_x/test_y.yaml"`` — is that file of a
  project: the titled blocks of one page are written as their files into one
  ``pytester`` directory and run together (one test, identified by
  ``file:project``), so a ``conftest.py`` is always shown with a test that uses
  it. Every test must pass and at least one must run; a title used twice on a
  page, or a page whose titled blocks hold no test, is an error;
* any other block is ``exec``'d in a fresh namespace: it must run, and may assert.

A test module whose imports cannot share the suite's process (litellm, imported
inside an in-process run, stops the plugin loading in the runs after it) runs in a
child pytest instead: put ``<!-- test-in-child -->`` (with the reason) on the line
before the fence. A block may be skipped only where running it is impossible: put
``<!-- no-test -->`` (with the reason) on the line before the fence.
"""

from __future__ import annotations

import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

# Imported here, once, so that in-process pytester runs (which drop the modules a
# run imports) reuse one copy of the SDKs, of the patched transports and of our
# classes: a second copy of httpx2 would be a second, unpatched transport class.
import anthropic  # noqa: F401
import httpx  # noqa: F401
import httpx2  # noqa: F401
import hypothesis
import openai  # noqa: F401
import pytest
import yaml  # noqa: F401 - its C extension cannot be imported twice in one process

from tests.garbage import collect_garbage

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w+-]+)(?P<info>(?:[ \t][^`]*)?)$")
TITLE = re.compile(r"""\btitle=(?P<q>["'])(?P<title>[^"']+)(?P=q)""")
DEFINES_TEST = re.compile(r"^(?:async\s+)?def\s+test_\w*\s*\(", re.MULTILINE)
USES_SNAPSHOTS = re.compile(r"^(?:async\s+)?def\s+test_\w*\s*\([^)]*\bsnapshot\b", re.MULTILINE)
NO_TEST = "<!-- no-test"
IN_CHILD = "<!-- test-in-child"
CHILD_TIMEOUT = 600  # a hung child fails the example instead of the run (not a speed bound)


@dataclass(frozen=True)
class Example:
    """One fenced python block: where it is, its code, and whether it may run."""

    path: Path
    line: int
    code: str
    skip: str | None
    title: str | None = None
    in_child: bool = False

    @property
    def id(self) -> str:
        return f"{_shown(self.path)}:{self.line}"

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
        title = match and TITLE.search(match["info"])
        if match is None or (match["lang"] != "python" and title is None):
            i += 1  # not a file of a project, nor python to run
            continue
        indent, start = match["indent"], i
        end = next(
            (
                j
                for j in range(i + 1, len(lines))
                if lines[j].strip() == "```" and lines[j].startswith(indent)
            ),
            None,
        )
        if end is None:
            raise ValueError(f"{path}:{start + 1}: the {match['lang']} block is never closed")
        body = [line.removeprefix(indent) for line in lines[start + 1 : end]]
        previous = lines[start - 1].strip() if start else ""
        skip = previous if previous.startswith(NO_TEST) else None
        code = textwrap.dedent("\n".join(body)) + "\n"
        in_child = previous.startswith(IN_CHILD)
        found.append(Example(path, start + 1, code, skip, title and title["title"], in_child))
        i = end + 1
    return found


def _shown(path: Path) -> str:
    """``path`` as a test id shows it: relative to the repository when inside it."""
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name


@dataclass(frozen=True)
class Project:
    """The titled blocks of one page: the files of one pytest project, run together."""

    path: Path
    files: tuple[Example, ...]

    @property
    def id(self) -> str:
        return f"{_shown(self.path)}:project"

    @property
    def uses_snapshots(self) -> bool:
        return any(f.uses_snapshots for f in self.files)


def _projects(examples: list[Example]) -> list[Project]:
    """Group the titled, runnable blocks by page; refuse a title used twice or no test."""
    pages: dict[Path, list[Example]] = {}
    for example in examples:
        if example.title is not None and example.skip is None:
            pages.setdefault(example.path, []).append(example)
    projects = []
    for path, files in pages.items():
        seen: dict[str, int] = {}
        for f in files:
            if f.title in seen:
                raise ValueError(
                    f"{_shown(path)}:{f.line}: title={f.title!r} is already "
                    f"used on line {seen[f.title]}: one file per title on a page"
                )
            seen[str(f.title)] = f.line
        if not any(f.is_test_module for f in files):
            raise ValueError(
                f"{_shown(path)}: its titled blocks ({', '.join(seen)}) define no "
                "test: add a titled test file that uses them"
            )
        projects.append(Project(path, tuple(files)))
    return projects


EXAMPLES = [example for path in SOURCES for example in _examples(path)]
SINGLE = [example for example in EXAMPLES if example.title is None]
PROJECTS = _projects(EXAMPLES)


def test_the_docs_have_examples() -> None:
    assert len(EXAMPLES) > 20
    assert any(e.path.name == "README.md" and e.is_test_module for e in EXAMPLES)
    assert any(e.path.parent.name == "how-to" for e in EXAMPLES)  # pages in sub-folders too
    assert len(PROJECTS) >= 3
    assert sum(map(len, (p.files for p in PROJECTS))) == sum(e.title is not None for e in EXAMPLES)


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
        (3, "x = 1\n", False),
        (8, "def test_a():\n    pass\n", True),
        (13, "import gpu\n", False),
    ]
    assert [(e.skip, e.title) for e in found] == [
        (None, None),
        (None, "conftest.py"),
        ("<!-- no-test: needs a GPU -->", None),
    ]


PAGE = """\
A fixture in a conftest, and a test that uses it:

```python title="conftest.py"
from pathlib import Path

import pytest


@pytest.fixture
def city():
    return Path("data/city.txt").read_text().strip()
```

```text title="data/city.txt"
Leeds
```

```python title='tests/test_city.py'
def test_city(city):
    assert city == "Leeds"
```

```python
assert 1 + 1 == 2
```
"""


def _page(tmp_path: Path, text: str) -> list[Example]:
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    return _examples(page)


def test_the_titled_blocks_of_a_page_run_together(
    tmp_path: Path, pytester: pytest.Pytester
) -> None:
    [project] = _projects(_page(tmp_path, PAGE))
    assert [(f.title, f.line) for f in project.files] == [
        ("conftest.py", 3),
        ("data/city.txt", 14),
        ("tests/test_city.py", 18),
    ]
    assert project.id == "page.md:project"
    _run_project(project, pytester)  # the test finds the conftest's fixture: it passes
    assert (pytester.path / "tests" / "test_city.py").read_text() == project.files[2].code


def test_a_project_whose_test_fails_fails(tmp_path: Path, pytester: pytest.Pytester) -> None:
    [project] = _projects(_page(tmp_path, PAGE.replace("\nLeeds\n", "\nYork\n")))
    with pytest.raises(AssertionError, match=r"page\.md:project: \{'failed': 1\}"):
        _run_project(project, pytester)


FIRST_RUN_ONLY = """
from pathlib import Path

def test_records_then_finds_its_own_file():
    made = Path("recorded.txt")
    assert not made.exists(), "a second run finds what the first one wrote"
    made.write_text("recorded")
"""


def test_an_example_that_writes_files_must_pass_a_second_run(pytester: pytest.Pytester) -> None:
    """An example that records cassettes is run again, as its reader will: the tutorial
    once passed its first run only (the second replayed instead of recording)."""
    with pytest.raises(AssertionError, match=r"page\.md:9 \(second run\): \{'failed': 1\}"):
        _run_tests("page.md:9", {"test_x.py": FIRST_RUN_ONLY}, False, pytester)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (("tests/test_city.py", "conftest.py"), r"title='conftest.py' is already used on line 3"),
        (("def test_city", "def check_city"), r"define no test: add a titled test file"),
    ],
)
def test_a_page_with_a_broken_project_is_refused(
    tmp_path: Path, change: tuple[str, str], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        _projects(_page(tmp_path, PAGE.replace(*change)))


@pytest.mark.parametrize("example", SINGLE, ids=[e.id for e in SINGLE])
def test_example(example: Example, pytester: pytest.Pytester) -> None:
    if example.skip is not None:
        pytest.skip(example.skip)
    if example.is_test_module and example.in_child:
        _run_in_child(example, pytester)
    elif example.is_test_module:
        _run_tests(example.id, {"test_example.py": example.code}, example.uses_snapshots, pytester)
    else:
        exec(compile(example.code, example.id, "exec"), {"__name__": "__doc_example__"})


@pytest.mark.parametrize("project", PROJECTS, ids=[p.id for p in PROJECTS])
def test_project(project: Project, pytester: pytest.Pytester) -> None:
    _run_project(project, pytester)


def _run_project(project: Project, pytester: pytest.Pytester) -> None:
    files = {str(f.title): f.code for f in project.files}
    _run_tests(project.id, files, project.uses_snapshots, pytester)


def _run_tests(
    name: str, files: dict[str, str], uses_snapshots: bool, pytester: pytest.Pytester
) -> None:
    """Write ``files`` into the pytester directory, run pytest there: all must pass —
    twice when the first run wrote files (cassettes, snapshots)."""
    for title, code in files.items():
        target = pytester.path / title
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(code, encoding="utf-8")
    if uses_snapshots:
        # A snapshot test is first run with --snapshot-update, as its author does to
        # write the snapshots; the run below checks the tests against them.
        pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "--snapshot-update")
        _forget_dropped_submodules()
    before = _files_under(pytester.path)
    _run_once(name, pytester)
    if _files_under(pytester.path) - before:
        # The run wrote files (cassettes recorded, snapshots): a reader runs pytest
        # again, and the example must pass then too, replaying what it wrote.
        _run_once(f"{name} (second run)", pytester)


def _run_in_child(example: Example, pytester: pytest.Pytester) -> None:
    """The block's tests in a fresh Python (see the module docs): all must pass."""
    pytester.makepyfile(test_example=example.code)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-W", "error", "-q", timeout=CHILD_TIMEOUT
    )
    outcomes = result.parseoutcomes()
    failed = {k: v for k, v in outcomes.items() if k != "passed" and v}
    assert not failed, f"{example.id}: {failed}\n{result.stdout.str()}"
    assert outcomes.get("passed", 0) >= 1, f"{example.id}: no test ran\n{result.stdout.str()}"


def _files_under(root: Path) -> set[Path]:
    return {
        p
        for p in root.rglob("*")
        if p.is_file() and not {"__pycache__", ".pytest_cache"} & set(p.parts)
    }


def _run_once(name: str, pytester: pytest.Pytester) -> None:
    _collect_earlier_garbage()
    profile = _current_profile()
    try:
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-W", "error", "-q")
    finally:  # an in-process conftest may load another profile: keep the suite's
        hypothesis.settings.load_profile(profile)
        _forget_dropped_submodules()
    outcomes = result.parseoutcomes()
    failed = {k: v for k, v in outcomes.items() if k != "passed" and v}
    assert not failed, f"{name}: {failed}\n{result.stdout.str()}"
    assert outcomes.get("passed", 0) >= 1, f"{name}: no test ran\n{result.stdout.str()}"


def _forget_dropped_submodules() -> None:
    """After an in-process run, pytester drops the modules the run imported, but a
    package imported before it keeps them as attributes: the namespace package
    ``google`` kept ``genai``. ``from google import genai`` in the next example then
    got the dropped module while ``from google.genai import errors`` imported a new
    one, and ``pytest.raises(errors.ClientError)`` missed the ``ClientError`` the old
    client raised (seen with google-genai 2.30 in the lowest session)."""
    for name, package in list(sys.modules.items()):
        if not hasattr(package, "__path__"):
            continue
        for attr, value in list(vars(package).items()):
            child = f"{name}.{attr}"
            dropped = isinstance(value, ModuleType) and sys.modules.get(child) is not value
            if dropped and value.__name__ == child:
                delattr(package, attr)


def _current_profile() -> str:
    """The loaded hypothesis profile's name (public from hypothesis 6.139 on; the
    ``hypothesis`` extra allows older releases, which keep it private)."""
    current = getattr(hypothesis.settings, "get_current_profile_name", None)
    return str(current() if current else hypothesis.settings._current_profile)


def _collect_earlier_garbage() -> None:
    """Finalize what earlier tests of this worker left for the garbage collector before
    the example runs in this process with ``-W error``: an event loop some library
    never closed would otherwise warn inside the example's run, failing whichever
    example the collector happened to run during (seen once, on docs/gemini.md, under
    xdist). The example's own leaks still fail it."""
    collect_garbage()


EXAMPLE_FILE = re.compile(r"`(examples/tests/[\w/]+\.py)`")


def test_the_scenario_files_the_docs_point_to_exist() -> None:
    """The how-to pages name the reference agent's scenario files as plain text (a link
    out of docs/ fails ``mkdocs --strict``): keep the names in step with examples/."""
    named = {
        (source.name, match)
        for source in SOURCES
        for match in EXAMPLE_FILE.findall(source.read_text(encoding="utf-8"))
    }
    assert len(named) >= 6  # every how-to page names one
    missing = sorted(f"{page}: {name}" for page, name in named if not (ROOT / name).is_file())
    assert not missing, missing
