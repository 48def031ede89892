"""How an invariant fails: one :class:`InvariantViolation` naming the first offending
step, saying what is wrong, and showing a short diff of expected against logged."""

from __future__ import annotations

from typing import Any, NoReturn

from ..jsondiff import json_diff

__all__ = ["DIFF_LIMIT", "InvariantViolation", "dump", "fail"]

DIFF_LIMIT = 12
"""At most this many diff lines in a message (plus one line counting the rest)."""


class InvariantViolation(AssertionError):  # noqa: N818 - reads as what it reports
    """An agent-runtime invariant does not hold.

    ``invariant`` is the assertion's name, ``where`` the first offending step (or
    call, turn, intent), ``problem`` what is wrong there, ``diff`` the lines of
    expected-against-logged. ``str()`` is the full message.
    """

    def __init__(self, invariant: str, where: str, problem: str, diff: list[str]) -> None:
        self.invariant, self.where, self.problem, self.diff = invariant, where, problem, diff
        super().__init__(_message(invariant, where, problem, diff))


def _message(invariant: str, where: str, problem: str, diff: list[str]) -> str:
    lines = [f"{invariant} failed at {where}: {problem}"]
    if diff:
        lines.append("  diff:")
        lines.extend(f"    {line}" for line in diff)
    return "\n".join(lines)


def fail(
    invariant: str,
    where: str,
    problem: str,
    expected: Any = None,
    logged: Any = None,
    *,
    labels: tuple[str, str] = ("expected", "logged"),
    lines: list[str] | None = None,
) -> NoReturn:
    """Raise the violation; the diff is ``lines`` if given, else ``json_diff(expected,
    logged)`` (bounded to :data:`DIFF_LIMIT` lines)."""
    diff = (
        lines if lines is not None else json_diff(expected, logged, limit=DIFF_LIMIT, labels=labels)
    )
    raise InvariantViolation(invariant, where, problem, diff)


def dump(entry: Any) -> dict[str, Any]:
    """A run-log entry (any pydantic model) as JSON, unset fields left out."""
    dumped: dict[str, Any] = entry.model_dump(mode="json", exclude_none=True)
    return dumped
