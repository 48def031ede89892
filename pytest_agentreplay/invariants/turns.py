"""The checks about what a run leaves behind: tool calls answered, write-ahead intents
re-issued once, nothing sent to the network (failed turns: :mod:`.error_turns`).

See :mod:`pytest_agentreplay.invariants` for what each check means.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ..neutral import ModelCall, ToolCall, ToolResult
from ..runlog.entries import (
    Egress,
    IntentCompleted,
    IntentIssued,
    Resumed,
    ToolCalled,
    ToolResulted,
)
from .errors import dump, fail
from .server_tool_ends import check_server_tools_ended, server_tool_hint
from .tool_calls import check_tool_calls_answered_across, failed_at_server

if TYPE_CHECKING:
    from ..runlog.run_log import RunLog

__all__ = [
    "check_dangling_intent_reissued",
    "check_every_tool_call_answered",
    "check_no_live_calls",
]


def _answers(count: int) -> str:
    return {0: "unanswered", 1: "answered once"}.get(count, f"answered {count} times")


def _tool_where(log: RunLog, call: ToolCalled) -> str:
    step = log.step(call.step_id) if call.step_id is not None else None
    named = f"tool call {call.call_id!r} ({call.name})"
    return f"{step.describe()}, {named}" if step is not None else named


def _tool_call_problem(made: int, answered: int) -> str | None:
    """What is wrong with a tool call whose id ``made`` calls used and ``answered``
    results answered."""
    if made > 1:
        return f"the call id was used by {made} tool calls"
    if answered != 1:
        return (
            f"it was {_answers(answered)}; every tool call needs exactly "
            f"one result (outcome 'interrupted' when the run stopped first)"
        )
    return None


def _check_tool_calls(log: RunLog) -> None:
    """Every tool call the agent logged has an id of its own and exactly one result."""
    calls = log.of(ToolCalled)
    answered = Counter(r.call_id for r in log.of(ToolResulted))
    made = Counter(c.call_id for c in calls)
    for call in calls:
        if answered[call.call_id] == 0 and failed_at_server(log, call):
            continue  # reported failed where it ran (a cancelled, cut, crashed MCP call)
        problem = _tool_call_problem(made[call.call_id], answered[call.call_id])
        if problem is not None:
            expected = {f"{c.call_id} ({c.name})": "answered once" for c in calls}
            logged = {f"{c.call_id} ({c.name})": _answers(answered[c.call_id]) for c in calls}
            fail(
                "assert_every_tool_call_answered", _tool_where(log, call), problem, expected, logged
            )


def _check_tool_results(log: RunLog) -> None:
    """Every tool result answers a tool call the agent logged."""
    made = {c.call_id for c in log.of(ToolCalled)}
    for result in log.of(ToolResulted):
        if result.call_id not in made:
            fail(
                "assert_every_tool_call_answered",
                f"tool result {result.call_id!r}",
                "it answers a tool call that was never made"
                + server_tool_hint(log, result.call_id),
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
    _check_tool_calls(log)
    _check_tool_results(log)
    check_server_tools_ended(log)
    for call in log.model_calls:
        _request_tool_problem(call)
    check_tool_calls_answered_across(log)


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


def _first_resume(log: RunLog) -> int:
    """Where the log's first ``resumed()`` entry is (a log without one fails)."""
    cut = next((i for i, e in enumerate(log.entries) if isinstance(e, Resumed)), None)
    if cut is None:
        fail(
            "assert_dangling_intent_reissued",
            "the run",
            "the log has no resume: call log.resumed() when the runtime restarts from its store",
            [{"event": "resumed"}],
            [],
        )
    return cut


def _dangling(before: list[Any], done: set[str], key: Any) -> list[IntentIssued]:
    """The intents issued in ``before`` and not completed (only ``key``'s, if given); a
    run that left none fails."""
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
    return dangling


def check_dangling_intent_reissued(log: RunLog, *, key: Any = None) -> None:
    """See :func:`~.assert_dangling_intent_reissued`."""
    cut = _first_resume(log)
    before = [e for e in log.entries[:cut] if isinstance(e, (IntentIssued, IntentCompleted))]
    done = {e.key for e in before if isinstance(e, IntentCompleted)}
    after = log.entries[cut + 1 :]
    dangling = _dangling(before, done, key)
    # A completed intent issued again is checked first: a resume that starts from the
    # wrong intent re-issues a completed one *instead of* the dangling one, and
    # "t1/1 re-issued 0 times" hid the cause (issue 20).
    for k in sorted(done):
        _check_not_reissued(log, k, after, [i.key for i in dangling])
    for intent in dangling:
        _check_reissue(log, intent, after)


def _check_not_reissued(log: RunLog, key: str, after: list[Any], dangling: list[str]) -> None:
    """An intent completed before the run broke is not issued again on resume."""
    again = [e for e in after if isinstance(e, IntentIssued) and e.key == key]
    if not again:
        return
    missed = [k for k in dangling if not any(_issues(e, k) for e in after)]
    hint = (
        f"; the dangling intent {missed[0]!r} was not re-issued: the resume started from "
        f"the wrong intent"
        if missed
        else ""
    )
    fail(
        "assert_dangling_intent_reissued",
        _intent_where(log, again[0]),
        f"it was re-issued on resume although it had completed before the run broke{hint}",
        _expected_done(key),
        _intent_timeline(log, key),
    )


def _issues(entry: Any, key: str) -> bool:
    return isinstance(entry, IntentIssued) and entry.key == key


def _expected_done(key: str) -> list[dict[str, Any]]:
    return [
        {"event": "intent", "key": key},
        {"event": "intent_completed", "key": key},
        {"event": "resumed"},
    ]


def _expected_reissue(key: str) -> list[dict[str, Any]]:
    return [
        {"event": "intent", "key": key},
        {"event": "resumed"},
        {"event": "intent", "key": key},
        {"event": "intent_completed", "key": key},
    ]


def _reissue_problem(after: list[Any], key: str) -> str | None:
    """What is wrong with how a dangling intent was re-issued and completed on resume."""
    reissued = [i for i, e in enumerate(after) if isinstance(e, IntentIssued) and e.key == key]
    completed = [i for i, e in enumerate(after) if isinstance(e, IntentCompleted) and e.key == key]
    if len(reissued) != 1:
        return (
            f"it was left dangling and re-issued {len(reissued)} times on resume; it must "
            f"be re-issued exactly once"
        )
    if len(completed) != 1 or completed[0] < reissued[0]:
        return (
            f"after its re-issue it completed {len(completed)} times; it must complete "
            f"exactly once, after the re-issue"
        )
    return None


def _check_reissue(log: RunLog, intent: IntentIssued, after: list[Any]) -> None:
    """A dangling intent is re-issued exactly once on resume, then completed once."""
    problem = _reissue_problem(after, intent.key)
    if problem is not None:
        fail(
            "assert_dangling_intent_reissued",
            _intent_where(log, intent),
            problem,
            _expected_reissue(intent.key),
            _intent_timeline(log, intent.key),
        )


# --- egress ------------------------------------------------------------------------------


def check_no_live_calls(egress: Egress, *, all_played: bool = False) -> None:
    """See :func:`~.assert_no_live_calls`: here on the egress ledger it resolved."""
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
