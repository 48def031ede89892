"""The exceptions of the cassette YAML: what the writer cannot store, and what the
fast reader hands back to the safe loader."""

from __future__ import annotations

__all__ = ["NotCanonicalError", "UnstorableError"]


class UnstorableError(ValueError):
    """A value cannot be written so that loading gives it back (a lone surrogate,
    a non-string key, nesting beyond :data:`MAX_DEPTH`, ...)."""

    def __init__(self, problem: str, where: tuple[str | int, ...] = ()) -> None:
        self.problem = problem
        self.where = where
        super().__init__(problem)


class NotCanonicalError(Exception):
    """The text is not in the exact layout the writer produces (:mod:`.fast`): the
    caller reads it with the safe loader instead."""
