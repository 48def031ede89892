"""The run log's builder methods for tools the provider runs itself.

A provider-side tool (Anthropic's ``server_tool_use``, an OpenAI ``web_search_call``)
runs inside a model step: the agent sees it begin and end in the stream, runs nothing
and answers nothing. A runtime logs its begin with :meth:`server_tool_call` and its
end with :meth:`server_tool_result` (``outcome="interrupted"`` when the stream was
cut first), entries apart from the agent's own :class:`~.entries.ToolCalled`, so that
"the agent started no tool of its own" stays checkable. Mixed into
:class:`~pytest_agentreplay.runlog.RunLog`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from .entries import ServerToolCalled, ServerToolResulted, Timestamp, ToolOutcome, _Entry

# The entries are re-exported for the run log package, which lists every entry type.
__all__ = ["ServerToolCalled", "ServerToolLog", "ServerToolResulted"]

E = TypeVar("E", bound=_Entry)


class ServerToolLog:
    """Builder methods for provider-side tool entries (see the module docs)."""

    if TYPE_CHECKING:  # RunLog provides it

        def add(self, entry: E) -> E: ...

    def server_tool_call(
        self,
        call_id: Any,
        name: str,
        args: dict[str, Any] | None = None,
        *,
        step_id: Any = None,
        at: Timestamp | None = None,
    ) -> ServerToolCalled:
        """A provider-side tool call (``web_search``, ``code_execution``...) began."""
        return self.add(
            ServerToolCalled(call_id=call_id, name=name, args=args or {}, step_id=step_id, at=at)
        )

    def server_tool_result(
        self,
        call_id: Any,
        content: str = "",
        *,
        outcome: ToolOutcome = "completed",
        step_id: Any = None,
        at: Timestamp | None = None,
    ) -> ServerToolResulted:
        """A provider-side tool call ended (``interrupted`` when its stream was cut first)."""
        return self.add(
            ServerToolResulted(
                call_id=call_id, content=content, outcome=outcome, step_id=step_id, at=at
            )
        )
