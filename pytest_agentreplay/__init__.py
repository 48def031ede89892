"""pytest-agentreplay: deterministic tests for LLM agents.

Public names are re-exported here and loaded on first use, so that importing
the pytest plugin (which imports this package) costs nothing in test suites
that never use them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .egress import EgressBlocked
    from .errors import AgentReplayError, CodecError, SSEDecodeError, SSEEncodeError
    from .fakes import FakeModel
    from .model import Fault, ModelCall, Reply, Request, Text, Thinking, ToolCall, Usage

__all__ = [
    "AgentReplayError",
    "CodecError",
    "EgressBlocked",
    "FakeModel",
    "Fault",
    "ModelCall",
    "Reply",
    "Request",
    "SSEDecodeError",
    "SSEEncodeError",
    "Text",
    "Thinking",
    "ToolCall",
    "Usage",
    "__version__",
]

_LAZY = {
    "AgentReplayError": ".errors",
    "CodecError": ".errors",
    "SSEDecodeError": ".errors",
    "SSEEncodeError": ".errors",
    "EgressBlocked": ".egress",
    "FakeModel": ".fakes",
    "Fault": ".model",
    "ModelCall": ".model",
    "Reply": ".model",
    "Request": ".model",
    "Text": ".model",
    "Thinking": ".model",
    "ToolCall": ".model",
    "Usage": ".model",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_agentreplay' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
