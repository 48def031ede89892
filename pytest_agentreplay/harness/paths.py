"""Where a test's cassette lives: ``<test dir>/cassettes/<module>/<Class.>test.yaml``.

Names come from pytest node names, which may hold anything a parametrize id
holds (``/``, ``:``, ``[``, spaces, emoji, an API key); they are made safe for every
file system while staying readable and distinct:

- characters no file system takes are replaced, and the name gets a short hash of
  the exact test name, so ``test[a:b]`` and ``test[a-b]`` never share a cassette;
- a secret in the name (a test parametrized with its API key) is masked, as in every
  message, and the hash keeps such names apart (issue 27: the cassette was named after
  the key, and the summary printed it);
- a name that another cassette of the folder has in another case gets the hash too:
  macOS and Windows ignore case, where ``test_p[A]`` and ``test_p[a]`` were one file
  and the second test replayed the first's recording (issue 27). The folder is read
  as it is on every system, so the names differ everywhere (a repository recorded on
  Linux checks out on macOS), and a name no other file shares keeps its plain form.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import pytest

__all__ = ["cassette_path", "pytest_recording_path", "safe_name", "vcrpy_path"]

Mask = Callable[[str], str]

_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]')
_MAX = 150  # leave room under the usual 255-byte name limit for suffixes and temp files
# Names ending in one of these are cassette files as given: our YAML, vcrpy YAML,
# http-snapshot JSON, and the raw SSE bodies SDK test suites keep (``.sse.txt``,
# ``.sse.bin``). Any other name gets ``.yaml`` appended (``cassette="shared"``).
_CASSETTE_SUFFIXES = frozenset({".yaml", ".yml", ".json", ".txt", ".bin", ".sse"})
_PYTEST_RECORDING_UNSAFE = re.compile(r"""[<>?%*:|"'/\\]""")
"""The characters pytest-recording replaces with ``-`` in a cassette name (and only
those: no hash, so ``test[a:b]`` and ``test[a-b]`` shared a file there)."""


def _same(text: str) -> str:
    return text


def safe_name(name: str, mask: Mask = _same, *, hashed: bool = False) -> str:
    """``name`` as a file name: unsafe characters replaced by ``-``, a secret masked.

    A name that had to change, is too long, or is ``hashed`` on request (another file
    has it in another case) gets a short hash of the original: distinct tests never
    share a cassette. Long names keep a readable prefix.
    """
    cleaned = _UNSAFE.sub("-", mask(name)).strip(" .") or "_"
    if cleaned == name and not hashed and len(cleaned.encode("utf-8")) <= _MAX:
        return cleaned
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:12]
    prefix = cleaned.encode("utf-8")[: _MAX - 13].decode("utf-8", "ignore")
    return f"{prefix}-{digest}"


def _test_name(item: pytest.Item) -> str:
    cls = getattr(item, "cls", None)
    return (f"{cls.__name__}." if cls is not None else "") + item.name


@lru_cache(maxsize=1024)
def _folder(module_path: str, cassette_dir: str) -> Path:
    """The cassette folder of a test module (the same for all its tests: computed once)."""
    module = Path(module_path)
    return module.parent / cassette_dir / safe_name(module.stem)


def cassette_path(
    item: pytest.Item, cassette_dir: str, cassette: str | None, mask: Mask = _same
) -> Path:
    """The cassette of ``item``: the marker's ``cassette`` (relative to the module's
    cassette folder unless absolute), else the default name."""
    folder = _folder(str(item.path), cassette_dir)
    if cassette is None:
        return _distinct(_test_name(item), mask, lambda name: folder / f"{name}.yaml")
    given = Path(cassette)
    path = given if given.is_absolute() else folder / given
    return path if path.suffix in _CASSETTE_SUFFIXES else path.with_name(path.name + ".yaml")


def vcrpy_path(
    item: pytest.Item,
    cassette_dir: str,
    library_dir: str | None,
    transform: Callable[[str], object] | None,
    mask: Mask = _same,
) -> Path:
    """The default cassette as pytest-recording names it under vcrpy's
    ``cassette_library_dir`` / ``path_transformer``: the transformer gets the test's
    name (``.yaml`` is appended without one), and the result is joined to the folder
    unless it already starts with it (vcrpy's ``get_merged_config``)."""
    folder = library_dir if library_dir is not None else str(_folder(str(item.path), cassette_dir))

    def placed(name: str) -> Path:
        path = os.fspath(transform(name)) if transform is not None else f"{name}.yaml"  # type: ignore[call-overload]
        return Path(path if path.startswith(folder) else os.path.join(folder, path))

    return _distinct(_test_name(item), mask, placed)


def _distinct(test: str, mask: Mask, placed: Callable[[str], Path]) -> Path:
    """The test's file: its plain name, unless another file of the folder has that name
    in another case (another test's, on a file system that ignores case), then the
    hashed one. Whichever exists under exactly its name is kept."""
    masked = mask(test)  # once: masking scans the name for secrets (bench/ W4)
    plain = placed(safe_name(test, lambda _: masked))
    hashed = placed(safe_name(test, lambda _: masked, hashed=True))
    if plain == hashed:
        return plain
    listing = _listing(plain.parent)
    if _normal(plain.name) in listing:
        return plain
    if _normal(hashed.name) in listing:
        return hashed
    folded = _normal(plain.name).casefold()
    taken = any(entry.casefold() == folded for entry in listing)
    return hashed if taken else plain


def _normal(name: str) -> str:
    """A file name as file systems compare it (macOS stores names decomposed)."""
    return unicodedata.normalize("NFC", name)


_SETTLED_NS = 2_000_000_000
"""How old (in ns) a folder's last change must be before its listing is remembered:
more than the coarsest time stamps of a file system (FAT's 2 s), so that a change made
in the same tick as the one remembered cannot hide behind an unchanged time stamp."""

_listings: dict[str, tuple[int, frozenset[str]]] = {}


def _listing(folder: Path) -> frozenset[str]:
    """The names in ``folder`` (normalized), ``frozenset()`` when it cannot be read.

    Every test of a module reads its folder: listing it each time cost a whole suite
    time in the square of its cassettes (bench/ W4: 200 tests, 200 listings of 200
    names). A folder's modification time changes whenever a name is added, removed
    or renamed in it, so a listing is remembered with it and reused while it holds;
    only a folder whose last change has settled is remembered (see
    :data:`_SETTLED_NS`), and a folder tests are writing into is listed each time."""
    key = os.fspath(folder)
    try:
        changed = os.stat(key).st_mtime_ns
        known = _listings.get(key)
        if known is not None and known[0] == changed:
            return known[1]
        names = frozenset(_normal(entry) for entry in os.listdir(key))
    except OSError:
        _listings.pop(key, None)
        return frozenset()
    if time.time_ns() - changed > _SETTLED_NS:
        _listings[key] = (changed, names)
    else:
        _listings.pop(key, None)
    return names


def pytest_recording_path(item: pytest.Item, cassette_dir: str) -> Path | None:
    """Where pytest-recording kept ``item``'s default cassette, when that name differs
    from ours (a name with a character a file name cannot hold, or ``'`` / ``%``):
    a miss points at the file a migrated suite has not renamed yet."""
    name = _test_name(item)
    theirs = _PYTEST_RECORDING_UNSAFE.sub("-", name)
    if theirs == safe_name(name):
        return None
    return _folder(str(item.path), cassette_dir) / f"{theirs}.yaml"
