"""Render the seed tests' audit (``tests/examples/seeds.py``) where a page asks for it.

A page that holds the line ``<!-- seed-bugs -->`` gets, in its place, one table per
runtime the seed tests come from: each seed test, the examples that reproduce it, the
bugs planted for it and the words its examples catch each bug in. The rows are the
ones ``tests/examples/test_seed_bugs.py`` runs, read from the same module, so the
page cannot drift from what the test proves.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

MARKER = "<!-- seed-bugs -->"
SEEDS_MODULE = Path(__file__).resolve().parents[2] / "tests" / "examples" / "seeds.py"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """mkdocs hook: the marker line replaced by the tables."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, render(_seeds()))


def _seeds() -> ModuleType:
    """``tests/examples/seeds.py``, loaded from its file (plain data: no package, no
    pytest needed to build the docs)."""
    spec = importlib.util.spec_from_file_location("_agentreplay_seed_bugs", SEEDS_MODULE)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {SEEDS_MODULE}: the seed tests' table renders from it")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while they build
    spec.loader.exec_module(module)
    return module


def render(seeds: ModuleType) -> str:
    """The tables: one per runtime, a row per planted bug."""
    origins = list(dict.fromkeys(seed.origin for seed in seeds.SEEDS))
    return "\n\n".join(_table(seeds, origin) for origin in origins)


def _table(seeds: ModuleType, origin: str) -> str:
    numbers = [seed.number for seed in seeds.SEEDS if seed.origin == origin]
    lines = [
        f"**From {origin}** (seeds {numbers[0]} to {numbers[-1]})",
        "",
        "| Seed | Seed test | Examples (`examples/tests/`) | Bug planted | Caught by |",
        "|---|---|---|---|---|",
    ]
    for seed in seeds.SEEDS:
        if seed.origin != origin:
            continue
        bugs = [bug for bug in seeds.BUGS if bug.seed == seed.number]
        for n, bug in enumerate(bugs):
            first = n == 0
            lines.append(
                "| "
                + " | ".join(
                    [
                        str(seed.number) if first else "",
                        _code(seed.name) if first else "",
                        "<br>".join(_code(example) for example in bug.examples),
                        f"{_cell(bug.bug)} — {_functions(bug)}",
                        " or ".join(_code(words) for words in bug.caught_by),
                    ]
                )
                + " |"
            )
    return "\n".join(lines)


def _functions(bug: Any) -> str:
    where = dict.fromkeys(edit.where for edit in bug.edits)
    return ", ".join(_code(name) for name in where)


def _cell(text: str) -> str:
    """``text`` safe in a table cell."""
    return text.replace("|", "\\|")


def _code(text: str) -> str:
    """``text`` as inline code in a table cell (a backtick inside takes a longer fence)."""
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{_cell(text)}{pad}{fence}"
