"""The check about interrupts: once the user pressed stop, the turn makes no further
model call — not the retry its backoff was waiting for, not the next step.

The interrupt is the ``interrupt_requested`` entry, logged when stop is pressed. It
notes how many model calls the watched fakes or cassette had received by then, so that
a call made after it is found even when the runtime logged no step for it. See
:mod:`pytest_agentreplay.invariants` for what the check means.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..runlog.entries import InterruptRequested, Step, StepStarted, TurnEnded
from .errors import dump, fail

if TYPE_CHECKING:
    from ..runlog.run_log import RunLog

__all__ = ["check_no_model_call_after_interrupt"]

_INVARIANT = "assert_no_model_call_after_interrupt"


def _turn_of(log: RunLog, at: int, entry: InterruptRequested) -> str | None:
    """The turn an interrupt stops: the one it names, else the turn of the step started
    last before it."""
    if entry.turn_id is not None:
        return entry.turn_id
    started = [e for e in log.entries[:at] if isinstance(e, StepStarted)]
    return started[-1].turn_id if started else None


def _turn_end(log: RunLog, at: int, turn: str | None) -> int:
    """Where the stopped turn ends after the interrupt (the end of the log if it never
    says)."""
    for position in range(at + 1, len(log.entries)):
        entry = log.entries[position]
        if isinstance(entry, TurnEnded) and (turn is None or entry.turn_id in (None, turn)):
            return position
    return len(log.entries)


class _Stopped:
    """One interrupt: where it is in the log, the turn it stops and where that turn ends."""

    def __init__(self, log: RunLog, at: int, entry: InterruptRequested) -> None:
        self.at, self.entry = at, entry
        self.turn = _turn_of(log, at, entry)
        self.end = _turn_end(log, at, self.turn)

    def holds(self, step: Step) -> bool:
        """Whether ``step`` belongs to the stopped turn (by turn id, else by position)."""
        if step.turn_id is not None and self.turn is not None:
            return step.turn_id == self.turn
        return step.positions[0] < self.end

    def later(self, log: RunLog) -> list[Step]:
        """The steps started after the interrupt."""
        return [s for s in log.steps() if s.started and s.positions[0] > self.at]

    @property
    def named(self) -> str:
        return "the interrupt" + (f" of turn {self.turn!r}" if self.turn is not None else "")


def _check_steps(log: RunLog, stopped: _Stopped) -> None:
    """No step of the stopped turn starts after the interrupt."""
    for step in stopped.later(log):
        if stopped.holds(step):
            fail(
                _INVARIANT,
                step.describe(),
                f"it started after {stopped.named} was requested: a stopped turn makes no "
                f"further model call (a backoff, or the wait for the next step, must end "
                f"at the interrupt)",
                [dump(stopped.entry)],
                [dump(stopped.entry), dump(step.started[0])],
            )


def _check_calls(log: RunLog, stopped: _Stopped) -> None:
    """No model call goes out after the interrupt but those of later turns' steps."""
    before = stopped.entry.calls_before
    if before is None:
        return
    later = log.model_calls[before:]
    others = sum(not stopped.holds(s) for s in stopped.later(log))
    if len(later) <= others:
        return
    fail(
        _INVARIANT,
        f"model call #{later[others].index}",
        f"{len(later) - others} model call(s) went out after {stopped.named} was requested "
        f"({before} had gone out before it): a stopped turn makes no further "
        f"model call",
        {"calls after the interrupt": others},
        {"calls after the interrupt": len(later)},
    )


def check_no_model_call_after_interrupt(log: RunLog) -> None:
    """See :func:`~.assert_no_model_call_after_interrupt`."""
    interrupts = [(i, e) for i, e in enumerate(log.entries) if isinstance(e, InterruptRequested)]
    if not interrupts:
        fail(
            _INVARIANT,
            "the run",
            "the log has no interrupt: call log.interrupt_requested(turn_id) when the user "
            "presses stop",
            [{"event": "interrupt_requested"}],
            [],
        )
    for at, entry in interrupts:
        stopped = _Stopped(log, at, entry)
        _check_steps(log, stopped)
        _check_calls(log, stopped)
