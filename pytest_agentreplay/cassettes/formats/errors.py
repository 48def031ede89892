"""The exception of the foreign-format readers."""

from __future__ import annotations

__all__ = ["ShapeError"]


class ShapeError(ValueError):
    """A source file has a field of the wrong kind (``loc`` is its path in the file)."""

    def __init__(self, problem: str, loc: tuple[str | int, ...]) -> None:
        self.problem = problem
        self.loc = loc
        super().__init__(problem)
