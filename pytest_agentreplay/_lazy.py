"""The one way a package's ``__init__`` re-exports its names: loaded on first use.

Every ``__init__.py`` of the package only re-exports. Its names are defined in the
package's modules (``FakeModel`` in :mod:`.fakes.fake_model`, ``Scrubber`` in
:mod:`.redact.scrubber`), and the ``__init__`` says where each one is, three times
over, each for its own reader::

    if TYPE_CHECKING:  # type checkers and the docs read the real definitions
        from .fake_model import FakeModel
        from .listening import FakeServer

    __all__ = ["FakeModel", "FakeServer"]  # the public names (mypy, ``import *``)

    if not TYPE_CHECKING:  # what the interpreter runs
        __getattr__, __dir__ = lazy_exports(
            __name__, {".fake_model": ("FakeModel",), ".listening": ("FakeServer",)}
        )

so importing a package costs nothing until one of its names is used: the pytest
plugin imports the top level at start-up, and a test suite that never uses a fake
model never imports pydantic, httpx or a codec for it. Type checkers do not see the
``__getattr__``, so a misspelt name is an error for them, not ``Any``.
``tests/test_lazy.py`` checks that the three lists agree in every ``__init__``, and
that no name is also the name of a module of its package (importing the module would
replace the name with it).

A name is looked up once per import of the module that defines it. When that module
is imported anew (pytester's in-process runs drop the modules a run imported), the
name is looked up again, so a package never hands out a stale second class beside the
one its module now holds. A module-level ``__getattr__`` is only asked for names its
module does not have, so nothing is stored in the package's namespace.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

__all__ = ["lazy_exports"]


class _Exports:
    """The lazy names of one package: where each is defined, and what was found."""

    def __init__(
        self,
        package: str,
        exports: Mapping[str, Iterable[str]],
        submodules: Iterable[str],
        requires: Mapping[str, str],
    ) -> None:
        self.package = package
        self.where: dict[str, str] = {}
        for module, names in exports.items():
            absolute = importlib.util.resolve_name(module, package)
            for name in names:
                if name in self.where:
                    raise ValueError(f"{package}: {name!r} is exported twice")
                self.where[name] = absolute
        self.submodules = frozenset(submodules)
        self.requires = dict(requires)
        self.found: dict[str, tuple[ModuleType, Any]] = {}

    def attribute(self, name: str) -> Any:
        """The value of ``name``: the package's module ``__getattr__``."""
        source = self.where.get(name)
        if source is None:
            if name in self.submodules:
                return importlib.import_module(f"{self.package}.{name}")
            raise AttributeError(
                f"module {self.package!r} has no attribute {name!r}",
                name=name,
                obj=sys.modules.get(self.package),
            )
        found = self.found.get(name)
        if found is not None and sys.modules.get(source) is found[0]:
            return found[1]
        module = self._import(source, name)
        value = getattr(module, name)
        self.found[name] = (module, value)
        return value

    def names(self) -> list[str]:
        """What ``dir(package)`` lists: its namespace, its lazy names and submodules."""
        package = sys.modules.get(self.package)
        present = vars(package) if package is not None else {}
        return sorted({*present, *self.where, *self.submodules})

    def _import(self, source: str, name: str) -> ModuleType:
        try:
            return importlib.import_module(source)
        except ModuleNotFoundError as exc:
            extra = self.requires.get(exc.name or "")
            if extra is None:
                raise
            raise ImportError(f"{name} needs {exc.name}: pip install '{extra}'") from exc


def lazy_exports(
    package: str,
    exports: Mapping[str, Iterable[str]],
    *,
    submodules: Iterable[str] = (),
    requires: Mapping[str, str] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` (pass ``__name__``).

    ``exports`` maps a module (relative to the package, as in an import:
    ``".fake_model"``, ``"..model"``) to the names it defines for the package.
    ``submodules`` are subpackages reachable as attributes without an import of their
    own (``pytest_agentreplay.strategies``). ``requires`` maps an optional dependency
    to the distribution that brings it: a name whose module needs a missing one raises
    an ``ImportError`` saying what to install. An unknown name raises the
    ``AttributeError`` Python raises for any module, naming the package.
    """
    names = _Exports(package, exports, submodules, requires or {})
    return names.attribute, names.names
