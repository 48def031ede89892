"""The checks about what a run leaves behind: tool calls answered, failed turns saved
as error turns, write-ahead intents re-issued once, nothing sent to the network.

See :mod:`pytest_agentreplay.invariants` for what each check means.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..model import ModelCall, ToolCall, ToolResult
from ..runlog import (
    Egress,
    ErrorReported,
    IntentCompleted,
    IntentIssued,
    MessageSaved,
    Resumed,
    RunLog,
    StepCompleted,
    ToolCalled,
    ToolResulted,
    TurnEnded,
)
from ..runlog.adapters.calls import handle_egress
from ..transport.router import active_router
from .report import dump, fail

__all__ = [
    "check_dangling_intent_reissued",
    "check_every_tool_call_answered",
    "check_no_live_calls",
    "check_terminal_error_turn",
]


def _answers(count: int) -> str:
    return {0: "unanswered", 1: "answered once"}.get(count, f"answered {count} times")


def _tool_where(log: RunLog, call: ToolCalled) -> str:
    step = log.step(call.step_id) if call.step_id is not None else None
    named = f"tool call {call.call_id!r} ({call.name})"
    return f"{step.describe()}, {named}" if step is not None else named


def _agent_tool_problem(log: RunLog) -> None:
    calls, results = log.of(ToolCalled), log.of(ToolResulted)
    answered = Counter(r.call_id for r in results)
    made = Counter(c.call_id for c in calls)
    expected = {f"{c.call_id} ({c.name})": "answered once" for c in calls}
    logged = {f"{c.call_id} ({c.name})": _answers(answered[c.call_id]) for c in calls}
    for call in calls:
        if made[call.call_id] > 1:
            fail(
                "assert_every_tool_call_answered",
                _tool_where(log, call),
                f"the call id was used by {made[call.call_id]} tool calls",
                expected,
                logged,
            )
        if answered[call.call_id] != 1:
            fail(
                "assert_every_tool_call_answered",
                _tool_where(log, call),
                f"it was {_answers(answered[call.call_id])}; every tool call needs exactly "
                f"one result (outcome 'interrupted' when the run stopped first)",
                expected,
                logged,
            )
    for result in results:
        if result.call_id not in made:
            fail(
                "assert_every_tool_call_answered",
                f"tool result {result.call_id!r}",
                "it answers a tool call that was never made",
                {},
                {result.call_id: dump(result)},
            )


def _request_tool_problem(call: ModelCall) -> None:
    pending: dict[str, str] = {}
    for message in call.request.messages:
        for part in message.parts:
            if isinstance(part, ToolCall) and part.id is not None:
                pending[part.id] = part.name
            elif isinstance(part, ToolResult):
                pending.pop(part.tool_call_id, None)
    if pending:
        first = next(iter(pending))
        fail(
            "assert_every_tool_call_answered",
            f"model call #{call.index}, tool call {first!r} ({pending[first]})",
            "the request sent to the model carries tool calls with no tool result (the "
            "provider would reject it)",
            {f"{k} ({v})": "answered once" for k, v in pending.items()},
            {f"{k} ({v})": "unanswered" for k, v in pending.items()},
        )


def check_every_tool_call_answered(log: RunLog) -> None:
    """See :func:`~.assert_every_tool_call_answered`."""
    _agent_tool_problem(log)
    for call in log.model_calls:
        _request_tool_problem(call)


# --- error turns -------------------------------------------------------------------------


def _turn_entries(log: RunLog, turn: str | None) -> list[Any]:
    if turn is None:
        return list(log.entries)
    steps = {s.id for s in log.steps() if s.turn_id == turn}
    return [
        e
        for e in log.entries
        if getattr(e, "turn_id", None) == turn or getattr(e, "step_id", None) in steps
    ]


def _view(message: MessageSaved) -> dict[str, Any]:
    return {"role": message.role, "kind": message.kind, "text": message.text}


def _error_where(log: RunLog, turn: str | None, entries: list[Any]) -> str:
    step_ids = [e.step_id for e in entries if isinstance(e, StepCompleted)]
    step = log.step(step_ids[-1]) if step_ids else None
    named = "the run" if turn is None else f"turn {turn!r}"
    return f"{named}, {step.describe()}" if step is not None else named


def check_terminal_error_turn(
    log: RunLog, *, turn_id: Any = None, error_kind: str | None = None
) -> None:
    """See :func:`~.assert_terminal_error_turn`."""
    turns = log.turns()
    turn = str(turn_id) if turn_id is not None else (turns[-1] if turns else None)
    entries = _turn_entries(log, turn)
    where = _error_where(log, turn, entries)
    messages = [e for e in entries if isinstance(e, MessageSaved)]
    errors = [m for m in messages if m.kind == "error"]
    reported = [e for e in entries if isinstance(e, ErrorReported)]
    placeholder = {
        "role": "assistant",
        "kind": "error",
        "text": reported[-1].message if reported else "(the error)",
    }
    logged = [_view(m) for m in messages]
    if not errors:
        fail(
            "assert_terminal_error_turn",
            where,
            "no error turn was saved: the turn's saved messages end without an assistant "
            "message of kind 'error'",
            [*logged, placeholder],
            logged,
            labels=("expected", "saved"),
        )
    first_error = next(i for i, m in enumerate(messages) if m.kind == "error")
    expected = [_view(m) for m in messages[:first_error]] + [_view(errors[0])]
    if len(errors) > 1 or messages[-1] is not errors[0]:
        fail(
            "assert_terminal_error_turn",
            where,
            "the error turn is not the last message saved for the turn (exactly one error "
            "message, after any partial text)",
            expected,
            logged,
            labels=("expected", "saved"),
        )
    if errors[0].role != "assistant":
        fail(
            "assert_terminal_error_turn",
            where,
            f"the error turn is saved with role {errors[0].role!r}, not 'assistant'",
            expected,
            logged,
            labels=("expected", "saved"),
        )
    for ended in (e for e in entries if isinstance(e, TurnEnded) and e.outcome == "completed"):
        fail(
            "assert_terminal_error_turn",
            where,
            "the failed turn also reported success (turn_ended 'completed')",
            {**dump(ended), "outcome": "failed"},
            dump(ended),
        )
    if error_kind is not None and (not reported or reported[-1].kind != error_kind):
        fail(
            "assert_terminal_error_turn",
            where,
            f"the error is classified {reported[-1].kind!r}"
            if reported
            else "no error was reported for the turn",
            {"kind": error_kind},
            {"kind": reported[-1].kind if reported else None},
        )


# --- write-ahead intents -----------------------------------------------------------------


def _intent_timeline(log: RunLog, key: str) -> list[dict[str, Any]]:
    return [
        {"event": e.event} if isinstance(e, Resumed) else {"event": e.event, "key": e.key}
        for e in log.entries
        if isinstance(e, Resumed)
        or (isinstance(e, (IntentIssued, IntentCompleted)) and e.key == key)
    ]


def _intent_where(log: RunLog, intent: IntentIssued) -> str:
    step = log.step(intent.step_id) if intent.step_id is not None else None
    named = f"intent {intent.key!r}"
    return f"{step.describe()}, {named}" if step is not None else named


def check_dangling_intent_reissued(log: RunLog, *, key: Any = None) -> None:
    """See :func:`~.assert_dangling_intent_reissued`."""
    entries = log.entries
    cut = next((i for i, e in enumerate(entries) if isinstance(e, Resumed)), None)
    if cut is None:
        fail(
            "assert_dangling_intent_reissued",
            "the run",
            "the log has no resume: call log.resumed() when the runtime restarts from its store",
            [{"event": "resumed"}],
            [],
        )
    before = [e for e in entries[:cut] if isinstance(e, (IntentIssued, IntentCompleted))]
    done = {e.key for e in before if isinstance(e, IntentCompleted)}
    issued: dict[str, IntentIssued] = {}
    for entry in before:
        if isinstance(entry, IntentIssued):
            issued.setdefault(entry.key, entry)
    dangling = [i for k, i in issued.items() if k not in done and (key is None or k == str(key))]
    if not dangling:
        fail(
            "assert_dangling_intent_reissued",
            "the resume",
            "no intent was left dangling when the run broke: nothing to re-issue",
            {"dangling": [str(key)] if key is not None else ["(an intent)"]},
            {"dangling": []},
        )
    after = entries[cut + 1 :]
    for intent in dangling:
        _check_reissue(log, intent, after)
    for k in sorted(done):
        again = [e for e in after if isinstance(e, IntentIssued) and e.key == k]
        if again:
            fail(
                "assert_dangling_intent_reissued",
                _intent_where(log, again[0]),
                "it completed before the run broke but was issued again on resume",
                _expected_done(k),
                _intent_timeline(log, k),
            )


def _expected_done(key: str) -> list[dict[str, Any]]:
    return [
        {"event": "intent", "key": key},
        {"event": "intent_completed", "key": key},
        {"event": "resumed"},
    ]


def _check_reissue(log: RunLog, intent: IntentIssued, after: list[Any]) -> None:
    key = intent.key
    expected = [
        {"event": "intent", "key": key},
        {"event": "resumed"},
        {"event": "intent", "key": key},
        {"event": "intent_completed", "key": key},
    ]
    timeline = _intent_timeline(log, key)
    reissued = [i for i, e in enumerate(after) if isinstance(e, IntentIssued) and e.key == key]
    completed = [i for i, e in enumerate(after) if isinstance(e, IntentCompleted) and e.key == key]
    where = _intent_where(log, intent)
    if len(reissued) != 1:
        fail(
            "assert_dangling_intent_reissued",
            where,
            f"it was left dangling and re-issued {len(reissued)} times on resume; it must "
            f"be re-issued exactly once",
            expected,
            timeline,
        )
    if len(completed) != 1 or completed[0] < reissued[0]:
        fail(
            "assert_dangling_intent_reissued",
            where,
            f"after its re-issue it completed {len(completed)} times; it must complete "
            f"exactly once, after the re-issue",
            expected,
            timeline,
        )


# --- egress ------------------------------------------------------------------------------


def _egress(source: Any) -> Egress:
    if source is None:
        source = active_router()
        if source is None:
            raise ValueError(
                "assert_no_live_calls() with no argument needs an active "
                "interception scope (a fixture, the marker or a FakeModel "
                "block); pass the agentreplay handle or a RunLog instead"
            )
    if isinstance(source, RunLog):
        source.refresh()
        if source.egress is None:
            raise ValueError(
                "this run log has no egress ledger: build it with "
                "RunLog.from_cassette(agentreplay), or pass the handle"
            )
        return source.egress
    if isinstance(source, Egress):
        return source
    if hasattr(source, "interactions") and hasattr(source, "calls"):
        return handle_egress(source)
    return Egress(live_calls=list(source.live_calls), blocked=list(source.blocked))


def check_no_live_calls(source: Any = None, *, all_played: bool = False) -> None:
    """See :func:`~.assert_no_live_calls`."""
    egress = _egress(source)
    if egress.live_calls:
        fail(
            "assert_no_live_calls",
            f"live call #1: {egress.live_calls[0]}",
            f"{len(egress.live_calls)} request(s) went out to the network instead of being "
            f"answered by a fake model or from the recording",
            {"live_calls": []},
            {"live_calls": egress.live_calls},
        )
    if egress.blocked:
        fail(
            "assert_no_live_calls",
            f"blocked request #1: {egress.blocked[0]}",
            f"the run tried to reach the network {len(egress.blocked)} time(s) (blocked, "
            f"but the agent went on)",
            {"blocked": []},
            {"blocked": egress.blocked},
        )
    if all_played and egress.unplayed:
        fail(
            "assert_no_live_calls",
            f"recorded interaction #{egress.unplayed[0]}",
            f"{len(egress.unplayed)} recorded interaction(s) were never played",
            {"unplayed": []},
            {"unplayed": egress.unplayed},
        )
