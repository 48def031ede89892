"""The check about failed turns: a turn that fails is saved as a terminal error turn,
with the user's question and the text the user already saw kept before the error.

See :mod:`pytest_agentreplay.invariants` for what the check means.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from ..neutral import ModelCall
from ..runlog.entries import ErrorReported, MessageSaved, Step, StepCompleted, TurnEnded
from .errors import dump, fail
from .pairing import calls_by_step, positions, step_text

if TYPE_CHECKING:
    from ..runlog.run_log import RunLog

__all__ = ["check_terminal_error_turn"]

_INVARIANT = "assert_terminal_error_turn"
_PREVIEW = 60
"""At most this many characters of a text quoted in a failure message."""


def _turn_entries(log: RunLog, turn: str | None) -> list[Any]:
    if turn is None:
        return list(log.entries)
    steps = {s.id for s in log.steps() if s.turn_id == turn}
    return [
        e
        for e in log.entries
        if getattr(e, "turn_id", None) == turn or getattr(e, "step_id", None) in steps
    ]


def _untagged_questions(log: RunLog, entries: list[Any]) -> list[MessageSaved]:
    """User messages saved without a turn id right before the turn's first entry: a
    runtime that tags only what the model side produced did save the question."""
    where = positions(log)
    first = min((where[id(e)] for e in entries), default=len(log.entries))
    found: list[MessageSaved] = []
    for entry in reversed(log.entries[:first]):
        if getattr(entry, "turn_id", None) is not None:
            break  # the previous turn's
        if isinstance(entry, MessageSaved) and entry.role == "user" and entry.kind == "message":
            found.insert(0, entry)
    return found


def _view(message: MessageSaved) -> dict[str, Any]:
    return {"role": message.role, "kind": message.kind, "text": message.text}


def _preview(text: str) -> str:
    return text if len(text) <= _PREVIEW else text[: _PREVIEW - 1] + "…"


def _error_where(log: RunLog, turn: str | None, entries: list[Any]) -> str:
    step_ids = [e.step_id for e in entries if isinstance(e, StepCompleted)]
    step = log.step(step_ids[-1]) if step_ids else None
    named = "the run" if turn is None else f"turn {turn!r}"
    return f"{named}, {step.describe()}" if step is not None else named


def _asked(call: ModelCall | None) -> str | None:
    """The user's question a model call carried: its last user message with text (after
    a tool round, Anthropic's last user message holds only tool results)."""
    if call is None:
        return None
    texts = [m.text for m in call.request.messages if m.role == "user" and m.text]
    return texts[-1] if texts else None


@dataclass(frozen=True)
class _FailedTurn:
    """What a failed turn left in the log, as :func:`check_terminal_error_turn` reads it."""

    where: str
    entries: list[Any]
    messages: list[MessageSaved]
    reported: list[ErrorReported]
    failed: Step | None
    """The turn's last step that ended ``failed``."""
    partial: str
    """The text that step had received before the error."""
    question: str | None
    """The question the turn's model call carried, when the log pairs steps with calls."""
    saved_after_failure: list[MessageSaved]
    """The messages of the turn saved after the failed step started."""

    @property
    def errors(self) -> list[MessageSaved]:
        return [m for m in self.messages if m.kind == "error"]

    @property
    def saved(self) -> list[dict[str, Any]]:
        return [_view(m) for m in self.messages]

    @property
    def expected(self) -> list[dict[str, Any]]:
        """The saved messages up to the first error turn: what should have been saved."""
        first = next(i for i, m in enumerate(self.messages) if m.kind == "error")
        return [_view(m) for m in self.messages[: first + 1]]

    def fail_saved(self, problem: str, expected: list[dict[str, Any]]) -> NoReturn:
        fail(_INVARIANT, self.where, problem, expected, self.saved, labels=("expected", "saved"))


def _failed_turn(log: RunLog, turn_id: Any) -> _FailedTurn:
    """The turn ``turn_id`` (default: the last turn of the log, else the whole run)."""
    turns = log.turns()
    turn = str(turn_id) if turn_id is not None else (turns[-1] if turns else None)
    entries = _turn_entries(log, turn)
    messages = [e for e in entries if isinstance(e, MessageSaved)]
    if turn is not None:
        messages = [*_untagged_questions(log, entries), *messages]
    in_turn = [s for s in log.steps() if turn is None or s.turn_id == turn]
    failed = next((s for s in reversed(in_turn) if s.outcome == "failed"), None)
    calls = calls_by_step(log)
    first_call = calls.get(in_turn[0].id) if calls and in_turn else None
    where = positions(log)
    return _FailedTurn(
        where=_error_where(log, turn, entries),
        entries=entries,
        messages=messages,
        reported=[e for e in entries if isinstance(e, ErrorReported)],
        failed=failed,
        partial=step_text(log, failed, calls) if failed is not None else "",
        question=_asked(first_call),
        saved_after_failure=[
            m for m in messages if failed is not None and where[id(m)] > failed.positions[0]
        ],
    )


