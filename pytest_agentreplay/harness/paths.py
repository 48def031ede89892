"""Where a test's cassette lives: ``<test dir>/cassettes/<module>/<Class.>test.yaml``.

Names come from pytest node names, which may hold anything a parametrize id
holds (``/``, ``:``, ``[``, spaces, emoji); they are made safe for every file
system while staying readable and distinct.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import pytest

__all__ = ["cassette_path", "pytest_recording_path", "safe_name", "vcrpy_path"]

_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]')
_MAX = 150  # leave room under the usual 255-byte name limit for suffixes and temp files
# Names ending in one of these are cassette files as given: our YAML, vcrpy YAML,
# http-snapshot JSON, and the raw SSE bodies SDK test suites keep (``.sse.txt``,
# ``.sse.bin``). Any other name gets ``.yaml`` appended (``cassette="shared"``).
_CASSETTE_SUFFIXES = frozenset({".yaml", ".yml", ".json", ".txt", ".bin", ".sse"})
_PYTEST_RECORDING_UNSAFE = re.compile(r"""[<>?%*:|"'/\\]""")
"""The characters pytest-recording replaces with ``-`` in a cassette name (and only
those: no hash, so ``test[a:b]`` and ``test[a-b]`` shared a file there)."""


def safe_name(name: str) -> str:
    """``name`` with characters that are unsafe in file names replaced by ``-``.

    A name that had to change, or is too long, gets a short hash of the original:
    ``test[a:b]`` and ``test[a-b]`` are different tests, so they never share a
    cassette. Long names keep a readable prefix.
    """
    cleaned = _UNSAFE.sub("-", name).strip(" .") or "_"
    if cleaned == name and len(cleaned.encode("utf-8")) <= _MAX:
        return cleaned
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:12]
    prefix = cleaned.encode("utf-8")[: _MAX - 13].decode("utf-8", "ignore")
    return f"{prefix}-{digest}"


def _default_stem(item: pytest.Item) -> str:
    cls = getattr(item, "cls", None)
    prefix = f"{cls.__name__}." if cls is not None else ""
    return safe_name(prefix + item.name)


@lru_cache(maxsize=1024)
def _folder(module_path: str, cassette_dir: str) -> Path:
    """The cassette folder of a test module (the same for all its tests: computed once)."""
    module = Path(module_path)
    return module.parent / cassette_dir / safe_name(module.stem)


def cassette_path(item: pytest.Item, cassette_dir: str, cassette: str | None) -> Path:
    """The cassette of ``item``: the marker's ``cassette`` (relative to the module's
    cassette folder unless absolute), else the default name."""
    folder = _folder(str(item.path), cassette_dir)
    if cassette is None:
        return folder / f"{_default_stem(item)}.yaml"
    given = Path(cassette)
    path = given if given.is_absolute() else folder / given
    return path if path.suffix in _CASSETTE_SUFFIXES else path.with_name(path.name + ".yaml")


def vcrpy_path(
    item: pytest.Item,
    cassette_dir: str,
    library_dir: str | None,
    transform: Callable[[str], object] | None,
) -> Path:
    """The default cassette as pytest-recording names it under vcrpy's
    ``cassette_library_dir`` / ``path_transformer``: the transformer gets the test's
    name (``.yaml`` is appended without one), and the result is joined to the folder
    unless it already starts with it (vcrpy's ``get_merged_config``)."""
    folder = library_dir if library_dir is not None else str(_folder(str(item.path), cassette_dir))
    name = _default_stem(item)
    path = os.fspath(transform(name)) if transform is not None else f"{name}.yaml"  # type: ignore[call-overload]
    return Path(path if path.startswith(folder) else os.path.join(folder, path))


def pytest_recording_path(item: pytest.Item, cassette_dir: str) -> Path | None:
    """Where pytest-recording kept ``item``'s default cassette, when that name differs
    from ours (a name with a character a file name cannot hold, or ``'`` / ``%``):
    a miss points at the file a migrated suite has not renamed yet."""
    cls = getattr(item, "cls", None)
    name = (f"{cls.__name__}." if cls is not None else "") + item.name
    theirs = _PYTEST_RECORDING_UNSAFE.sub("-", name)
    if theirs == _default_stem(item):
        return None
    return _folder(str(item.path), cassette_dir) / f"{theirs}.yaml"
