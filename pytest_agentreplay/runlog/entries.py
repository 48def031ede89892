"""The entries of a run log's agent side, its steps and its egress ledger (the run log
itself: :mod:`pytest_agentreplay.runlog`, which re-exports this module's ``__all__``).

Entries are frozen pydantic models, one class per event, told apart by ``event`` when
a log is loaded from JSON. ``Timestamp``, :func:`as_id` and the readers below
(:func:`steps_of`, :func:`turns_of`...) serve the run log and its adapters; they are not
re-exported."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from ..neutral import Citation, Usage

__all__: tuple[str, ...] = (
    "Delta",
    "Egress",
    "Entry",
    "ErrorReported",
    "IntentCompleted",
    "IntentIssued",
    "InterruptRequested",
    "MessageKind",
    "MessageSaved",
    "Resumed",
    "Role",
    "ServerToolCalled",
    "ServerToolResulted",
    "Step",
    "StepCompleted",
    "StepOutcome",
    "StepStarted",
    "ToolCalled",
    "ToolOutcome",
    "ToolResulted",
    "TurnEnded",
    "TurnOutcome",
)

StepOutcome = Literal["completed", "retrying", "failed", "interrupted"]
"""How a model step ended: ``retrying`` means a fresh step at the same index follows."""
ToolOutcome = Literal["completed", "failed", "interrupted"]
TurnOutcome = Literal["completed", "failed", "aborted"]
MessageKind = Literal["message", "error"]
Role = Literal["system", "developer", "user", "assistant", "tool"]
Timestamp = float | datetime


def as_id(value: Any) -> Any:
    """Ids may be given as ints or UUIDs; they are stored (and compared) as strings."""
    if isinstance(value, (int, uuid.UUID)) and not isinstance(value, bool):
        return str(value)
    return value


Id = Annotated[str, BeforeValidator(as_id)]


class _Entry(BaseModel):
    """Every entry is frozen and may carry ``at``, when it happened (a float clock or a
    datetime; declared last in each entry so dumps read event first, time last)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class StepStarted(_Entry):
    """A model step began (one step is one model call)."""

    event: Literal["step_started"] = "step_started"
    step_id: Id
    step_index: int | None = None
    turn_id: Id | None = None
    session_id: Id | None = None
    at: Timestamp | None = None


class StepCompleted(_Entry):
    """A model step ended: its terminal event. ``text`` is what the step received
    (the partial text, for a step that ended ``retrying`` or ``interrupted``)."""

    event: Literal["step_completed"] = "step_completed"
    step_id: Id
    outcome: StepOutcome = "completed"
    step_index: int | None = None
    turn_id: Id | None = None
    session_id: Id | None = None
    usage: Usage | None = None
    text: str | None = None
    at: Timestamp | None = None


class Delta(_Entry):
    """A piece of streamed text shown to the user while a step ran."""

    event: Literal["delta"] = "delta"
    text: str
    step_id: Id | None = None
    at: Timestamp | None = None


class ToolCalled(_Entry):
    """The agent started a tool call the model asked for."""

    event: Literal["tool_call"] = "tool_call"
    call_id: Id
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    step_id: Id | None = None
    at: Timestamp | None = None


class ToolResulted(_Entry):
    """A tool call ended: its answer (``interrupted`` when the run stopped first)."""

    event: Literal["tool_result"] = "tool_result"
    call_id: Id
    content: str = ""
    outcome: ToolOutcome = "completed"
    step_id: Id | None = None
    at: Timestamp | None = None


class ServerToolCalled(_Entry):
    """A tool the provider runs itself began, inside a model step (a web search, code
    execution): the agent runs nothing and answers nothing. Kept apart from
    :class:`ToolCalled`, the tools the agent runs."""

    event: Literal["server_tool_call"] = "server_tool_call"
    call_id: Id
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    step_id: Id | None = None
    at: Timestamp | None = None


class ServerToolResulted(_Entry):
    """A provider-side tool call ended: ``completed``, ``failed`` (the provider said it
    failed) or ``interrupted`` (the step ended before its result arrived)."""

    event: Literal["server_tool_result"] = "server_tool_result"
    call_id: Id
    content: str = ""
    outcome: ToolOutcome = "completed"
    step_id: Id | None = None
    at: Timestamp | None = None


class MessageSaved(_Entry):
    """A message written to the saved context (the store the next turn reads), with
    the web sources its text cites (left out of dumps when it cites none)."""

    event: Literal["message"] = "message"
    role: Role
    text: str = ""
    kind: MessageKind = "message"
    step_id: Id | None = None
    turn_id: Id | None = None
    citations: list[Citation] = Field(default_factory=list, exclude_if=lambda v: not v)
    at: Timestamp | None = None


class IntentIssued(_Entry):
    """A write-ahead intent: recorded durably before a model call."""

    event: Literal["intent"] = "intent"
    key: Id
    step_id: Id | None = None
    at: Timestamp | None = None


class IntentCompleted(_Entry):
    """The completion recorded for a write-ahead intent."""

    event: Literal["intent_completed"] = "intent_completed"
    key: Id
    step_id: Id | None = None
    at: Timestamp | None = None


class ErrorReported(_Entry):
    """An error the runtime surfaced: classified ``kind`` (``auth``, ``rate_limit``...),
    with what the provider's response said of it: its ``status``, ``retry_after`` and
    ``request_id`` (the id support asks for)."""

    event: Literal["error"] = "error"
    kind: str
    message: str = ""
    retryable: bool | None = None
    status: int | None = None
    retry_after: str | float | None = None
    request_id: str | None = None
    step_id: Id | None = None
    turn_id: Id | None = None
    at: Timestamp | None = None


