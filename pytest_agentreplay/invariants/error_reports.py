"""The check about what an error record says: a model call answered with an HTTP error
(a 429 with ``retry-after``, a 401...) is reported with that status, ``retry-after`` and
request id, so that the user (or the scheduler) knows whether and when to try again,
and support can find the request.

Error records are tied to steps (the step they name, else the step that ended last
before them) and steps to model calls as :mod:`.pairing` says. See
:mod:`pytest_agentreplay.invariants` for what the check means.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, NoReturn

from ..neutral import ModelCall
from ..runlog.entries import ErrorReported, StepCompleted
from .errors import fail
from .pairing import calls_by_step, positions

if TYPE_CHECKING:
    from ..runlog.run_log import RunLog

__all__ = ["check_error_metadata_reported"]

_INVARIANT = "assert_error_metadata_reported"


@dataclass(frozen=True)
class _Failure:
    """A model call that got an HTTP error, where the log tells of it, and the error
    records that report it."""

    where: str
    call: ModelCall
    records: list[ErrorReported]
    must_report: bool
    """Whether a record is required: the runtime gave up on this call (its step failed)."""


def _retry_after(call: ModelCall) -> float | None:
    """The ``retry-after`` (seconds) the call's error response carried, when known (the
    fake's fault says; a recording's error body is not kept as a reply)."""
    fault = call.reply.fault if call.reply is not None else None
    return fault.retry_after if fault is not None and fault.kind == "http" else None


def _request_id(call: ModelCall) -> str | None:
    """The request id the call's error response carried, when known (the fake's fault
    names it; a recording keeps the header only as a placeholder)."""
    fault = call.reply.fault if call.reply is not None else None
    return fault.request_id if fault is not None and fault.kind == "http" else None


def _owner(log: RunLog, at: int, record: ErrorReported) -> str | None:
    """The step an error record belongs to: the one it names, else the step that ended
    last before it."""
    if record.step_id is not None:
        return record.step_id
    ended = [e for e in log.entries[:at] if isinstance(e, StepCompleted)]
    return ended[-1].step_id if ended else None


def _by_step(log: RunLog, calls: dict[str, ModelCall]) -> list[_Failure]:
    """The failures of a log whose steps line up with its calls: one per step whose call
    got an HTTP error, with the records tied to that step."""
    where = positions(log)
    owned: dict[str | None, list[ErrorReported]] = {}
    for record in log.of(ErrorReported):
        owned.setdefault(_owner(log, where[id(record)], record), []).append(record)
    return [
        _Failure(step.describe(), calls[step.id], owned.get(step.id, []), step.outcome == "failed")
        for step in log.steps()
        if step.id in calls and calls[step.id].outcome == "http_error"
    ]


def _by_calls(log: RunLog) -> list[_Failure]:
    """The failures of a log whose steps do not line up with its calls (an SDK retried
    by itself, a runtime that logs no steps): the last error record goes with the last
    call that did not complete, the one before with the one before, and so on."""
    broken = [c for c in log.model_calls if c.outcome != "completed"]
    records = log.of(ErrorReported)
    paired = list(zip(reversed(records), reversed(broken), strict=False))
    return [
        _Failure(f"model call #{call.index}", call, [record], False)
        for record, call in reversed(paired)
        if call.outcome == "http_error"
    ]


def _same_wait(reported: str | float | None, seconds: float) -> bool:
    """Whether the reported ``retry_after`` says the response's wait: in seconds, or the
    whole seconds of the header (OpenAI rounds up); an HTTP date is taken as said."""
    if reported is None:
        return False
    try:
        value = float(reported)
    except ValueError:
        return isinstance(reported, str) and "," in reported  # an HTTP-date
    return math.isclose(value, seconds) or math.isclose(value, math.ceil(seconds))


def _check_record(failure: _Failure, record: ErrorReported) -> None:
    call, wait, ident = failure.call, _retry_after(failure.call), _request_id(failure.call)
    checks = {
        "status": record.status == call.status,
        "retry-after": wait is None or _same_wait(record.retry_after, wait),
        "request id": ident is None or record.request_id == ident,
    }
    if all(checks.values()):
        return
    sent = f"HTTP {call.status}" + (f" with retry-after {wait:g}" if wait is not None else "")
    sent += f" (request id {ident})" if ident is not None else ""
    expected: dict[str, object] = {"status": call.status}
    logged: dict[str, object] = {"status": record.status}
    if wait is not None:
        expected["retry_after"], logged["retry_after"] = wait, record.retry_after
    if ident is not None:
        expected["request_id"], logged["request_id"] = ident, record.request_id
    missing = ", ".join(name for name, ok in checks.items() if not ok)
    fail(
        _INVARIANT,
        failure.where,
        f"model call #{call.index} got {sent}, but the error reported for it does not "
        f"carry the {missing} (kind {record.kind!r})",
        expected,
        logged,
        labels=("response", "reported"),
    )


def _check_reported(failure: _Failure) -> None:
    if failure.records or not failure.must_report:
        return
    fail(
        _INVARIANT,
        failure.where,
        f"it failed on model call #{failure.call.index} (HTTP {failure.call.status}) and "
        f"no error was reported for it",
        {"error": {"status": failure.call.status}},
        {"error": None},
    )


def check_error_metadata_reported(log: RunLog, *, min_errors: int = 1) -> None:
    """See :func:`~.assert_error_metadata_reported`."""
    calls = calls_by_step(log)
    failures = _by_step(log, calls) if calls is not None else _by_calls(log)
    checked = 0
    for failure in failures:
        _check_reported(failure)
        for record in failure.records:
            _check_record(failure, record)
            checked += 1
    if checked < min_errors:
        _fail_too_few(log, checked, min_errors)


def _fail_too_few(log: RunLog, found: int, wanted: int) -> NoReturn:
    statuses = [c.status for c in log.model_calls if c.outcome == "http_error"]
    fail(
        _INVARIANT,
        "the run",
        f"found {found} error record(s) of an HTTP error response, expected at least "
        f"{wanted} (HTTP errors served: {statuses or 'none'}; records: "
        f"{len(log.of(ErrorReported))})",
        {"checked": wanted},
        {"checked": found},
    )
