"""The one lazy-import helper every ``__init__.py`` re-exports through, and the rule that an
``__init__.py`` only re-exports.

The helper is tested on a package written for the test (so that what it imports, and
when, can be counted); the rule is read from the source of every package of ours.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import pytest_agentreplay
from pytest_agentreplay._lazy import lazy_exports

PACKAGE = Path(pytest_agentreplay.__file__).parent

# An ``__init__.py`` that still holds code of its own, and why.
HOLDS_CODE: dict[str, str] = {}


# --- the helper ------------------------------------------------------------------------


@pytest.fixture
def make_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Any]]:
    """Write a package ``lazypkg_<n>`` whose ``__init__`` is given, with modules; yield a
    function that imports it. Every module it imported is dropped afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    made: list[str] = []

    def make(init: str, **modules: str) -> Any:
        name = f"lazypkg_{len(made)}"
        folder = tmp_path / name
        folder.mkdir()
        (folder / "__init__.py").write_text(textwrap.dedent(init))
        for module, text in modules.items():
            (folder / f"{module}.py").write_text(textwrap.dedent(text))
        made.append(name)
        importlib.invalidate_caches()
        return importlib.import_module(name)

    yield make
    for module in [m for m in sys.modules if m.split(".")[0] in made]:
        del sys.modules[module]


COUNTING = """
    import itertools
    LOOKUPS = itertools.count(1)
    LOADS = globals().get("LOADS", 0) + 1

    class Thing:
        pass

    def __getattr__(name):  # counts the lookups of Widget: it is made on each one
        if name == "Widget":
            next(LOOKUPS)
            return type("Widget", (), {})
        raise AttributeError(name)
"""

LAZY_INIT = """
    from pytest_agentreplay._lazy import lazy_exports

    __all__ = ["Thing", "Widget"]
    __getattr__, __dir__ = lazy_exports(
        __name__, {".things": ("Thing", "Widget")}, submodules=("extra",)
    )
"""


def test_a_name_is_imported_on_first_use_and_looked_up_once(
    make_package: Callable[..., Any],
) -> None:
    package = make_package(LAZY_INIT, things=COUNTING, extra="VALUE = 1\n")
    source = f"{package.__name__}.things"
    assert source not in sys.modules  # importing the package imported nothing
    first = package.Widget
    assert source in sys.modules
    assert package.Widget is first  # cached: the source's __getattr__ made it once
    things = sys.modules[source]
    assert next(things.LOOKUPS) == 2
    assert "Widget" not in vars(package)  # nothing stored in the package's namespace


def test_a_module_imported_anew_gives_its_new_class(make_package: Callable[..., Any]) -> None:
    """pytester's in-process runs drop the modules a run imported: the package must then
    hand out the class the module defines now, not a stale one."""
    package = make_package(LAZY_INIT, things=COUNTING)
    old = package.Thing
    source = f"{package.__name__}.things"
    del sys.modules[source]
    new = package.Thing
    assert new is not old
    assert new is sys.modules[source].Thing


def test_an_unknown_name_is_an_attribute_error_naming_the_package(
    make_package: Callable[..., Any],
) -> None:
    package = make_package(LAZY_INIT, things=COUNTING)
    with pytest.raises(
        AttributeError, match=f"module '{package.__name__}' has no attribute 'Thng'"
    ) as info:
        package.Thng  # noqa: B018
    # Python's "Did you mean" reads these: dir() of the package lists Thing.
    assert (info.value.name, info.value.obj) == ("Thng", package)
    assert not hasattr(package, "things_module")


def test_dir_lists_the_lazy_names_and_submodules(make_package: Callable[..., Any]) -> None:
    package = make_package(LAZY_INIT, things=COUNTING, extra="VALUE = 1\n")
    listed = dir(package)
    assert {"Thing", "Widget", "extra", "__all__"} <= set(listed)
    assert listed == sorted(listed)
    assert package.extra.VALUE == 1  # a listed submodule is reachable without an import


def test_a_missing_optional_dependency_says_what_to_install(
    make_package: Callable[..., Any],
) -> None:
    package = make_package(
        """
        from pytest_agentreplay._lazy import lazy_exports
        __getattr__, __dir__ = lazy_exports(
            __name__, {".ext": ("Extension",)}, requires={"no_such_dist_xyz": "ours[extra]"}
        )
        """,
        ext="import no_such_dist_xyz\nExtension = 1\n",
    )
    with pytest.raises(
        ImportError, match=r"Extension needs no_such_dist_xyz: pip install 'ours\[extra\]'"
    ):
        package.Extension  # noqa: B018


