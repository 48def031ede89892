"""Two rules of the package's layout (docs/architecture.md) that import-linter cannot
express, checked over the whole package:

* no import cycles between modules, type-checking imports and imports inside
  functions included (import-linter's layers skip the first and cannot see a cycle
  inside one layer);
* every exception class is defined in a module named ``errors.py`` (the package's
  own, or the one of the folder that raises it), except a private one raised and
  caught inside a single module.

A failure names the cycle (with the line of each import) or the class and its module.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import pkgutil
import re
from pathlib import Path

import grimp
import pytest

import pytest_agentreplay

PACKAGE = "pytest_agentreplay"
ROOT = Path(pytest_agentreplay.__file__).parent

KNOWN_CYCLES: dict[frozenset[str], str] = {}
"""Cycles other parts of issue 28 remove; each must still exist (remove it here then)."""

ERRORS_ELSEWHERE: dict[str, str] = {
    "pytest_agentreplay.sse.TruncatedStreamError": (
        "it carries sse.Truncated, so errors.py would import sse.py, which imports "
        "errors.py: a cycle"
    ),
}
"""Public exception classes allowed outside an ``errors.py``, and why."""

_NOT_IMPORTED = {
    f"{PACKAGE}.cli.__main__",  # runs the command
    f"{PACKAGE}.transport.child_site.sitecustomize",  # installs the child guard
}


# --- import cycles ---------------------------------------------------------------------


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    imported = sorted(graph.find_modules_directly_imported_by(child))
                    work.append((child, iter(imported)))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _shown(graph: grimp.ImportGraph, component: list[str]) -> str:
    """One cycle through ``component``, each import with its line: ``a (l.3) -> b ...``."""
    members = set(component)
    path = [component[0]]
    while True:
        here = path[-1]
        step = min(graph.find_modules_directly_imported_by(here) & members)
        if step in path:
            path = [*path[path.index(step) :], step]
            break
        path.append(step)
    hops = []
    for importer, imported in itertools.pairwise(path):
        details = graph.get_import_details(importer=importer, imported=imported)
        lines = ", ".join(f"l.{d['line_number']}" for d in details)
        hops.append(f"{importer} ({lines})")
    return " -> ".join([*hops, path[-1]])


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(PACKAGE, exclude_type_checking_imports=False, cache_dir=None)


def test_no_module_takes_part_in_an_import_cycle(graph: grimp.ImportGraph) -> None:
    cycles = {frozenset(c): c for c in _cycles(graph)}
    new = [_shown(graph, c) for key, c in cycles.items() if key not in KNOWN_CYCLES]
    assert not new, "import cycles (type-checking imports included):\n" + "\n".join(new)
    gone = [" <-> ".join(sorted(key)) for key in KNOWN_CYCLES if key not in cycles]
    assert not gone, f"no longer a cycle, remove from KNOWN_CYCLES: {gone}"


def test_the_cycle_check_sees_type_checking_and_function_imports(
    graph: grimp.ImportGraph,
) -> None:
    """Guards the check itself: an import under TYPE_CHECKING and one inside a function
    are both edges of the graph it walks."""
    typing_only = graph.get_import_details(
        importer=f"{PACKAGE}.neutral.source", imported=f"{PACKAGE}.neutral.replies"
    )
    lazy = graph.get_import_details(
        importer=f"{PACKAGE}.transport.patch", imported=f"{PACKAGE}.transport.aio"
    )
    assert typing_only
    assert lazy
    looped = grimp.build_graph(PACKAGE, exclude_type_checking_imports=False, cache_dir=None)
    looped.add_import(importer=f"{PACKAGE}.neutral.replies", imported=f"{PACKAGE}.neutral.source")
    shown = [_shown(looped, c) for c in _cycles(looped) if frozenset(c) not in KNOWN_CYCLES]
    assert shown == [
        f"{PACKAGE}.neutral.replies () -> {PACKAGE}.neutral.source (l.18) -> "
        f"{PACKAGE}.neutral.replies"
    ]


# --- where exception classes live ------------------------------------------------------


def _modules() -> list[str]:
    names = [PACKAGE]
    for info in pkgutil.walk_packages([str(ROOT)], f"{PACKAGE}."):
        if info.name not in _NOT_IMPORTED:
            names.append(info.name)
    return names


def _exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class the package defines, by ``module.QualName``."""
    found: dict[str, type[BaseException]] = {}
    for name in _modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == name
            ):
                found[f"{name}.{value.__qualname__}"] = value
    return found


def test_every_public_exception_class_is_defined_in_an_errors_module() -> None:
    classes = _exception_classes()
    public = {name for name, cls in classes.items() if not cls.__qualname__.startswith("_")}
    outside = sorted(
        name
        for name in public
        if classes[name].__module__.rsplit(".", 1)[-1] != "errors" and name not in ERRORS_ELSEWHERE
    )
    assert not outside, f"exception classes outside an errors.py: {outside}"
    stale = sorted(set(ERRORS_ELSEWHERE) - public)
    assert not stale, f"not defined there any more, remove from ERRORS_ELSEWHERE: {stale}"
    assert len(public) > 30  # the walk found the package's exceptions


def test_a_private_exception_class_stays_inside_its_module() -> None:
    """A private exception (``_Name``) is control flow: raised and caught in one module.
    Used anywhere else, it is part of an interface and belongs in an errors.py."""
    sources = {path: path.read_text() for path in ROOT.rglob("*.py")}
    private = [cls for cls in _exception_classes().values() if cls.__qualname__.startswith("_")]
    assert private  # the package has some: the check is not vacuous
    for cls in private:
        home = Path(inspect.getfile(cls))
        elsewhere = [
            str(path.relative_to(ROOT))
            for path, text in sources.items()
            if path != home and cls.__qualname__ in text
        ]
        assert not elsewhere, f"{cls.__module__}.{cls.__qualname__} is used in {elsewhere}"


_EXCEPTION_BASE = re.compile(r"(?:^|\.)(?:BaseException|\w*(?:Error|Exception|Failed|Warning))$")


@pytest.mark.parametrize("module", sorted(_NOT_IMPORTED))
def test_the_modules_not_imported_define_no_exception_class(module: str) -> None:
    """The two modules the walk must not import (importing runs them) are read instead."""
    path = ROOT.joinpath(*module.split(".")[1:]).with_suffix(".py")
    tree = ast.parse(path.read_text())
    classes = [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and any(_EXCEPTION_BASE.search(ast.unparse(base)) for base in node.bases)
    ]
    assert not classes, f"{module} defines exception classes {classes}: check them by hand"
