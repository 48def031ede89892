"""The checks about model steps: one terminal event each, retries that resend the same
input, and no partial text of an abandoned try in the saved context.

Steps are paired with the model calls they made in order (one model step is one
model call); see :mod:`pytest_agentreplay.invariants` for what each check means.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from ..model import ModelCall
from ..runlog.delivered import delivered_text
from ..runlog.entries import (
    Delta,
    MessageSaved,
    Resumed,
    Step,
    StepCompleted,
    TurnEnded,
)
from .report import dump, fail

if TYPE_CHECKING:
    from ..runlog import RunLog

__all__ = [
    "check_no_partial_content_saved",
    "check_retries_resend_identical_input",
    "check_single_terminal_step",
]

_OUTCOMES = "completed, retrying, failed or interrupted"


def _turn_keys(log: RunLog, steps: list[Step]) -> dict[str, Any]:
    """Which turn each step belongs to: its turn id, else the stretch of the log between
    turn ends (and resumes) its first event falls in."""
    bounds = [i for i, e in enumerate(log.entries) if isinstance(e, (TurnEnded, Resumed))]
    keys: dict[str, Any] = {}
    for step in steps:
        first = step.positions[0] if step.positions else 0
        keys[step.id] = step.turn_id if step.turn_id is not None else sum(b < first for b in bounds)
    return keys


def _consecutive(log: RunLog, steps: list[Step]) -> list[tuple[Step, Step]]:
    """Pairs (step, the next step started in the same turn)."""
    keys = _turn_keys(log, steps)
    last: dict[Any, Step] = {}
    pairs: list[tuple[Step, Step]] = []
    for step in sorted((s for s in steps if s.started), key=lambda s: s.positions[0]):
        previous = last.get(keys[step.id])
        if previous is not None:
            pairs.append((previous, step))
        last[keys[step.id]] = step
    return pairs


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


def check_single_terminal_step(log: RunLog) -> None:
    """See :func:`~.assert_single_terminal_step`."""
    steps = log.steps()
    following = {step.id: previous for previous, step in _consecutive(log, steps)}
    for step in steps:
        own = _own_problem(log, step)
        if own is not None:
            _fail_step(step, own, _step_entries(log, step))
        previous = following.get(step.id)
        sequence = None if previous is None else _sequence_problem(previous, step)
        if sequence is not None:
            _fail_step(step, sequence, [dump(step.started[0])])


def _fail_step(step: Step, problem: _Problem, logged: list[dict[str, Any]]) -> NoReturn:
    message, expected = problem
    fail(
        "assert_single_terminal_step",
        step.describe(),
        message,
        _unnamed(expected),
        _unnamed(logged),
    )


# --- retries resend identical input -------------------------------------------------------


def _call_of(log: RunLog) -> dict[str, ModelCall] | None:
    """Step id → its model call, when the log has one started step per model call
    (one model step is one model call: the k-th step started made the k-th call)."""
    started = sorted((s for s in log.steps() if s.started), key=lambda s: s.positions[0])
    if not started or len(started) != len(log.model_calls):
        return None
    return {step.id: call for step, call in zip(started, log.model_calls, strict=True)}


def _retry_pairs(log: RunLog) -> list[tuple[ModelCall, ModelCall, str]]:
    """(first try, retry, where) for every retry in the log: by steps (a step that
    ended ``retrying`` and the next step in its turn) when steps and calls line up,
    else by calls (a call that follows a call that did not complete)."""
    calls = _call_of(log)
    if calls is not None:
        return [
            (calls[a.id], calls[b.id], f"{b.describe()}, the retry of {a.describe()}")
            for a, b in _consecutive(log, log.steps())
            if a.outcome == "retrying"
        ]
    return [
        (a, b, f"model call #{b.index}, the retry of model call #{a.index} ({a.outcome})")
        for a, b in zip(log.model_calls, log.model_calls[1:], strict=False)
        if a.outcome != "completed"
    ]


def _without(body: dict[str, Any], ignore: Sequence[str]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in ignore}


def check_retries_resend_identical_input(
    log: RunLog, *, ignore: Sequence[str] = (), min_retries: int = 1
) -> None:
    """See :func:`~.assert_retries_resend_identical_input`."""
    if not log.model_calls:
        fail(
            "assert_retries_resend_identical_input",
            "the run",
            "the log has no model calls to compare; build it with RunLog.from_fake(...) "
            "or RunLog.from_cassette(...), or watch() the model",
        )
    pairs = _retry_pairs(log)
    if len(pairs) < min_retries:
        _fail_too_few_retries(log, len(pairs), min_retries)
    for first, retry, where in pairs:
        _check_resent(first, retry, where, ignore)


def _fail_too_few_retries(log: RunLog, found: int, wanted: int) -> NoReturn:
    outcomes = [c.outcome for c in log.model_calls]
    fail(
        "assert_retries_resend_identical_input",
        "the run",
        f"found {found} retr{'y' if found == 1 else 'ies'}, expected at least {wanted}",
        {"retries": wanted},
        {"retries": found},
        lines=[f"model call outcomes: {outcomes}"],
    )


def _check_resent(first: ModelCall, retry: ModelCall, where: str, ignore: Sequence[str]) -> None:
    """The retry sent the body of the try it repeats (keys in ``ignore`` aside)."""
    a, b = _without(first.request.raw, ignore), _without(retry.request.raw, ignore)
    if a != b:
        fail(
            "assert_retries_resend_identical_input",
            where,
            f"the retry (model call #{retry.index}) sent a different request body "
            f"than the try it repeats (model call #{first.index})",
            a,
            b,
            labels=("first try", "retry"),
        )


# --- partial content ---------------------------------------------------------------------


def _partial(log: RunLog, step: Step, calls: dict[str, ModelCall] | None) -> str:
    """The text an abandoned step had received: its terminal event's, its deltas', or
    what its model call delivered before it broke."""
    if step.text:
        return step.text
    deltas = "".join(d.text for d in log.of(Delta) if d.step_id == step.id)
    if deltas:
        return deltas
    return delivered_text(calls[step.id]) if calls and step.id in calls else ""


def _recovered(log: RunLog, step: Step, calls: dict[str, ModelCall] | None) -> str | None:
    """The text of the retry that finally completed ``step``'s index, if known: its model
    call's reply, else the text its terminal event reports."""
    chain = {a.id: b for a, b in _consecutive(log, log.steps()) if a.outcome == "retrying"}
    current = chain.get(step.id)
    while current is not None and current.outcome == "retrying":
        current = chain.get(current.id)
    if current is None or current.outcome != "completed":
        return None
    if calls and current.id in calls:  # what the model sent beats what the runtime says
        return delivered_text(calls[current.id])
    return current.text