def _error_turn_saved(turn: _FailedTurn) -> None:
    """An assistant message of kind ``error`` was saved for the turn."""
    if turn.errors:
        return
    message = turn.reported[-1].message if turn.reported else "(the error)"
    placeholder = {"role": "assistant", "kind": "error", "text": message}
    turn.fail_saved(
        "no error turn was saved: the turn's saved messages end without an assistant "
        "message of kind 'error'",
        [*turn.saved, placeholder],
    )


def _error_turn_last(turn: _FailedTurn) -> None:
    """It is the turn's only error message, and its last message."""
    errors = turn.errors
    if len(errors) > 1 or turn.messages[-1] is not errors[0]:
        turn.fail_saved(
            "the error turn is not the last message saved for the turn (exactly one error "
            "message, after any partial text)",
            turn.expected,
        )


def _error_turn_role(turn: _FailedTurn) -> None:
    """It is saved as the assistant's."""
    role = turn.errors[0].role
    if role != "assistant":
        turn.fail_saved(
            f"the error turn is saved with role {role!r}, not 'assistant'", turn.expected
        )


def _question_kept(turn: _FailedTurn) -> None:
    """The user's question stays in the conversation (issue 20: the docs named "the
    user's question vanishes" as a failure this invariant exists for, and it was never
    checked): a runtime that saves the question only with its answer loses it here."""
    if any(m.role == "user" and m.kind == "message" for m in turn.messages):
        return
    asked = {"role": "user", "kind": "message", "text": turn.question or "(the question)"}
    turn.fail_saved(
        "the user's question vanished: no user message was saved for the failed turn "
        "(save it when the turn starts, not only with its answer)",
        [asked, *turn.saved],
    )


def _partial_kept(turn: _FailedTurn) -> None:
    """The text the failed step streamed before the error is saved before the error turn
    (issue 20: the order was checked, never that the text was saved at all)."""
    partial = turn.partial.strip()
    if not partial or turn.failed is None:
        return
    kept = "".join(
        m.text for m in turn.saved_after_failure if m.role == "assistant" and m.kind == "message"
    )
    if partial in kept:
        return
    shown = {"role": "assistant", "kind": "message", "text": turn.partial}
    named = turn.failed.describe()
    named = "the failed step" if named in turn.where else named
    turn.fail_saved(
        f"{named} had streamed {_preview(turn.partial)!r} when it failed, "
        f"but no message saved for the turn keeps it: the user saw that text, so it is "
        f"saved before the error turn (keep_partial=False if dropping it is by design)",
        [*turn.saved[:-1], shown, turn.saved[-1]],
    )


def _no_success_event(turn: _FailedTurn) -> None:
    """The failed turn did not also report success."""
    for ended in turn.entries:
        if isinstance(ended, TurnEnded) and ended.outcome == "completed":
            fail(
                _INVARIANT,
                turn.where,
                "the failed turn also reported success (turn_ended 'completed')",
                {**dump(ended), "outcome": "failed"},
                dump(ended),
            )


def _error_kind_is(turn: _FailedTurn, kind: str) -> None:
    """The last error reported in the turn is classified ``kind``."""
    last = turn.reported[-1].kind if turn.reported else None
    if last == kind:
        return
    fail(
        _INVARIANT,
        turn.where,
        f"the error is classified {last!r}"
        if turn.reported
        else "no error was reported for the turn",
        {"kind": kind},
        {"kind": last},
    )


def check_terminal_error_turn(
    log: RunLog, *, turn_id: Any = None, error_kind: str | None = None, keep_partial: bool = True
) -> None:
    """See :func:`~.assert_terminal_error_turn`."""
    turn = _failed_turn(log, turn_id)
    for check in (_error_turn_saved, _error_turn_last, _error_turn_role, _question_kept):
        check(turn)
    if keep_partial:
        _partial_kept(turn)
    _no_success_event(turn)
    if error_kind is not None:
        _error_kind_is(turn, error_kind)
