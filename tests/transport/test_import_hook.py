"""``when_imported``: patch a module right after its first import, never import it early."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from importlib.machinery import PathFinder, SourceFileLoader
from pathlib import Path
from types import ModuleType

import pytest

from pytest_agentreplay.transport.import_hook import _FINDER as FINDER
from pytest_agentreplay.transport.import_hook import when_imported


@pytest.fixture
def modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on ``sys.path`` for throwaway modules; they, and what this test left
    waiting, are cleaned up (what the interceptor waits for, e.g. ``httpx2``, stays)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    waiting = set(FINDER.waiting)
    yield tmp_path
    for name in set(sys.modules) - before:
        del sys.modules[name]
    for name in set(FINDER.waiting) - waiting:
        del FINDER.waiting[name]
    FINDER.leave_if_done()


def test_a_module_not_imported_yet_is_patched_when_imported_and_not_before(
    modules: Path,
) -> None:
    (modules / "ar_client_a.py").write_text("VALUE = 1\n")
    seen: list[ModuleType] = []

    assert when_imported("ar_client_a", seen.append) is False
    assert seen == []
    assert "ar_client_a" not in sys.modules  # waiting did not import it

    module = importlib.import_module("ar_client_a")
    assert seen == [module]
    assert module.VALUE == 1  # the callback saw the module's code run


def test_the_callback_runs_before_the_import_statement_returns(modules: Path) -> None:
    (modules / "ar_client_b.py").write_text("class Transport:\n    patched = False\n")

    def patch(module: ModuleType) -> None:
        module.Transport.patched = True

    when_imported("ar_client_b", patch)
    from ar_client_b import Transport  # type: ignore[import-not-found]

    assert Transport.patched is True


def test_an_imported_module_is_patched_at_once(modules: Path) -> None:
    seen: list[ModuleType] = []
    assert when_imported("json", seen.append) is True
    assert seen == [sys.modules["json"]]
    assert "json" not in FINDER.waiting  # nothing left waiting


def test_the_finder_leaves_and_the_loader_is_untouched(modules: Path) -> None:
    (modules / "ar_client_c.py").write_text("")
    calls: list[str] = []
    when_imported("ar_client_c", lambda m: calls.append(m.__name__))
    assert sys.meta_path[0] is FINDER

    module = importlib.import_module("ar_client_c")

    assert "ar_client_c" not in FINDER.waiting
    # The finder leaves once nothing else is waiting (the interceptor may wait for httpx2).
    assert (FINDER in sys.meta_path) == bool(FINDER.waiting)
    loader = module.__loader__
    # The loader the path hooks give without our finder: the standard library's, or one
    # that a library's own import hook put there (beartype's, installed by key_value,
    # which pydantic-ai's MCP toolset imports through fastmcp).
    unhooked = PathFinder.find_spec("ar_client_c", [str(modules)])
    assert unhooked is not None
    assert type(loader) is type(unhooked.loader)
    assert isinstance(loader, SourceFileLoader)
    assert "exec_module" not in vars(loader)  # the one-off wrapper was removed
    importlib.reload(module)  # a reload runs the real loader, not the callback again
    assert calls == ["ar_client_c"]


def test_a_module_whose_import_fails_is_patched_on_the_import_that_succeeds(
    modules: Path,
) -> None:
    source = modules / "ar_client_d.py"
    source.write_text("raise RuntimeError('broken on purpose')\n")
    seen: list[str] = []
    when_imported("ar_client_d", lambda m: seen.append(m.__name__))

    with pytest.raises(RuntimeError, match="broken on purpose"):
        importlib.import_module("ar_client_d")
    assert seen == []

    source.write_text("OK = True\n")
    importlib.invalidate_caches()
    sys.modules.pop("ar_client_d", None)
    assert importlib.import_module("ar_client_d").OK is True
    assert seen == ["ar_client_d"]


def test_a_module_that_is_not_installed_is_left_alone(modules: Path) -> None:
    when_imported("ar_client_not_installed", lambda m: None)
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ar_client_not_installed")
    assert "ar_client_not_installed" in FINDER.waiting  # harmless


def test_only_top_level_modules_can_be_waited_for() -> None:
    with pytest.raises(ValueError, match="top-level modules, not 'httpx2.abc'"):
        when_imported("httpx2.abc", lambda m: None)


def test_a_loader_shared_by_several_modules_reports_the_right_one(
    modules: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A zip on ``sys.path`` has one loader for all its top-level modules: another
    module loaded while the awaited one runs is not mistaken for it."""
    import zipfile

    archive = modules / "clients.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("ar_zip_a.py", "import ar_zip_b\nNAME = 'a'\n")
        zipped.writestr("ar_zip_b.py", "NAME = 'b'\n")
    monkeypatch.syspath_prepend(str(archive))
    seen: list[str] = []

    when_imported("ar_zip_a", lambda m: seen.append(m.NAME))
    module = importlib.import_module("ar_zip_a")

    assert seen == ["a"]
    assert module.ar_zip_b.__loader__ is module.__loader__  # one loader for both
    assert "exec_module" not in vars(module.__loader__)
