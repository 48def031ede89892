"""Where in a cassette the writer fails, and why: a slow re-walk, run only on failure.

The writer (:mod:`.emit`) goes fast and raises :class:`~.errors.UnstorableError`
without knowing the field; this walks the cassette's data again to name it
(``interactions[0].response.json.x``), so the error says what to fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..fields import StoredCassette
from .errors import UnstorableError
from .scalars import MAX_DEPTH, inline, yaml_key

__all__ = ["unstorable_field"]


def _first_problem(value: Any, depth: int = 0) -> tuple[tuple[str | int, ...], str] | None:
    """Where in ``value`` the writer fails, and why (a slow re-walk, run only on failure)."""
    if depth > MAX_DEPTH:
        return (), f"nests deeper than {MAX_DEPTH} levels"
    children: list[tuple[str | int, Any]] = []
    try:
        if isinstance(value, Mapping):
            for key, item in value.items():
                yaml_key(key)
                children.append((key, item))
        elif isinstance(value, (list, tuple)):
            children.extend(enumerate(value))
        else:
            inline(value)
    except UnstorableError as exc:
        return (), exc.problem
    for part, item in children:
        found = _first_problem(item, depth + 1)
        if found is not None:
            return (part, *found[0]), found[1]
    return None


def unstorable_field(cassette: StoredCassette) -> UnstorableError:
    """Re-walk a cassette the writer refused, to name the offending field."""
    data = cassette.to_data()
    found = _first_problem(data)
    if found is None:  # pragma: no cover - the writer and the re-walk disagree
        return UnstorableError("cannot be written as YAML")
    return UnstorableError(found[1], found[0])
