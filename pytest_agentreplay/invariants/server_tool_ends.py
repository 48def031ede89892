"""The check about tools the provider runs itself: each one that began also ended.

A provider-side tool call (a web search inside a model step) needs no result from
the agent, but a runtime that shows it begin must show it end — completed, failed,
or ``interrupted`` when the stream was cut before its result — exactly once, or a
user is left watching a search that never finishes. Part of
``assert_every_tool_call_answered``; see :mod:`pytest_agentreplay.invariants`.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ..runlog.entries import ServerToolCalled, ServerToolResulted
from .errors import fail

if TYPE_CHECKING:
    from ..runlog.run_log import RunLog

__all__ = ["check_server_tools_ended", "server_tool_hint"]

_CHECK = "assert_every_tool_call_answered"


def _ends(count: int) -> str:
    return {0: "never ended", 1: "ended once"}.get(count, f"ended {count} times")


def _where(log: RunLog, call: ServerToolCalled) -> str:
    step = log.step(call.step_id) if call.step_id is not None else None
    named = f"server tool call {call.call_id!r} ({call.name})"
    return f"{step.describe()}, {named}" if step is not None else named


def check_server_tools_ended(log: RunLog) -> None:
    """Every provider-side tool call has an id of its own and ends exactly once; every
    end belongs to a call that began."""
    calls = log.of(ServerToolCalled)
    ended = Counter(r.call_id for r in log.of(ServerToolResulted))
    made = Counter(c.call_id for c in calls)
    for call in calls:
        problem = None
        if made[call.call_id] > 1:
            problem = f"the call id was used by {made[call.call_id]} server tool calls"
        elif ended[call.call_id] != 1:
            problem = (
                f"it {_ends(ended[call.call_id])}; a provider-side tool call needs exactly one "
                "end (outcome 'interrupted' when its stream was cut first)"
            )
        if problem is not None:
            expected = {f"{c.call_id} ({c.name})": "ended once" for c in calls}
            logged = {f"{c.call_id} ({c.name})": _ends(ended[c.call_id]) for c in calls}
            fail(_CHECK, _where(log, call), problem, expected, logged)
    began = set(made)
    for result in log.of(ServerToolResulted):
        if result.call_id not in began:
            fail(
                _CHECK,
                f"server tool result {result.call_id!r}",
                "it ends a provider-side tool call that never began",
                {},
                {result.call_id: result.outcome},
            )


def server_tool_hint(log: RunLog, call_id: str) -> str:
    """Why a tool result answering ``call_id`` is wrong, when the provider ran that tool."""
    if any(c.call_id == call_id for c in log.of(ServerToolCalled)):
        return "; the provider ran that tool itself (a server tool call): the agent answers none"
    return ""
