"""The old name of :mod:`pytest_agentreplay.neutral`, the provider-neutral types.

An alias, so that ``from pytest_agentreplay.model import Request`` written before
the package was renamed keeps working: new code imports from
:mod:`pytest_agentreplay` or :mod:`pytest_agentreplay.neutral`. Nothing in the
package imports it (an import-linter contract keeps it so): everywhere else,
"model" means the LLM (``FakeModel``, ``scripted_model``, ``ModelCall``).
"""

from __future__ import annotations

from .neutral import (
    PROVIDERS,
    Citation,
    CodeOutput,
    Fault,
    FaultKind,
    FaultPlan,
    Message,
    MessagePart,
    ModelCall,
    Other,
    Outcome,
    Part,
    Provider,
    Reply,
    Request,
    SearchResult,
    ServerToolCall,
    ServerToolName,
    StopReason,
    Text,
    Thinking,
    Tool,
    ToolCall,
    ToolResult,
    Usage,
    fault_source,
    reply_source,
)

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
