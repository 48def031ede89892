"""Where a test's cassette lives: ``<test dir>/cassettes/<module>/<Class.>test.yaml``.

Names come from pytest node names, which may hold anything a parametrize id
holds (``/``, ``:``, ``[``, spaces, emoji, an API key); they are made safe for every
file system while staying readable and distinct:

- characters no file system takes are replaced, and the name gets a short hash of
  the exact test name, so ``test[a:b]`` and ``test[a-b]`` never share a cassette;
- a secret in the name (a test parametrized with its API key) is masked, as in every
  message, and the hash keeps such names apart (issue 27: the cassette was named after
  the key, and the summary printed it);
- capitals in the parameters get the hash too: macOS and Windows ignore case, where
  ``test_p[A]`` and ``test_p[a]`` were one file and the second test replayed the
  first's recording (issue 27). A cassette recorded under the name it had before
  (without the hash) is still found, and used, when it exists under exactly that name.

A name that exists only in another case is another test's cassette, not this one:
:class:`CassetteNameError` says so instead of replaying or overwriting it.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import pytest

from ..errors import AgentReplayError

__all__ = ["CassetteNameError", "cassette_path", "checked", "safe_name", "vcrpy_path"]

Mask = Callable[[str], str]

_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]')
_MAX = 150  # leave room under the usual 255-byte name limit for suffixes and temp files
# Names ending in one of these are cassette files as given: our YAML, vcrpy YAML,
# http-snapshot JSON, and the raw SSE bodies SDK test suites keep (``.sse.txt``,
# ``.sse.bin``). Any other name gets ``.yaml`` appended (``cassette="shared"``).
_CASSETTE_SUFFIXES = frozenset({".yaml", ".yml", ".json", ".txt", ".bin", ".sse"})


class CassetteNameError(AgentReplayError):
    """A test's cassette name exists on disk only in another case: on a file system that
    ignores case it is another test's cassette, which this test must neither replay nor
    overwrite."""


def _same(text: str) -> str:
    return text


def safe_name(name: str, mask: Mask = _same, *, cased_from: int | None = None) -> str:
    """``name`` as a file name: unsafe characters replaced by ``-``, a secret masked.

    A name that had to change, is too long, or has capitals from ``cased_from`` on (the
    parametrize id: file systems that ignore case would take ``[A]`` for ``[a]``) gets
    a short hash of the original: distinct tests never share a cassette. Long names
    keep a readable prefix.
    """
    cleaned = _UNSAFE.sub("-", mask(name)).strip(" .") or "_"
    cased = cased_from is not None and name[cased_from:] != name[cased_from:].lower()
    if cleaned == name and not cased and len(cleaned.encode("utf-8")) <= _MAX:
        return cleaned
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:12]
    prefix = cleaned.encode("utf-8")[: _MAX - 13].decode("utf-8", "ignore")
    return f"{prefix}-{digest}"


def _stems(item: pytest.Item, mask: Mask) -> tuple[str, str]:
    """The test's file name, and the one it had before capitals in its parameters
    got a hash (the same when the name has none)."""
    cls = getattr(item, "cls", None)
    prefix = f"{cls.__name__}." if cls is not None else ""
    name = prefix + item.name
    bracket = item.name.find("[")
    cased_from = len(prefix) + bracket if bracket >= 0 else None
    return safe_name(name, mask, cased_from=cased_from), safe_name(name, mask)


@lru_cache(maxsize=1024)
def _folder(module_path: str, cassette_dir: str) -> Path:
    """The cassette folder of a test module (the same for all its tests: computed once)."""
    module = Path(module_path)
    return module.parent / cassette_dir / safe_name(module.stem)


def cassette_path(
    item: pytest.Item, cassette_dir: str, cassette: str | None, mask: Mask = _same
) -> Path:
    """The cassette of ``item``: the marker's ``cassette`` (relative to the module's
    cassette folder unless absolute), else the default name (the name it had before
    issue 27 when a cassette exists exactly there)."""
    folder = _folder(str(item.path), cassette_dir)
    if cassette is None:
        name, before = _stems(item, mask)
        path = folder / f"{name}.yaml"
        older = folder / f"{before}.yaml"
        return older if older != path and _exact(older) and not _exact(path) else path
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
    name = _stems(item, mask)[0]
    path = os.fspath(transform(name)) if transform is not None else f"{name}.yaml"  # type: ignore[call-overload]
    return Path(path if path.startswith(folder) else os.path.join(folder, path))


def _normal(name: str) -> str:
    """A file name as file systems compare it (macOS stores names decomposed)."""
    return unicodedata.normalize("NFC", name)


def _listing(folder: Path) -> list[str]:
    try:
        return [_normal(entry) for entry in os.listdir(folder)]
    except OSError:
        return []


def _exact(path: Path) -> bool:
    """Whether ``path`` exists under exactly its name (not only in another case)."""
    return path.exists() and _normal(path.name) in _listing(path.parent)


def checked(path: Path) -> Path:
    """``path``, unless it exists only in another case (a file system that ignores case
    takes the other test's file for it): then :class:`CassetteNameError`."""
    if not path.exists() or _exact(path):
        return path
    wanted = _normal(path.name).casefold()
    other = next((e for e in _listing(path.parent) if e.casefold() == wanted), "?")
    raise CassetteNameError(
        f"{path}: this file system ignores case, and {other!r}, another test's cassette, "
        "has this name in another case; this test would replay or overwrite it. Rename one "
        "of the tests, or give one @pytest.mark.agentreplay(cassette=...)."
    )
