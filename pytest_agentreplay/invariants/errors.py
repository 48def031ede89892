"""How an invariant fails, and what the crash-point explorer raises.

An invariant fails with one :class:`InvariantViolation` naming the first offending
step, saying what is wrong, and showing a short diff of expected against logged
(:func:`fail` builds it). The explorer (:mod:`.crashpoints`) raises
:class:`SimulatedCrash` at a :class:`CrashPoint` and fails with a
:class:`CrashDivergence` carrying one of the stable :data:`CRASH_CODES`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from ..jsondiff import json_diff

__all__ = [
    "CRASH_CODES",
    "DIFF_LIMIT",
    "CrashDivergence",
    "CrashPoint",
    "InvariantViolation",
    "SimulatedCrash",
    "dump",
    "fail",
]

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


CRASH_CODES: dict[str, str] = {
    "AR-CRASH-001": "after resuming, the state differs from the uninterrupted run's",
    "AR-CRASH-002": "resuming after the crash raised an exception",
    "AR-CRASH-003": "the runtime swallowed the simulated crash and carried on",
    "AR-CRASH-004": "the run ended before the crash point: it is not deterministic",
    "AR-CRASH-005": "two uninterrupted runs ended in different states: the run is not "
    "deterministic",
    "AR-CRASH-006": "a resumed run sent a model request the uninterrupted run never sent",
}
"""The stable error codes of :class:`CrashDivergence`, and what each means."""


class SimulatedCrash(BaseException):
    """Raised at a crash point: the process "dies" here.

    A ``BaseException``, like ``KeyboardInterrupt``, so that a runtime's
    ``except Exception`` cannot swallow it — a real crash runs no handler.
    """

    def __init__(self, point: CrashPoint) -> None:
        super().__init__(f"simulated crash after {point.describe()}")
        self.point = point


@dataclass(frozen=True)
class CrashPoint:
    """A place where a run can crash: the ``index``-th checkpoint (0-based) and its label."""

    index: int
    label: str

    def describe(self) -> str:
        return f"step {self.index} ({self.label})" if self.label else f"step {self.index}"


class CrashDivergence(AssertionError):  # noqa: N818 - reads as what it reports
    """A crash point the runtime did not survive.

    ``code`` is one of :data:`CRASH_CODES`; ``point`` the crash point; ``step`` the
    path of the first place the states part (``messages[3]``), when known;
    ``diff`` the differences, one per line.
    """

    def __init__(
        self,
        code: str,
        point: CrashPoint | None,
        detail: str,
        *,
        step: str | None = None,
        diff: Sequence[str] = (),
    ) -> None:
        self.code = code
        self.point = point
        self.step = step
        self.diff = list(diff)
        where = f"crash after {point.describe()}: " if point is not None else ""
        lines = [f"{code} {where}{CRASH_CODES[code]}"]
        if step is not None:
            lines.append(f"  first diverging step: {step}")
        if detail:
            lines.append(f"  {detail}")
        lines.extend(f"    {line}" for line in self.diff)
        super().__init__("\n".join(lines))
