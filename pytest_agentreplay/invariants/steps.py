"""The check about model steps: each started step ends exactly once, a retry is a fresh
step at the same index, and a retry loop that gives up ends its last try ``failed``.

See :mod:`pytest_agentreplay.invariants` for what the check means; how steps are told
apart by turn lives in :mod:`.pairing`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

from ..runlog.entries import Resumed, Step, StepCompleted, TurnEnded
from .errors import dump, fail
from .pairing import consecutive

if TYPE_CHECKING:
    from ..runlog.run_log import RunLog

__all__ = ["check_single_terminal_step"]

_OUTCOMES = "completed, retrying, failed or interrupted"


def _step_entries(log: RunLog, step: Step) -> list[dict[str, Any]]:
    return [dump(log.entries[p]) for p in step.positions]


def _unnamed(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Step events without their step id (the message names the step already), so a
    diff line has room for the outcome, index and turn."""
    return [{k: v for k, v in e.items() if k != "step_id"} for e in entries]


_Problem = tuple[str, list[Any]]
"""What is wrong with a step, and the entries it should have logged."""


def _own_problem(log: RunLog, step: Step) -> _Problem | None:
    """What is wrong with one step on its own, if anything."""
    found = _start_count_problem(step) or _end_count_problem(log, step)
    if found is not None or not step.ended:
        return found
    for check in (_ended_first, _names_differ, _ended_early):
        found = check(log, step)
        if found is not None:
            return found
    return None


def _start_count_problem(step: Step) -> _Problem | None:
    if not step.started:
        expected = [{"event": "step_started", "step_id": step.id}, dump(step.ended[0])]
        return "it ended but never started", expected
    if len(step.started) > 1:
        ends = [dump(e) for e in step.ended[:1]]
        return (
            f"it started {len(step.started)} times; a retry must start a fresh step id "
            f"(at the same step index)",
            [dump(step.started[0]), *ends],
        )
    return None


def _end_count_problem(log: RunLog, step: Step) -> _Problem | None:
    start = dump(step.started[0])
    if not step.ended and not _died_running(log, step):
        return (
            "it never ended: a started step needs exactly one terminal event",
            [start, {"event": "step_completed", "step_id": step.id, "outcome": _OUTCOMES}],
        )
    if len(step.ended) > 1:
        outcomes = ", ".join(repr(e.outcome) for e in step.ended[:4])
        outcomes += ", …" if len(step.ended) > 4 else ""
        return (
            f"it ended {len(step.ended)} times ({outcomes}); a started step must end exactly once",
            [start, dump(step.ended[0])],
        )
    return None


def _ended_first(log: RunLog, step: Step) -> _Problem | None:
    if isinstance(log.entries[step.positions[0]], StepCompleted):
        return "it ended before it started", [dump(step.started[0]), dump(step.ended[0])]
    return None


def _names_differ(log: RunLog, step: Step) -> _Problem | None:
    start, end = dump(step.started[0]), dump(step.ended[0])
    keys = ("step_index", "turn_id", "session_id")
    mismatch = {k: start[k] for k in keys if k in start and end.get(k) != start[k]}
    if mismatch:
        return (
            "its terminal event names a different index, turn or session",
            [start, {**end, **mismatch}],
        )
    return None


def _ended_early(log: RunLog, step: Step) -> _Problem | None:
    started_at, ended_at = step.started[0].at, step.ended[0].at
    comparable = started_at is not None and type(started_at) is type(ended_at)
    if comparable and ended_at < started_at:  # type: ignore[operator]
        return (
            f"it completed at {ended_at} before it started at {started_at}",
            [dump(step.started[0]), {**dump(step.ended[0]), "at": f">= {started_at}"}],
        )
    return None


def _died_running(log: RunLog, step: Step) -> bool:
    """Whether ``step`` was still running when the process died: a ``resumed()``
    entry follows its start (a dead process logs no terminal event)."""
    return any(isinstance(e, Resumed) for e in log.entries[step.positions[0] + 1 :])


def _sequence_problem(previous: Step, step: Step) -> _Problem | None:
    """A step that follows ``previous`` in the same turn: a retry keeps the index, any
    other next step moves on."""
    index, before = step.index, previous.index
    if index is None or before is None:
        return None
    start = dump(step.started[0])
    if previous.outcome == "retrying" and index != before:
        return (
            f"it retries {previous.describe()} (which ended 'retrying') at step index "
            f"{index}; a retry must run at the same step index {before}",
            [{**start, "step_index": before}],
        )
    if previous.outcome not in ("retrying", None) and index <= before:
        return (
            f"it reuses step index {index} after {previous.describe()} ended "
            f"{previous.outcome!r}; only a retry (after 'retrying') keeps the index",
            [{**start, "step_index": before + 1}],
        )
    return None


def _turn_end_after(log: RunLog, step: Step) -> TurnEnded | None:
    """The end of ``step``'s turn logged after it (its turn id's, or the next one for a
    step logged without a turn id); ``None`` if the run resumed first (the process
    died, perhaps mid-backoff, and what the resumed run does is another story)."""
    for entry in log.entries[step.positions[-1] + 1 :]:
        if isinstance(entry, Resumed):
            return None
        if isinstance(entry, TurnEnded) and (
            step.turn_id is None or entry.turn_id in (None, step.turn_id)
        ):
            return entry
    return None


def _exhaustion_problem(log: RunLog, step: Step) -> _Problem | None:
    """A step that ended ``retrying`` and was followed by no retry before its turn ended
    was the last try of a retry loop that gave up: it must say ``failed`` (issue 20:
    "the last try ends failed" could not be asserted). A turn ended ``aborted`` is an
    interrupt during the backoff, which leaves the step as it was."""
    end = _turn_end_after(log, step) if step.outcome == "retrying" else None
    if end is None or end.outcome == "aborted":
        return None
    return (
        f"it ended 'retrying' but no retry followed before its turn ended {end.outcome!r}: "
        f"the last try of a retry loop that gives up must end 'failed' (or the turn "
        f"'aborted', when an interrupt stopped the backoff)",
        [dump(step.started[0]), {**dump(step.ended[0]), "outcome": "failed"}],
    )


def check_single_terminal_step(log: RunLog) -> None:
    """See :func:`~.assert_single_terminal_step`."""
    steps = log.steps()
    pairs = consecutive(log, steps)
    following = {step.id: previous for previous, step in pairs}
    retried = {previous.id for previous, _ in pairs}
    for step in steps:
        own = _own_problem(log, step)
        if own is not None:
            _fail_step(step, own, _step_entries(log, step))
        previous = following.get(step.id)
        sequence = None if previous is None else _sequence_problem(previous, step)
        if sequence is not None:
            _fail_step(step, sequence, [dump(step.started[0])])
        exhausted = None if step.id in retried else _exhaustion_problem(log, step)
        if exhausted is not None:
            _fail_step(step, exhausted, _step_entries(log, step))


def _fail_step(step: Step, problem: _Problem, logged: list[dict[str, Any]]) -> NoReturn:
    message, expected = problem
    fail(
        "assert_single_terminal_step",
        step.describe(),
        message,
        _unnamed(expected),
        _unnamed(logged),
    )
