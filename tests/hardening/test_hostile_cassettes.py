"""Item 8: a hostile cassette — a ``!!python/object/apply`` tag, a billion-laughs alias
bomb, a recursive alias, 10,000 levels of nesting — is a :class:`CassetteFormatError`
naming the file and line: no code runs, and loading it stays within a memory budget
(tracemalloc, which counts the same on any machine). How long it takes is measured in
``bench/hostile_cassettes.py``, not here: a wall-clock bound failed on a loaded 2-core
machine (issue 18, item 20: 1.16 s against 1.0 s).
Through the plugin it is the test's own error, never an INTERNALERROR.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_agentreplay.cassettes.cassette import Cassette
from pytest_agentreplay.cassettes.io import CassetteFormatError, dumps, load
from tests.cassettes._plugin_runs import run
from tests.cli._helpers import json_interaction

pytest_plugins = ["pytester"]

MEMORY = 16 * 1024 * 1024  # bytes of Python allocations at the peak


def _laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels + 1):
        refs = ", ".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\nversion: 1\ninteractions: []\n"


def _into_body(value: str) -> Callable[[Path], str]:
    """A valid cassette whose response JSON holds ``value`` (a YAML node; ``MARKER``
    is replaced by the path a command run by the loader would create)."""

    def build(marker: Path) -> str:
        good = dumps(Cassette(interactions=[json_interaction()]))
        trap = value.replace("MARKER", str(marker))
        return good.replace("    json:\n      id: ", f"    json:\n      trap: {trap}\n      id: ")

    return build


HOSTILE: dict[str, Callable[[Path], str]] = {
    "object-apply": _into_body('!!python/object/apply:os.system ["touch MARKER"]'),
    "object-new": _into_body('!!python/object/new:subprocess.Popen [["touch", "MARKER"]]'),
    "python-name": _into_body("!!python/name:os.system"),
    "billion-laughs": lambda _: _laughs(),
    "recursive-alias": lambda _: "a: &a [*a]\nversion: 1\ninteractions: []\n",
    "deep-flow": _into_body("[" * 10_000 + "]" * 10_000),
    "deep-block": _into_body("\n        " + "- " * 10_000 + "x"),
    "deep-mapping": _into_body("{a: " * 10_000 + "1" + "}" * 10_000),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_cassette_is_a_format_error_in_bounded_memory(tmp_path: Path, kind: str) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "hostile.yaml"
    path.write_text(HOSTILE[kind](marker))
    tracemalloc.start()
    try:
        with pytest.raises(CassetteFormatError) as info:
            load(path)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    error = info.value
    assert error.path == path
    assert error.line is not None, "the error points into the file"
    assert error.hint
    assert not marker.exists(), "the cassette ran code"
    assert peak < MEMORY, f"{kind}: peak {peak / 1e6:.1f} MB"


USER_TEST = """
import pytest, httpx2

@pytest.mark.agentreplay(cassette="hostile.yaml")
def test_replays(agentreplay):
    httpx2.get("https://api.openai.com/v1/models")
"""


def test_a_hostile_cassette_fails_its_test_not_the_session(pytester: pytest.Pytester) -> None:
    marker = pytester.path / "pwned"
    pytester.makepyfile(test_user=USER_TEST)
    folder = pytester.path / "cassettes" / "test_user"
    folder.mkdir(parents=True)
    (folder / "hostile.yaml").write_text(HOSTILE["object-apply"](marker))
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*CassetteFormatError: *hostile.yaml:*:*tag*"])
    result.stdout.no_fnmatch_line("*INTERNALERROR*")
    assert not marker.exists()
