"""The checks about retries: a retried model call resends the input of the try it
repeats, and no text of an abandoned try reaches the saved context.

Retries are found from the steps (a step that ended ``retrying`` and the next step of
its turn, paired with model calls as :mod:`.pairing` says) or, in a log whose steps do
not line up with its calls, from the calls alone; see
:mod:`pytest_agentreplay.invariants` for what each check means.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from ..neutral import ModelCall
from ..runlog.delivered import delivered_text
from ..runlog.entries import MessageSaved, Step
from .errors import dump, fail
from .pairing import calls_by_step, consecutive, step_text

if TYPE_CHECKING:
    from ..runlog.run_log import RunLog

__all__ = [
    "check_no_partial_content_saved",
    "check_retries_resend_identical_input",
    "retry_pairs",
]


def retry_pairs(log: RunLog) -> list[tuple[ModelCall, ModelCall, str]]:
    """(first try, retry, where) for every retry in the log: by steps (a step that
    ended ``retrying`` and the next step in its turn) when steps and calls line up,
    else by calls (a call that follows a call that did not complete)."""
    calls = calls_by_step(log)
    if calls is not None:
        return [
            (calls[a.id], calls[b.id], f"{b.describe()}, the retry of {a.describe()}")
            for a, b in consecutive(log, log.steps())
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
    pairs = retry_pairs(log)
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


def _recovered(log: RunLog, step: Step, calls: dict[str, ModelCall] | None) -> str | None:
    """The text of the retry that finally completed ``step``'s index, if known: its model
    call's reply, else the text its terminal event reports."""
    chain = {a.id: b for a, b in consecutive(log, log.steps()) if a.outcome == "retrying"}
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
    for first, retry, where in retry_pairs(log):
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
    calls = calls_by_step(log)
    for step in log.steps():
        if step.outcome == "retrying":
            _check_saved(log, step, step_text(log, step, calls), _recovered(log, step, calls))
    _check_requests(log)
