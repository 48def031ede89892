"""The run log: the model calls a run made and the events its agent reported.

:mod:`..runlog` describes the API of :class:`RunLog`. The entries it holds are
defined in :mod:`.entries`, the adapters that fill it in :mod:`.adapters`, and the
masking its comparisons use in :mod:`.masking`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ..jsondiff import json_diff
from ..mcp.fake.calls import ToolServerCall
from ..neutral import Citation, ModelCall, Usage
from .adapters.calls import collect, requests_seen
from .adapters.openai_agents import openai_agents_entries, openai_agents_event_entry
from .adapters.pydantic_ai import pydantic_ai_entries
from .adapters.tool_servers import is_tool_source, served_tools, tool_calls_of
from .entries import (
    Delta,
    Egress,
    Entry,
    ErrorReported,
    IntentCompleted,
    IntentIssued,
    InterruptRequested,
    MessageKind,
    MessageSaved,
    Resumed,
    Role,
    Step,
    StepCompleted,
    StepOutcome,
    StepStarted,
    Timestamp,
    ToolCalled,
    ToolOutcome,
    ToolResulted,
    TurnEnded,
    TurnOutcome,
    _Entry,
    as_id,
    last_step_id,
    started_entry,
    steps_of,
    turns_of,
)
from .masking import CallsView, IdMask, normalize_log
from .server_tool_log import ServerToolLog

__all__ = ["RunLog"]

E = TypeVar("E", bound=_Entry)
_LIVE = frozenset({"model_calls", "egress", "tool_calls", "tool_servers"})


class RunLog(ServerToolLog, BaseModel):
    """A record of one agent run: model calls, agent events, egress. See the module docs."""

    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    model_calls: list[ModelCall] = Field(default_factory=list)
    entries: list[Entry] = Field(default_factory=list)
    egress: Egress | None = None
    tool_calls: list[ToolServerCall] = Field(default_factory=list, exclude_if=lambda v: not v)
    """The ``tools/call``s of the watched tool servers (running ones with no outcome)."""
    tool_servers: dict[str, list[str]] = Field(default_factory=dict, exclude_if=lambda v: not v)
    """The tools each watched tool server serves, by server name."""

    _sources: list[Any] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    # --- sources of model calls --------------------------------------------------

    def watch(self, *sources: Any) -> RunLog:
        """Take model calls from ``sources`` — a :class:`~..fakes.FakeModel`, the
        ``agentreplay`` handle, or anything with a ``log`` of model calls — and tool
        calls from fake tool servers (:class:`~..mcp.fake.FakeToolServer`) whenever the
        log is read (invariants, :meth:`normalized`, ``==``, serialization)."""
        self._sources.extend(sources)
        return self

    @property
    def sources(self) -> tuple[Any, ...]:
        """What this log watches for model calls (see :meth:`watch`)."""
        return tuple(self._sources)

    def _split_sources(self) -> tuple[list[Any], list[Any]]:
        """The watched model sources and tool sources."""
        tools = [s for s in self._sources if is_tool_source(s)]
        return [s for s in self._sources if not is_tool_source(s)], tools

    def refresh(self) -> RunLog:
        """Re-read the model calls (and the egress ledger) and the tool calls from the
        watched sources."""
        models, tools = self._split_sources()
        if models:
            calls, egress = collect(models)
            self.__dict__["model_calls"] = calls
            if egress is not None:
                self.__dict__["egress"] = egress
        if tools:
            self.__dict__["tool_calls"] = tool_calls_of(tools)
            self.__dict__["tool_servers"] = served_tools(tools)
        return self

    def __getattribute__(self, name: str) -> Any:
        # ``log.model_calls`` / ``log.egress`` of a log that watches a fake or a cassette
        # are always current: read from the sources at each access.
        if name in _LIVE:
            private = object.__getattribute__(self, "__pydantic_private__")
            if private and private.get("_sources"):
                object.__getattribute__(self, "refresh")()
        return object.__getattribute__(self, name)

    def frozen(self) -> RunLog:
        """A copy of the log as it is now, watching nothing (reading it is cheap and
        stable: what the invariants check)."""
        self.refresh()
        return RunLog(
            model_calls=list(self.model_calls),
            entries=list(self.entries),
            egress=self.egress,
            tool_calls=list(self.tool_calls),
            tool_servers=dict(self.tool_servers),
        )

    @classmethod
    def from_fake(cls, *fakes: Any) -> RunLog:
        """A log whose model calls are those ``fakes`` serve (read when needed)."""
        return cls().watch(*fakes)

    @classmethod
    def from_cassette(cls, handle: Any) -> RunLog:
        """A log whose model calls and egress ledger come from the ``agentreplay`` handle."""
        return cls().watch(handle)

    # --- framework adapters ------------------------------------------------------

    @classmethod
    def from_pydantic_ai(
        cls, messages: Sequence[Any], *, model: Any = None, session_id: str | None = None
    ) -> RunLog:
        """A log from pydantic-ai's message history (``result.all_messages()`` or
        ``new_messages()``): each ``ModelResponse`` is a step (started and completed,
        with usage and text), requests and responses become saved messages, tool
        calls and tool returns become tool entries. ``model`` (a fake or handle) is
        watched for the model side."""
        log = cls(entries=pydantic_ai_entries(messages, session_id=session_id))
        return log.watch(model) if model is not None else log

    @classmethod
    def from_openai_agents(cls, result: Any, *, model: Any = None) -> RunLog:
        """A log from an openai-agents run: a ``RunResult`` (its ``raw_responses``
        are the steps, its ``new_items`` the messages and tool entries) or a list of
        run items. ``model`` (a fake or handle) is watched for the model side."""
        log = cls(entries=openai_agents_entries(result))
        return log.watch(model) if model is not None else log

    def feed_openai_agents(self, event: Any) -> Entry | None:
        """Add what one openai-agents stream event (``Runner.run_streamed(...)
        .stream_events()``) says: ``response.created`` starts a step,
        ``response.completed`` / ``failed`` / ``incomplete`` ends it, text deltas,
        tool calls, tool outputs and messages are logged. Other events are ignored."""
        entry = openai_agents_event_entry(event, self.entries)
        return self.add(entry) if entry is not None else None

    # --- the builder API ------------------------------------------------------------

    def add(self, entry: E) -> E:
        """Append an entry (any of the :data:`Entry` types) and return it."""
        with self._lock:
            self.entries.append(entry)  # type: ignore[arg-type]
        return entry

    def step_started(
        self,
        step_id: Any,
        *,
        step_index: int | None = None,
        turn_id: Any = None,
        session_id: Any = None,
        at: Timestamp | None = None,
    ) -> StepStarted:
        """A model step began; a retry must use a fresh ``step_id`` at the same ``step_index``."""
        return self.add(
            StepStarted(
                step_id=step_id,
                step_index=step_index,
                turn_id=turn_id,
                session_id=session_id,
                at=at,
            )
        )

    def step_completed(
        self,
        step_id: Any,
        outcome: StepOutcome = "completed",
        *,
        usage: Usage | None = None,
        text: str | None = None,
        step_index: int | None = None,
        turn_id: Any = None,
        session_id: Any = None,
        at: Timestamp | None = None,
    ) -> StepCompleted:
        """A model step ended with ``outcome``; index, turn and session default to
        those of its start."""
        started = started_entry(self.entries, str(as_id(step_id)))
        if started is not None:
            step_index = started.step_index if step_index is None else step_index
            turn_id = started.turn_id if turn_id is None else turn_id
            session_id = started.session_id if session_id is None else session_id
        return self.add(
            StepCompleted(
                step_id=step_id,
                outcome=outcome,
                usage=usage,
                text=text,
                step_index=step_index,
                turn_id=turn_id,
                session_id=session_id,
                at=at,
            )
        )

    def delta(self, text: str, *, step_id: Any = None, at: Timestamp | None = None) -> Delta:
        """A streamed text delta (defaults to the step started last)."""
        step_id = last_step_id(self.entries) if step_id is None else step_id
        return self.add(Delta(text=text, step_id=step_id, at=at))

    def tool_call(
        self,
        call_id: Any,
        name: str,
        args: dict[str, Any] | None = None,
        *,
        step_id: Any = None,
        at: Timestamp | None = None,
    ) -> ToolCalled:
        """A tool call began."""
        return self.add(
            ToolCalled(call_id=call_id, name=name, args=args or {}, step_id=step_id, at=at)
        )

    def tool_result(
        self,
        call_id: Any,
        content: str = "",
        *,
        outcome: ToolOutcome = "completed",
        step_id: Any = None,
        at: Timestamp | None = None,
    ) -> ToolResulted:
        """A tool call ended (``outcome="interrupted"`` when the run stopped first)."""
        return self.add(
            ToolResulted(call_id=call_id, content=content, outcome=outcome, step_id=step_id, at=at)
        )

    def message(
        self,
        role: Role,
        text: str = "",
        *,
        kind: MessageKind = "message",
        step_id: Any = None,
        turn_id: Any = None,
        citations: Sequence[Citation] = (),
        at: Timestamp | None = None,
    ) -> MessageSaved:
        """A message persisted to the saved context (``kind="error"`` for an error turn),
        with the web sources its text cites."""
        return self.add(
            MessageSaved(
                role=role,
                text=text,
                kind=kind,
                step_id=step_id,
                turn_id=turn_id,
                citations=list(citations),
                at=at,
            )
        )

    def intent(self, key: Any, *, step_id: Any = None, at: Timestamp | None = None) -> IntentIssued:
        """A write-ahead intent was recorded (before the model call it announces)."""
        return self.add(IntentIssued(key=key, step_id=step_id, at=at))

    def intent_completed(
        self, key: Any, *, step_id: Any = None, at: Timestamp | None = None
    ) -> IntentCompleted:
        """The intent ``key`` was completed."""
        return self.add(IntentCompleted(key=key, step_id=step_id, at=at))

    def error_reported(
        self,
        kind: str,
        message: str = "",
        *,
        retryable: bool | None = None,
        status: int | None = None,
        retry_after: str | float | None = None,
        request_id: str | None = None,
        step_id: Any = None,
        turn_id: Any = None,
        at: Timestamp | None = None,
    ) -> ErrorReported:
        """An error the runtime surfaced, classified as ``kind``, with the provider's
        ``status``, ``retry_after`` and ``request_id`` (named so that linters do not
        take ``log.error(...)`` for a logging call)."""
        return self.add(
            ErrorReported(
                kind=kind,
                message=message,
                retryable=retryable,
                status=status,
                retry_after=retry_after,
                request_id=request_id,
                step_id=step_id,
                turn_id=turn_id,
                at=at,
            )
        )

    def turn_ended(
        self,
        turn_id: Any = None,
        outcome: TurnOutcome = "completed",
        *,
        at: Timestamp | None = None,
    ) -> TurnEnded:
        """A turn ended (``completed`` is the success event)."""
        return self.add(TurnEnded(turn_id=turn_id, outcome=outcome, at=at))

    def interrupt_requested(
        self, turn_id: Any = None, *, at: Timestamp | None = None
    ) -> InterruptRequested:
        """The user pressed stop (log it then, not when the runtime notices): notes how
        many model calls the watched sources had received, for
        :func:`~..invariants.assert_no_model_call_after_interrupt`."""
        models, tools = self._split_sources()
        seen = requests_seen(models) if models else None
        running = tool_calls_of(tools) if tools else None
        return self.add(
            InterruptRequested(
                turn_id=turn_id,
                calls_before=seen,
                tool_calls_before=None if running is None else len(running),
                tool_calls_open=None
                if running is None
                else [c.index for c in running if not c.ended],
                at=at,
            )
        )

    def resumed(self, *, at: Timestamp | None = None) -> Resumed:
        """The runtime restarted from its store."""
        return self.add(Resumed(at=at))

    # --- reading --------------------------------------------------------------------

    def of(self, kind: type[E]) -> list[E]:
        """The entries of one type, in order: ``log.of(StepCompleted)``."""
        return [e for e in self.entries if isinstance(e, kind)]

    def steps(self) -> list[Step]:
        """Steps in the order their ids first appear, each with all its starts and ends."""
        return steps_of(self.entries)

    def step(self, step_id: Any) -> Step | None:
        """The step with this id, if the log has it."""
        wanted = str(as_id(step_id))
        return next((s for s in self.steps() if s.id == wanted), None)

    def messages(
        self,
        *,
        role: Role | None = None,
        turn_id: Any = None,
        kind: MessageKind | None = None,
    ) -> list[MessageSaved]:
        """Saved messages, optionally only one role, turn or kind."""
        turn = None if turn_id is None else str(as_id(turn_id))
        return [
            m
            for m in self.of(MessageSaved)
            if (role is None or m.role == role)
            and (kind is None or m.kind == kind)
            and (turn is None or m.turn_id == turn)
        ]

    def turns(self) -> list[str]:
        """Turn ids in the order they first appear."""
        return turns_of(self.entries)

    # --- comparing --------------------------------------------------------------------

    def normalized(
        self, *, transport: bool = True, calls: CallsView = "full", ids: IdMask | None = None
    ) -> dict[str, Any]:
        """The log as JSON with volatile values masked (see the module docs); ``ids``
        names the application's own id fields and patterns (:class:`IdMask`).
        ``calls="brief"`` shows each model call as how it ended, its conversation one
        line a message and its reply (what a snapshot reviewer reads); ``"none"``
        leaves the model side out. ``transport=False`` also drops what depends on how
        a response arrived — each call's ``streaming`` flag, ``events_sent``, the
        request's ``stream`` / ``stream_options`` and the ``delta`` entries — which is
        the view :func:`~..invariants.assert_stream_parity` compares."""
        self.refresh()
        data = self.model_dump(mode="json", exclude_none=True)
        return normalize_log(data, transport=transport, calls=calls, ids=ids)

    def diff(self, other: RunLog, *, limit: int = 20, normalized: bool = True) -> list[str]:
        """Differences from ``other`` at JSON paths (``[]`` when equal)."""
        if normalized:
            return json_diff(self.normalized(), other.normalized(), limit=limit)
        self.refresh()
        other.refresh()
        return json_diff(self.model_dump(mode="json"), other.model_dump(mode="json"), limit=limit)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RunLog):
            return NotImplemented
        self.refresh()
        other.refresh()
        return (self.model_calls, self.entries, self.egress, self.tool_calls) == (
            other.model_calls,
            other.entries,
            other.egress,
            other.tool_calls,
        )

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        """As pydantic's, after :meth:`refresh` (so a dump never shows stale calls)."""
        self.refresh()
        return super().model_dump(**kwargs)

    def model_dump_json(self, **kwargs: Any) -> str:
        """As pydantic's, after :meth:`refresh`."""
        self.refresh()
        return super().model_dump_json(**kwargs)
