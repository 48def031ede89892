"""How the checks line a run log up: which turn a step belongs to, which step follows
which in its turn, which model call a step made, and what text a step had received.

One model step is one model call: when the log has exactly one started step per model
call, the *k*-th step started made the *k*-th call (:func:`calls_by_step`); when the
counts differ (an SDK that retried by itself, a runtime that logs no steps) the checks
that need calls fall back to the calls alone. Several checks share these readings, so
they live here rather than in any one check's module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..neutral import ModelCall
from ..runlog.delivered import delivered_text
from ..runlog.entries import Delta, Resumed, Step, TurnEnded

if TYPE_CHECKING:
    from ..runlog.run_log import RunLog

__all__ = ["calls_by_step", "consecutive", "positions", "step_text", "turn_keys"]


def turn_keys(log: RunLog, steps: list[Step]) -> dict[str, Any]:
    """Which turn each step belongs to: its turn id, else the stretch of the log between
    turn ends (and resumes) its first event falls in."""
    bounds = [i for i, e in enumerate(log.entries) if isinstance(e, (TurnEnded, Resumed))]
    keys: dict[str, Any] = {}
    for step in steps:
        first = step.positions[0] if step.positions else 0
        keys[step.id] = step.turn_id if step.turn_id is not None else sum(b < first for b in bounds)
    return keys


def consecutive(log: RunLog, steps: list[Step]) -> list[tuple[Step, Step]]:
    """Pairs (step, the next step started in the same turn)."""
    keys = turn_keys(log, steps)
    last: dict[Any, Step] = {}
    pairs: list[tuple[Step, Step]] = []
    for step in sorted((s for s in steps if s.started), key=lambda s: s.positions[0]):
        previous = last.get(keys[step.id])
        if previous is not None:
            pairs.append((previous, step))
        last[keys[step.id]] = step
    return pairs


def calls_by_step(log: RunLog) -> dict[str, ModelCall] | None:
    """Step id → its model call, when the log has one started step per model call
    (one model step is one model call: the *k*-th step started made the *k*-th call)."""
    started = sorted((s for s in log.steps() if s.started), key=lambda s: s.positions[0])
    if not started or len(started) != len(log.model_calls):
        return None
    return {step.id: call for step, call in zip(started, log.model_calls, strict=True)}


def step_text(log: RunLog, step: Step, calls: dict[str, ModelCall] | None) -> str:
    """The text a step had received: its terminal event's, else its deltas', else what
    its model call delivered before it ended (the partial text, for a broken step)."""
    if step.text:
        return step.text
    deltas = "".join(d.text for d in log.of(Delta) if d.step_id == step.id)
    if deltas:
        return deltas
    return delivered_text(calls[step.id]) if calls and step.id in calls else ""


def positions(log: RunLog) -> dict[int, int]:
    """Where each entry object is in the log (by identity: equal entries logged twice
    are two entries)."""
    return {id(entry): position for position, entry in enumerate(log.entries)}
