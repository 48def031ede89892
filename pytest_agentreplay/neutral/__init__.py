"""Provider-neutral data model: what a model said, how it failed, what it was asked.

Every wire codec in :mod:`..providers` translates between these types and one
provider's JSON / SSE format, so one script of :class:`Reply` objects serves
Anthropic Messages, OpenAI Chat Completions and OpenAI Responses alike. The types
are pydantic models so they validate user input early (a typo in a script fails
at construction, not deep inside a stream) and serialize into run logs and
snapshots unchanged.

Five modules, each importing only the ones before it:

- :mod:`.parts` — what a message is made of (:class:`Text` and its
  :class:`Citation` list, :class:`ToolCall`, :class:`Thinking`,
  :class:`ServerToolCall` with its :class:`SearchResult` / :class:`CodeOutput`,
  :class:`ToolResult`, :class:`Other`) and :class:`Usage`;
- :mod:`.replies` — what one call gets: a :class:`Reply` or a :class:`Fault`;
- :mod:`.source` — replies and faults written back as the Python that builds them;
- :mod:`.fault_plan` — the :class:`FaultPlan` of which calls fail and how;
- :mod:`.calls` — what a model was asked (:class:`Request`) and how the call went
  (:class:`ModelCall`), with the :data:`Provider` names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .calls import PROVIDERS, Message, ModelCall, Outcome, Provider, Request, Tool
    from .fault_plan import FaultPlan
    from .parts import (
        Citation,
        CodeOutput,
        MessagePart,
        Other,
        Part,
        SearchResult,
        ServerToolCall,
        ServerToolName,
        StopReason,
        Text,
        Thinking,
        ToolCall,
        ToolResult,
        Usage,
    )
    from .replies import Fault, FaultKind, Reply
    from .source import fault_source, reply_source

__all__ = [
    "PROVIDERS",
    "Citation",
    "CodeOutput",
    "Fault",
    "FaultKind",
    "FaultPlan",
    "Message",
    "MessagePart",
    "ModelCall",
    "Other",
    "Outcome",
    "Part",
    "Provider",
    "Reply",
    "Request",
    "SearchResult",
    "ServerToolCall",
    "ServerToolName",
    "StopReason",
    "Text",
    "Thinking",
    "Tool",
    "ToolCall",
    "ToolResult",
    "Usage",
    "fault_source",
    "reply_source",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            ".calls": (
                "PROVIDERS",
                "Message",
                "ModelCall",
                "Outcome",
                "Provider",
                "Request",
                "Tool",
            ),
            ".parts": (
                "Citation",
                "CodeOutput",
                "MessagePart",
                "Other",
                "Part",
                "SearchResult",
                "ServerToolCall",
                "ServerToolName",
                "StopReason",
                "Text",
                "Thinking",
                "ToolCall",
                "ToolResult",
                "Usage",
            ),
            ".fault_plan": ("FaultPlan",),
            ".replies": ("Fault", "FaultKind", "Reply"),
            ".source": ("fault_source", "reply_source"),
        },
    )