def test_a_name_exported_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="'Thing' is exported twice"):
        lazy_exports("somewhere", {".a": ("Thing",), ".b": ("Thing",)})


# --- the rule, for every package of ours -----------------------------------------------


def _packages() -> list[str]:
    names = ["pytest_agentreplay"]
    for info in pkgutil.walk_packages([str(PACKAGE)], "pytest_agentreplay."):
        if info.ispkg:
            names.append(info.name)
    return sorted(names)


PACKAGES = _packages()


def _absolute(package: str, module: str | None, level: int) -> str:
    return importlib.util.resolve_name("." * level + (module or ""), package)


class Init:
    """What an ``__init__.py`` says: its lazy exports, what type checkers import, its
    ``__all__``, and anything else it holds."""

    def __init__(self, package: str) -> None:
        module = importlib.import_module(package)
        assert module.__file__ is not None
        self.package = package
        self.tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        self.lazy: dict[str, str] = {}
        self.typed: dict[str, str] = {}
        self.all: list[str] = []
        self.other: list[str] = []
        for node in self.tree.body:
            self._read(node)

    def _read(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return  # the docstring
        if isinstance(node, ast.ImportFrom) and node.module in ("__future__", "typing", "_lazy"):
            return  # what every facade imports (and the top level its __version__, below)
        if isinstance(node, ast.ImportFrom) and node.module == "_version" and node.level == 1:
            return
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for item in node.body:
                assert isinstance(item, ast.ImportFrom), ast.unparse(item)
                source = _absolute(self.package, item.module, item.level)
                for alias in item.names:
                    self.typed[alias.asname or alias.name] = (
                        source if item.module else f"{source}.{alias.name}"
                    )
            return
        if isinstance(node, ast.If) and _is_not_type_checking(node.test):
            (call,) = node.body
            assert isinstance(call, ast.Assign) and isinstance(call.value, ast.Call)
            exports = ast.literal_eval(call.value.args[1])
            for source, names in exports.items():
                absolute = importlib.util.resolve_name(source, self.package)
                self.lazy.update(dict.fromkeys(names, absolute))
            for keyword in call.value.keywords:
                if keyword.arg == "submodules":
                    for name in ast.literal_eval(keyword.value):
                        self.lazy[name] = f"{self.package}.{name}"
            return
        if (
            isinstance(node, ast.AnnAssign | ast.Assign)
            and "__all__" in ast.unparse(node).split("=")[0]
        ):
            value = node.value
            assert value is not None
            self.all = list(ast.literal_eval(value))
            return
        self.other.append(ast.unparse(node).splitlines()[0])


def _is_type_checking(test: ast.expr) -> bool:
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def _is_not_type_checking(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.UnaryOp)
        and isinstance(test.op, ast.Not)
        and _is_type_checking(test.operand)
    )


@pytest.mark.parametrize("package", PACKAGES)
def test_an_init_only_re_exports_through_the_helper(package: str) -> None:
    init = Init(package)
    if package in HOLDS_CODE:
        assert init.other, f"{package} holds no code now: take it off HOLDS_CODE"
        return
    assert init.other == [], f"{package}/__init__.py holds more than re-exports"
    # The type checkers' imports and the lazy names say the same thing...
    assert init.typed == init.lazy
    # ...and so does __all__, less the submodules that ``import *`` would load.
    submodules = {n for n, where in init.lazy.items() if where == f"{package}.{n}"}
    public = set(init.all) - {"__version__"}
    assert public == set(init.lazy) - submodules


@pytest.mark.parametrize("package", PACKAGES)
def test_no_lazy_name_is_a_module_of_its_package(package: str) -> None:
    """Importing ``runlog/normalize.py`` would set ``runlog.normalize`` to the module,
    over the function of that name the package exports (why it is ``masking.py``)."""
    init = Init(package)
    module = importlib.import_module(package)
    modules = {info.name for info in pkgutil.iter_modules(module.__path__)}
    clashes = {n for n, where in init.lazy.items() if n in modules and where != f"{package}.{n}"}
    assert clashes == set()


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_loads(package: str) -> None:
    module = importlib.import_module(package)
    for name in getattr(module, "__all__", ()):
        assert getattr(module, name) is not None
        assert name in dir(module)
