"""The events of a model step, emitted as it runs: text deltas, the step's end, and
the begin/end of each tool call (the agent's own and the provider's).

A mixin of :class:`~.runtime.Agent`: the turn loop decides *what* happens, this
module says it — to ``agent.events`` and every listener — with the ids that tie
each event to its session, turn and step.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import cast

from .diagnostics import content_parts, diagnostics
from .errors import AgentError
from .events import (
    Event,
    MessageDelta,
    ModelStepCompleted,
    ServerToolBegin,
    ServerToolEnd,
    StepOutcome,
    ToolBegin,
    ToolEnd,
    ToolOutcome,
    Usage,
)
from .providers import ModelReply
from .turns import Step

Listener = Callable[[Event], None]


class StepEvents:
    """Emits a step's events; the agent provides the session and its listeners."""

    session_id: str
    events: list[Event]
    _listeners: list[Listener]

    @property
    def provider(self) -> str:
        raise NotImplementedError

    def _delta(self, step: Step, text: str) -> None:
        step.partial.append(text)
        self._emit(MessageDelta(**step.ids(self.session_id), text=text))

    def _end_step(
        self,
        step: Step,
        outcome: StepOutcome,
        *,
        usage: Usage | None = None,
        text: str = "",
        error: AgentError | None = None,
        retry_in: float | None = None,
        reply: ModelReply | None = None,
    ) -> None:
        # The provider that made the call, not the one a refresh switched to.
        provider = step.provider or self.provider
        ends_turn = reply is not None and not reply.tool_calls
        self._emit(
            ModelStepCompleted(
                **step.ids(self.session_id),
                outcome=outcome,
                at=time.time(),
                started_at=step.started_at,
                provider=provider,
                stop_reason=reply.stop_reason if reply else None,
                tool_call_ids=tuple(call.id for call in reply.tool_calls) if reply else (),
                citations=tuple(reply.citations) if reply else (),
                usage=usage,
                text=text,
                error=error,
                retry_in=retry_in,
                end_turn=ends_turn,
                content=(
                    content_parts(reply.texts, reply.citations, ends_turn=ends_turn)
                    if reply
                    else ()
                ),
                diagnostics=diagnostics(provider, usage, step.context_epoch, step.rewrite_reasons),
            )
        )

    def _tool_begins(self, step: Step, call_id: str, name: str) -> None:
        step.open_tools[call_id] = name
        self._emit(ToolBegin(**step.ids(self.session_id), call_id=call_id, name=name))

    def _tool_ends(self, step: Step, call_id: str, outcome: ToolOutcome, output: str) -> None:
        name = step.open_tools.pop(call_id)
        self._emit(
            ToolEnd(
                **step.ids(self.session_id),
                call_id=call_id,
                name=name,
                outcome=outcome,
                output=output,
            )
        )

    def _close_tools(self, step: Step, outcome: ToolOutcome) -> None:
        """End every tool of ``step`` that began and has not ended, the provider's too."""
        for call_id in list(step.open_tools):
            self._tool_ends(step, call_id, outcome, "")
        for call_id in list(step.open_server_tools):
            self._server_tool(step, call_id, "", outcome)

    def _server_tool(self, step: Step, call_id: str, name: str, phase: str) -> None:
        """A tool the provider runs began or ended: shown to the user, never run here."""
        if phase == "begin":
            step.open_server_tools[call_id] = name
            self._emit(ServerToolBegin(**step.ids(self.session_id), call_id=call_id, name=name))
        elif call_id in step.open_server_tools:
            self._emit(
                ServerToolEnd(
                    **step.ids(self.session_id),
                    call_id=call_id,
                    name=step.open_server_tools.pop(call_id),
                    outcome=cast(ToolOutcome, phase),
                )
            )

    def _emit(self, event: Event) -> None:
        self.events.append(event)
        for listener in self._listeners:
            listener(event)
