"""The state of a turn and of its model steps while they run, and how a turn ended.

A turn is a sequence of model steps at indexes 0, 1, ...; each try of a step is a
fresh :class:`Step` (a new id) at the same index. Kept apart from the turn loop
(:mod:`.runtime`) and from the events it emits (:mod:`.step_events`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import AgentError
from .events import NO_USAGE, RewriteReason, Usage


@dataclass(frozen=True)
class TurnResult:
    """How a turn ended, and its answer when it has one."""

    turn_id: str
    outcome: Literal["completed", "failed", "aborted"]
    text: str = ""
    usage: Usage = NO_USAGE
    error: AgentError | None = None
    provider: str = ""
    model: str = ""


@dataclass
class Step:
    """One model step in progress."""

    turn_id: str
    step_id: str
    step_index: int
    started_at: float = 0.0  # set when the call goes out
    provider: str = ""  # the call's: a credential refresh may switch the agent's
    context_epoch: int = 0  # the session's context epoch when the call went out
    rewrite_reasons: tuple[RewriteReason, ...] = ()  # why the call started that epoch
    partial: list[str] = field(default_factory=list)
    open_tools: dict[str, str] = field(default_factory=dict)  # call id -> tool name
    open_server_tools: dict[str, str] = field(default_factory=dict)  # the provider's

    def ids(self, session_id: str) -> dict[str, Any]:
        """The ids every event of this step carries."""
        return {
            "session_id": session_id,
            "turn_id": self.turn_id,
            "step_id": self.step_id,
            "step_index": self.step_index,
        }


@dataclass
class Turn:
    """One turn in progress."""

    turn_id: str
    usage: Usage = NO_USAGE
    step: Step | None = None  # the step running (or that ended the turn)
    left_intent: bool = False  # a failed call's intent was left for resume()


def new_id() -> str:
    """A fresh id for a session, a turn or a step."""
    return str(uuid.uuid4())
