"""Run a function right after a module is first imported, without importing it first.

The interceptor patches the transports of ``httpx`` and ``httpx2``. Importing a
client module just to patch it costs its import time (``httpx2``: about 12 ms)
in runs that never use it: a suite replaying through plain ``httpx`` need not
pay for ``httpx2``. :func:`when_imported` patches a module that is already
loaded at once, and otherwise as soon as its top-level code has run — before
the ``import`` statement that loaded it returns, so no client can be built from
an unpatched module.

It is a :data:`sys.meta_path` finder placed first: it asks the finders after it
for the module's spec and wraps that spec's loader's ``exec_module`` for this
one module. The loader object itself is unchanged (``__loader__``, resources and
``importlib.reload`` see the real one), and the finder removes itself once every
module it waits for has loaded.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

__all__ = ["when_imported"]

_lock = threading.RLock()


class _Finder:
    """Waits for top-level modules by name; each callback runs once. (A plain class:
    the import system only asks for ``find_spec``, and ``importlib.abc`` costs an import.)"""

    def __init__(self) -> None:
        self.waiting: dict[str, Callable[[ModuleType], None]] = {}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        callback = self.waiting.get(fullname)
        if callback is None:
            return None
        spec = _spec_from_others(self, fullname, path, target)
        loader: Any = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec  # a namespace package or an exotic loader: nothing to run after
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            if module.__name__ != fullname:  # a loader shared by several modules (zip)
                run(module)
                return
            try:
                run(module)
            finally:
                del loader.exec_module  # back to the class's method
            with _lock:
                if self.waiting.pop(fullname, None) is None:
                    return
                self.leave_if_done()
            callback(module)

        loader.exec_module = exec_module
        return spec

    def leave_if_done(self) -> None:
        """Leave :data:`sys.meta_path` once nothing is waiting."""
        if not self.waiting and self in sys.meta_path:
            sys.meta_path.remove(self)


def _spec_from_others(
    finder: _Finder, fullname: str, path: Sequence[str] | None, target: ModuleType | None
) -> ModuleSpec | None:
    for other in list(sys.meta_path):
        if other is finder:
            continue
        find = getattr(other, "find_spec", None)
        if find is None:
            continue
        spec: ModuleSpec | None = find(fullname, path, target)
        if spec is not None:
            return spec
    return None


_FINDER = _Finder()


def when_imported(name: str, callback: Callable[[ModuleType], None]) -> bool:
    """Call ``callback(module)`` once the top-level module ``name`` is imported.

    Runs it now (and returns ``True``) when the module is already in
    :data:`sys.modules`; otherwise returns ``False`` and runs it right after the
    module's code has run, in the importing thread. A second call for the same
    name before it is imported replaces the first callback.
    """
    if "." in name:
        raise ValueError(f"when_imported waits for top-level modules, not {name!r}")
    with _lock:
        if name not in sys.modules:
            _FINDER.waiting[name] = callback
            if _FINDER not in sys.meta_path:
                sys.meta_path.insert(0, _FINDER)
            return False
    # Through the import system, not sys.modules: a module another thread is still
    # importing is waited for, never handed over half-initialised.
    callback(importlib.import_module(name))
    return True