class TurnEnded(_Entry):
    """A turn ended: ``completed`` is the success event; ``failed`` / ``aborted`` are not."""

    event: Literal["turn_ended"] = "turn_ended"
    turn_id: Id | None = None
    outcome: TurnOutcome = "completed"
    at: Timestamp | None = None


class InterruptRequested(_Entry):
    """The user asked to stop the turn (pressed stop): logged when it happens, not when
    the runtime gets round to it. ``calls_before`` is how many model calls the log's
    watched sources had received by then (``None`` when it watched none), so that the
    calls made after the interrupt can be told apart; ``tool_calls_before`` and
    ``tool_calls_open`` say the same of the watched tool servers' calls: how many had
    begun, and which were running (``None`` when it watched no tool server)."""

    event: Literal["interrupt_requested"] = "interrupt_requested"
    turn_id: Id | None = None
    calls_before: int | None = None
    tool_calls_before: int | None = Field(default=None, exclude_if=lambda v: v is None)
    tool_calls_open: list[int] | None = Field(default=None, exclude_if=lambda v: v is None)
    at: Timestamp | None = None


class Resumed(_Entry):
    """The runtime restarted from its store (everything after is the resumed run)."""

    event: Literal["resumed"] = "resumed"
    at: Timestamp | None = None


Entry = Annotated[
    StepStarted
    | StepCompleted
    | Delta
    | ToolCalled
    | ToolResulted
    | ServerToolCalled
    | ServerToolResulted
    | MessageSaved
    | IntentIssued
    | IntentCompleted
    | ErrorReported
    | TurnEnded
    | InterruptRequested
    | Resumed,
    Field(discriminator="event"),
]
"""One event of the agent side of a run log."""


class Egress(BaseModel):
    """What reached (or tried to reach) the network: the egress ledger of a run.

    ``live_calls`` went out; ``blocked`` were refused; ``unplayed`` are indexes of
    recorded interactions not played (``None`` when no cassette was used).
    """

    model_config = ConfigDict(extra="forbid")

    live_calls: list[str] = Field(default_factory=list)
    blocked: list[str] = Field(default_factory=list)
    unplayed: list[int] | None = None


@dataclass(frozen=True)
class Step:
    """A model step as the log tells it: every start and terminal event of one step id.

    A healthy step has exactly one of each; :func:`~..invariants.assert_single_terminal_step`
    checks that.
    """

    ordinal: int
    """1-based, in the order the step id first appears."""
    id: str
    started: tuple[StepStarted, ...] = ()
    ended: tuple[StepCompleted, ...] = ()
    positions: tuple[int, ...] = field(default=(), repr=False)

    @property
    def index(self) -> int | None:
        first = self.started[0] if self.started else (self.ended[0] if self.ended else None)
        return None if first is None else first.step_index

    @property
    def turn_id(self) -> str | None:
        first = self.started[0] if self.started else (self.ended[0] if self.ended else None)
        return None if first is None else first.turn_id

    @property
    def outcome(self) -> StepOutcome | None:
        """The outcome of its (last) terminal event, ``None`` if it never ended."""
        return self.ended[-1].outcome if self.ended else None

    @property
    def text(self) -> str | None:
        return self.ended[-1].text if self.ended else None

    def describe(self) -> str:
        """``step #2 (id 'b1', index 0, turn 't1')``: how failure messages name it."""
        bits = [f"id {self.id!r}"]
        if self.index is not None:
            bits.append(f"index {self.index}")
        if self.turn_id is not None:
            bits.append(f"turn {self.turn_id!r}")
        return f"step #{self.ordinal} ({', '.join(bits)})"


def steps_of(entries: Sequence[Entry]) -> list[Step]:
    """The steps ``entries`` tell of, in the order their ids first appear, each with all
    its starts and ends (and where they are in ``entries``)."""
    order: dict[str, tuple[list[StepStarted], list[StepCompleted], list[int]]] = {}
    for position, entry in enumerate(entries):
        if isinstance(entry, (StepStarted, StepCompleted)):
            started, ended, positions = order.setdefault(entry.step_id, ([], [], []))
            (started if isinstance(entry, StepStarted) else ended).append(entry)  # type: ignore[arg-type]
            positions.append(position)
    return [
        Step(n, step_id, tuple(s), tuple(e), tuple(p))
        for n, (step_id, (s, e, p)) in enumerate(order.items(), start=1)
    ]


def turns_of(entries: Sequence[Entry]) -> list[str]:
    """The turn ids ``entries`` name, in the order they first appear."""
    seen: dict[str, None] = {}
    for entry in entries:
        turn = getattr(entry, "turn_id", None)
        if turn is not None:
            seen.setdefault(turn, None)
    return list(seen)


def started_entry(entries: Sequence[Entry], step_id: str) -> StepStarted | None:
    """The first start of step ``step_id`` in ``entries``."""
    return next((e for e in entries if isinstance(e, StepStarted) and e.step_id == step_id), None)


def last_step_id(entries: Sequence[Entry]) -> str | None:
    """The id of the step started last in ``entries`` (what a delta without one belongs to)."""
    started = [e for e in entries if isinstance(e, StepStarted)]
    return started[-1].step_id if started else None