def _leaks(text: str, partial: str, recovered: str | None) -> bool:
    """Whether ``text`` holds ``partial`` other than as part of the recovered text.
    Without the recovered text, only a saved partial or a doubled prefix counts."""
    if not partial.strip():
        return False
    if recovered is None:
        return text == partial or text.count(partial) > 1
    return partial in text.replace(recovered, "\x00") if recovered else partial in text


def _saved_answers(log: RunLog) -> list[tuple[int, MessageSaved]]:
    """The assistant messages saved (with their positions in the log), but those of a
    step that *failed* or was interrupted: their partial text is kept on purpose, before
    the error turn; only the abandoned tries' text must not be saved."""
    kept = {s.id for s in log.steps() if s.outcome in ("failed", "interrupted")}
    return [
        (position, entry)
        for position, entry in enumerate(log.entries)
        if isinstance(entry, MessageSaved)
        and entry.role == "assistant"
        and entry.kind == "message"
        and not (entry.step_id is not None and entry.step_id in kept)
    ]


def _check_saved(log: RunLog, step: Step, partial: str, recovered: str | None) -> None:
    where = f"{step.describe()} (abandoned: ended 'retrying')"
    for position, entry in _saved_answers(log):
        if entry.step_id == step.id:
            fail(
                "assert_no_partial_content_saved",
                where,
                "a saved message belongs to the abandoned step; its text is partial",
                {"saved from the retried step": None},
                {"saved": dump(entry)},
            )
        if position > step.positions[-1] and _leaks(entry.text, partial, recovered):
            fail(
                "assert_no_partial_content_saved",
                where,
                f"its partial text {partial!r} leaked into a saved message",
                {"text": recovered if recovered is not None else "(the recovered text only)"},
                {"text": entry.text},
                labels=("expected", "saved"),
            )


def _check_requests(log: RunLog) -> None:
    """What a retry sends the model is saved context too: it must not carry the text the
    broken try delivered (found as :func:`assert_retries_resend_identical_input` finds
    retries)."""
    recovered = [delivered_text(c) for c in log.model_calls if c.outcome == "completed"]
    for first, retry, where in _retry_pairs(log):
        partial = "" if first.outcome == "completed" else delivered_text(first)
        if not partial.strip():
            continue
        for message in retry.request.messages:
            text = message.text
            if message.role == "assistant" and partial in _strip_all(text, recovered):
                fail(
                    "assert_no_partial_content_saved",
                    where,
                    f"the retry (model call #{retry.index}) sends the partial text model "
                    f"call #{first.index} delivered before it ended {first.outcome!r}",
                    {"text": _strip_all(text, [partial]).strip("\x00") or "(none)"},
                    {"text": text},
                    labels=("expected", "sent"),
                )


def _strip_all(text: str, pieces: list[str]) -> str:
    for piece in sorted((p for p in pieces if p), key=len, reverse=True):
        text = text.replace(piece, "\x00")
    return text


def check_no_partial_content_saved(log: RunLog) -> None:
    """See :func:`~.assert_no_partial_content_saved`."""
    calls = _call_of(log)
    for step in log.steps():
        if step.outcome == "retrying":
            _check_saved(log, step, _partial(log, step, calls), _recovered(log, step, calls))
    _check_requests(log)
